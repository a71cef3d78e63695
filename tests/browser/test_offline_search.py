"""Search in the participant copy of the built book, opened from disk as the workshop bundle is.

The copy is written by tools.teaching.participant_html into a temporary
folder and opened through ``file://`` with the network refused. Searching
finds chapters, lists no teacher's page, and logs no error: Sphinx's search
fetches every page it lists to show a summary, which a browser refuses on
``file://`` ("Failed to fetch"); ``_static/search-offline.js`` turns the
summaries off there. (A plain context, not ``offline_context``: its routing
fails ``file://`` navigations; the requests are recorded and checked
instead.) The same search over http keeps its summaries, so the switch is
what the test sees.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = pytest.mark.browser

#: A word most pages use, the teacher's guide and answer sheet included.
QUERY = "split"


@pytest.fixture(scope="module")
def participant_site(site_dir: Path, tmp_path_factory) -> Path:
    from tools.teaching.participant_html import participant_html

    out = tmp_path_factory.mktemp("participant") / "html"
    for name, content in participant_html(site_dir).items():
        target = out / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(content if isinstance(content, bytes) else Path(content).read_bytes())
    return out


def _search(context, address: str) -> tuple[list[str], list[str], int]:
    """Result links' targets, console errors and page errors, and the number of summaries, of one search."""
    errors: list[str] = []
    page = context.new_page()
    page.on("console", lambda message: errors.append(message.text) if message.type == "error" else None)
    page.on("pageerror", lambda error: errors.append(str(error)))
    try:
        page.goto(address)
        page.wait_for_selector("#search-results p.search-summary", timeout=20_000)
        page.wait_for_timeout(500)  # let any summary fetch settle, and fail
        links = page.eval_on_selector_all("#search-results ul.search li > a", "(as) => as.map((a) => a.href)")
        summaries = page.locator("#search-results ul.search li p.context").count()
    finally:
        page.close()
    return links, errors, summaries


def test_search_from_disk_finds_pages_without_errors_or_teacher_pages(browser, participant_site):
    context = browser.new_context()  # no server: file:// only, and every request recorded
    requests: list[str] = []
    context.on("request", lambda request: requests.append(request.url))
    try:
        links, errors, summaries = _search(context, (participant_site / "search.html").as_uri() + f"?q={QUERY}")
    finally:
        context.close()
    assert links, "searching the participant copy from disk found nothing"
    elsewhere = [url for url in requests if not url.startswith(("file://", "data:"))]
    assert not elsewhere, elsewhere
    assert not errors, f"console errors while searching from disk: {errors[:5]}"
    assert summaries == 0, "summaries need fetch(), which file:// refuses"
    teacher = [link for link in links if link.split("#")[0].endswith(("book/workshop.html", "book/answers.html"))]
    assert not teacher, f"the participant search lists teacher's pages: {teacher}"


def test_search_over_http_keeps_its_summaries(browser, base_url):
    from tools.site.browser import offline_context

    context = offline_context(browser)
    try:
        links, errors, summaries = _search(context, base_url + f"search.html?q={QUERY}")
    finally:
        context.close()
    assert links and not errors, errors[:5]
    assert summaries > 0, "served over http, the results should show summaries"
