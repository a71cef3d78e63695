"""The planner's CSV and JSON downloads hold the table's rows, columns and full-precision values."""

from __future__ import annotations

import csv
import io
import json

import pytest
from site_support import open_page, query

pytestmark = pytest.mark.browser

PAGE = "book/planner.html"

#: The table as it shows: the column of each cell (data-output), and its data-value or else its text.
READ_TABLE = """() => Array.from(document.querySelectorAll('#pl-rows tr[data-layout]')).map((tr) =>
  Array.from(tr.querySelectorAll('[data-output]')).map((c) => [c.getAttribute('data-output'),
    c.tagName === 'TH' ? tr.getAttribute('data-layout') : (c.getAttribute('data-value') ?? c.textContent.trim())]))"""


def _same(exported, shown: str) -> bool:
    if isinstance(exported, bool) or shown in ("true", "false"):
        return str(exported).lower() == shown
    if isinstance(exported, (int, float)):
        return float(exported) == float(shown)
    return exported == shown


@pytest.mark.parametrize(
    "values",
    [
        {},
        {"tpot_limit_ms": "30", "price_per_device_hour": "2.5", "devices": "16"},
    ],
    ids=["plain", "targets and price"],
)
def test_downloads_hold_the_table(context, base_url, values):
    page, visit = open_page(context, base_url + PAGE + query({"batch": "32", **values}))
    page.wait_for_selector("tr[data-layout]")
    shown = page.evaluate(READ_TABLE)
    columns = [name for name, _ in shown[0]]
    with page.expect_download() as got:
        page.click("#pl-csv")
    text = open(got.value.path(), encoding="utf-8").read()
    assert got.value.suggested_filename.endswith(".csv")
    rows = list(csv.reader(io.StringIO(text)))
    assert rows[0] == columns and len(rows) == len(shown) + 1
    for row, cells in zip(rows[1:], shown):
        assert all(_same(a, b) for a, (_, b) in zip(row, cells)), (row, cells)
    with page.expect_download() as got:
        page.click("#pl-json")
    records = json.loads(open(got.value.path(), encoding="utf-8").read())
    assert got.value.suggested_filename.endswith(".json")
    assert [list(r) for r in records] == [columns] * len(shown)
    for record, cells in zip(records, shown):
        assert all(_same(record[name], value) for name, value in cells), (record, cells)
    assert ("requests_per_s_per_device" in columns) == ("tpot_limit_ms" in values)
    assert not visit.page_errors and not [u for u in context.requests if not u.startswith(base_url)]
    page.close()


def test_no_download_while_an_input_is_wrong(context, base_url):
    page, _ = open_page(context, base_url + PAGE + query({"batch": "0"}))
    page.wait_for_selector("td.pl-waiting")
    assert page.locator("#pl-csv").is_disabled() and page.locator("#pl-json").is_disabled()
    page.close()
