"""Every page of the book as a reader's browser shows it.

One visit per page (the ``page_reports`` fixture in conftest.py) feeds one
test per aspect: the page loads without console errors, asks nothing of the
internet, typesets its maths, shows its images with alt text, and passes
axe-core with no serious or critical violation.
"""

from __future__ import annotations

import pytest
from site_support import PAGES, blocking, tolerated

from tools.site.browser import is_external

pytestmark = pytest.mark.browser


@pytest.mark.parametrize("path", PAGES)
def test_page_loads_without_console_errors(page_reports, path):
    visit = page_reports[path].visit
    assert visit.status == 200, f"{path} answered HTTP {visit.status}"
    errors = [m for m in visit.console_errors if not tolerated(m)]
    assert not errors, f"console errors on {path}: {errors}"
    assert not visit.page_errors, f"uncaught JavaScript errors on {path}: {visit.page_errors}"
    assert not visit.failed, f"requests that failed on {path}: {visit.failed}"


def test_no_request_leaves_the_machine(page_reports):
    recorded = [url for report in page_reports.values() for url in report.visit.requests]
    assert recorded, "no request was recorded at all: the recorder is broken"
    external = sorted({url for url in recorded if is_external(url)})
    assert not external, f"{len(external)} requests to other hosts than 127.0.0.1: {external}"


def test_some_pages_have_maths(page_reports):
    # Guards the maths test below against passing because it looks at nothing.
    assert any(report.math_elements for report in page_reports.values()), "no page has maths"


@pytest.mark.parametrize("path", PAGES)
def test_maths_is_typeset(page_reports, path):
    report = page_reports[path]
    if not report.math_elements:
        pytest.skip(f"{path} has no maths")
    assert not report.math_without_output, f"maths left as raw TeX on {path}: {report.math_without_output}"
    assert not report.math_errors, f"MathJax errors on {path}: {report.math_errors}"


@pytest.mark.parametrize("path", PAGES)
def test_images_load_and_have_alt_text(page_reports, path):
    images = page_reports[path].images
    broken = [image["src"] for image in images if image["width"] <= 0]
    assert not broken, f"images that did not load on {path}: {broken}"
    no_alt = [image["src"] for image in images if not (image["alt"] or "").strip() and not image["hidden"]]
    assert not no_alt, f"images without alt text on {path}: {no_alt}"


@pytest.mark.parametrize("path", PAGES)
def test_no_serious_accessibility_violation(page_reports, path):
    found = blocking(page_reports[path].violations)
    details = [
        f"{v['id']} ({v['impact']}): {v['help']} at "
        + "; ".join(", ".join(map(str, node["target"])) for node in v["nodes"][:5])
        for v in found
    ]
    assert not found, f"axe-core on {path}:\n" + "\n".join(details)
