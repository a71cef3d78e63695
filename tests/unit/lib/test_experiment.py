"""Tests for lib.experiment: the six cases of chapters 2 and 3, in Python and on the command line.

Expected values come from the source article's arithmetic (chapter 2 base case:
S = 0.8 ms, C = 12 ms, eta = 0.8, K = 2, H = 0.92 ms).
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from lib import experiment

# name: (T1 ms, T2 ms, speedup), each derived by hand.
EXPECTED = {
    "base": (0.8 + 12, 0.8 + 7.5 + 0.92, 12.8 / 9.22),
    "small job": (0.8 + 1, 0.8 + 0.625 + 0.92, 1.8 / 2.345),
    "slow link": (12.8, 0.8 + 7.5 + 4 * (0.03 + 2.0), 12.8 / 16.42),
    "fast link": (12.8, 0.8 + 7.5 + 4 * (0.03 + 0.04), 12.8 / 8.58),
    "long serial": (100 + 12, 100 + 7.5 + 0.92, 112 / 108.42),
    "break-even": (0.8 + 0.92 / 0.375, 0.8 + 0.92 / 0.375, 1.0),
}


def check_cases(cases):
    assert [case["name"] for case in cases] == list(EXPECTED)
    for case in cases:
        one, two, speedup = EXPECTED[case["name"]]
        assert case["one_ms"] == pytest.approx(one), case["name"]
        assert case["two_ms"] == pytest.approx(two), case["name"]
        assert case["speedup"] == pytest.approx(speedup), case["name"]


def test_run_matches_hand_derivation():
    result = experiment.run()
    assert result["matrix"]["full"] == [-3, 9]
    assert result["matrix"]["parts"] == [[1, 1], [-4, 8]]
    check_cases(result["cases"])


def test_quoted_figures():
    cases = {case["name"]: case for case in experiment.run()["cases"]}
    assert round(cases["base"]["speedup"], 3) == 1.388
    assert round(cases["base"]["speedup"] / 2, 3) == 0.694
    assert round(cases["long serial"]["speedup"], 3) == 1.033
    assert round(cases["break-even"]["one_ms"] - 0.8, 5) == 2.45333
    assert cases["small job"]["two_ms"] > cases["small job"]["one_ms"]
    assert cases["slow link"]["two_ms"] > cases["slow link"]["one_ms"]


def test_scenarios_change_one_assumption_each():
    base = experiment.BASE
    for name, phase in experiment.scenarios()[1:]:
        changed = [
            field
            for field in (
                "serial",
                "divisible",
                "efficiency",
                "transfers",
                "startup",
                "transfer_bytes",
                "bandwidth",
                "devices",
            )
            if getattr(phase, field) != getattr(base, field)
        ]
        assert len(changed) == 1, (name, changed)


def test_results_are_json_plain():
    result = experiment.run()
    assert json.loads(json.dumps(result)) == result


def test_main_writes_json(tmp_path: Path, capsys):
    target = tmp_path / "cases.json"
    experiment.main(["--json", str(target)])
    stored = json.loads(target.read_text())
    assert len(stored["cases"]) == 6
    check_cases(stored["cases"])
    printed = capsys.readouterr().out
    assert "base" in printed and str(target) in printed


def test_command_line(tmp_path: Path):
    target = tmp_path / "out.json"
    completed = subprocess.run(
        [sys.executable, "-m", "lib.experiment", "--json", str(target)],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert "9.2200" in completed.stdout
    stored = json.loads(target.read_text())
    assert len(stored["cases"]) == 6
    check_cases(stored["cases"])
