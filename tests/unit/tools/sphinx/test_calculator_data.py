"""The calculator's presets (tools/sphinx/calculator_data.py) against chapter 6's glued speed-ups.

Each preset is turned into the ``lib.budget.Phase`` the page computes in its
model mode (``_static/calculator.js``: ``V_K = a (K - 1) / K n``,
``l_K = l0 + s (K - 1) delta``) and must reproduce, within 1 %, the speed-ups
that chapter 6 glued from ``lib.serving.decode_step`` for Llama-3 70B: eight
devices over one, and eight over four. The browser test
``tests/browser/test_calculator_chapter6.py`` reads the same from the page.
"""

from __future__ import annotations

import math
from pathlib import Path

import nbformat
import pytest

from lib.budget import Phase
from lib.units import GB, ms, s, us
from tools.notebooks.glue import glue_values
from tools.sphinx import calculator_data

ROOT = Path(__file__).resolve().parents[4]
CHAPTER_6 = ROOT / "notebooks" / "06_tensor_parallel_decode.ipynb"

#: How close a preset must come to the chapter's glued speed-up (the issue's acceptance).
REL_TOL = 0.01


def chapter_6_glued(name: str) -> float:
    return float(glue_values(nbformat.read(CHAPTER_6, as_version=4))[name]["text/plain"])


def number(text: str) -> float:
    return math.inf if text.strip().lower() in ("inf", "infinity") else float(text)


def preset_phase(preset: dict, devices: int) -> Phase:
    """The Phase the page computes from a preset's fields at ``devices`` (model mode)."""
    data = calculator_data.calculator_data()
    collective = data["collectives"][preset["collective"]]
    n = number(preset["message_bytes"])
    k = devices
    return Phase(
        serial=number(preset["serial_ms"]) * ms,
        divisible=number(preset["divisible_ms"]) * ms,
        efficiency=1.0 if k == 1 else number(preset["efficiency"]),
        transfers=int(preset["transfers"]),
        startup=0.0
        if k == 1
        else (number(preset["l0_us"]) + collective["per_rank"] * (k - 1) * number(preset["delta_us"])) * us,
        transfer_bytes=0.0 if k == 1 else collective["share"] * (k - 1) / k * n,
        bandwidth=number(preset["bandwidth_GBps"]) * GB / s,
        devices=k,
    )


def test_nvlink_preset_reproduces_chapter_6():
    preset = calculator_data.calculator_data()["presets"]["llama-nvlink"]
    t1, t4, t8 = (preset_phase(preset, k).split_time for k in (1, 4, 8))
    assert t4 / t8 == pytest.approx(chapter_6_glued("c06_l70_gain48"), rel=REL_TOL)
    assert t1 / t8 == pytest.approx(chapter_6_glued("c06_l70_speedup8"), rel=REL_TOL)


@pytest.mark.parametrize("key", ["llama-nvlink", "llama-ethernet"])
def test_llama_presets_carry_the_fixed_cost_per_layer(key):
    from lib import hardware, serving

    preset = calculator_data.calculator_data()["presets"][key]
    engine = serving.Engine().resolved(hardware.DEVICES[hardware.BOOK_DEVICE])
    assert number(preset["serial_ms"]) * ms == pytest.approx(engine.layer_overhead, rel=1e-9)
    assert chapter_6_glued("c06_tau_us") * us == pytest.approx(engine.layer_overhead, rel=1e-9)


def test_nvlink_preset_prices_the_engines_all_reduce():
    """l0 + 2 (K - 1) delta with no bytes term is the one-shot kernel's time for the preset's message."""
    from lib import collectives

    preset = calculator_data.calculator_data()["presets"]["llama-nvlink"]
    n = number(preset["message_bytes"])
    for k in (2, 4, 8):
        phase = preset_phase(preset, k)
        one = collectives.engine_allreduce(n, k, "nvlink4")
        assert one.kernel == "one-shot"
        assert phase.communication_time / phase.transfers == pytest.approx(float(one.time), rel=1e-9)
