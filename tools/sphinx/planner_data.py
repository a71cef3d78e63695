"""The layout planner's numbers, exported from ``lib`` into the built book.

The planner page (``book/planner.md``, ``_static/planner.js``) evaluates the
formulas of :func:`lib.serving.plan` in the reader's browser. It takes every
number those formulas need from one file written at build time, never from a
copy typed by hand: the model presets (:data:`lib.transformer.PRESETS`), the
hardware catalogue (:data:`lib.hardware.DEVICES`, ``LINKS``,
``HOP_LATENCY``), NCCL's constants (:data:`lib.collectives.BASE_LATENCY`,
``PROTOCOL_SHARE`` and :func:`lib.collectives.tuning_constants`) and the
defaults of :func:`lib.serving.plan` and :func:`lib.serving.frontier`.

A page opened from disk (``file://``) may not ``fetch()`` a JSON file in
Chromium, so the JSON goes out as a script that sets one global,
``window.PLANNER_DATA`` (:func:`script`), in ``_static/planner-data.js``.

As a Sphinx extension (loaded by :mod:`tools.sphinx.html_tweaks`) it writes that file
into the HTML output when the builder starts, before any page is written,
and lists it among the page's scripts (``html_tweaks`` keeps it on the
planner page only). By hand::

    python -m tools.sphinx.planner_data _build/html/_static     # writes planner-data.js there
    python -m tools.sphinx.planner_data -                       # prints it

>>> data = planner_data()
>>> data["presets"]["llama-3-70b"]["layers"], data["devices"]["h100-sxm"]["link"]
(80, 'nvlink4')
>>> script({"a": 1})
'window.PLANNER_DATA = {"a":1};\\n'
"""

from __future__ import annotations

import argparse
import dataclasses
import inspect
import json
import math
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["SCRIPT_NAME", "GLOBAL", "planner_data", "script", "write", "setup", "main"]

#: The file name under ``_static`` of the built book.
SCRIPT_NAME = "planner-data.js"
#: The global that the script sets.
GLOBAL = "PLANNER_DATA"

#: Fields of a model preset that the formulas use (names as in ``ModelConfig``).
MODEL_FIELDS = (
    "name",
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "ffn_hidden",
    "vocab",
    "experts",
    "experts_per_token",
    "gated_mlp",
    "qkv_bias",
    "tied_embeddings",
    "head_width",
    "shared_experts",
    "shared_ffn_hidden",
    "dense_layers",
    "dense_ffn_hidden",
    "kv_lora_rank",
    "q_lora_rank",
    "rope_head_dim",
    "v_head_dim",
    "hf_id",
    "context_length",
)
#: Fields of ``ModelConfig`` that a custom model of the page leaves at their defaults.
MODEL_DEFAULTS = MODEL_FIELDS[9:]
DEVICE_FIELDS = (
    "name",
    "memory_bytes",
    "memory_bandwidth",
    "peak_flops",
    "link",
    "fp8_flops",
    "network",
    "nics_per_gpu",
)
#: Architectures ``lib.transformer.from_hf_config`` reads that the page's custom model cannot hold (it has no
#: fields for latent attention, shared experts or leading dense layers): its reader refuses them.
PAGE_REFUSES = ("DeepseekV3ForCausalLM",)
#: Fields of ``Device`` that a custom device of the page leaves at their defaults.
DEVICE_DEFAULTS = ("fp8_flops", "network", "nics_per_gpu")
LINK_FIELDS = ("name", "bandwidth", "kind", "nccl_share", "in_network_efficiency")
#: Units of :mod:`lib.units` that the page converts with (its inputs and cells are in GB, GiB, TB/s,
#: TFLOPS and ms).
UNITS = ("GB", "GiB", "TB", "TFLOPS", "ms")
#: Keyword arguments of ``lib.serving.plan`` whose defaults the page starts from.
PLAN_DEFAULTS = (
    "devices_per_node",
    "link",
    "inter_link",
    "nics_per_node",
    "prefix_hit_rate",
    "expert_parallel",
    "percentile",
)
#: Fields of ``lib.serving.Engine`` whose defaults the page starts from (``None``: set by the device).
ENGINE_FIELDS = (
    "weight_format",
    "kv_format",
    "allreduce",
    "expert_exchange",
    "cuda_graphs",
    "memory_efficiency",
    "compute_efficiency",
    "layer_overhead",
    "step_overhead",
    "max_num_seqs",
    "max_num_batched_tokens",
    "gpu_memory_utilization",
)


def _pick(record: Any, fields: tuple[str, ...]) -> dict:
    values = asdict(record)
    return {name: values[name] for name in fields}


def _preset(config: Any) -> dict:
    """A preset's :data:`MODEL_FIELDS`, less those at ``ModelConfig``'s default (the page merges ``model_defaults``)."""
    defaults = _field_defaults(type(config), MODEL_DEFAULTS)
    fields = _pick(config, MODEL_FIELDS).items()
    return {name: value for name, value in fields if name not in defaults or value != defaults[name]}


def _defaults(function: Any, names: tuple[str, ...]) -> dict:
    parameters = inspect.signature(function).parameters
    return {name: parameters[name].default for name in names}


def _field_defaults(cls: Any, names: tuple[str, ...]) -> dict:
    fields = {f.name: f.default for f in dataclasses.fields(cls)}
    return {name: fields[name] for name in names}


def _kernels() -> dict:
    """lib.kernels' measured GEMM tables: which table prices each catalogue device (by name) and weight format, the
    stand-in of a device outside the catalogue, and the tables themselves (lib.kernels.table_data)."""
    from lib import formats, hardware, kernels

    by_name = {}
    for slug, device in hardware.DEVICES.items():
        sources = {fmt: kernels.gemm_source(slug, fmt) for fmt in formats.WEIGHT_FORMATS}
        by_name[device.name] = {fmt: f"{s.table_device}/{s.table_format}" for fmt, s in sources.items()}
    keys = {key for named in by_name.values() for key in named.values()}
    keys |= {f"{kernels.OUTSIDE_CATALOGUE}/{compute}" for compute in ("bf16", "fp8")}
    tables = {key: _table(key) for key in sorted(keys)}
    for table in list(tables.values()):
        if table["rule"] == "points" and table["shape_grid"] not in tables:
            tables[table["shape_grid"]] = _table(table["shape_grid"])
    return {"by_name": by_name, "outside": kernels.OUTSIDE_CATALOGUE, "tables": tables}


#: Significant digits of the efficiencies in the page's GEMM tables: the page's interpolated efficiencies then agree
#: with lib's within a relative 1e-10, ten times closer than the page's tests ask (1e-9).
KERNEL_DIGITS = 11


def _table(key: str) -> dict:
    """``lib.kernels.table_data`` of ``"device/arithmetic"``, its efficiencies to :data:`KERNEL_DIGITS` digits."""
    from lib import kernels

    table = kernels.table_data(*key.split("/"))
    rounded = np.vectorize(lambda e: float(f"{e:.{KERNEL_DIGITS - 1}e}"))
    for name in ("grid", "efficiency"):
        if name in table:
            table[name] = rounded(np.array(table[name])).tolist()
    return table


def _engine() -> dict:
    """lib.serving.engine's defaults and constants, and lib.formats' formats."""
    from lib import formats
    from lib.serving import engine

    return {
        "defaults": _field_defaults(engine.Engine, ENGINE_FIELDS),
        "layer_overhead": engine.LAYER_OVERHEAD,
        "eager_layer_launch": engine.EAGER_LAYER_LAUNCH,
        "non_torch_bytes": [engine.NON_TORCH_BYTES[1], engine.NON_TORCH_BYTES[2]],
        "cuda_graph_bytes": engine.CUDA_GRAPH_BYTES,
        "scheduler_tiers": [[least, excluded, list(limits)] for least, excluded, limits in engine.SCHEDULER_TIERS],
        "weight_formats": {
            name: {"bytes_per_weight": f.bytes_per_weight, "compute": f.compute, "description": f.description}
            for name, f in formats.WEIGHT_FORMATS.items()
        },
        "kv_formats": dict(formats.KV_FORMATS),
        "unquantised_bytes": formats.UNQUANTISED_BYTES,
    }


def _capacity() -> dict:
    """lib.serving.capacity's words and the sizes of its grids and iterations."""
    import importlib

    capacity = importlib.import_module("lib.serving.capacity")  # lib.serving.capacity is also a function's name
    return {
        "bindings": list(capacity.BINDINGS),
        "grid": capacity._GRID,
        "draws": capacity._DRAWS,
        "together": capacity._TOGETHER,
        "fixed_point": capacity._FIXED_POINT,
        "bisections": capacity._BISECTIONS,
        "precision": capacity._PRECISION,
    }


def _engine_allreduce() -> dict:
    """lib.collectives.engine's rules and kernel constants."""
    from lib.collectives import engine

    return {
        "choices": list(engine.ALLREDUCE_CHOICES),
        "supported_groups": list(engine.SUPPORTED_GROUPS),
        "max_size": engine.MAX_SIZE,
        "one_shot_below_4": engine.ONE_SHOT_BELOW_4,
        "one_shot_below_8": engine.ONE_SHOT_BELOW_8,
        "one_shot": {"latency": engine.ONE_SHOT.latency, "link_share": engine.ONE_SHOT.link_share},
        "two_shot": {"latency": engine.TWO_SHOT.latency, "link_share": engine.TWO_SHOT.link_share},
    }


#: Expert-parallel group sizes up to which the page knows :func:`lib.experts.expected_max_normal`.
EXPERT_GROUPS = 64


def _expected_max_normal(experts: list[int]) -> dict:
    """:func:`lib.experts.expected_max_normal` for every group size up to :data:`EXPERT_GROUPS` and every one
    that divides a preset's experts: what expert parallelism needs (the page refuses other sizes)."""
    from lib.experts import expected_max_normal

    sizes = sorted({d for e in experts for d in range(1, e + 1) if e % d == 0} | set(range(1, EXPERT_GROUPS + 1)))
    return {str(d): expected_max_normal(d) for d in sizes}


def planner_data() -> dict:
    """Everything the planner page computes with, in SI units, as plain JSON-ready values."""
    from lib import collectives, hardware, serving, transformer, units

    return {
        "presets": {slug: _preset(config) for slug, config in transformer.PRESETS.items()},
        "model_defaults": _field_defaults(transformer.ModelConfig, MODEL_DEFAULTS),
        "hf_architectures": {a: bias for a, bias in transformer.ARCHITECTURES.items() if a not in PAGE_REFUSES},
        "hf_refused": sorted(PAGE_REFUSES),
        "devices": {slug: _pick(device, DEVICE_FIELDS) for slug, device in hardware.DEVICES.items()},
        "device_defaults": _field_defaults(hardware.Device, DEVICE_DEFAULTS),
        "links": {slug: _pick(link, LINK_FIELDS) for slug, link in hardware.LINKS.items()},
        "hop_latency": hardware.HOP_LATENCY,
        "book_device": hardware.BOOK_DEVICE,
        "nccl": {
            "algorithms": list(collectives.ALGORITHMS),
            "protocols": list(collectives.PROTOCOLS),
            "base_latency": collectives.BASE_LATENCY,
            "protocol_share": collectives.PROTOCOL_SHARE,
            **collectives.tuning_constants(),
        },
        "engine": _engine(),
        "kernels": _kernels(),
        "capacity": _capacity(),
        "engine_allreduce": _engine_allreduce(),
        "expected_max_normal": _expected_max_normal([c.experts for c in transformer.PRESETS.values()]),
        "serving": {
            "activation_bytes": serving.ACTIVATION_BYTES,
            "attention_efficiency": serving.ATTENTION_EFFICIENCY,
            "prefill_lumps": serving.step._LUMPS,
            "expert_groups": EXPERT_GROUPS,
            "plan_defaults": _defaults(serving.plan, PLAN_DEFAULTS),
            "frontier_batches": list(_defaults(serving.frontier, ("batches",))["batches"]),
            "size_defaults": _defaults(serving.size, ("max_devices",)),
            "max_devices": serving.layout.MAX_DEVICES,
            "max_inline_requests": serving.lengths.MAX_INLINE_REQUESTS,
            "max_inline_tokens": serving.lengths.MAX_INLINE_TOKENS,
            "quantization": serving.command.QUANTIZATION,
            "checkpoint_suffix": serving.command.CHECKPOINT_SUFFIX,
            "all2all_backend": serving.command.ALL2ALL_BACKEND,
            "moe_a2a_backend": serving.command.MOE_A2A_BACKEND,
            "sglang_kv_cache_dtype": serving.command.SGLANG_KV_CACHE_DTYPE,
            "head_address": serving.command.HEAD_ADDRESS,
            "data_parallel_rpc_port": serving.command.DATA_PARALLEL_RPC_PORT,
            "dist_init_port": serving.command.DIST_INIT_PORT,
            "engine_versions": serving.engine_flags.ENGINE_VERSIONS,
            "tie_band": serving.TIE_BAND,
            "trust": {
                "levels": list(serving.trust.LEVELS),
                "ratios": {name: list(ratios) for name, ratios in serving.CAPACITY_RATIOS.items()},
                "held_out": serving.trust.HELD_OUT,
                "interval_level": serving.INTERVAL_LEVEL,
            },
            "splits": list(serving.layout.SPLITS),
        },
        "units": {name: getattr(units, name) for name in UNITS},
    }


def script(data: dict | None = None) -> str:
    """``data`` (by default :func:`planner_data`) as a script that sets ``window.PLANNER_DATA``.

    Compact JSON, keys sorted, so that the file changes only when a number does;
    each number in its shortest form that reads back to the same double.
    Refuses NaN and infinities, which JSON cannot carry.
    """
    return f"window.{GLOBAL} = {_json(planner_data() if data is None else data)};\n"


def _json(value: Any) -> str:
    """``value`` as compact JSON, keys sorted, each float in :func:`_number`'s form."""
    if isinstance(value, dict):
        return (
            "{" + ",".join(f"{json.dumps(str(k), ensure_ascii=False)}:{_json(value[k])}" for k in sorted(value)) + "}"
        )
    if isinstance(value, list | tuple):
        return "[" + ",".join(_json(item) for item in value) + "]"
    if isinstance(value, float):
        return _number(value)
    return json.dumps(value, ensure_ascii=False)


def _number(x: float) -> str:
    """The shortest text of ``x`` that parses back to the same double: ``1555000000000.0`` is ``1.555e12``.

    >>> _number(1555000000000.0), _number(0.0), _number(2.5e-05), _number(0.125)
    ('1.555e12', '0', '2.5e-5', '0.125')
    """
    if not math.isfinite(x):
        raise ValueError(f"JSON carries no NaN or infinity, got {x!r}")
    texts = [repr(x)] + ([str(int(x))] if x.is_integer() and abs(x) < 2**53 else [])
    digits = next(d for d in range(17) if float(f"{x:.{d}e}") == x)
    mantissa, exponent = f"{x:.{digits}e}".split("e")
    texts.append(f"{mantissa}e{int(exponent)}")
    return min(texts, key=len)


def write(folder: str | Path) -> Path:
    """Write :data:`SCRIPT_NAME` into ``folder`` (created if missing); return its path."""
    target = Path(folder) / SCRIPT_NAME
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(script(), encoding="utf-8")
    return target


def _write_into_output(app: Any) -> None:
    if getattr(app.builder, "format", None) == "html":
        write(Path(app.outdir) / "_static")


def setup(app: Any) -> dict:
    """Sphinx entry point: write the data when the HTML builder starts and list the script."""
    app.connect("builder-inited", _write_into_output)
    app.add_js_file(SCRIPT_NAME)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", help=f"where to write {SCRIPT_NAME} (- prints it instead)")
    args = parser.parse_args(argv)
    if args.folder == "-":
        sys.stdout.write(script())
    else:
        print(write(args.folder))
    return 0


if __name__ == "__main__":
    sys.exit(main())
