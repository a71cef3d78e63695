"""tools.sphinx.planner_data: the planner page's numbers come from lib, whole, at build time."""

from __future__ import annotations

import dataclasses
import inspect
import json
import re
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest

from lib import collectives, experts, formats, hardware, kernels, serving, transformer, units
from lib.collectives import engine as engine_allreduce
from lib.serving import engine as serving_engine
from tools.sphinx import html_tweaks, planner_data

ROOT = Path(__file__).resolve().parents[4]


def parse(script: str) -> dict:
    prefix = f"window.{planner_data.GLOBAL} = "
    assert script.startswith(prefix) and script.endswith(";\n")
    return json.loads(script[len(prefix) : -2])


def test_script_round_trips_the_data():
    data = planner_data.planner_data()
    assert parse(planner_data.script(data)) == json.loads(json.dumps(data))


def test_every_preset_device_and_link_with_its_numbers():
    data = planner_data.planner_data()
    assert set(data["presets"]) == set(transformer.PRESETS)
    for slug, config in transformer.PRESETS.items():
        exported = {**data["model_defaults"], **data["presets"][slug]}
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
    # The page's links are plan's defaults, None: the device's own link and its reference network (no copy).
    assert data["serving"]["plan_defaults"]["link"] is None
    assert data["serving"]["plan_defaults"]["inter_link"] is None
    assert "slow_link" not in data
    # A custom model or device of the page takes ModelConfig's and Device's defaults for the fields it has no input for.
    for cls, key, names in (
        (transformer.ModelConfig, "model_defaults", planner_data.MODEL_DEFAULTS),
        (hardware.Device, "device_defaults", planner_data.DEVICE_DEFAULTS),
    ):
        defaults = {f.name: f.default for f in dataclasses.fields(cls)}
        assert data[key] == {name: defaults[name] for name in names}, key


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
    assert data["serving"]["frontier_batches"] == list(
        inspect.signature(serving.frontier).parameters["batches"].default
    )
    assert data["serving"]["activation_bytes"] == serving.ACTIVATION_BYTES
    assert data["serving"]["prefill_lumps"] == serving.step._LUMPS
    assert data["serving"]["max_devices"] == serving.layout.MAX_DEVICES == 4096  # the page's cap, from lib
    assert data["serving"]["tie_band"] == serving.TIE_BAND
    trust = data["serving"]["trust"]
    assert trust["levels"] == list(serving.trust.LEVELS) and trust["interval_level"] == serving.INTERVAL_LEVEL
    assert trust["ratios"] == {name: list(r) for name, r in serving.CAPACITY_RATIOS.items()}
    assert trust["held_out"] == serving.trust.HELD_OUT
    assert data["serving"]["splits"] == list(serving.layout.SPLITS)


def test_engine_defaults_constants_and_formats():
    data = planner_data.planner_data()
    engine = data["engine"]
    fields = {f.name: f.default for f in dataclasses.fields(serving.Engine)}
    assert engine["defaults"] == {name: fields[name] for name in planner_data.ENGINE_FIELDS}
    assert set(planner_data.ENGINE_FIELDS) == set(fields)
    assert engine["layer_overhead"] == serving_engine.LAYER_OVERHEAD
    assert engine["eager_layer_launch"] == serving_engine.EAGER_LAYER_LAUNCH
    assert engine["non_torch_bytes"] == [serving_engine.NON_TORCH_BYTES[1], serving_engine.NON_TORCH_BYTES[2]]
    assert engine["cuda_graph_bytes"] == serving_engine.CUDA_GRAPH_BYTES
    assert engine["unquantised_bytes"] == formats.UNQUANTISED_BYTES
    assert engine["kv_formats"] == formats.KV_FORMATS
    assert set(engine["weight_formats"]) == set(formats.WEIGHT_FORMATS)
    for name, fmt in formats.WEIGHT_FORMATS.items():
        assert engine["weight_formats"][name]["bytes_per_weight"] == fmt.bytes_per_weight
        assert engine["weight_formats"][name]["compute"] == fmt.compute


def test_scheduler_tiers_give_lib_scheduler_limits():
    """The page picks the scheduler's limits from the exported tiers as scheduler_limits does, for every device."""
    tiers = planner_data.planner_data()["engine"]["scheduler_tiers"]

    def from_tiers(device: hardware.Device) -> tuple[int, int]:
        for least, excluded, limits in tiers:
            if device.memory_bytes >= least and not (excluded and excluded in device.name.lower()):
                return tuple(limits)
        raise AssertionError("no tier")

    custom = [
        hardware.Device(f"custom {gib}", gib * units.GiB, 1e12, 1e15, "nvlink4", "", "")
        for gib in (16, 69.9, 70, 80, 159, 160, 192)
    ]
    for device in list(hardware.DEVICES.values()) + custom:
        assert from_tiers(device) == serving_engine.scheduler_limits(device), device.name


def test_capacity_words_and_sizes():
    import importlib

    capacity = importlib.import_module("lib.serving.capacity")
    data = planner_data.planner_data()["capacity"]
    assert data == {
        "bindings": list(capacity.BINDINGS),
        "grid": capacity._GRID,
        "draws": capacity._DRAWS,
        "together": capacity._TOGETHER,
        "fixed_point": capacity._FIXED_POINT,
        "bisections": capacity._BISECTIONS,
        "precision": capacity._PRECISION,
    }


def test_engine_allreduce_rules_and_expert_spread():
    data = planner_data.planner_data()
    rules = data["engine_allreduce"]
    assert rules["choices"] == list(engine_allreduce.ALLREDUCE_CHOICES)
    assert rules["supported_groups"] == list(engine_allreduce.SUPPORTED_GROUPS)
    assert rules["max_size"] == engine_allreduce.MAX_SIZE
    assert rules["one_shot_below_4"] == engine_allreduce.ONE_SHOT_BELOW_4
    assert rules["one_shot_below_8"] == engine_allreduce.ONE_SHOT_BELOW_8
    for key, kernel in (("one_shot", engine_allreduce.ONE_SHOT), ("two_shot", engine_allreduce.TWO_SHOT)):
        assert rules[key] == {"latency": kernel.latency, "link_share": kernel.link_share}
    spread = data["expected_max_normal"]
    assert data["serving"]["expert_groups"] == planner_data.EXPERT_GROUPS
    wanted = set(range(1, planner_data.EXPERT_GROUPS + 1))
    for config in transformer.PRESETS.values():
        wanted |= {d for d in range(1, config.experts + 1) if config.experts % d == 0}
    assert set(spread) == {str(d) for d in wanted}
    for d in (1, 2, 8, 64, 256):
        assert spread[str(d)] == experts.expected_max_normal(d)


def test_what_attention_data_parallel_layouts_need():
    """MLA's latent widths and the shared experts of DeepSeek-V3 and Qwen3, the engine's expert exchange and
    vLLM's flag for it: the page prices and writes adp layouts (expert_parallel="all") from these."""
    data = planner_data.planner_data()
    deepseek, qwen = (
        {**data["model_defaults"], **data["presets"][slug]} for slug in ("deepseek-v3", "qwen3-235b-a22b")
    )
    assert (deepseek["kv_lora_rank"], deepseek["rope_head_dim"], deepseek["q_lora_rank"]) == (512, 64, 1536)
    assert deepseek["shared_experts"] == 1 and deepseek["dense_layers"] == 3
    assert qwen["experts"] == transformer.PRESETS["qwen3-235b-a22b"].experts and qwen["kv_lora_rank"] == 0
    assert data["engine"]["defaults"]["expert_exchange"] == serving.Engine().expert_exchange
    assert data["serving"]["all2all_backend"] == serving.command.ALL2ALL_BACKEND
    assert data["serving"]["quantization"] == serving.command.QUANTIZATION
    assert data["serving"]["moe_a2a_backend"] == serving.command.MOE_A2A_BACKEND
    assert data["serving"]["engine_versions"] == serving.engine_flags.ENGINE_VERSIONS


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
    assert "tools.sphinx.planner_data" in app.extensions  # beside html_tweaks' other extensions (EXTENSIONS)
    for name in (
        "planner.js",
        "planner-model.js",
        "planner-capacity.js",
        "planner-collectives.js",
        "planner.css",
        planner_data.SCRIPT_NAME,
    ):
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


#: The page's scripts: none may type a number of lib.
PAGE_SCRIPTS = tuple(
    sorted(
        name
        for name, pages in html_tweaks.PAGE_ONLY.items()
        if pages == ("book/planner",) and name.endswith(".js") and name != planner_data.SCRIPT_NAME
    )
)


@pytest.mark.parametrize("script", PAGE_SCRIPTS)
def test_the_script_types_no_catalogue_number_by_hand(script):
    """No figure of the exported data appears as a literal in the page's scripts (in SI or in the page's units).

    Only figures with two or more significant digits count (3.35, 0.92, 87.7): 0.5 or 1000 are
    everywhere for other reasons.
    """
    source = (ROOT / "_static" / script).read_text(encoding="utf-8")
    literals = {float(m) for m in re.findall(r"(?<![\w.])(\d+\.\d+(?:e[+-]?\d+)?|\d+e[+-]?\d+)", source)}
    exported = _numbers(planner_data.planner_data(), set())
    scaled = {float(f"{x / unit:.9g}") for x in exported for unit in (1, 1e-6, 1e9, 1e12, 2**30)}
    typed = {x for x in literals if significant_digits(x) >= 2 and float(f"{x:.9g}") in scaled}
    assert not typed, f"numbers of lib typed into {script}: {sorted(typed)}"


def test_each_page_script_names_the_python_it_follows():
    """Every script of the page says at its top which module of lib it mirrors, and every one is page-only."""
    for script in PAGE_SCRIPTS:
        top = (ROOT / "_static" / script).read_text(encoding="utf-8")[:1500]
        assert re.search(r"lib[./](serving|collectives|transformer|diagrams)", top), script
        assert html_tweaks.PAGE_ONLY[script] == ("book/planner",), script


def test_presets_leave_out_only_fields_at_their_defaults():
    data = planner_data.planner_data()
    left_out = {name for preset in data["presets"].values() for name in planner_data.MODEL_FIELDS if name not in preset}
    assert left_out and left_out <= set(data["model_defaults"])


def test_kernel_tables_round_only_below_the_pages_tolerance():
    for key, table in planner_data.planner_data()["kernels"]["tables"].items():
        full = kernels.table_data(*key.split("/"))
        name = "grid" if table["rule"] == "grid" else "efficiency"
        np.testing.assert_allclose(table[name], full[name], rtol=1e-10, atol=0)
