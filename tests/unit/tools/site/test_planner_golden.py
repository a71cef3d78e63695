"""The planner's JavaScript mirrors of ``lib``, function by function: every ``// mirrors`` tag names a real twin.

Each function of ``_static/planner-*.js`` that mirrors a Python function has
one line directly above it, ``// mirrors lib.<module>.<name>`` (a method or
property as ``lib.<module>.<Class>.<name>``). These tests read the tags,
import every twin, and ask that each public function, method and property of
a mirrored module is mirrored or listed in :data:`PYTHON_ONLY` with the
reason; that each tagged function is exported in its script's ``_mirrors``
map, has golden cases (``tests/browser/golden/functions.json``, compared in
Chromium by ``tests/browser/test_planner_functions.py``), and is one that
:func:`tools.site.planner_golden.mirrors` knows how to record.
"""

from __future__ import annotations

import importlib
import inspect
import json
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[4]
STATIC = ROOT / "_static"
SCRIPTS = (
    "planner-model.js",
    "planner-capacity.js",
    "planner-collectives.js",
    "planner-config.js",
    "planner-sizing.js",
    "planner-map.js",
)
GOLDEN = ROOT / "tests" / "browser" / "golden" / "functions.json"

TAG = re.compile(r"^\s*// mirrors (\S+)\s*$")
FUNCTION = re.compile(r"^\s*function (\w+)\(")

#: Public functions, methods and properties of the mirrored modules that the page does not mirror, and why.
PYTHON_ONLY = {
    "lib.serving.memory.check_context": "a refusal, not a row: planner-model.js's contextRefusal gives its "
    "message word for word (tests/unit/lib/serving/test_plan.py pins the Python side)",
    "lib.serving.lengths.read_lengths": "a file of the command line's; the page takes the text form (parseLengths)",
    "lib.serving.lengths.describe_lengths": "the command line's words; the page's link keeps the text as typed",
    "lib.serving.lengths.format_lengths": "the page shows and links the text as typed, never writes one back",
    "lib.transformer.hf.context_length": "the page's custom model has no context length (0: unknown)",
    "lib.collectives.engine.kernel_for": "the kernel's name for one size; the page uses customKernel's mask",
    "lib.collectives.nccl.tuning_constants": "exported as data by tools/sphinx/planner_data.py",
    "lib.collectives.nccl.allreduce_cost": "one algorithm and protocol; the page needs only the tuner's best",
    "lib.collectives.startup.collective_cost": "one protocol; ringCollective takes the best of them",
    "lib.collectives.startup.startup_time": "chapter 5's startup cost, not in the planner's model",
    "lib.collectives.startup.TwoLevel.time": "two-level all-reduce of chapter 5, not in the planner",
    "lib.collectives.startup.two_level_allreduce": "two-level all-reduce of chapter 5, not in the planner",
    "lib.diagrams.data.span": "words of the book's figures",
    "lib.diagrams.data.listing": "words of the book's figures",
    "lib.diagrams.data.shard": "the tensor-parallel figure's data",
    "lib.diagrams.data.tp_block_data": "the tensor-parallel figure's data",
    "lib.diagrams.data.pipeline_data": "the pipeline figure's data",
    "lib.diagrams.data.experts_data": "the experts figure's data",
    "lib.experts.route": "simulated routing of chapter 8",
    "lib.experts.expert_capacity": "capacity factor of trained routers, not in the planner",
    "lib.experts.expert_slot_limit": "capacity factor of trained routers, not in the planner",
    "lib.experts.load_imbalance": "imbalance of a simulated routing",
    "lib.experts.Routing.slot_limit": "simulated routing of chapter 8",
    "lib.experts.Routing.slots": "simulated routing of chapter 8",
    "lib.experts.Routing.load": "simulated routing of chapter 8",
    "lib.experts.Routing.accepted": "simulated routing of chapter 8",
    "lib.experts.Routing.routed": "simulated routing of chapter 8",
    "lib.experts.Routing.dropped": "simulated routing of chapter 8",
    "lib.experts.Routing.drop_fraction": "simulated routing of chapter 8",
    "lib.experts.Routing.imbalance": "simulated routing of chapter 8",
    "lib.experts.dispatch": "simulated routing of chapter 8",
    "lib.experts.simulate_router": "simulated routing of chapter 8",
    "lib.experts.dispatch_bytes": "simulated routing of chapter 8",
    "lib.formats.weight_format": "a table lookup; the page reads PLANNER_DATA.engine.weight_formats",
    "lib.formats.kv_bytes": "a table lookup; the page reads PLANNER_DATA.engine.kv_formats",
    "lib.hardware.Device.ridge_intensity": "chapter 6's roofline ridge, not in the planner",
    "lib.hardware.Link.latency": "chapter 5's link latency; the planner prices NCCL's hops",
    "lib.hardware.device": "a catalogue lookup; the page reads PLANNER_DATA.devices",
    "lib.hardware.link": "a catalogue lookup; the page reads PLANNER_DATA.links",
    "lib.serving.capacity.Workload.prompt": "part of workload (planner-capacity.js)",
    "lib.serving.capacity.Workload.output": "part of workload (planner-capacity.js)",
    "lib.serving.capacity.Workload.context": "part of workload (planner-capacity.js)",
    "lib.serving.capacity.Workload.new_tokens": "part of workload (planner-capacity.js)",
    "lib.serving.capacity.replica_load": "one replica at one rate; the page needs only the capacity",
    "lib.serving.engine.Engine.weight_bytes": "set by resolveEngine (weight_bytes)",
    "lib.serving.engine.Engine.kv_bytes": "set by resolveEngine (kv_bytes)",
    "lib.kernels.gemm_rows": "the committed rows; the page reads the tables built from them (PLANNER_DATA.kernels)",
    "lib.kernels.gemm_source": "which table prices a device and format: PLANNER_DATA.kernels.by_name, from it",
    "lib.kernels.table_data": "writes PLANNER_DATA.kernels.tables",
    "lib.serving.engine.configure": "planner.js builds the engine's fields, then resolveEngine",
    "lib.serving.layout.Layout.devices": "tp * pp * dp, inlined",
    "lib.serving.layout.Cluster.node": "an integer division, inlined in hopLinks",
    "lib.serving.layout.check_layout": "its rules are inlined in layouts (tpAllowed)",
    "lib.serving.layout.check_devices": "planner.js's field rules apply its cap (planner_data's max_devices)",
    "lib.serving.memory.kv_cache_bytes": "chapter 7's cache size, not a planner column",
    "lib.serving.memory.weight_bytes_per_device": "the largest of stageWeightBytes, inlined in budget",
    "lib.serving.memory.MemoryFit.total": "part of memoryFit's result",
    "lib.serving.memory.MemoryFit.free": "part of memoryFit's result",
    "lib.serving.memory.MemoryFit.fits": "part of memoryFit's result",
    "lib.serving.operators.Roofline.time": "part of roofline's result",
    "lib.serving.operators.StageWork.operators": "passWork's ops",
    "lib.serving.operators.StageWork.linear_time": "a sum the page does not show",
    "lib.serving.operators.StageWork.attention_time": "a sum the page does not show",
    "lib.serving.operators.StageWork.head_time": "passWork's head.time",
    "lib.serving.operators.StageWork.read_bytes": "a sum the page does not show",
    "lib.serving.operators.StageWork.flops": "a sum the page does not show",
    "lib.serving.operators.StageWork.memory_time": "a sum the page does not show",
    "lib.serving.operators.StageWork.compute_time": "a sum the page does not show",
    "lib.serving.operators.StageWork.compute_bound_time": "passWork's computeBound",
    "lib.serving.operators.StageWork.time": "passWork's time",
    "lib.serving.operators.exchange_time": "inlined in communication (vLLM's all-gather and reduce-scatter only)",
    "lib.serving.plan.PlanRow.name": "planRow's name (layoutName)",
    "lib.serving.plan.PlanRow.layout": "the page keeps the layout itself",
    "lib.serving.plan.PlanRow.devices": "planRow's devices",
    "lib.serving.plan.mean_context": "prompt + output / 2, inlined in planRow",
    "lib.serving.sizing.best_capacity": "a fixed cluster's best layout; the page sizes with size",
    "lib.serving.step.stage_work": "a decode batch or one prompt for chapter 7; the page calls passWork",
    "lib.serving.step.steady_prefill": "inlined in decodeStep",
    "lib.serving.step.compute_bound_batch": "chapter 7's ridge batch, not a planner column",
    "lib.transformer.hf.read_hf_config": "reads a file; the page reads pasted text (planner-config.js read)",
    "lib.transformer.models.ParameterBreakdown.attention": "a sum, inlined in parameterCount",
    "lib.transformer.models.ParameterBreakdown.layer": "a sum, inlined in parameterCount",
    "lib.transformer.models.ParameterBreakdown.total": "parameterCount",
    "lib.transformer.models.active_parameter_count": "chapter 8's count, not a planner number",
    "lib.transformer.models.decode_parameters_read": "chapter 6's count, not a planner number",
    "lib.transformer.parallel.tp_bytes_per_collective": "chapter 4's TP model; the planner prices operators",
    "lib.transformer.parallel.tp_collectives_per_token": "chapter 4's TP model; the planner prices operators",
    "lib.transformer.parallel.TPComm.total_time": "chapter 4's TP model; the planner prices operators",
    "lib.transformer.parallel.tp_comm_per_token": "chapter 4's TP model; the planner prices operators",
    "lib.transformer.parallel.tp_crossover_batch": "chapter 4's TP model; the planner prices operators",
    "lib.transformer.parallel.decode_time_bound": "chapter 4's bound; the planner prices operators",
    "lib.transformer.parallel.valid_tp_degrees": "the page asks of one degree at a time (tpAllowed)",
    "lib.transformer.parallel.shard_efficiency": "chapter 4's efficiency model, not in the planner",
}


def tags() -> dict[tuple[str, str], str]:
    """``{(script, JavaScript function): dotted Python path}`` of every tag; a tag not right above a function fails."""
    found: dict[tuple[str, str], str] = {}
    for script in SCRIPTS:
        lines = (STATIC / script).read_text(encoding="utf-8").splitlines()
        for i, line in enumerate(lines):
            tag = TAG.match(line)
            if not tag:
                assert not line.strip().startswith("// mirrors"), f"{script}:{i + 1}: a malformed tag: {line.strip()}"
                continue
            function = FUNCTION.match(lines[i + 1]) if i + 1 < len(lines) else None
            assert function, f"{script}:{i + 1}: the tag is not directly above a function: {lines[i + 1]!r}"
            assert (script, function.group(1)) not in found, f"{script}: {function.group(1)} tagged twice"
            found[script, function.group(1)] = tag.group(1)
    return found


def twin(path: str) -> tuple[str, object]:
    """``(module name, object)`` of a dotted path: the longest importable prefix, then attributes (static, so a
    property is found as itself)."""
    parts = path.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        module = obj.__name__
        for name in parts[cut:]:
            obj = inspect.getattr_static(obj, name)
        return module, obj
    raise ImportError(f"no module in {path}")


def public(module: str) -> set[str]:
    """Dotted paths of the public functions of ``module`` and the public methods and properties of its classes."""
    mod = importlib.import_module(module)
    found = set()
    for name, obj in vars(mod).items():
        if name.startswith("_") or getattr(obj, "__module__", None) != module:
            continue
        if inspect.isfunction(obj):
            found.add(f"{module}.{name}")
        elif inspect.isclass(obj):
            found |= {
                f"{module}.{name}.{attr}"
                for attr, member in vars(obj).items()
                if not attr.startswith("_")
                and (inspect.isfunction(member) or isinstance(member, (property, staticmethod, classmethod)))
            }
    return found


TAGS = tags()


def test_tags_are_found_in_every_script():
    assert {script for script, _ in TAGS} == set(SCRIPTS)
    assert len(TAGS) >= 80, len(TAGS)


@pytest.mark.parametrize("path", sorted(set(TAGS.values())))
def test_every_twin_exists_in_lib(path):
    module, obj = twin(path)
    assert path.startswith(module + ".") and module.startswith("lib.")
    assert inspect.isclass(obj) or callable(obj) or isinstance(obj, property), f"{path} is {obj!r}"


def test_every_public_function_of_a_mirrored_module_is_mirrored_or_python_only():
    mirrored = set(TAGS.values())
    modules = {twin(path)[0] for path in mirrored}
    missing = sorted(path for module in modules for path in public(module) - mirrored - set(PYTHON_ONLY))
    assert not missing, f"neither mirrored nor in PYTHON_ONLY (with a reason): {missing}"
    stale = sorted(
        path
        for path in PYTHON_ONLY
        if path in mirrored or path not in {p for module in modules for p in public(module)}
    )
    assert not stale, f"PYTHON_ONLY entries that are mirrored or not public functions of a mirrored module: {stale}"
    assert all(reason.strip() for reason in PYTHON_ONLY.values())


@pytest.mark.parametrize("script", SCRIPTS)
def test_every_tagged_function_is_exported_for_the_tests(script):
    text = (STATIC / script).read_text(encoding="utf-8")
    block = re.search(r"var mirrors = (?:\{\};\n\s*Object\.entries\()?\{(.*?)\}", text, re.DOTALL)
    assert block, f"{script} has no `var mirrors = {{...}}` map"
    exported = dict(re.findall(r"(\w+): (\w+)", block.group(1)))
    assert all(key == value for key, value in exported.items()), exported
    assert set(exported) == {name for s, name in TAGS if s == script}
    assert "_mirrors: mirrors" in text


def test_golden_cases_cover_every_tag():
    from tools.site.planner_golden import mirrors

    golden = json.loads(GOLDEN.read_text(encoding="utf-8"))["functions"]
    assert {(f["script"], f["name"]): f["mirrors"] for f in golden.values()} == TAGS
    assert {(m.script, m.name): m.target for m in mirrors()} == TAGS
    assert all(f["cases"] for f in golden.values()), [k for k, f in golden.items() if not f["cases"]]


def test_golden_files_come_from_this_lib():
    from tools.site.planner_golden import GOLDEN as FOLDER
    from tools.site.planner_golden import fingerprint

    now = fingerprint()
    for name in ("functions.json", "scenarios.json"):
        text = (FOLDER / name).read_text(encoding="utf-8")
        made_from = re.search(r'^ "lib_sha256": "([0-9a-f]{64})"', text, re.M)
        assert made_from, f"{name} names no lib_sha256"
        assert made_from.group(1) == now, (
            f"{name} was made from another lib: run `python -m tools.site.planner_golden` "
            "(make fixtures) and review the diff"
        )
