"""Every function of the planner's scripts that mirrors ``lib`` against ``lib``'s own calls, one function at a time.

``tests/browser/golden/functions.json`` (``python -m tools.site.planner_golden``)
holds, for each JavaScript function tagged ``// mirrors lib....``, the calls
``lib`` made to its Python twin while planning and sizing every seeded
scenario of the end-to-end tests, in the JavaScript function's calling
convention, with ``lib``'s answers. One blank page loads the built
``planner-data.js`` and the planner's scripts; each test runs all of one
function's cases in one ``page.evaluate`` (through the scripts'
``_mirrors`` maps) and compares every number within a relative 1e-9, every
string and flag exactly. A failure names the script, the function, its Python
twin, the case and the value that differs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytestmark = pytest.mark.browser

GOLDEN = Path(__file__).with_name("golden") / "functions.json"

#: The scripts in the order the page loads them, and the global each sets.
SCRIPTS = {
    "planner-collectives.js": "PlannerCollectives",
    "planner-model.js": "PlannerModel",
    "planner-capacity.js": "PlannerCapacity",
    "planner-config.js": "PlannerConfig",
    "planner-sizing.js": "PlannerSizing",
    "planner-map.js": "PlannerMap",
}

#: Relative agreement of a mirror with lib: the same formulas in the same order, so far above rounding only.
RTOL = 1e-9

#: Absolute tolerances of fields that are ``1 - x`` of numbers near 1, by function and field (the last key of the
#: value's path; ``"*"``: every field): prefill_lumps's and _poisson's last probability is 1 less the others'
#: sum (numpy adds pairwise, JavaScript in a row), and a plan row's prefill share is 1 less a ratio of step times,
#: so they may differ by a few ulps of 1. 1e-12 is far below any probability or share that moves a step time.
ABSOLUTE = {
    "prefillLumps": {"weights": 1e-12},
    "poisson": {"*": 1e-12},
    "plan": {"prefillShare": 1e-12},
    "decodeStep": {"prefillShare": 1e-12},
}


def _golden() -> dict:
    with GOLDEN.open(encoding="utf-8") as file:
        return json.load(file)


FUNCTIONS = sorted(_golden()["functions"])

#: Runs every case of one function; returns the failures in words (at most ``limit``) and their count.
RUN = """([global, name, label, text, rtol, absolute, limit]) => {
  const objects = window.GOLDEN_OBJECTS, cases = JSON.parse(text, revive);
  const fn = window[global]._mirrors[name];
  if (typeof fn !== 'function') { return {count: 1, failures: [`${label}: not exported in ${global}._mirrors`]}; }
  const resolve = (x) => {
    if (Array.isArray(x)) { return x.map(resolve); }
    if (x !== null && typeof x === 'object') {
      if ('$ref' in x) { return resolve(objects[x.$ref]); }
      return Object.fromEntries(Object.entries(x).map(([k, v]) => [k, resolve(v)]));
    }
    return x;
  };
  const show = (x) => typeof x === 'number' ? String(x) : JSON.stringify(x);
  const failures = [];
  let count = 0;
  const fail = (text) => { count += 1; if (failures.length < limit) { failures.push(text); } };
  const compare = (got, want, path, where) => {
    const field = path.replace(/\\[\\d+\\]/g, '').split('.').pop();
    const atol = field in absolute ? absolute[field] : (absolute['*'] || 0);
    if (typeof want === 'number') {
      if (typeof got !== 'number') { fail(`${where}${path} ${show(got)} vs lib ${show(want)}`); return; }
      if (Number.isNaN(want) ? Number.isNaN(got) : got === want) { return; }
      const scale = Math.max(Math.abs(want), Math.abs(got));
      if (!(Math.abs(got - want) <= Math.max(rtol * scale, atol))) { fail(`${where}${path} ${got} vs lib ${want}`); }
      return;
    }
    if (want === null || typeof want !== 'object') {
      if (got !== want) { fail(`${where}${path} ${show(got)} vs lib ${show(want)}`); }
      return;
    }
    if (Array.isArray(want)) {
      if (got === null || got === undefined || typeof got.length !== 'number' || got.length !== want.length) {
        fail(`${where}${path} has ${got && got.length} items vs lib ${want.length}`);
        return;
      }
      want.forEach((w, i) => compare(got[i], w, `${path}[${i}]`, where));
      return;
    }
    if (got === null || typeof got !== 'object') { fail(`${where}${path} ${show(got)} vs lib an object`); return; }
    Object.keys(want).forEach((key) => compare(got[key], want[key], path ? `${path}.${key}` : key, where));
  };
  cases.forEach((c, i) => {
    const where = `${label}: case ${i} `;
    let got, error = null;
    try { got = fn.apply(null, resolve(c.args)); } catch (e) { error = String(e && e.message); }
    if ('raises' in c) {
      if (error !== c.raises) { fail(`${where}throws ${show(error)} vs lib raises ${show(c.raises)}`); }
      return;
    }
    if (error !== null) { fail(`${where}throws ${show(error)}`); return; }
    compare(got, c.want, '', where);
  });
  return {count: count, failures: failures};
}"""


@pytest.fixture(scope="module")
def golden() -> dict:
    return _golden()


#: JSON.parse's reviver for :func:`_text`'s stand-ins of the floats JSON has no word for.
REVIVE = """window.revive = (key, value) =>
  value === '__inf__' ? Infinity : value === '__-inf__' ? -Infinity : value === '__nan__' ? NaN : value;"""


def _text(data: Any) -> str:
    """``data`` as JSON text, infinities and NaN as strings that :data:`REVIVE` turns back.

    >>> _text([1.5, float("inf"), {"a": float("nan")}])
    '[1.5, "__inf__", {"a": "__nan__"}]'
    """

    def plain(x: Any) -> Any:
        if isinstance(x, float) and not math.isfinite(x):
            return "__nan__" if math.isnan(x) else "__inf__" if x > 0 else "__-inf__"
        if isinstance(x, dict):
            return {k: plain(v) for k, v in x.items()}
        if isinstance(x, list):
            return [plain(v) for v in x]
        return x

    return json.dumps(plain(data))


@pytest.fixture(scope="module")
def blank(context: Any, site_dir: Path, golden: dict) -> Iterator[Any]:
    """A blank page with only the built planner-data.js and the planner's scripts."""
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda error: errors.append(str(error)))
    page.goto("about:blank")
    for name in ("planner-data.js", *SCRIPTS):
        page.add_script_tag(path=str(site_dir / "_static" / name))
    # planner-model.js reads PLANNER_DATA when plan() runs; the other scripts call it after that, as the page does.
    page.evaluate("window.PlannerModel._mirrors.stageLayers(1, 1)")
    page.evaluate(REVIVE)
    page.evaluate("(text) => { window.GOLDEN_OBJECTS = JSON.parse(text, revive); }", _text(golden["objects"]))
    yield page
    assert not errors, errors
    page.close()


def test_every_function_has_cases(golden):
    empty = [key for key, f in golden["functions"].items() if not f["cases"]]
    assert not empty, f"functions without golden cases: {empty}"
    assert {f["script"] for f in golden["functions"].values()} == set(SCRIPTS)


@pytest.mark.parametrize("key", FUNCTIONS)
def test_function_agrees_with_lib(blank, golden, key):
    f = golden["functions"][key]
    label = f"{f['script']} {f['name']} (mirrors {f['mirrors']})"
    got = blank.evaluate(
        RUN, [SCRIPTS[f["script"]], f["name"], label, _text(f["cases"]), RTOL, ABSOLUTE.get(f["name"], {}), 8]
    )
    assert got["count"] == 0, f"{got['count']} of {len(f['cases'])} cases differ:\n" + "\n".join(got["failures"])


def _quantile_cases() -> Iterator[tuple[str, list[float], list[float], float]]:
    """Samples larger than the golden calls, where the page selects the quantile instead of sorting: ties, a
    running sum that reaches q of the total exactly on a value (the sort decides), and extreme q."""
    rng = np.random.default_rng(7)
    values = rng.integers(0, 50, 5000).astype(float) / 7
    yield "ties", list(values), list(rng.random(5000)), 0.9
    yield "sum meets q exactly", [float(i // 4) for i in range(4096)], [1.0] * 4096, 0.5
    spread = rng.lognormal(0.0, 2.0, 20000)
    weights = list(rng.random(20000) ** 4)
    for q in (1e-6, 0.5, 0.99, 1 - 1e-9):
        yield f"q={q}", list(spread), weights, q


def test_weighted_quantile_selects_what_lib_sorts(blank):
    from lib.serving.capacity import _weighted_quantile

    for label, values, weights, q in _quantile_cases():
        want = _weighted_quantile(np.array(values), np.array(weights), q)
        got = blank.evaluate(
            "([v, w, q]) => window.PlannerCapacity._mirrors.weightedQuantile(v, w, q)", [values, weights, q]
        )
        assert got == want, f"{label}: page {got} vs lib {want}"
