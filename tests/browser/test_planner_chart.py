"""The planner's chart names each layout: colour and tooltip per point, direct labels clear of the markers,
and the latency targets drawn when set."""

from __future__ import annotations

import pytest
from site_support import query

pytestmark = pytest.mark.browser

PAGE = "book/planner.html"

READ_CHART = """() => {
  const svg = document.getElementById('pl-chart');
  const box = (e) => { const r = e.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
  return {
    points: Array.from(svg.querySelectorAll('circle.pl-point[data-layout]')).map((c) => ({layout: c.getAttribute('data-layout'),
      colour: Array.from(c.classList).find((k) => /^pl-c\\d$/.test(k)), title: c.querySelector('title')?.textContent})),
    markers: Array.from(svg.querySelectorAll('circle[data-layout], path.pl-best-mark')).map(box),
    labels: Array.from(svg.querySelectorAll('text.pl-note, text.pl-layout-label, text.pl-target-label'))
      .map((t) => ({text: t.textContent, box: box(t)})),
    tpot: svg.querySelectorAll('line.pl-target[data-target="tpot"]').length,
    ttft: svg.querySelectorAll('[data-target="ttft"]').length,
    key: Array.from(document.querySelectorAll('#pl-chart-key li')).map((li) => li.textContent),
    rows: Array.from(document.querySelectorAll('tr[data-layout]')).map((tr) => tr.getAttribute('data-layout')),
  };
}"""


def _overlap(a, b) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


@pytest.mark.parametrize(
    "values, tpot, ttft",
    [
        ({}, 0, 0),
        ({"tpot_limit_ms": "40"}, 1, 0),
        ({"ttft_limit_ms": "800", "tpot_limit_ms": "40", "weight_format": "fp8"}, 1, 1),
        ({"model": "mixtral-8x7b", "devices": "16", "ttft_limit_ms": "2000"}, 0, 1),
    ],
)
@pytest.mark.parametrize("width", [1280, 390])
def test_each_point_named_targets_drawn_labels_clear(browser, base_url, values, tpot, ttft, width):
    from tools.site.browser import offline_context

    context = offline_context(browser, viewport={"width": width, "height": 900})
    try:
        page = context.new_page()
        page.goto(base_url + PAGE + query(values))
        page.wait_for_selector("tr[data-layout]")
        chart = page.evaluate(READ_CHART)
        assert chart["points"], "no point"
        colours = {}
        for point in chart["points"]:
            assert point["layout"] in chart["rows"], point
            assert point["title"].startswith(point["layout"] + " at batch "), point
            assert colours.setdefault(point["layout"], point["colour"]) == point["colour"], point
        assert chart["key"] == list(colours)  # the key names each layout once, in the points' order
        assert (chart["tpot"], chart["ttft"]) == (tpot, ttft)
        assert any(label["text"].startswith("best at batch") for label in chart["labels"]) or width == 390
        for i, label in enumerate(chart["labels"]):
            for marker in chart["markers"]:
                assert not _overlap(label["box"], marker), (label, marker)
            for other in chart["labels"][i + 1 :]:
                assert not _overlap(label["box"], other["box"]), (label, other)
    finally:
        context.close()
