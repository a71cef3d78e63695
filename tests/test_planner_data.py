"""tools.planner_data: the planner page's numbers come from lib, whole, at build time."""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

import pytest

from lib import collectives, hardware, serving, transformer, units
from tools import html_tweaks, planner_data

ROOT = Path(__file__).resolve().parents[1]


def parse(script: str) -> dict:
    prefix = f"window.{planner_data.GLOBAL} = "
    assert script.startswith(prefix) and script.endswith(";\n")
    return json.loads(script[len(prefix):-2])


def test_script_round_trips_the_data():
    data = planner_data.planner_data()
    assert parse(planner_data.script(data)) == json.loads(json.dumps(data))


def test_every_preset_device_and_link_with_its_numbers():
    data = planner_data.planner_data()
    assert set(data["presets"]) == set(transformer.PRESETS)
    for slug, config in transformer.PRESETS.items():
        exported = data["presets"][slug]
        for name in planner_data.MODEL_FIELDS:
            assert exported[name] == getattr(config, name), (slug, name)
    assert set(data["devices"]) == set(hardware.DEVICES)
    for slug, device in hardware.DEVICES.items():
        assert data["devices"][slug] == {k: v for k, v in asdict(device).items() if k in planner_data.DEVICE_FIELDS}
    assert set(data["links"]) == set(hardware.LINKS)
    for slug, link in hardware.LINKS.items():
        exported = data["links"][slug]
        assert exported["bandwidth"] * exported["nccl_share"] == link.nccl_bandwidth
        assert exported["kind"] == link.kind and exported["in_network_efficiency"] == link.in_network_efficiency
    assert data["hop_latency"] == hardware.HOP_LATENCY
    assert data["book_device"] == hardware.BOOK_DEVICE
    # The page's link between servers is plan's default, lib.hardware's slow link (no copy of its own).
    assert data["serving"]["plan_defaults"]["inter_link"] == hardware.SLOW_LINK
    assert "slow_link" not in data


def test_units_are_lib_units():
    data = planner_data.planner_data()
    assert data["units"] == {name: getattr(units, name) for name in planner_data.UNITS}
    assert data["units"]["TFLOPS"] == units.TFLOPS == 1e12


def test_nccl_constants_and_planner_defaults():
    data = planner_data.planner_data()
    nccl = data["nccl"]
    assert nccl["base_latency"] == collectives.BASE_LATENCY
    assert nccl["protocol_share"] == collectives.PROTOCOL_SHARE
    assert nccl["algorithms"] == list(collectives.ALGORITHMS) and nccl["protocols"] == list(collectives.PROTOCOLS)
    for key, value in collectives.tuning_constants().items():
        assert nccl[key] == value, key
    defaults = inspect.signature(serving.plan).parameters
    for key, value in data["serving"]["plan_defaults"].items():
        assert value == defaults[key].default, key
    assert data["serving"]["frontier_batches"] == list(inspect.signature(serving.frontier).parameters["batches"].default)
    assert data["serving"]["activation_bytes"] == serving.ACTIVATION_BYTES


def test_tuning_constants_is_a_copy():
    constants = collectives.tuning_constants()
    constants["ll_cap"]["nvlink4"] = 0.0
    assert collectives.tuning_constants()["ll_cap"]["nvlink4"] > 0


def test_no_infinity_or_nan_reaches_the_page():
    with pytest.raises(ValueError):
        planner_data.script({"x": float("nan")})
    with pytest.raises(ValueError):
        planner_data.script({"x": float("inf")})


def test_write_and_command_line(tmp_path, capsys):
    target = planner_data.write(tmp_path / "out" / "_static")
    assert target.name == planner_data.SCRIPT_NAME
    assert parse(target.read_text(encoding="utf-8")) == parse(planner_data.script())
    assert planner_data.main(["-"]) == 0
    assert parse(capsys.readouterr().out) == parse(planner_data.script())


class FakeApp:
    """What the extension asks of Sphinx: connect, add_js_file, and the builder's output folder."""

    def __init__(self, outdir: Path, fmt: str = "html") -> None:
        self.outdir = outdir
        self.builder = SimpleNamespace(format=fmt)
        self.handlers: dict[str, list] = {}
        self.scripts: list[str] = []
        self.extensions: list[str] = []

    def connect(self, event: str, handler, priority: int = 500) -> None:
        self.handlers.setdefault(event, []).append(handler)

    def add_js_file(self, name: str) -> None:
        self.scripts.append(name)

    def setup_extension(self, name: str) -> None:
        self.extensions.append(name)


def test_extension_writes_the_data_when_the_html_builder_starts(tmp_path):
    app = FakeApp(tmp_path / "html")
    planner_data.setup(app)
    assert app.scripts == [planner_data.SCRIPT_NAME]
    for handler in app.handlers["builder-inited"]:
        handler(app)
    assert (tmp_path / "html" / "_static" / planner_data.SCRIPT_NAME).is_file()
    latex = FakeApp(tmp_path / "latex", fmt="latex")
    for handler in app.handlers["builder-inited"]:
        handler(latex)
    assert not (tmp_path / "latex").exists()


def test_html_tweaks_loads_it_and_keeps_it_on_the_planner_page():
    app = FakeApp(Path("."))
    html_tweaks.setup(app)
    assert app.extensions == ["tools.planner_data"]
    for name in ("planner.js", "planner.css", planner_data.SCRIPT_NAME):
        assert html_tweaks.keep(f"_static/{name}?v=1", "book/planner")
        assert not html_tweaks.keep(f"_static/{name}?v=1", "book/calculator")


def _numbers(value, found: set) -> set:
    if isinstance(value, dict):
        for item in value.values():
            _numbers(item, found)
    elif isinstance(value, list):
        for item in value:
            _numbers(item, found)
    elif isinstance(value, (int, float)) and not isinstance(value, bool) and value:
        found.add(float(value))
    return found


def significant_digits(x: float) -> int:
    """
    >>> significant_digits(3.35), significant_digits(0.001), significant_digits(989.5e12)
    (3, 1, 4)
    """
    return len(f"{x:.12e}".split("e")[0].replace(".", "").rstrip("0"))


def test_the_script_types_no_catalogue_number_by_hand():
    """No figure of the exported data appears as a literal in planner.js (in SI or in the page's units).

    Only figures with two or more significant digits count (3.35, 0.92, 87.7): 0.5 or 1000 are
    everywhere for other reasons.
    """
    source = (ROOT / "_static" / "planner.js").read_text(encoding="utf-8")
    literals = {float(m) for m in re.findall(r"(?<![\w.])(\d+\.\d+(?:e[+-]?\d+)?|\d+e[+-]?\d+)", source)}
    exported = _numbers(planner_data.planner_data(), set())
    scaled = {float(f"{x / unit:.9g}") for x in exported for unit in (1, 1e-6, 1e9, 1e12, 2**30)}
    typed = {x for x in literals if significant_digits(x) >= 2 and float(f"{x:.9g}") in scaled}
    assert not typed, f"numbers of lib typed into planner.js: {sorted(typed)}"
