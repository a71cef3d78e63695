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

As a Sphinx extension (loaded by :mod:`tools.html_tweaks`) it writes that file
into the HTML output when the builder starts, before any page is written,
and lists it among the page's scripts (``html_tweaks`` keeps it on the
planner page only). By hand::

    python -m tools.planner_data _build/html/_static     # writes planner-data.js there
    python -m tools.planner_data -                       # prints it

>>> data = planner_data()
>>> data["presets"]["llama-3-70b"]["layers"], data["devices"]["h100-sxm"]["link"]
(80, 'nvlink4')
>>> script({"a": 1})
'window.PLANNER_DATA = {"a":1};\\n'
"""

from __future__ import annotations

import argparse
import inspect
import json
import sys
from dataclasses import asdict
from pathlib import Path
from typing import Any

__all__ = ["SCRIPT_NAME", "GLOBAL", "planner_data", "script", "write", "setup", "main"]

#: The file name under ``_static`` of the built book.
SCRIPT_NAME = "planner-data.js"
#: The global that the script sets.
GLOBAL = "PLANNER_DATA"

#: Fields of a model preset that the formulas use (names as in ``ModelConfig``).
MODEL_FIELDS = ("name", "layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab", "experts",
                "experts_per_token", "gated_mlp", "qkv_bias", "tied_embeddings")
DEVICE_FIELDS = ("name", "memory_bytes", "memory_bandwidth", "peak_flops", "link")
LINK_FIELDS = ("name", "bandwidth", "kind", "nccl_share", "in_network_efficiency")
#: Units of :mod:`lib.units` that the page converts with (its inputs and cells are in GB, GiB, TB/s,
#: TFLOPS and ms).
UNITS = ("GB", "GiB", "TB", "TFLOPS", "ms")
#: Keyword arguments of ``lib.serving.plan`` whose defaults the page starts from.
PLAN_DEFAULTS = ("devices_per_node", "inter_link", "nics_per_node", "expert_parallel")


def _pick(record: Any, fields: tuple[str, ...]) -> dict:
    values = asdict(record)
    return {name: values[name] for name in fields}


def _defaults(function: Any, names: tuple[str, ...]) -> dict:
    parameters = inspect.signature(function).parameters
    return {name: parameters[name].default for name in names}


def planner_data() -> dict:
    """Everything the planner page computes with, in SI units, as plain JSON-ready values."""
    from lib import collectives, hardware, serving, transformer, units

    return {
        "presets": {slug: _pick(config, MODEL_FIELDS) for slug, config in transformer.PRESETS.items()},
        "devices": {slug: _pick(device, DEVICE_FIELDS) for slug, device in hardware.DEVICES.items()},
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
        "serving": {
            "activation_bytes": serving.ACTIVATION_BYTES,
            "plan_defaults": _defaults(serving.plan, PLAN_DEFAULTS),
            "frontier_batches": list(_defaults(serving.frontier, ("batches",))["batches"]),
        },
        "units": {name: getattr(units, name) for name in UNITS},
    }


def script(data: dict | None = None) -> str:
    """``data`` (by default :func:`planner_data`) as a script that sets ``window.PLANNER_DATA``.

    Compact JSON, keys sorted, so that the file changes only when a number does.
    Refuses NaN and infinities, which JSON cannot carry.
    """
    payload = json.dumps(planner_data() if data is None else data, sort_keys=True, separators=(",", ":"),
                         allow_nan=False, ensure_ascii=False)
    return f"window.{GLOBAL} = {payload};\n"


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
