"""Golden cases of the layout planner: seeded scenarios with ``lib``'s answers, and ``lib``'s calls per function.

The planner page (``book/planner.md``) evaluates ``lib.serving`` in
JavaScript (``_static/planner-*.js``); its browser tests compare the two.
Computing ``lib``'s side takes minutes, so it is done once, by this command,
and committed under ``tests/browser/golden/`` for review in diffs::

    python -m tools.site.planner_golden                  # writes tests/browser/golden/*.json
    python -m tools.site.planner_golden --check          # fails if the files differ from a fresh run

``scenarios.json`` holds the seeded random scenarios of the end-to-end tests
(as the page's query strings) and, for each, every row of
:func:`lib.serving.plan` (or :func:`lib.serving.size`'s answer), the row
:func:`lib.serving.best` picks, and which scenarios the browser opens
(``e2e``: the fewest that still cover every case kind). About a quarter of the
plan and sizing scenarios give a sample of request lengths (``lengths``, the
text of :func:`lib.serving.lengths.parse_lengths`) instead of one prompt and
output length. ``acceptance`` holds ten sizings that the page and
``python -m lib.serving --rate`` both take (:func:`acceptance_scenario`,
:func:`cli_arguments`), with ``lib.serving.size``'s answer and plan's rows.

``functions.json`` holds, for each JavaScript function tagged
``// mirrors lib.<module>.<name>``, input and output cases computed by
``lib``: the calls ``lib`` itself makes while planning and sizing every
scenario (:class:`Recorder` wraps the mirrored functions and keeps one call per
function and scenario), turned into the JavaScript function's calling
convention by :data:`MIRRORS`. Objects used by many cases (models, devices,
links, engines) are stored once under ``objects`` and referred to as
``{"$ref": id}``. Floats are written as their ``repr``; keys are sorted.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import inspect
import json
import math
import random
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Self

import numpy as np

__all__ = [
    "ACCEPTANCE_SCENARIOS",
    "GOLDEN",
    "MOE_SCENARIOS",
    "RANDOM_SCENARIOS",
    "ROOT",
    "SIZING_SCENARIOS",
    "Call",
    "Mirror",
    "Recorder",
    "acceptance_scenario",
    "cli_arguments",
    "config_of",
    "dumps",
    "generate",
    "hf_configs",
    "lib_arguments",
    "main",
    "mirrors",
    "moe_draw",
    "moe_kinds",
    "moe_scenario",
    "plan_kinds",
    "random_scenario",
    "scenarios",
    "size_arguments",
    "sizing_kinds",
    "sizing_scenario",
]

ROOT = Path(__file__).resolve().parents[2]
#: Where the golden files live.
GOLDEN = ROOT / "tests" / "browser" / "golden"

#: Scenarios drawn for the plan parity (the planner issue asks for at least 30), the sizing parity (at least 36
#: with targets and sizing) and attention run data-parallel.
RANDOM_SCENARIOS = 36
SIZING_SCENARIOS = 36
MOE_SCENARIOS = 12
PLAN_SEED, SIZING_SEED, MOE_SEED, ACCEPTANCE_SEED = 20260, 20261, 2412, 20262
#: Sizing scenarios that both the page and the command line take (issue 31, acceptance 5).
ACCEPTANCE_SCENARIOS = 10
MOE_MODELS = ("deepseek-v3", "qwen3-235b-a22b", "mixtral-8x7b", "mixtral-8x22b")
MOE_DEVICES = ("h200", "b200", "h100-sxm", "a100-80gb")


# ---------------------------------------------------------------- scenarios


def _log_uniform(rng: random.Random, low: float, high: float) -> int:
    return round(math.exp(rng.uniform(math.log(low), math.log(high))))


def random_scenario(rng: random.Random) -> dict[str, str]:
    """One scenario as the page's query string holds it (strings, the page's input names).

    >>> q = random_scenario(random.Random(1))
    >>> {"model", "device", "devices", "batch", "prompt_tokens", "output_tokens"} <= set(q)
    True
    """
    from lib import hardware
    from lib.transformer import PRESETS

    q: dict[str, str] = {}
    if rng.random() < 0.45:
        q["model"] = rng.choice(sorted(PRESETS))
    else:
        heads = rng.choice([8, 16, 32, 40, 64])
        head_dim = rng.choice([64, 128])
        hidden = heads * head_dim
        experts = rng.choice([1, 1, 4, 8, 16])
        q.update(
            model="custom",
            layers=str(rng.randint(2, 96)),
            hidden=str(hidden),
            heads=str(heads),
            kv_heads=str(rng.choice([k for k in (1, 2, 4, 8, heads) if heads % k == 0])),
            ffn_hidden=str(256 * round(hidden * rng.choice([2, 2.5, 3.5, 4]) / 256)),
            vocab=str(rng.choice([32000, 50257, 128256])),
            experts=str(experts),
            top_k=str(1 if experts == 1 else rng.choice([1, 2])),
        )
    if rng.random() < 0.7:
        q["device"] = rng.choice(sorted(hardware.DEVICES))
        q["link"] = hardware.DEVICES[q["device"]].link
    else:
        q.update(
            device="custom",
            memory_GiB=str(rng.choice([16, 24, 40, 48, 80, 96, 141, 192])),
            bandwidth_TBps=str(round(rng.uniform(0.3, 8), 2)),
            flops_TFLOPS=str(round(rng.uniform(100, 2500), 1)),
            link=rng.choice(["nvlink3", "nvlink4", "nvlink5", "pcie4", "pcie5"]),
        )
    per_node = rng.choice([1, 2, 4, 8, 8])
    nodes = rng.choice([1, 1, 2, 4])
    devices = (
        per_node * nodes if nodes > 1 or rng.random() < 0.7 else rng.choice([k for k in (1, 2, 4) if k <= per_node])
    )
    q.update(
        devices_per_node=str(per_node),
        devices=str(devices),
        inter_link=rng.choice(["ib-hdr", "ib-ndr", "eth-100g", "eth-400g"]),
        weight_format=rng.choice(["bf16", "bf16", "fp8", "int8", "int4"]),
        kv_format=rng.choice(["bf16", "fp8"]),
        prompt_tokens=str(_log_uniform(rng, 1, 8192)),
        output_tokens=str(_log_uniform(rng, 1, 2048)),
        batch=str(_log_uniform(rng, 1, 1024)),
    )
    if rng.random() < 0.3:
        q["prefix_hit_rate"] = str(rng.choice([0.25, 0.5, 0.9]))
    if rng.random() < 0.25:
        q["allreduce"] = "nccl"
    if rng.random() < 0.2:
        q["cuda_graphs"] = "off"
    if rng.random() < 0.25:
        q["max_num_seqs"] = str(rng.choice([16, 64, 256]))
    if rng.random() < 0.25:
        q["max_num_batched_tokens"] = str(rng.choice([512, 2048, 8192]))
    if rng.random() < 0.3:
        q["ttft_limit_ms"] = str(round(rng.uniform(20, 500)))
    if rng.random() < 0.3:
        q["tpot_limit_ms"] = str(round(rng.uniform(5, 100), 1))
    if rng.random() < 0.2:
        q["percentile"] = rng.choice(["0.5", "0.99"])
    if rng.random() < 0.3:
        q["price_per_device_hour"] = str(round(rng.uniform(0.5, 10), 2))
    if rng.random() < 0.25:
        q.update(
            memory_efficiency=str(round(rng.uniform(0.4, 1), 2)),
            compute_efficiency=str(round(rng.uniform(0.3, 1), 2)),
            gpu_memory_utilization=str(round(rng.uniform(0.5, 0.95), 2)),
            nics_per_node=str(rng.randint(1, per_node)),
        )
    if rng.random() < 0.5:
        q["expert_parallel"] = rng.choice(["on", "both"])
    return _with_lengths(q)


def _with_lengths(q: dict[str, str]) -> dict[str, str]:
    """``q``, a quarter of the time with a sample of request lengths (``lengths``, the text form of
    :func:`lib.serving.lengths.parse_lengths`) instead of ``prompt_tokens`` and ``output_tokens``: decided and
    drawn by a generator seeded from ``q`` itself, so that the other scenarios' draws stay as they were.

    >>> _with_lengths({"prompt_tokens": "8", "output_tokens": "2", "batch": "12"})["lengths"]
    '99:322, 170:151*8, 1157:6, 25:243*8'
    >>> sorted(_with_lengths({"prompt_tokens": "8", "output_tokens": "2", "batch": "1"}))
    ['batch', 'output_tokens', 'prompt_tokens']
    """

    side = random.Random(json.dumps(q, sort_keys=True))
    if side.random() >= 0.25:
        return q
    q = {k: v for k, v in q.items() if k not in ("prompt_tokens", "output_tokens")}
    q["lengths"] = _draw_lengths(side)
    return q


def _draw_lengths(rng: random.Random) -> str:
    """A sample of 1 to 4 lengths (log-uniform, prompts to 8,192 and outputs to 2,048 tokens), each 1 to 8 times,
    as text; a third with spaces after the commas (the page and lib read both)."""
    from lib.serving.lengths import format_lengths

    prompts, outputs = [], []
    for _ in range(rng.randint(1, 4)):
        count = rng.choice([1, 1, 2, 3, 8])
        prompts += [_log_uniform(rng, 1, 8192)] * count
        outputs += [_log_uniform(rng, 1, 2048)] * count
    text = format_lengths(prompts, outputs)
    return text.replace(",", ", ") if rng.random() < 0.3 else text


def acceptance_scenario(rng: random.Random, index: int) -> dict[str, str]:
    """Acceptance scenario ``index``: a sizing that the page and ``python -m lib.serving --rate`` both take (a preset
    model on a catalogue device, servers of 8 with the device's own links, the engine's scheduler and
    efficiencies), each with a percentile and a TPOT target, some a TTFT target, prefix hits or a confidence;
    all but every fourth (0, 4, 8) with a sample of lengths.

    >>> q = acceptance_scenario(random.Random(0), 1)
    >>> "percentile" in q and "lengths" in q and "prompt_tokens" not in q
    True
    >>> cli_arguments(q)[:4]
    ['--model', 'mixtral-8x7b', '--device', 'l40s']
    """
    from lib import hardware

    device = rng.choice(["a100-80gb", "h100-sxm", "h200", "l40s", "b200"])
    q = {
        "model": rng.choice(
            ["llama-3-8b", "llama-3.1-8b", "mistral-7b", "mixtral-8x7b", "llama-3-70b", "llama-3.1-70b"]
        ),
        "device": device,
        "link": hardware.DEVICES[device].link,
        "inter_link": hardware.DEVICES[device].network,
        "devices_per_node": "8",
        "devices": "8",
        "batch": str(_log_uniform(rng, 1, 256)),
        "weight_format": rng.choice(["bf16", "bf16", "fp8", "int4"]),
        "kv_format": rng.choice(["bf16", "fp8"]),
        # not a multiple of 1/16 (0.5, 0.75): there the quantile of capacity's 16 stratified draws per block can
        # sit on a gap between two draws, where the last bits of a sum decide it (lib's order or the page's)
        "percentile": rng.choice(["0.6", "0.9", "0.99", "95", "80"]),
        "tpot_limit_ms": str(round(rng.uniform(20, 100), 1)),
        "rate": str(round(math.exp(rng.uniform(0, math.log(100))), 2)),
        "max_devices": str(rng.choice([8, 16, 32])),
    }
    if rng.random() < 0.4:
        q["ttft_limit_ms"] = str(round(rng.uniform(300, 3000)))
    if rng.random() < 0.3:
        q["prefix_hit_rate"] = "0.5"
    if rng.random() < 0.3:
        q["confidence"] = rng.choice(["0.9", "75"])
    if index % 4:
        q["lengths"] = _draw_lengths(rng)
    else:
        q.update(prompt_tokens=str(_log_uniform(rng, 16, 4096)), output_tokens=str(_log_uniform(rng, 16, 1024)))
    return q


def cli_arguments(q: dict[str, str]) -> list[str]:
    """``python -m lib.serving``'s arguments that size for acceptance scenario ``q``
    (:func:`acceptance_scenario`: what the command line's defaults leave as the page's link has it)."""
    argv = ["--model", q["model"], "--device", q["device"], "--rate", q["rate"], "--max-devices", q["max_devices"]]
    if "lengths" in q:
        argv += ["--lengths-inline", q["lengths"]]
    else:
        argv += ["--prompt", q["prompt_tokens"], "--output", q["output_tokens"]]
    flags = {
        "percentile": "--percentile",
        "tpot_limit_ms": "--tpot-ms",
        "ttft_limit_ms": "--ttft-ms",
        "weight_format": "--weight-format",
        "kv_format": "--kv-format",
        "prefix_hit_rate": "--prefix-hit-rate",
        "confidence": "--confidence",
    }
    return argv + [word for key, flag in flags.items() if key in q for word in (flag, q[key])]


def config_of(q: dict[str, str]) -> Any:
    """The ``ModelConfig`` a scenario names: a preset, or the custom shape its fields give.

    >>> config_of({"model": "llama-3-8b"}).layers
    32
    """
    from lib.transformer import PRESETS, ModelConfig

    if q["model"] != "custom":
        return PRESETS[q["model"]]
    return ModelConfig(
        "custom model",
        layers=int(q["layers"]),
        hidden=int(q["hidden"]),
        heads=int(q["heads"]),
        kv_heads=int(q["kv_heads"]),
        ffn_hidden=int(q["ffn_hidden"]),
        vocab=int(q["vocab"]),
        experts=int(q["experts"]),
        experts_per_token=int(q["top_k"]),
    )


def lib_arguments(q: dict[str, str]) -> tuple[tuple, dict]:
    """``lib.serving.plan``'s arguments for a scenario of the page.

    >>> args, options = lib_arguments({"model": "llama-3-8b", "device": "h100-sxm", "devices": "2",
    ...                                "devices_per_node": "8", "batch": "4", "prompt_tokens": "8",
    ...                                "output_tokens": "2"})
    >>> args[1:], options["expert_parallel"], options["ttft_limit"]
    (('h100-sxm', 2, 4, 8, 2), False, None)
    """
    from lib.hardware import Device
    from lib.units import TB, GiB, ms

    if q["device"] == "custom":
        device: object = Device(
            "custom device",
            float(q["memory_GiB"]) * GiB,
            float(q["bandwidth_TBps"]) * TB,
            float(q["flops_TFLOPS"]) * 1e12,
            q["link"],
            "",
            "",
        )
    else:
        device = q["device"]

    def limit(key: str) -> float | None:
        return float(q[key]) * ms if key in q else None

    options: dict[str, Any] = {
        "devices_per_node": int(q["devices_per_node"]),
        "link": q.get("link"),
        "inter_link": q.get("inter_link"),
        "nics_per_node": int(q["nics_per_node"]) if "nics_per_node" in q else None,
        "prefix_hit_rate": float(q.get("prefix_hit_rate", 0)),
        "expert_parallel": {"on": True, "both": "both", "all": "all"}.get(q.get("expert_parallel", "off"), False),
        "ttft_limit": limit("ttft_limit_ms"),
        "tpot_limit": limit("tpot_limit_ms"),
        "price_per_device_hour": float(q["price_per_device_hour"]) if "price_per_device_hour" in q else None,
    }
    # Engine fields: what the link leaves out keeps Engine's default (None: the device's).
    for name in ("weight_format", "kv_format", "allreduce"):
        if name in q:
            options[name] = q[name]
    for name in ("memory_efficiency", "compute_efficiency", "gpu_memory_utilization"):
        if name in q:
            options[name] = float(q[name])
    for name in ("max_num_seqs", "max_num_batched_tokens"):
        if name in q:
            options[name] = int(q[name])
    if "cuda_graphs" in q:
        options["cuda_graphs"] = q["cuda_graphs"] == "on"
    if "percentile" in q:
        options["percentile"] = float(q["percentile"])
    if "lengths" in q:  # a sample of requests: lib takes the arrays
        from lib.serving.lengths import parse_lengths

        lengths: tuple = parse_lengths(q["lengths"])
    else:
        lengths = (int(q["prompt_tokens"]), int(q["output_tokens"]))
    return (config_of(q), device, int(q["devices"]), int(q["batch"]), *lengths), options


def scenarios(
    count: int,
    seed: int,
    draw: Callable,
    before: Callable[[int], None] = lambda found: None,
) -> list[tuple[dict[str, str], list]]:
    """``count`` random scenarios that lib.serving.plan accepts, each with its rows: ``draw(rng, found)``
    (``found`` the number accepted so far) until plan takes one; ``before(found)`` runs before each draw.
    Calls ``plan`` on each draw: seconds each."""
    from lib.serving import plan

    rng = random.Random(seed)
    found: list[tuple[dict[str, str], list]] = []
    for _ in range(200 * count):
        if len(found) == count:
            return found
        before(len(found))
        q = draw(rng, len(found))
        args, options = lib_arguments(q)
        try:
            rows = plan(*args, **options)
        except ValueError:
            continue
        found.append((q, rows))
    raise RuntimeError(f"lib.serving.plan refused all but {len(found)} of {200 * count} random scenarios")


def sizing_scenario(rng: random.Random) -> dict[str, str]:
    """:func:`random_scenario` with a rate (1 to 2000 requests/s, log-uniform) and a device limit; most with a
    TPOT target; half with a confidence (as a fraction or a percent), drawn from a generator of its own seeded
    by the rate, so that the other draws stay those of the scenarios without one.

    >>> {"rate", "max_devices"} <= set(sizing_scenario(random.Random(3)))
    True
    """
    q = random_scenario(rng)
    q["rate"] = str(round(math.exp(rng.uniform(math.log(1), math.log(2000))), 2))
    q["max_devices"] = str(rng.choice([4, 8, 16, 32]))
    if "ttft_limit_ms" not in q and "tpot_limit_ms" not in q and rng.random() < 0.85:
        q["tpot_limit_ms"] = str(round(rng.uniform(10, 100), 1))
    confidence = random.Random(q["rate"]).choice(["", "", "0.5", "0.9", "75", "95"])
    if confidence:
        q["confidence"] = confidence
    return q


def size_arguments(q: dict[str, str]) -> tuple[tuple, dict]:
    """``lib.serving.size``'s arguments for a scenario of the page (see :func:`lib_arguments`).

    >>> args, options = size_arguments({"model": "llama-3-8b", "device": "l4", "devices": "1",
    ...     "devices_per_node": "1", "batch": "1", "prompt_tokens": "8", "output_tokens": "2", "rate": "2.5",
    ...     "max_devices": "4"})
    >>> args[2:], options["max_devices"]
    ((2.5, 8, 2), 4)
    """
    from lib.serving.trust import check_confidence

    args, options = lib_arguments(q)
    config, device, _, _, prompt, output = args
    del options["price_per_device_hour"]
    sure = check_confidence(float(q["confidence"])) if q.get("confidence") else None
    return (config, device, float(q["rate"]), prompt, output), dict(
        options, max_devices=int(q["max_devices"]), confidence=sure
    )


def moe_scenario(rng: random.Random, model: str, targets: bool) -> dict[str, str]:
    """A scenario of :func:`random_scenario` with ``model`` on servers of eight catalogue GPUs, one to four of
    them, every layout (``"all"``), and latency targets or none.

    >>> q = moe_scenario(random.Random(0), "deepseek-v3", True)
    >>> q["expert_parallel"], q["devices_per_node"], "tpot_limit_ms" in q
    ('all', '8', True)
    """
    from lib import hardware

    q = {
        k: v
        for k, v in random_scenario(rng).items()
        if k
        not in (
            "layers",
            "hidden",
            "heads",
            "kv_heads",
            "ffn_hidden",
            "vocab",
            "experts",
            "top_k",
            "memory_GiB",
            "bandwidth_TBps",
            "flops_TFLOPS",
            "ttft_limit_ms",
            "tpot_limit_ms",
        )
    }
    device = rng.choice(MOE_DEVICES)
    q.update(
        model=model,
        device=device,
        link=hardware.DEVICES[device].link,
        devices_per_node="8",
        devices=str(8 * rng.choice([1, 2, 2, 4])),
        expert_parallel="all",
    )
    if targets:
        q.update(ttft_limit_ms=str(rng.choice([500, 1000, 3000])), tpot_limit_ms=str(rng.choice([30, 50, 100])))
    return q


def plan_draw(rng: random.Random, index: int) -> dict[str, str]:
    """Plan scenario ``index``: :func:`random_scenario`, but the first two are Mixtral models on whole servers
    beside their expert-parallel twins (``"both"``), a kind that random draws seldom show.

    >>> plan_draw(random.Random(0), 0)["expert_parallel"], plan_draw(random.Random(0), 5).get("model") is not None
    ('both', True)
    """
    if index < 2:
        q = moe_scenario(rng, MOE_MODELS[2 + index], targets=False)
        q["expert_parallel"] = "both"
        return q
    return random_scenario(rng)


def moe_draw(rng: random.Random, index: int) -> dict[str, str]:
    """Scenario ``index``: each model of :data:`MOE_MODELS` in turn, twice, the second time with targets."""
    return moe_scenario(rng, MOE_MODELS[index // 2 % len(MOE_MODELS)], targets=index % 2 == 1)


# ---------------------------------------------------------------- case kinds


def plan_kinds(q: dict[str, str], rows: list[dict]) -> set[str]:
    """The case kinds of the planner issue that scenario ``q`` with plan rows ``rows`` (as stored) shows.

    >>> sorted(plan_kinds({"model": "llama-3-8b", "device": "l4", "devices": "1", "devices_per_node": "1",
    ...     "batch": "1", "prompt_tokens": "8", "output_tokens": "2"}, []))
    ['dense', 'nothing fits']
    """
    config = config_of(q)
    _, options = lib_arguments(q)
    kinds = {"moe" if config.experts > 1 else "dense"}
    checks = {
        "custom model": q["model"] == "custom",
        "custom device": q["device"] == "custom",
        "several servers": int(q["devices"]) > int(q["devices_per_node"]),
        "some rows fit": any(r["fits"] for r in rows),
        "some rows do not": any(not r["fits"] for r in rows),
        "nothing fits": not any(r["fits"] for r in rows),
        "a target": options["ttft_limit"] is not None or options["tpot_limit"] is not None,
        "a price": options["price_per_device_hour"] is not None,
        "8-bit or 4-bit weights": options.get("weight_format", "bf16") != "bf16",
        "fp8 cache": options.get("kv_format") == "fp8",
        "prefix hits": options["prefix_hit_rate"] > 0,
        "nccl all-reduce": options.get("allreduce") == "nccl",
        "no cuda graphs": options.get("cuda_graphs") is False,
        "scheduler limit set": "max_num_seqs" in options or "max_num_batched_tokens" in options,
        "the scheduler refuses a row": any("max_num" in r["reason"] for r in rows),
        "expert parallel rows": any(r["expert_parallel"] for r in rows),
        "expert parallel beside its twin": options["expert_parallel"] == "both"
        and any(r["expert_parallel"] for r in rows),
        "a capacity above 0": any(r["capacity"] for r in rows),
        "a capacity of 0": any(r["capacity"] == 0 for r in rows),
        "a length distribution": "lengths" in q,
    }
    return kinds | {kind for kind, seen in checks.items() if seen}


#: Every kind :func:`plan_kinds` can name.
PLAN_KINDS = (
    "dense",
    "moe",
    "custom model",
    "custom device",
    "several servers",
    "some rows fit",
    "some rows do not",
    "nothing fits",
    "a target",
    "a price",
    "8-bit or 4-bit weights",
    "fp8 cache",
    "prefix hits",
    "nccl all-reduce",
    "no cuda graphs",
    "scheduler limit set",
    "the scheduler refuses a row",
    "expert parallel rows",
    "expert parallel beside its twin",
    "a capacity above 0",
    "a capacity of 0",
    "a length distribution",
)


def sizing_kinds(q: dict[str, str], want: dict | None) -> set[str]:
    """The case kinds the sizing scenario ``q`` with ``lib.serving.size``'s answer ``want`` (as stored) shows.

    >>> sorted(sizing_kinds({"model": "custom", "device": "l4", "experts": "1"}, None))
    ['custom model', 'no target', 'nothing carries it']
    """
    targeted = "ttft_limit_ms" in q or "tpot_limit_ms" in q
    checks = {
        "a layout found": want is not None,
        "nothing carries it": want is None,
        "several replicas": want is not None and want["dp"] > 1,
        "a target": targeted,
        "no target": not targeted,
        "moe": int(q.get("experts", "1")) > 1 if q["model"] == "custom" else None,
        "custom model": q["model"] == "custom",
        "custom device": q["device"] == "custom",
        "a confidence": "confidence" in q and want is not None,
        "a length distribution": "lengths" in q and want is not None,
    }
    if checks["moe"] is None:
        checks["moe"] = config_of(q).experts > 1
    return {kind for kind, seen in checks.items() if seen}


SIZING_KINDS = (
    "a layout found",
    "nothing carries it",
    "several replicas",
    "a target",
    "no target",
    "moe",
    "custom model",
    "custom device",
    "a confidence",
    "a length distribution",
)


def moe_kinds(q: dict[str, str], rows: list[dict], best_name: str | None) -> set[str]:
    """The case kinds of attention run data-parallel that MoE scenario ``q`` (rows as stored) shows.

    >>> sorted(moe_kinds({"model": "mixtral-8x7b", "devices": "8"}, [], None))
    ['mixtral', 'no target']
    """
    adp = [r for r in rows if r["attention_dp"]]
    chosen = next((r for r in rows if r["name"] == best_name), None)
    checks = {
        "several servers": int(q["devices"]) > 8,
        "adp group across servers": any(r["tp"] > 8 for r in adp),
        "an adp row fits": any(r["fits"] for r in adp),
        "targets": "tpot_limit_ms" in q,
        "no target": "tpot_limit_ms" not in q,
        "an adp row carries requests": any(r["capacity"] for r in adp),
        "an adp row is best": chosen is not None and chosen["attention_dp"],
    }
    model = q["model"] if q["model"] in ("deepseek-v3", "qwen3-235b-a22b") else "mixtral"
    return {model} | {kind for kind, seen in checks.items() if seen}


MOE_KINDS = (
    "deepseek-v3",
    "qwen3-235b-a22b",
    "mixtral",
    "several servers",
    "adp group across servers",
    "an adp row fits",
    "targets",
    "no target",
    "an adp row carries requests",
    "an adp row is best",
)


def _cover(kinds: list[set[str]], wanted: tuple[str, ...], least: int) -> list[int]:
    """Indices of ``kinds`` (greedy, first index on ties) that show every kind of ``wanted`` seen at all,
    at least ``least`` of them.

    >>> _cover([{"a"}, {"a", "b"}, {"c"}], ("a", "b", "c"), 1)
    [1, 2]
    """
    left = {kind for kind in wanted if any(kind in k for k in kinds)}
    chosen: list[int] = []
    while left or len(chosen) < least:
        gains = [(len(k & left), -i) for i, k in enumerate(kinds) if i not in chosen]
        if not gains:
            break
        _, i = max(gains)
        chosen.append(-i)
        left -= kinds[-i]
    return sorted(chosen)


# ---------------------------------------------------------------- JSON


def _plain(x: Any) -> Any:
    """``x`` as JSON-ready values: numpy scalars and arrays to floats, ints, bools and lists."""
    if isinstance(x, (bool, np.bool_)):
        return bool(x)
    if isinstance(x, (int, np.integer)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        return float(x)
    if isinstance(x, np.ndarray):
        return _plain(x.tolist())
    if isinstance(x, dict):
        return {str(k): _plain(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_plain(v) for v in x]
    return x


def dumps(data: Any) -> str:
    """Golden JSON: one key a line, keys sorted, a list of plain numbers or strings on one line, floats as their
    ``repr`` (``Infinity`` and ``NaN`` as Python writes them).

    >>> print(dumps({"b": [0.1, float("inf")], "a": {"c": [{"d": 1}]}}), end="")
    {
     "a": {
      "c": [
       {
        "d": 1
       }
      ]
     },
     "b": [0.1, Infinity]
    }
    """

    def text(x: Any, depth: int) -> str:
        pad, inner = " " * depth, " " * (depth + 1)
        if isinstance(x, dict) and x:
            items = (f"{inner}{json.dumps(k)}: {text(v, depth + 1)}" for k, v in sorted(x.items()))
            return "{\n" + ",\n".join(items) + "\n" + pad + "}"
        if isinstance(x, list) and any(isinstance(v, (dict, list)) for v in x):
            return "[\n" + ",\n".join(inner + text(v, depth + 1) for v in x) + "\n" + pad + "]"
        return json.dumps(x, ensure_ascii=False, separators=(", ", ": "))

    return text(_plain(data), 0) + "\n"


# ---------------------------------------------------------------- recording lib's calls


@dataclass
class Call:
    """One recorded call: the function, its arguments bound to its parameters, and what it returned or raised."""

    function: Callable
    args: tuple
    kwargs: dict
    result: Any = None
    error: BaseException | None = None

    @functools.cached_property
    def bound(self) -> dict:
        """The arguments by parameter name, defaults applied (``**options`` stays one dict)."""
        signature = inspect.signature(self.function)
        bound = signature.bind(*self.args, **self.kwargs)
        bound.apply_defaults()
        return dict(bound.arguments)

    def again(self, **changes: Any) -> Any:
        """The function called once more with some arguments changed (by name)."""
        arguments = dict(self.bound, **changes)
        args, kwargs = [], {}
        for name, parameter in inspect.signature(self.function).parameters.items():
            value = arguments[name]
            if parameter.kind == parameter.VAR_KEYWORD:
                kwargs.update(value)
            elif parameter.kind == parameter.VAR_POSITIONAL:
                args.extend(value)
            elif parameter.kind == parameter.KEYWORD_ONLY:
                kwargs[name] = value
            else:
                args.append(value)
        return self.function(*args, **kwargs)


def _resolve(path: str) -> tuple[Any, list[str], Any]:
    """``(module, attribute names, object)`` of a dotted path such as ``lib.serving.engine.Engine.resolved``."""
    import importlib

    parts = path.split(".")
    for cut in range(len(parts), 0, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        obj = module
        for name in parts[cut:]:
            obj = inspect.getattr_static(obj, name) if inspect.isclass(obj) else getattr(obj, name)
        return module, parts[cut:], obj
    raise ImportError(path)


class Recorder:
    """Wraps functions of ``lib`` so that each call is kept: one per function and scenario, chosen at random.

    ``with Recorder(paths) as recorder:`` installs the wrappers (a function
    is replaced in every ``lib`` module that imported it; a method, property
    or ``__init__`` on its class); ``recorder.scenario = "plan 3"`` labels
    the calls that follow; ``recorder.calls[path]`` lists the kept calls.
    """

    def __init__(self, paths: list[str], seed: int = 0, keep: dict[str, int] | None = None) -> None:
        self.paths = paths
        self.keep = keep or {}
        self.rng = random.Random(seed)
        self.scenario = ""
        self.kept: dict[tuple[str, str], list[Call]] = {}
        self.seen: dict[tuple[str, str], int] = {}
        self.undo: list[Callable] = []

    def _keep(self, path: str, call: Call) -> None:
        """Reservoir sampling: every call of the scenario equally likely to be among the ``keep`` kept (1)."""
        key = (path, self.scenario)
        self.seen[key] = n = self.seen.get(key, 0) + 1
        kept = self.kept.setdefault(key, [])
        size = self.keep.get(path, 1)
        if len(kept) < size:
            kept.append(call)
        elif self.rng.random() * n < size:
            kept[self.rng.randrange(size)] = call

    @property
    def calls(self) -> dict[str, list[Call]]:
        """The kept calls by path, in the order of the scenario labels."""
        out: dict[str, list[Call]] = {path: [] for path in self.paths}
        for (path, _), calls in sorted(self.kept.items(), key=lambda item: item[0]):
            out[path] += calls
        return out

    def _wrap(self, path: str, function: Callable, init: bool = False) -> Callable:
        recorder = self

        @functools.wraps(function)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            call = Call(function, args, kwargs)
            try:
                call.result = function(*args, **kwargs)
            except ValueError as error:
                call.error = error
                recorder._keep(path, call)
                raise
            if init:  # a class: the object it made
                recorder._keep(path, Call(function, args, kwargs, args[0]))
                return None
            recorder._keep(path, call)
            return call.result

        return wrapper

    def __enter__(self) -> Self:
        import sys as _sys

        for path in self.paths:
            module, names, obj = _resolve(path)
            if names and inspect.isclass(getattr(module, names[0])) and len(names) >= 1:
                owner = getattr(module, names[0])
                if len(names) == 1:  # a class: its __init__
                    original = owner.__dict__["__init__"]
                    self._set(owner, "__init__", self._wrap(path, original, init=True))
                    continue
                if isinstance(obj, property):
                    self._set(owner, names[1], property(self._wrap(path, obj.fget), doc=obj.__doc__))
                else:
                    self._set(owner, names[1], self._wrap(path, obj))
                continue
            wrapper = self._wrap(path, obj)
            for name, loaded in list(_sys.modules.items()):
                if name == "lib" or name.startswith("lib."):
                    for attribute, value in list(vars(loaded).items()):
                        if value is obj:
                            self._set(loaded, attribute, wrapper)
        return self

    def _set(self, owner: Any, name: str, value: Any) -> None:
        before = owner.__dict__[name] if isinstance(owner, type) else getattr(owner, name)
        setattr(owner, name, value)
        self.undo.append(lambda: setattr(owner, name, before))

    def __exit__(self, *exc: object) -> None:
        for undo in reversed(self.undo):
            undo()
        self.undo.clear()


# ---------------------------------------------------------------- lib's objects in the page's shapes


class Objects:
    """The shared objects of the cases (models, devices, links, engines), each stored once under an id."""

    def __init__(self) -> None:
        self.table: dict[str, Any] = {}

    def ref(self, kind: str, value: dict) -> dict:
        text = json.dumps(_plain(value), sort_keys=True)
        key = f"{kind}:{hashlib.sha1(text.encode()).hexdigest()[:10]}"
        self.table[key] = json.loads(text)
        return {"$ref": key}

    def config(self, config: Any) -> dict:
        from tools.sphinx.planner_data import MODEL_FIELDS

        values = dataclasses.asdict(config)
        return self.ref("config", {name: values[name] for name in MODEL_FIELDS})

    def device(self, device: Any) -> dict:
        from lib.hardware import device as lookup
        from tools.sphinx.planner_data import DEVICE_FIELDS

        values = dataclasses.asdict(lookup(device))
        return self.ref("device", {name: values[name] for name in DEVICE_FIELDS})

    def link(self, link: Any) -> dict | None:
        from lib.hardware import LINKS
        from lib.hardware import link as lookup
        from tools.sphinx.planner_data import LINK_FIELDS

        if link is None:
            return None
        found = lookup(link)
        slug = next(slug for slug, candidate in LINKS.items() if candidate == found)
        values = dataclasses.asdict(found)
        return self.ref("link", {"slug": slug, **{name: values[name] for name in LINK_FIELDS}})

    def cluster(self, cluster: Any) -> dict:
        return {
            "devicesPerNode": cluster.devices_per_node,
            "link": self.link(cluster.link),
            "interLink": self.link(cluster.inter_link),
            "nics": cluster.nics_per_node,
        }

    @staticmethod
    def engine_values(engine: Any) -> dict:
        """An ``Engine``'s fields as resolveEngine returns them (with the bytes per number once resolved)."""
        from tools.sphinx.planner_data import ENGINE_FIELDS

        values = {name: getattr(engine, name) for name in ENGINE_FIELDS}
        if engine.layer_overhead is not None:
            values.update(weight_bytes=engine.weight_bytes, kv_bytes=engine.kv_bytes)
        return _plain(values)

    def engine(self, engine: Any) -> dict:
        return self.ref("engine", self.engine_values(engine))

    def scenario(self, config: Any, cluster: Any, engine: Any, **workload: Any) -> dict:
        """The page's scenario ``s`` (planner.js ``scenario``): model, device, cluster, resolved engine, load."""
        s = {
            "config": self.config(config),
            "device": self.device(cluster.device),
            "cluster": self.cluster(cluster),
            "engine": self.engine(engine),
        }
        names = {
            "prompt": "promptTokens",
            "output": "outputTokens",
            "hit": "prefixHitRate",
            "devices": "devices",
            "batch": "batch",
            "ttft": "ttftLimit",
            "tpot": "tpotLimit",
            "percentile": "percentile",
            "price": "price",
            "expert_parallel": "expertParallel",
        }
        s.update({names[key]: value for key, value in workload.items()})
        if np.ndim(s.get("promptTokens", 0)) or np.ndim(s.get("outputTokens", 0)):  # samples: planner.js's form
            p, o = np.broadcast_arrays(np.atleast_1d(s["promptTokens"]), np.atleast_1d(s["outputTokens"]))
            s.update(
                prompts=[int(x) for x in p],
                outputs=[int(x) for x in o],
                promptTokens=int(round(float(p.mean()))),
                outputTokens=int(round(float(o.mean()))),
            )
        return s


def _lengths_of(w: Any) -> dict:
    """A Workload's lengths as :meth:`Objects.scenario` takes them: the sample, or its one length of each."""
    return dict(prompt=w.prompts, output=w.outputs) if w.prompts.size > 1 else dict(prompt=w.prompt, output=w.output)


def layout_js(layout: Any, named: bool = False) -> dict:
    """A ``Layout`` as planner-model.js's layouts makes it (``ep``, ``adp``); ``named`` adds its name, as the page
    gives the device map."""
    out = {"tp": layout.tp, "pp": layout.pp, "dp": layout.dp, "ep": layout.expert_parallel, "adp": layout.attention_dp}
    return {**out, "name": layout.name} if named else out


def roofline_js(op: Any) -> dict:
    return {"memoryTime": op.memory_time, "computeTime": op.compute_time, "time": op.time}


def work_js(work: Any) -> dict:
    """A ``StageWork`` as planner-model.js's passWork returns it."""
    return {
        "ops": [roofline_js(op) for op in work.operators],
        "head": roofline_js(work.head),
        "communication": work.communication_time,
        "fixed": work.fixed_time,
        "computeBound": work.compute_bound_time,
        "time": work.time,
    }


def row_js(row: Any) -> dict:
    """A ``PlanRow`` as planner-model.js's planRow returns it."""
    return {
        "name": row.name,
        "tp": row.tp,
        "pp": row.pp,
        "dp": row.dp,
        "devices": row.devices,
        "expertParallel": row.expert_parallel,
        "attentionDp": row.attention_dp,
        "fits": row.fits,
        "meetsSlo": row.meets_slo,
        "reason": row.reason,
        "weights": row.weights_per_device,
        "kv": row.kv_per_device,
        "activations": row.activations_per_device,
        "memory": row.memory_per_device,
        "usable": row.usable_per_device,
        "batch": row.batch,
        "maxBatch": row.max_batch,
        "ttft": row.ttft,
        "tpot": row.tpot,
        "tokensPerS": row.tokens_per_s,
        "tokensPerSPerDevice": row.tokens_per_s_per_device,
        "tokensPerSPerUser": row.tokens_per_s_per_user,
        "requestsPerS": row.requests_per_s,
        "prefillShare": row.prefill_share,
        "bound": row.bound,
        "costPerMillionTokens": row.cost_per_million_tokens,
        "capacity": row.capacity,
        "requestsPerSPerDevice": row.requests_per_s_per_device,
        "binding": row.binding,
        "capacityTtft": row.capacity_ttft,
        "capacityTpot": row.capacity_tpot,
    }


#: The fields of a planRow that planner-capacity.js's capacity fills in.
CAPACITY_FIELDS = ("capacity", "requestsPerSPerDevice", "binding", "capacityTtft", "capacityTpot")


def load_js(load: Any) -> dict | None:
    if load is None:
        return None
    return {
        "rate": load.rate,
        "batch": load.batch,
        "tpot": load.tpot,
        "tpotQuantile": load.tpot_quantile,
        "ttft": load.ttft,
        "ttftQuantile": load.ttft_quantile,
        "rho": load.prefill_utilisation,
    }


# ---------------------------------------------------------------- the mirrors


@dataclass
class Mirror:
    """How a JavaScript function's cases come from ``lib``'s recorded calls.

    ``convert(call, objects)`` gives ``(args, want)`` in the JavaScript
    function's calling convention, or ``None`` to skip a call it does not
    cover; ``want`` holds only what the JavaScript returns too (a dict is
    compared key by key, ``{"raises": message}`` expects a throw).
    ``broadcast`` names the parameters that may hold arrays: such a call is
    replayed on one element (:meth:`Call.again`). ``source`` is the recorded
    path when it is not ``target`` (cases derived from another function's
    calls). ``limit`` caps the cases kept (seeded choice).
    """

    script: str
    name: str
    target: str
    convert: Callable
    broadcast: tuple[str, ...] = ()
    source: str | None = None
    limit: int | None = None
    prepare: Callable | None = None

    def cases(self, calls: list[Call], objects: Objects, rng: random.Random) -> tuple[list[dict], int]:
        """The distinct cases of ``calls`` (at most :attr:`limit`), and how many calls gave none."""
        found: dict[str, dict] = {}
        skipped = 0
        for call in calls:
            one = self.prepare(call, rng) if self.prepare else _scalar(call, self.broadcast, rng)
            got = self.convert(one, objects)
            if got is None:
                skipped += 1
                continue
            args, want = got
            case = {"args": _plain(args)}
            if isinstance(want, dict) and set(want) == {"raises"}:
                case["raises"] = want["raises"]
            else:
                case["want"] = _plain(want)
            found.setdefault(json.dumps(case["args"], sort_keys=True), case)
        cases = list(found.values())
        if self.limit is not None and len(cases) > self.limit:
            cases = [cases[i] for i in sorted(rng.sample(range(len(cases)), self.limit))]
        return cases, skipped


def _scalar(call: Call, names: tuple[str, ...], rng: random.Random) -> Call:
    """``call`` itself if ``names`` hold scalars, else the call again on one element of their broadcast."""
    values = {n: call.bound[n] for n in names if n in call.bound and call.bound[n] is not None}
    arrays = {n: np.asarray(v) for n, v in values.items()}
    if all(a.ndim == 0 for a in arrays.values()):
        return call
    shape = np.broadcast_shapes(*(a.shape for a in arrays.values()))
    index = rng.randrange(int(np.prod(shape)))
    changes = {
        n: float(np.broadcast_to(a, shape).flat[index])
        if a.dtype.kind == "f"
        else np.broadcast_to(a, shape).flat[index].item()
        for n, a in arrays.items()
    }
    again = Call(call.function, (), {})
    again.__dict__["bound"] = dict(call.bound, **changes)
    try:
        again.result = again.again()
    except ValueError as error:
        again.error = error
    return again


def _derived(function: Callable, arguments: Callable) -> Callable:
    """A :class:`Mirror` ``prepare`` that turns a recorded call ``c`` into a call of ``function`` on
    ``arguments(c, rng)``, with its result: cases of a function lib calls rarely or never while planning."""

    def prepare(c: Call, rng: random.Random) -> Call:
        again = Call(function, tuple(arguments(c, rng)), {})
        again.result = function(*again.args)
        return again

    return prepare


def _engine_of(b: dict, device: Any) -> Any:
    from lib.serving.engine import configure

    return configure(device, b.get("engine"), **b.get("options", {}))


def _cluster_of(b: dict, device: Any) -> Any:
    from lib.serving.layout import Cluster

    keywords = {**b, **b.get("options", {}), **b.get("keywords", {})}
    return Cluster(
        device,
        keywords.get("devices_per_node", 8),
        keywords.get("link"),
        keywords.get("inter_link"),
        keywords.get("nics_per_node"),
    )


def mirrors() -> list[Mirror]:
    """Every JavaScript function with a ``// mirrors`` tag and how its cases come from lib."""
    from lib.collectives import engine as coll_engine
    from lib.hardware import device as lookup_device
    from lib.hardware import link as lookup_link
    from lib.serving.capacity import Workload
    from lib.transformer import parameter_breakdown

    def err(call: Call) -> dict | None:
        return {"raises": str(call.error)} if call.error is not None else None

    def value(call: Call) -> Any:
        return err(call) or call.result

    out: list[Mirror] = []

    def add(script: str, name: str, target: str, convert: Callable, **kw: Any) -> None:
        out.append(Mirror(script, name, target, convert, **kw))

    m = "planner-model.js"
    # lib.transformer
    add(m, "headDim", "lib.transformer.models.ModelConfig.head_dim", lambda c, o: ([o.config(c.args[0])], c.result))
    add(m, "valueDim", "lib.transformer.models.ModelConfig.value_dim", lambda c, o: ([o.config(c.args[0])], c.result))
    add(
        m,
        "latent",
        "lib.transformer.models.ModelConfig.latent_attention",
        lambda c, o: ([o.config(c.args[0])], c.result),
    )
    add(m, "moeLayers", "lib.transformer.models.ModelConfig.moe_layers", lambda c, o: ([o.config(c.args[0])], c.result))
    add(
        m,
        "attentionFlops",
        "lib.transformer.models.ModelConfig.attention_flops",
        lambda c, o: ([o.config(c.bound["self"]), bool(c.bound["decode"])], c.result),
    )
    add(
        m,
        "breakdown",
        "lib.transformer.models.parameter_breakdown",
        lambda c, o: (
            [o.config(c.bound["config"])],
            {k: v for k, v in dataclasses.asdict(c.result).items() if k not in ("layers", "experts", "dense_layers")},
        ),
    )
    add(
        m,
        "parameterCount",
        "lib.transformer.models.parameter_count",
        lambda c, o: ([o.config(c.bound["config"])], c.result),
    )
    add(
        m,
        "tpAllowed",
        "lib.transformer.parallel.check_tp_degree",
        lambda c, o: ([o.config(c.bound["config"]), c.bound["degree"]], c.error is None),
    )
    add(
        m,
        "kvHeadsPerDevice",
        "lib.transformer.parallel.kv_heads_per_device",
        lambda c, o: None if c.error else ([o.config(c.bound["config"]), c.bound["devices"]], c.result),
    )
    add(
        m,
        "kvPerToken",
        "lib.transformer.models.kv_cache_bytes_per_token",
        lambda c, o: ([o.config(c.bound["config"]), c.bound["bytes_per_element"]], c.result),
        broadcast=("bytes_per_element",),
    )
    # lib.formats, lib.experts
    add(
        m,
        "computePeak",
        "lib.formats.compute_peak",
        lambda c, o: (
            ([o.device(c.bound["device"]), c.bound["name"]], c.result) if isinstance(c.bound["name"], str) else None
        ),
    )
    # lib.kernels, lib.serving.matmul
    shape = ("m", "n", "k")
    for name, target in (("gemmEfficiency", "gemm_efficiency"), ("gemmFlops", "gemm_flops")):
        add(
            m,
            name,
            f"lib.kernels.{target}",
            lambda c, o: ([o.device(c.bound["device"]), c.bound["fmt"], *(c.bound[x] for x in shape)], value(c)),
            broadcast=shape,
        )
    add(
        m,
        "layerProducts",
        "lib.serving.matmul.layer_products",
        lambda c, o: (
            [o.config(c.bound["config"]), layout_js(c.bound["layout"])],
            [dataclasses.asdict(p) for p in c.result],
        ),
    )
    add(
        m,
        "productFlops",
        "lib.serving.matmul.product_flops",
        lambda c, o: (
            [o.device(c.bound["device"]), *(c.bound[x] for x in ("fmt", "rows", "n", "k", "efficiency"))],
            c.result,
        ),
        broadcast=("rows", "n", "k"),
    )
    add(
        m,
        "linearComputeTime",
        "lib.serving.matmul.linear_compute_time",
        lambda c, o: (
            [
                o.config(c.bound["config"]),
                layout_js(c.bound["layout"]),
                o.device(c.bound["device"]),
                c.bound["fmt"],
                *(c.bound[x] for x in ("attended", "expert_rows", "expert_pairs", "efficiency")),
            ],
            c.result,
        ),
        broadcast=("attended", "expert_rows", "expert_pairs"),
    )
    add(m, "expectedMaxNormal", "lib.experts.expected_max_normal", lambda c, o: ([c.bound["n"]], c.result))
    add(
        m,
        "expertImbalance",
        "lib.experts.expert_imbalance",
        lambda c, o: ([c.bound[n] for n in ("tokens", "experts", "top_k", "devices")], value(c)),
        broadcast=("tokens", "experts", "top_k", "devices"),
    )
    # lib.serving.engine
    add(
        m,
        "schedulerLimits",
        "lib.serving.engine.scheduler_limits",
        lambda c, o: ([o.device(c.bound["device"])], list(c.result)),
    )
    add(
        m,
        "resolveEngine",
        "lib.serving.engine.Engine.resolved",
        lambda c, o: ([o.device(c.bound["device"]), o.engine_values(c.bound["self"])], o.engine_values(c.result)),
    )
    add(
        m,
        "replicaLimits",
        "lib.serving.engine.Engine.replica_limits",
        lambda c, o: ([o.engine(c.bound["self"]), layout_js(c.bound["layout"])], list(c.result)),
    )
    add(
        m,
        "reservedBytes",
        "lib.serving.engine.Engine.reserved_bytes",
        lambda c, o: ([o.engine(c.bound["self"]), c.bound["tp"]], c.result),
    )
    add(
        m,
        "usableBytes",
        "lib.serving.engine.Engine.usable_bytes",
        lambda c, o: ([o.engine(c.bound["self"]), o.device(c.bound["device"]), c.bound["tp"]], c.result),
    )
    # lib.serving.layout
    add(
        m,
        "stageLayers",
        "lib.serving.layout.stage_layers",
        lambda c, o: None if c.error else ([c.bound["layers"], c.bound["stages"]], c.result),
    )
    add(m, "layoutName", "lib.serving.layout.Layout.name", lambda c, o: ([layout_js(c.args[0])], c.result))
    add(
        m,
        "layoutSplits",
        "lib.serving.layout.Layout.splits",
        lambda c, o: ([layout_js(c.bound["self"]), c.bound["devices_per_node"]], list(c.result)),
    )
    add(
        m,
        "layoutSimplicity",
        "lib.serving.layout.Layout.simplicity",
        lambda c, o: ([layout_js(c.bound["self"]), c.bound["devices_per_node"]], list(c.result)),
    )
    add(
        m,
        "layouts",
        "lib.serving.layout.layouts",
        lambda c, o: (
            [o.config(c.bound["config"]), c.bound["devices"], c.bound["expert_parallel"]],
            [layout_js(x) for x in c.result],
        ),
    )
    add(
        m,
        "holdsGroup",
        "lib.serving.layout.Cluster.holds_group",
        lambda c, o: ([o.cluster(c.bound["self"]), c.bound["tp"]], c.result),
    )
    # lib.serving.memory
    add(
        m,
        "kvBytesPerLayer",
        "lib.serving.memory._kv_bytes_per_layer",
        lambda c, o: (
            [
                o.config(c.bound["config"]),
                {"tp": c.bound["tp"], "adp": not c.bound["heads_split"]},
                c.bound["bytes_per_element"],
            ],
            c.result,
        ),
    )
    add(
        m,
        "kvPerTokenPerDevice",
        "lib.serving.memory.kv_bytes_per_token_per_device",
        lambda c, o: (
            [o.config(c.bound["config"]), layout_js(c.bound["layout"]), c.bound["bytes_per_element"]],
            c.result,
        ),
    )
    add(
        m,
        "perDeviceLayer",
        "lib.serving.memory._per_device_layer",
        lambda c, o: (
            [
                o.config(c.bound["config"]),
                layout_js(c.bound["layout"]),
                c.bound["experts"],
                o.ref("parts", {k: v for k, v in dataclasses.asdict(parameter_breakdown(c.bound["config"])).items()}),
            ],
            c.result,
        ),
    )
    add(m, "cacheSharers", "lib.serving.memory._cache_sharers", lambda c, o: ([layout_js(c.bound["layout"])], c.result))

    def stage_weights(c: Call, o: Objects) -> tuple:
        from lib.formats import weight_format

        fmt = c.bound["weight_format"]
        return (
            [
                o.config(c.bound["config"]),
                layout_js(c.bound["layout"]),
                {"weight_format": fmt, "weight_bytes": weight_format(fmt).bytes_per_weight},
            ],
            c.result,
        )

    add(m, "stageWeightBytes", "lib.serving.memory.stage_weight_bytes", stage_weights)
    add(
        m,
        "activationBytes",
        "lib.serving.memory.activation_bytes",
        lambda c, o: (
            None
            if c.bound["bytes_per_element"] != 2
            else (
                [
                    o.config(c.bound["config"]),
                    c.bound["tokens"],
                    c.bound["tp"],
                    c.bound["tokens"] if c.bound["sequences"] is None else c.bound["sequences"],
                ],
                c.result,
            )
        ),
        broadcast=("tokens", "sequences"),
    )
    add(
        m,
        "budget",
        "lib.serving.memory._budget",
        lambda c, o: (
            [
                o.config(c.bound["config"]),
                o.device(c.bound["device"]),
                layout_js(c.bound["layout"]),
                o.engine(c.bound["engine"]),
                c.bound["sequences"],
            ],
            list(c.result),
        ),
    )

    def memory_fit(c: Call, o: Objects) -> tuple:
        b, f = c.bound, c.result
        device = lookup_device(b["device"])
        return (
            [
                o.config(b["config"]),
                o.device(device),
                layout_js(b["layout"]),
                b["sequences"],
                b["context"],
                o.engine(_engine_of(b, device)),
            ],
            {
                "weights": f.weights,
                "kv": f.kv_cache,
                "activations": f.activations,
                "usable": f.usable,
                "most": f.max_sequences,
                "reason": f.reason,
                "total": f.total,
                "free": f.free,
                "fits": f.fits,
            },
        )

    add(m, "memoryFit", "lib.serving.memory.memory_fit", memory_fit)
    # lib.serving.operators
    add(
        m,
        "expertsTouched",
        "lib.serving.operators.expected_experts_touched",
        lambda c, o: ([c.bound["experts"], c.bound["top_k"], c.bound["tokens"]], c.result),
        broadcast=("tokens",),
    )
    add(
        m,
        "expertsRead",
        "lib.serving.operators._experts_read",
        lambda c, o: ([o.config(c.bound["config"]), layout_js(c.bound["layout"]), c.bound["tokens"]], c.result),
        broadcast=("tokens",),
    )
    add(
        m,
        "roofline",
        "lib.serving.operators._roofline",
        lambda c, o: (
            [c.bound["bytes_"], c.bound["flops"], c.bound["bandwidth"], c.bound["peak"]],
            roofline_js(c.result),
        ),
        broadcast=("bytes_", "flops"),
    )
    add(
        m,
        "tpAllreduce",
        "lib.serving.operators.tp_allreduce",
        lambda c, o: (
            [o.cluster(c.bound["cluster"]), c.bound["tp"], c.bound["message"], c.bound["allreduce"]],
            c.result,
        ),
        broadcast=("message",),
    )
    add(
        m,
        "busiestPrompts",
        "lib.serving.operators._busiest_prompts",
        lambda c, o: ([layout_js(c.bound["layout"]), c.bound["prompts"]], c.result),
        broadcast=("prompts",),
    )
    add(
        m,
        "expertExchange",
        "lib.serving.operators.expert_exchange",
        lambda c, o: (
            None
            if c.bound["exchange"] != "allgather_reducescatter"
            else (
                [o.config(c.bound["config"]), {"expert_exchange": c.bound["exchange"]}, c.bound["tokens"]],
                [c.result[0][1], c.result[1][1]],
            )
        ),
        broadcast=("tokens", "busiest"),
    )

    def s_of(b: dict, o: Objects, **workload: Any) -> dict:
        return o.scenario(b["config"], b["cluster"], b["engine"], **workload)

    add(
        m,
        "communication",
        "lib.serving.operators._communication",
        lambda c, o: ([s_of(c.bound, o), layout_js(c.bound["layout"]), c.bound["layers"], c.bound["tokens"]], c.result),
        broadcast=("tokens", "busiest"),
    )

    def w_js(decode: Any, context: Any, prefill: Any, prefill_context: Any, sampled: Any, prompts: Any) -> dict:
        return {
            "decode": decode,
            "context": context,
            "prefill": prefill,
            "prefillContext": prefill_context,
            "sampled": sampled,
            "prompts": prompts,
        }

    work_names = ("decode", "context", "prefill", "prefill_context", "sampled", "prompts")
    add(
        m,
        "passWork",
        "lib.serving.operators.pass_work",
        lambda c, o: (
            [s_of(c.bound, o), layout_js(c.bound["layout"]), c.bound["stage"], w_js(*(c.bound[n] for n in work_names))],
            work_js(c.result),
        ),
        broadcast=work_names,
    )
    # lib.serving.step
    add(
        m,
        "hopLinks",
        "lib.serving.step._hop_links",
        lambda c, o: (
            [o.cluster(c.bound["cluster"]), layout_js(c.bound["layout"]), c.bound["replica"]],
            [{"slug": o.table[o.link(x)["$ref"]]["slug"]} for x in c.result],
        ),
    )
    add(
        m,
        "hopTime",
        "lib.serving.step.hop_time",
        lambda c, o: ([o.cluster(c.bound["cluster"]), layout_js(c.bound["layout"]), c.bound["hop_bytes"]], c.result),
        broadcast=("hop_bytes",),
    )

    def stage_works(c: Call, o: Objects) -> tuple:
        b = c.bound
        return ([s_of(b, o), layout_js(b["layout"]), w_js(*b["work"], b["prompts"])], [work_js(w) for w in c.result])

    def unpack_work(c: Call, rng: random.Random) -> Call:
        b = dict(c.bound)
        b.update(dict(zip(("decode", "context", "prefill", "prefill_context", "sampled"), b.pop("work"))))
        flat = Call(
            lambda config, cluster, layout, engine, decode, context, prefill, prefill_context, sampled, prompts=None: (
                c.function(
                    config, cluster, layout, engine, decode, context, prefill, prefill_context, sampled, prompts=prompts
                )
            ),
            (),
            {},
        )
        flat.__dict__["bound"] = b
        flat.result = c.result
        one = _scalar(flat, work_names, rng)
        one.__dict__["bound"]["work"] = tuple(one.bound[n] for n in work_names[:5])
        return one

    add(m, "stageWorks", "lib.serving.step._stage_works", stage_works, prepare=unpack_work)
    add(
        m,
        "loop",
        "lib.serving.step._pass",
        lambda c, o: (
            [s_of(c.bound, o), layout_js(c.bound["layout"]), c.bound["m"], w_js(*(c.bound[n] for n in work_names))],
            {
                "tpot": c.result[0],
                "times": list(c.result[1]),
                "hop": c.result[2],
                "works": [work_js(w) for w in c.result[3]],
            },
        ),
        broadcast=("m",) + work_names,
    )

    def prefill_lumps(c: Call, o: Objects) -> tuple:
        tokens, weights = (np.asarray(x, dtype=float) for x in c.result)
        # The last lump's tokens are E[K | K >= L], a difference over its probability: when that is tiny the
        # difference is rounding, amplified, and weighs nothing; it is compared only where the lump weighs.
        return (
            [c.bound["decode"], c.bound["prompts_per_step"], c.bound["new_tokens"], c.bound["budget"]],
            {
                "tokens": {str(i): x for i, x in enumerate(tokens) if i < len(tokens) - 1 or weights[-1] >= 1e-6},
                "weights": list(weights),
            },
        )

    add(
        m,
        "prefillLumps",
        "lib.serving.step.prefill_lumps",
        prefill_lumps,
        broadcast=("decode", "prompts_per_step", "new_tokens"),
    )

    def decode_step(c: Call, o: Objects) -> tuple | None:
        b = c.bound
        if b["prompt_tokens"] is None or c.error:
            return None
        eng = _engine_of(b, b["cluster"].device)
        s = o.scenario(
            b["config"],
            b["cluster"],
            eng,
            prompt=b["prompt_tokens"],
            output=b["output_tokens"],
            hit=b["prefix_hit_rate"],
        )
        r = c.result
        return (
            [s, layout_js(b["layout"]), b["batch"], b["context"]],
            {
                "tpot": r.tpot,
                "prefillShare": r.prefill_share,
                "tokensPerStep": r.tokens_per_step,
                "bound": str(r.bound),
                "stageTimes": list(r.stage_times),
                "hop": r.hop_time,
            },
        )

    add(
        m,
        "decodeStep",
        "lib.serving.step.decode_step",
        decode_step,
        broadcast=("batch", "context", "prompt_tokens", "output_tokens", "prefix_hit_rate"),
    )

    def loop_time(c: Call, o: Objects) -> tuple | None:
        b = c.bound
        if b["sampled"] is not None:
            return None
        s = o.scenario(b["config"], b["cluster"], _engine_of(b, b["cluster"].device))
        return (
            [s, layout_js(b["layout"]), b["decode"], b["context"], b["prefill"], b["prefill_context"], b["prompts"]],
            c.result,
        )

    add(
        m,
        "loopTime",
        "lib.serving.step.loop_time",
        loop_time,
        broadcast=("decode", "context", "prefill", "prefill_context", "prompts"),
    )

    def kv_token_capacity(c: Call, o: Objects) -> tuple:
        from lib.serving.layout import Cluster

        b = c.bound
        device = lookup_device(b["device"])
        s = o.scenario(b["config"], Cluster(device), _engine_of(b, device))
        return [s, layout_js(b["layout"])], c.result

    add(m, "kvTokenCapacity", "lib.serving.memory.kv_token_capacity", kv_token_capacity)

    def prefill_time(c: Call, o: Objects) -> tuple:
        b = c.bound
        s = o.scenario(
            b["config"],
            b["cluster"],
            _engine_of(b, b["cluster"].device),
            prompt=b["prompt_tokens"],
            hit=b["prefix_hit_rate"],
        )
        return [s, layout_js(b["layout"])], c.result

    add(m, "prefillTime", "lib.serving.step.prefill_time", prefill_time, broadcast=("prompt_tokens", "prefix_hit_rate"))
    # lib.serving.plan
    add(
        m,
        "schedulerReason",
        "lib.serving.plan._scheduler_reason",
        lambda c, o: (
            [c.bound["per_replica"], c.bound["tokens"], o.engine(c.bound["engine"]), layout_js(c.bound["layout"])],
            c.result,
        ),
    )

    def plan_scenario(b: dict, o: Objects, **more: Any) -> dict:
        cluster = _cluster_of(b, b["device"])
        eng = _engine_of(b, cluster.device)
        return o.scenario(
            b["config"],
            cluster,
            eng,
            prompt=b["prompt_tokens"],
            output=b["output_tokens"],
            hit=b["prefix_hit_rate"],
            devices=b["devices"],
            ttft=b["ttft_limit"],
            tpot=b["tpot_limit"],
            percentile=b["percentile"],
            price=b["price_per_device_hour"],
            expert_parallel=b["expert_parallel"],
            **more,
        )

    def plan(c: Call, o: Objects) -> tuple | None:
        if c.error:
            return None
        rows = [row_js(r) for r in c.result]
        targets = c.bound["ttft_limit"] is not None or c.bound["tpot_limit"] is not None
        if targets:  # priced without the capacities (capacity's own cases hold them): seconds less per case
            rows = [{k: v for k, v in row.items() if k not in CAPACITY_FIELDS} for row in rows]
        return [plan_scenario(c.bound, o, batch=c.bound["batch"]), targets], rows

    add(m, "plan", "lib.serving.plan.plan", plan)

    from lib.serving.lengths import format_lengths, parse_lengths
    from lib.serving.plan import _held_context

    add(
        m,
        "heldContext",
        "lib.serving.plan._held_context",
        lambda c, o: (
            None
            if c.error
            else (
                [plan_scenario(c.bound, o)],
                _held_context(Workload(c.bound["prompt_tokens"], c.bound["output_tokens"])),
            )
        ),
        source="lib.serving.plan.plan",
    )

    def lengths_text(c: Call, rng: random.Random) -> Call:
        """parse_lengths on a text from a recorded plan call: its sample written back (format_lengths), or
        from its one length each a text drawn from good ones and bad ones (each of parse_lengths' refusals)."""
        p, o = c.bound["prompt_tokens"], c.bound["output_tokens"]
        if np.ndim(p) or np.ndim(o):
            text = format_lengths(p, o)
        else:
            text = rng.choice(
                [
                    f"{p}:{o}",
                    f" {p} :\t{o} * 3 ,1:1",
                    f"{p}:{o}*0",
                    f"0{p}:0",
                    f"-{p}:{o}",
                    f"{p}.5:{o}",
                    f"{p}:{o},",
                    f"{p}:{o}*9999,{o}:{p}*2",
                    " \t",
                    f"{p}:{o}*1e3",
                    f"{p}:{10**12 + o}",
                    f"{p}:{o}*000000000000003",
                    f"'{p}:{o}",
                    f'"{p}\\:{o}',
                ]
            )
        again = Call(parse_lengths, (text, "lengths"), {})
        try:
            again.result = parse_lengths(text, "lengths")
        except ValueError as error:
            again.error = error
        return again

    add(
        m,
        "parseLengths",
        "lib.serving.lengths.parse_lengths",
        lambda c, o: (list(c.args), err(c) or [c.result[0].tolist(), c.result[1].tolist()]),
        source="lib.serving.plan.plan",
        prepare=lengths_text,
    )
    ranked = (
        "name",
        "tp",
        "pp",
        "dp",
        "expertParallel",
        "attentionDp",
        "capacity",
        "requestsPerSPerDevice",
        "fits",
        "meetsSlo",
        "tokensPerSPerDevice",
        "tpot",
    )

    def rows_js(rows: list) -> list[dict]:
        return [{k: row_js(r)[k] for k in ranked} for r in rows]

    def picked(row: Any) -> dict | None:
        return None if row is None else {"name": row.name}

    add(m, "leader", "lib.serving.plan.leader", lambda c, o: ([rows_js(c.bound["rows"])], picked(c.result)))
    add(
        m,
        "best",
        "lib.serving.plan.best",
        lambda c, o: ([rows_js(c.bound["rows"]), c.bound["devices_per_node"]], picked(c.result)),
    )

    add(
        m,
        "tieNote",
        "lib.serving.plan.tie_note",
        lambda c, o: (
            [rows_js(c.bound["rows"]), None if c.bound["chosen"] is None else rows_js([c.bound["chosen"]])[0]]
            + [c.bound["devices_per_node"]],
            c.result,
        ),
    )

    def frontier(c: Call, o: Objects) -> tuple:
        b = dict(c.bound)
        options = dict(b["options"])
        keys = (
            "devices_per_node",
            "link",
            "inter_link",
            "nics_per_node",
            "prefix_hit_rate",
            "expert_parallel",
            "ttft_limit",
            "tpot_limit",
            "percentile",
            "price_per_device_hour",
            "engine",
        )
        defaults = {"devices_per_node": 8, "prefix_hit_rate": 0.0, "expert_parallel": False, "percentile": 0.9}
        for key in keys:
            b[key] = options.pop(key, defaults.get(key))
        b["options"] = options
        points, front = c.result

        def point(p: Any) -> dict:
            return {
                "name": p.name,
                "batch": p.batch,
                "user": p.tokens_per_s_per_user,
                "device": p.tokens_per_s_per_device,
            }

        return (
            [plan_scenario(b, o), list(b["batches"])],
            {"points": [point(p) for p in points], "front": [point(p) for p in front]},
        )

    add(m, "frontier", "lib.serving.plan.frontier", frontier)

    # planner-capacity.js: lib.serving.capacity
    k = "planner-capacity.js"

    def capacity_scenario(b: dict, o: Objects) -> dict | None:
        if not b["prefill"]:
            return None
        cluster = _cluster_of(b, b["device"])
        return o.scenario(
            b["config"],
            cluster,
            _engine_of(b, cluster.device),
            prompt=b["prompt_tokens"],
            output=b["output_tokens"],
            hit=b["prefix_hit_rate"],
            ttft=b["ttft_limit"],
            tpot=b["tpot_limit"],
            percentile=b["percentile"],
        )

    def capacity(c: Call, o: Objects) -> tuple | None:
        s = capacity_scenario(c.bound, o)
        if s is None or c.error:
            return None
        r = c.result
        return [s, layout_js(c.bound["layout"])], {
            "rate": r.rate,
            "ratePerDevice": r.rate_per_device,
            "binding": r.binding,
        }

    add(k, "capacity", "lib.serving.capacity.capacity", capacity)

    def workload(c: Call, o: Objects) -> tuple | None:
        s = capacity_scenario(c.bound, o)
        if s is None:
            return None
        w = Workload(c.bound["prompt_tokens"], c.bound["output_tokens"], c.bound["prefix_hit_rate"])
        return [s], {
            "prompt": w.prompt,
            "output": w.output,
            "hit": w.prefix_hit_rate,
            "context": w.context,
            "newTokens": float(w.new_tokens.mean()),
            "square": float(np.mean(w.new_tokens**2)),
        }

    add(k, "workload", "lib.serving.capacity.Workload", workload, source="lib.serving.capacity.capacity")

    def written_percentile(c: Call, rng: random.Random) -> tuple:
        """A recorded capacity call's percentile as the page's field may hold it: as a percent where it is a
        whole odd number of percent (0.99 as 99), else as the fraction (0.9, 0.5), so both readings have cases."""
        q = c.bound["percentile"]
        return (100 * q if round(100 * q) % 2 else q), "percentile"

    from lib.serving.capacity import percentile_fraction

    add(
        k,
        "percentileFraction",
        "lib.serving.capacity.percentile_fraction",
        lambda c, o: (list(c.args), c.result),
        source="lib.serving.capacity.capacity",
        prepare=_derived(percentile_fraction, written_percentile),
    )

    def replica_js(r: Any, o: Objects, full: bool = True) -> dict | None:
        w = r.workload
        if not r.prefill:
            return None
        out = {
            "limit": r.limit,
            "maxBatch": r.max_batch,
            "fits": r.fits,
            "w": {
                "prompt": w.prompt,
                "output": w.output,
                "hit": w.prefix_hit_rate,
                "context": w.context,
                "newTokens": float(w.new_tokens.mean()),
                "square": float(np.mean(w.new_tokens**2)),
            },
        }
        if r.fits and r.max_batch >= 1:
            out.update(
                grid=list(r.grid),
                times=list(r.times),
                room=list(r.room),
                idle=list(r.idle),
                busyK=[list(x) for x in r.busy_k],
            )
        if full:
            out.update(
                s=o.scenario(r.config, r.cluster, r.engine, **_lengths_of(w), hit=w.prefix_hit_rate),
                l=layout_js(r.layout),
            )
        return out

    def replica(c: Call, o: Objects) -> tuple | None:
        r = c.result
        want = replica_js(r, o, full=False)
        if want is None:
            return None
        s = o.scenario(
            r.config,
            r.cluster,
            r.engine,
            **_lengths_of(r.workload),
            hit=r.workload.prefix_hit_rate,
        )
        return [s, layout_js(r.layout)], want

    add(k, "replica", "lib.serving.capacity._Replica", replica)

    def on_replica(convert: Callable) -> Callable:
        def inner(c: Call, o: Objects) -> tuple | None:
            r = replica_js(c.bound["self"], o)
            return None if r is None or "grid" not in r else convert(c, o.ref("replica", r), o)

        return inner

    add(
        k,
        "stepTime",
        "lib.serving.capacity._Replica.step_time",
        on_replica(lambda c, r, o: ([r, c.bound["batch"]], c.result)),
        broadcast=("batch",),
    )
    add(k, "highestRate", "lib.serving.capacity._Replica.highest_rate", on_replica(lambda c, r, o: ([r], c.result)))

    def states(c: Call, r: dict, o: Objects) -> tuple:
        got = c.result
        want = None if got is None else {"running": list(got[0]), "weights": list(got[1]), "queued": got[2]}
        return [r, c.bound["rate"]], want

    add(k, "states", "lib.serving.capacity._Replica.states", on_replica(states))
    add(
        k,
        "loadAt",
        "lib.serving.capacity._Replica.load",
        on_replica(lambda c, r, o: ([r, c.bound["rate"], c.bound["quantile"], c.bound["ttft"]], load_js(c.result))),
    )
    add(
        k,
        "weightedQuantile",
        "lib.serving.capacity._weighted_quantile",
        lambda c, o: (
            None
            if np.size(c.bound["values"]) > 400
            else (
                [
                    list(np.asarray(c.bound["values"], dtype=float)),
                    list(np.asarray(c.bound["weights"], dtype=float)),
                    c.bound["q"],
                ],
                c.result,
            )
        ),
    )

    def poisson(c: Call, o: Objects) -> tuple:
        mean = np.asarray(c.bound["mean"], dtype=float)
        counts = np.asarray(c.bound["counts"])
        i = random.Random(mean.size).randrange(mean.size)
        return [float(mean.flat[i]), int(counts[-1]), []], list(np.asarray(c.result).reshape(-1, counts.size)[i])

    add(k, "poisson", "lib.serving.capacity._poisson", poisson)

    def ttft(c: Call, o: Objects) -> tuple | None:
        b = c.bound
        if np.size(b["idle"]) > 64:
            return None
        new = np.asarray(b["new_tokens"], dtype=float)
        return (
            [
                b["rate"],
                b["rho"],
                list(b["idle"]),
                [list(x) for x in b["busy_k"]],
                list(b["room"]),
                list(np.asarray(b["service"]).mean(axis=1)),
                float(np.mean(new)),
                list(b["weights"]),
                float(np.mean(new**2) / np.mean(new) ** 2),
            ],
            {"mean": c.result[0]},
        )

    add(k, "ttft", "lib.serving.capacity._ttft", ttft)
    add(
        k,
        "meets",
        "lib.serving.capacity._meets",
        lambda c, o: ([load_js(c.bound["load"]), c.bound["ttft_limit"], c.bound["tpot_limit"]], c.result),
    )

    def binding(c: Call, o: Objects) -> tuple | None:
        r = replica_js(c.bound["replica"], o)
        if r is None:
            return None
        return [o.ref("replica", r), load_js(c.bound["beyond"]), c.bound["ttft_limit"]], c.result

    add(k, "binding", "lib.serving.capacity._binding", binding)

    # planner-collectives.js: lib.collectives, lib.hardware
    co = "planner-collectives.js"
    add(
        co,
        "hop",
        "lib.collectives.nccl._hop",
        lambda c, o: ([o.link(c.bound["link_"]), c.bound["algorithm"], c.bound["protocol"]], c.result),
    )
    add(co, "ncclBandwidth", "lib.hardware.Link.nccl_bandwidth", lambda c, o: ([o.link(c.args[0])], c.result))
    add(
        co,
        "llCap",
        "lib.collectives.nccl._ll_cap",
        lambda c, o: ([o.link(c.bound["intra"]), c.bound["nodes"]], c.result),
    )
    add(
        co,
        "busBandwidth",
        "lib.collectives.nccl._bus_bandwidth",
        lambda c, o: (
            [o.link(c.bound["intra"]), o.link(c.bound["inter"]), c.bound["nodes"], c.bound["nics"]],
            c.result,
        ),
    )
    add(
        co,
        "ringLatency",
        "lib.collectives.nccl._ring_latency",
        lambda c, o: (
            [
                c.bound["steps_per_rank"],
                c.bound["protocol"],
                c.bound["k"],
                c.bound["nodes"],
                o.link(c.bound["intra"]),
                o.link(c.bound["inter"]),
            ],
            c.result,
        ),
        broadcast=("k",),
    )
    add(
        co,
        "ringBus",
        "lib.collectives.nccl._ring_bus",
        lambda c, o: (
            [
                c.bound["protocol"],
                o.link(c.bound["intra"]),
                o.link(c.bound["inter"]),
                c.bound["nodes"],
                c.bound["nics"],
            ],
            c.result,
        ),
    )
    add(
        co,
        "allreduceLatency",
        "lib.collectives.nccl._allreduce_latency",
        lambda c, o: (
            [
                c.bound["algorithm"],
                c.bound["protocol"],
                c.bound["k"],
                c.bound["nodes"],
                o.link(c.bound["intra"]),
                o.link(c.bound["inter"]),
            ],
            c.result,
        ),
    )
    add(
        co,
        "allreduceBandwidth",
        "lib.collectives.nccl._allreduce_bandwidth",
        lambda c, o: (
            [
                c.bound["algorithm"],
                c.bound["protocol"],
                c.bound["k"],
                c.bound["nodes"],
                o.link(c.bound["intra"]),
                o.link(c.bound["inter"]),
                c.bound["nics"],
            ],
            c.result,
        ),
    )

    def topology(b: dict, devices: str = "devices", link: str = "link") -> tuple:
        k = int(b[devices])
        nodes = int(b["nodes"])
        nics = k // nodes if b.get("nics_per_node") is None else b["nics_per_node"]
        return k, lookup_link(b[link]), nodes, None if b["inter_link"] is None else lookup_link(b["inter_link"]), nics

    def tune(c: Call, o: Objects) -> tuple | None:
        from lib.collectives import ALGORITHMS

        if tuple(c.bound["algorithms"]) != tuple(ALGORITHMS) or c.error:
            return None
        k, intra, nodes, inter, nics = topology(c.bound)
        return [c.bound["message_bytes"], k, o.link(intra), nodes, o.link(inter), nics], c.result.time

    add(co, "tuneAllreduce", "lib.collectives.nccl.tune_allreduce", tune, broadcast=("message_bytes",))
    add(
        co,
        "sendTime",
        "lib.collectives.startup.send_time",
        lambda c, o: ([c.bound["message_bytes"], o.link(c.bound["link"])], c.result),
        broadcast=("message_bytes",),
    )

    def ring_collective(c: Call, o: Objects) -> tuple | None:
        if c.bound["kind"] not in ("allgather", "reducescatter"):
            return None
        k, intra, nodes, inter, nics = topology(c.bound)
        return [c.bound["message_bytes"], k, o.link(intra), nodes, o.link(inter), nics], c.result

    add(
        co,
        "ringCollective",
        "lib.collectives.startup.best_collective_time",
        ring_collective,
        broadcast=("message_bytes",),
    )

    def masks(c: Call, o: Objects) -> tuple:
        one, two = (bool(np.asarray(x)) for x in c.result)
        return (
            [c.bound["message"], c.bound["devices"], o.link(c.bound["intra"]), c.bound["nodes"]],
            "one" if one else "two" if two else None,
        )

    add(co, "customKernel", "lib.collectives.engine._masks", masks, broadcast=("message",))
    add(
        co,
        "kernelTime",
        "lib.collectives.engine._kernel_time",
        lambda c, o: (
            [
                "one" if c.bound["kernel"] is coll_engine.ONE_SHOT else "two",
                c.bound["message"],
                c.bound["devices"],
                o.link(c.bound["intra"]),
            ],
            c.result,
        ),
        broadcast=("message",),
    )

    def engine_allreduce(c: Call, o: Objects) -> tuple | None:
        if c.error:
            return None
        k, intra, nodes, inter, nics = topology(c.bound)
        return (
            [c.bound["message_bytes"], k, o.link(intra), nodes, o.link(inter), nics, c.bound["allreduce"]],
            c.result.time,
        )

    add(
        co, "engineAllreduce", "lib.collectives.engine.engine_allreduce", engine_allreduce, broadcast=("message_bytes",)
    )

    # planner-config.js: lib.transformer.hf
    cf = "planner-config.js"
    add(
        cf,
        "field",
        "lib.transformer.hf._field",
        lambda c, o: ([c.bound["raw"], c.bound["name"], c.bound["why"]], value(c)),
    )
    add(cf, "whole", "lib.transformer.hf._whole", lambda c, o: ([c.bound["name"], c.bound["value"]], value(c)))

    def from_hf(c: Call, o: Objects) -> tuple:
        b = c.bound
        if c.error:
            return [b["raw"], b["name"]], err(c)
        r = c.result
        return (
            [b["raw"], b["name"]],
            {
                "name": r.name,
                "layers": r.layers,
                "hidden": r.hidden,
                "heads": r.heads,
                "kv_heads": r.kv_heads,
                "ffn_hidden": r.ffn_hidden,
                "vocab": r.vocab,
                "experts": r.experts,
                "experts_per_token": r.experts_per_token,
                "gated_mlp": r.gated_mlp,
                "qkv_bias": r.qkv_bias,
                "tied_embeddings": r.tied_embeddings,
            },
        )

    add(cf, "fromHfConfig", "lib.transformer.hf.from_hf_config", from_hf)

    # planner-sizing.js: lib.serving.sizing
    sz = "planner-sizing.js"
    add(
        sz,
        "replicaShapes",
        "lib.serving.sizing.replica_shapes",
        lambda c, o: (
            [o.config(c.bound["config"]), c.bound["devices"], c.bound["devices_per_node"], c.bound["expert_parallel"]],
            [layout_js(x) for x in c.result],
        ),
    )

    def size(c: Call, o: Objects) -> tuple | None:
        b = dict(c.bound)
        keywords = dict(b["keywords"])
        if c.error or "engine" in keywords:
            return None
        cluster = _cluster_of({"devices_per_node": b["devices_per_node"], **keywords}, b["device"])
        from lib.serving.engine import Engine as _Engine
        from lib.serving.engine import configure

        fields = {k2: keywords.pop(k2) for k2 in list(keywords) if k2 in _Engine.__dataclass_fields__}
        eng = configure(cluster.device, None, **fields)
        s = o.scenario(
            b["config"],
            cluster,
            eng,
            prompt=b["prompt_tokens"],
            output=b["output_tokens"],
            hit=keywords.get("prefix_hit_rate", 0.0),
            ttft=keywords.get("ttft_limit"),
            tpot=keywords.get("tpot_limit"),
            percentile=keywords.get("percentile", 0.9),
            expert_parallel=b["expert_parallel"],
        )
        r = c.result
        want = (
            None
            if r is None
            else {
                "name": r.layout.name,
                "devices": r.devices,
                "layout": layout_js(r.layout),
                "capacity": {"rate": r.capacity.rate},
                "replica": {"rate": r.replica.rate, "binding": r.replica.binding},
            }
        )
        return [s, b["rate"], b["max_devices"], b["confidence"]], want

    add(sz, "size", "lib.serving.sizing.size", size)

    # planner-sizing.js: lib.serving.trust, on the capacities lib computed (what the page's ranges are made of)
    from lib.serving import trust

    def limits(c: Call) -> tuple:
        return c.bound["ttft_limit"], c.bound["tpot_limit"]

    confidences = (0.05, 0.1, 0.5, 0.75, 0.9, 0.95, 90, 62.5)
    for name, target, arguments in (
        ("regime", trust.regime, lambda c, rng: limits(c)),
        ("checkConfidence", trust.check_confidence, lambda c, rng: (rng.choice(confidences), "confidence")),
        ("capacityRatio", trust.capacity_ratio, lambda c, rng: (rng.choice(confidences), trust.regime(*limits(c)))),
        ("capacityInterval", trust.capacity_interval, lambda c, rng: (c.result.rate, trust.regime(*limits(c)))),
    ):
        add(
            sz,
            name,
            f"lib.serving.trust.{target.__name__}",
            lambda c, o: (list(c.args), list(c.result) if isinstance(c.result, tuple) else c.result),
            source="lib.serving.capacity.capacity",
            prepare=_derived(target, arguments),
            limit=24,
        )

    # planner-map.js: lib.diagrams.data
    def device_map(c: Call, o: Objects) -> tuple:
        b, r = c.bound, c.result
        cluster = b["cluster"]
        gpus = [
            {
                key: (list(g[key]) if key == "layers" else g[key])
                for key in ("gpu", "server", "slot", "replica", "stage", "tp_rank", "layers")
            }
            for g in r["gpus"]
        ]
        collectives = []
        for x in r["collectives"]:
            members = ("from_gpus", "to_gpus", "from_stage", "to_stage") if x["kind"] == "send" else ("gpus", "stage")
            collectives.append(
                {
                    "kind": x["kind"],
                    "replica": x["replica"],
                    "across_servers": x["across_servers"],
                    "link": {"slug": x["link_slug"]},
                    **{key: x[key] for key in members},
                }
            )
        return (
            [
                b["config"].layers,
                layout_js(b["layout"], named=True),
                cluster.devices_per_node,
                o.link(cluster.link),
                o.link(cluster.inter_link),
            ],
            {
                "layout": r["layout"],
                "servers": r["cluster"]["servers"]
                if "servers" in r.get("cluster", {})
                else -(-len(gpus) // cluster.devices_per_node),
                "devices_per_node": cluster.devices_per_node,
                "gpus": gpus,
                "collectives": collectives,
            },
        )

    add("planner-map.js", "data", "lib.diagrams.data.device_map_data", device_map)
    return out


# ---------------------------------------------------------------- which lib the files come from


def _module_file(name: str) -> Path | None:
    """The source file of module ``name`` under ``lib`` (a package's ``__init__.py``), or None."""
    base = ROOT.joinpath(*name.split("."))
    for candidate in (base.with_suffix(".py"), base / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def lib_sources(modules: list[str] | None = None) -> list[Path]:
    """The ``lib`` files the golden answers depend on: the modules of every mirrored function (by default) and
    every ``lib`` module they import, transitively (read from the sources, nothing imported).

    >>> [p.relative_to(ROOT).as_posix() for p in lib_sources(["lib.units"])]
    ['lib/__init__.py', 'lib/units.py']
    """
    import ast

    if modules is None:
        modules = sorted({_resolve(m.target)[0].__name__ for m in mirrors()})
    todo = [m for name in modules for m in (name.rsplit(".", i)[0] for i in range(name.count(".") + 1))]
    found: dict[str, Path] = {}
    while todo:
        name = todo.pop()
        file = _module_file(name)
        if name in found or file is None:
            continue
        found[name] = file
        for node in ast.walk(ast.parse(file.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module] + [f"{node.module}.{alias.name}" for alias in node.names]
            else:
                continue
            for imported in names:
                if imported == "lib" or imported.startswith("lib."):
                    todo += [imported.rsplit(".", i)[0] for i in range(imported.count(".") + 1)]
    return sorted(found.values())


def fingerprint() -> str:
    """SHA-256 of :func:`lib_sources` (paths and contents): the golden files hold the one they were made from.

    >>> len(fingerprint())
    64
    """
    digest = hashlib.sha256()
    for file in lib_sources():
        digest.update(file.relative_to(ROOT).as_posix().encode() + b"\0" + file.read_bytes() + b"\0")
    return digest.hexdigest()


# ---------------------------------------------------------------- generating the files


def hf_configs() -> list[Any]:
    """config.json contents to read: each preset of a dense or Mixtral shape as each architecture that prices it,
    Hugging Face's defaults (no KV heads, biases asked for), and refusals of each kind ``from_hf_config`` names.

    >>> len(hf_configs()) > 20
    True
    """
    from lib.transformer import ARCHITECTURES, PRESETS

    found: list[Any] = []
    for key, c in sorted(PRESETS.items()):
        if c.latent_attention or c.shared_experts or c.dense_layers or c.head_width:
            continue
        raw = {
            "architectures": ["MixtralForCausalLM" if c.experts > 1 else "LlamaForCausalLM"],
            "num_hidden_layers": c.layers,
            "hidden_size": c.hidden,
            "num_attention_heads": c.heads,
            "num_key_value_heads": c.kv_heads,
            "vocab_size": c.vocab,
            "tie_word_embeddings": c.tied_embeddings,
            "intermediate_size": c.ffn_hidden,
            "_name_or_path": c.hf_id or key,
        }
        if c.experts > 1:
            raw.update(num_local_experts=c.experts, num_experts_per_tok=c.experts_per_token)
        found.append(raw)
    base = dict(found[0])
    from tools.sphinx.planner_data import PAGE_REFUSES

    for architecture in sorted(set(ARCHITECTURES) - set(PAGE_REFUSES)):  # the page refuses what it cannot hold
        found.append(dict(base, architectures=[architecture], attention_bias=architecture.startswith("Llama")))
    found.append({k: v for k, v in base.items() if k != "num_key_value_heads"})
    found.append(
        dict(
            base,
            architectures=["Qwen3MoeForCausalLM"],
            num_experts=128,
            num_experts_per_tok=8,
            moe_intermediate_size=1536,
        )
    )
    for missing in (
        "num_hidden_layers",
        "hidden_size",
        "num_attention_heads",
        "vocab_size",
        "intermediate_size",
        "architectures",
    ):
        found.append({k: v for k, v in base.items() if k != missing})
    found += [
        dict(base, architectures=["GPT2LMHeadModel"]),
        dict(base, head_dim=base["hidden_size"] // base["num_attention_heads"]),
        dict(base, shared_expert_intermediate_size=2048),
        dict(base, hidden_size=str(base["hidden_size"])),
        dict(base, num_key_value_heads=7.5),
        dict(base, num_key_value_heads=8.0),
        [base],
        "text",
        dict(base, architectures="LlamaForCausalLM"),
        {k: v for k, v in dict(base, architectures=["MixtralForCausalLM"], num_local_experts=8).items()},
    ]
    return found


#: Calls kept per scenario where one is not enough: capacity is priced for every row with a target, and plan's
#: cases leave the capacities to it.
KEEP = {"lib.serving.capacity.capacity": 3}


def _row(row: Any) -> dict:
    return {"name": row.name, **dataclasses.asdict(row)}


def generate(progress: Callable[[str], None] = lambda text: None) -> dict[str, str]:
    """The golden files' texts by file name: every scenario planned and sized, every mirrored call recorded."""
    kept = mirrors()
    paths = sorted({m.source or m.target for m in kept})
    with Recorder(paths, seed=PLAN_SEED, keep=KEEP) as recorder:
        # imported here, after the recorder has put its wrappers in place
        from lib.diagrams.data import device_map_data
        from lib.serving import best, frontier, size, tie_note
        from lib.serving.layout import Cluster
        from lib.transformer import from_hf_config, parameter_count

        def label(kind: str) -> Callable[[int], None]:
            return lambda i: setattr(recorder, "scenario", f"{kind} {i:02d}")

        planned = scenarios(RANDOM_SCENARIOS, PLAN_SEED, plan_draw, label("plan"))
        progress("plan scenarios")
        moe = scenarios(MOE_SCENARIOS, MOE_SEED, moe_draw, label("moe"))
        progress("moe scenarios")
        sized = []
        for q, _ in scenarios(SIZING_SCENARIOS, SIZING_SEED, lambda rng, _: sizing_scenario(rng), label("size")):
            recorder.scenario = f"size {len(sized):02d}"
            args, options = size_arguments(q)
            got = size(*args, **options)
            estimate = size(*args, **dict(options, confidence=None)) if options["confidence"] else got
            sized.append((q, got, estimate))
        progress("sizing scenarios")
        chosen, notes = {}, {}
        for kind, group in (("plan", planned), ("moe", moe)):
            for i, (q, rows) in enumerate(group):
                recorder.scenario = f"{kind} {i:02d}"
                args, options = lib_arguments(q)
                chosen[kind, i] = best(rows, options["devices_per_node"])
                notes[kind, i] = tie_note(rows, chosen[kind, i], options["devices_per_node"])
                parameter_count(args[0])  # the page shows the model's parameter count
                cluster = Cluster(
                    args[1],
                    options["devices_per_node"],
                    options["link"],
                    options["inter_link"],
                    options["nics_per_node"],
                )
                recorder.scenario = f"map {kind} {i:02d}"
                for row in rows:
                    device_map_data(args[0], row.layout, cluster)
        for i in (1, 4):
            recorder.scenario = f"frontier {i}"
            args, options = lib_arguments(planned[i][0])
            config, device, devices, _, prompt, output = args
            frontier(config, device, devices, prompt, output, **options)
        progress("frontiers")
        for i, raw in enumerate(hf_configs()):
            recorder.scenario = f"hf {i:02d}"
            try:
                parameter_count(from_hf_config(raw))
            except ValueError:
                pass
        calls = recorder.calls
    from lib.serving import best as lib_best
    from lib.serving import size as lib_size
    from lib.serving import tie_note as lib_tie_note

    accepted = []  # not recorded: the other scenarios' function cases stay as they were
    for q, rows in scenarios(ACCEPTANCE_SCENARIOS, ACCEPTANCE_SEED, acceptance_scenario):
        args, options = size_arguments(q)
        got = lib_size(*args, **options)
        estimate = lib_size(*args, **dict(options, confidence=None)) if options["confidence"] else got
        picked = lib_best(rows, 8)
        accepted.append((q, got, estimate, rows, picked, lib_tie_note(rows, picked, 8)))
    progress("acceptance scenarios")

    def plan_entry(label: str, i: int, q: dict, rows: list) -> dict:
        picked = chosen[label, i]
        return {
            "query": q,
            "rows": [_row(r) for r in rows],
            "best": None if picked is None else picked.name,
            "note": notes[label, i],
        }

    plans = [plan_entry("plan", i, q, rows) for i, (q, rows) in enumerate(planned)]
    moes = [plan_entry("moe", i, q, rows) for i, (q, rows) in enumerate(moe)]

    def sized_entry(q: dict, got: Any, estimate: Any) -> dict:
        return {
            "query": q,
            "want": None
            if got is None
            else {
                "layout": got.layout.name,
                "devices": got.devices,
                "dp": got.layout.dp,
                "rate": got.capacity.rate,
                "replica_rate": got.replica.rate,
                "binding": got.replica.binding,
                "estimate": None if estimate is None else estimate.devices,
            },
        }

    sizings = [sized_entry(q, got, estimate) for q, got, estimate in sized]
    acceptance = [
        {
            **sized_entry(q, got, estimate),
            "rows": [_row(r) for r in rows],
            "best": None if picked is None else picked.name,
            "note": note,
        }
        for q, got, estimate, rows, picked, note in accepted
    ]
    e2e = {
        "plan": _cover([plan_kinds(p["query"], p["rows"]) for p in plans], PLAN_KINDS, 6),
        "moe": _cover([moe_kinds(p["query"], p["rows"], p["best"]) for p in moes], MOE_KINDS, 3),
        "sizing": _cover([sizing_kinds(s["query"], s["want"]) for s in sizings], SIZING_KINDS, 4),
    }
    scenarios_file = {"plan": plans, "moe": moes, "sizing": sizings, "acceptance": acceptance, "e2e": e2e}

    objects = Objects()
    functions: dict[str, dict] = {}
    rng = random.Random(PLAN_SEED)
    for mirror in kept:
        cases, skipped = mirror.cases(calls[mirror.source or mirror.target], objects, rng)
        progress(f"{mirror.script} {mirror.name}: {len(cases)} cases, {skipped} calls skipped")
        functions[f"{mirror.script} {mirror.name}"] = {
            "script": mirror.script,
            "name": mirror.name,
            "mirrors": mirror.target,
            "cases": cases,
        }
    made_from = fingerprint()
    return {
        "scenarios.json": dumps({**scenarios_file, "lib_sha256": made_from}),
        "functions.json": dumps({"objects": objects.table, "functions": functions, "lib_sha256": made_from}),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(GOLDEN), help="folder of the golden files (default: %(default)s)")
    parser.add_argument("--check", action="store_true", help="compare with the files instead of writing them")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    texts = generate(progress=(lambda text: None) if args.quiet else (lambda text: print(text, file=sys.stderr)))
    out = Path(args.out)
    if args.check:
        stale = [
            name
            for name, text in texts.items()
            if not (out / name).exists() or (out / name).read_text(encoding="utf-8") != text
        ]
        if stale:
            print(f"stale golden files in {out}: {stale} (run python -m tools.site.planner_golden)", file=sys.stderr)
            return 1
        return 0
    out.mkdir(parents=True, exist_ok=True)
    for name, text in texts.items():
        (out / name).write_text(text, encoding="utf-8")
        print(out / name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
