"""The what-if calculator's numbers, from ``lib``, for ``_static/calculator.js``.

In its model mode the calculator prices each transfer as chapter 2 prices the
base case's all-reduces when K changes: ``V_K`` is what one device sends in a
ring collective of an ``n``-byte message (:func:`lib.collectives.bytes_sent`)
and ``l_K = l0 + steps(K) * delta`` is the collective's startup under the
book's model (:func:`lib.collectives.startup_time`; the base case's link is
:func:`lib.experiment.base_startup`). This module reads, through those same
functions, the constants the page needs: for each collective its share and
steps (``V_K = share (K - 1) / K n``, ``steps = per_rank (K - 1)``), for each
link and protocol ``l0``, ``delta`` and the bus bandwidth ``B``, and the
presets (the article's base case; one Llama-3 70B layer decoding on eight
H100s over NVLink; the same over 100 Gb Ethernet). ``tests/browser/
test_calculator.py`` holds the page to ``lib`` at many K.

Written at build time into ``_static/calculator-data.js`` as
``window.CALCULATOR_DATA`` (:mod:`tools.sphinx.page_data`; loaded by
:mod:`tools.sphinx.html_tweaks`, on the calculator page only).
``python -m tools.sphinx.calculator_data -`` prints it.

>>> data = calculator_data()
>>> data["collectives"]["allreduce"], data["collectives"]["allgather"]["share"]
({'label': 'all-reduce', 'share': 2, 'per_rank': 2}, 1)
>>> base = data["links"]["base"]["protocols"]["Simple"]
>>> round(base["bandwidth"] / 1e9), round((base["l0"] + 2 * base["delta"]) * 1e6, 6)
(10, 30.0)
"""

from __future__ import annotations

import math
import sys
from typing import Any

if __package__:
    from . import page_data
else:  # loaded by Sphinx with tools/ on the path (tools.sphinx.html_tweaks)
    import page_data

__all__ = ["SCRIPT_NAME", "GLOBAL", "MAX_DEVICES", "LINKS", "calculator_data", "script", "setup", "main"]

SCRIPT_NAME = "calculator-data.js"
GLOBAL = "CALCULATOR_DATA"

#: The most devices the calculator accepts: a ring over one group of them is what its model prices.
MAX_DEVICES = 4096

#: Links offered in model mode (slugs of :data:`lib.hardware.LINKS`), after the base case's.
LINKS = ("nvlink4", "nvlink3", "nvlink5", "pcie4", "pcie5", "ib-ndr", "ib-hdr", "eth-400g", "eth-100g")

#: A large message, so that the bus bandwidth read back from a cost keeps its digits.
_PROBE_BYTES = 1e9


def _collective(kind: str) -> dict:
    from lib import collectives

    label = {
        "allreduce": "all-reduce",
        "allgather": "all-gather",
        "reducescatter": "reduce-scatter",
        "alltoall": "all-to-all",
    }[kind]
    share = collectives.bytes_sent(kind, 1.0, 2) * 2  # V_2 = share * (2 - 1) / 2 * n
    hop = collectives.startup_time("allreduce", 3, "nvlink4") - collectives.startup_time("allreduce", 2, "nvlink4")
    per_rank = (collectives.startup_time(kind, 3, "nvlink4") - collectives.startup_time(kind, 2, "nvlink4")) / hop * 2
    return {"label": label, "share": round(share), "per_rank": round(per_rank)}


def _startup_terms(startup) -> dict:
    """``l0`` and ``delta`` of an all-reduce startup function of K (``l_K = l0 + 2 (K - 1) delta``)."""
    delta = (startup(3) - startup(2)) / 2
    return {"l0": startup(2) - 2 * delta, "delta": delta}


def _link(slug: str, protocol: str) -> dict:
    from lib import collectives

    cost = collectives.collective_cost("allreduce", _PROBE_BYTES, 2, slug, protocol)
    terms = _startup_terms(lambda k: float(collectives.startup_time("allreduce", k, slug, protocol)))
    return {**terms, "bandwidth": _PROBE_BYTES / (float(cost.time) - cost.latency)}


def _presets() -> dict[str, dict[str, Any]]:
    """Each preset as the strings the form shows, in its units (ms, bytes, GB/s, us)."""
    from lib import transformer
    from lib.experiment import BASE
    from lib.units import GB, ms, s, us

    def numbers(**values: float) -> dict[str, str]:
        return {name: f"{value:.12g}" for name, value in values.items()}

    base = data_links()["base"]["protocols"]["Simple"]
    presets = {
        "base": {
            "label": "The base case (chapters 2 and 3)",
            "mode": "model",
            "collective": "allreduce",
            "link": "base",
            "protocol": "Simple",
            **numbers(
                serial_ms=BASE.serial / ms,
                divisible_ms=BASE.divisible / ms,
                efficiency=BASE.efficiency,
                devices=BASE.devices,
                transfers=BASE.transfers,
                message_bytes=BASE.transfer_bytes / 1.0,  # V_2 = n for an all-reduce
                bandwidth_GBps=base["bandwidth"] / (GB / s),
                l0_us=base["l0"] / us,
                delta_us=base["delta"] / us,
            ),
        }
    }
    model = transformer.PRESETS["llama-3-70b"]
    layer = chapter_6_layer()
    one_shot = layer["one_shot"]
    for key, slug, where in [
        ("llama-nvlink", "nvlink4", "eight H100s on NVLink 4, the engine's all-reduce (chapter 6)"),
        ("llama-ethernet", "eth-100g", "eight H100s, one per server, over 100 Gb Ethernet"),
    ]:
        if slug == "nvlink4":  # the engine's one-shot kernel: l_K = alpha_1 + (K - 1) n / B_1, nothing per byte
            link = {"l0": one_shot["latency"], "delta": layer["message_bytes"] / (2 * one_shot["bandwidth"])}
            bandwidth, protocol, link_slug = math.inf, "", ""
        else:
            link = _link(slug, "LL")
            bandwidth, protocol, link_slug = link["bandwidth"] / (GB / s), "LL", slug
        presets[key] = {
            "label": f"{model.name} decoding one token, per layer, {where}",
            "mode": "model",
            "collective": "allreduce",
            "link": link_slug,
            "protocol": protocol,
            **numbers(
                serial_ms=layer["fixed"] / ms,
                divisible_ms=layer["operators"] / ms,
                efficiency=1.0,
                devices=8,
                transfers=layer["allreduces"],
                message_bytes=layer["message_bytes"],
                bandwidth_GBps=bandwidth,
                l0_us=link["l0"] / us,
                delta_us=link["delta"] / us,
            ),
        }
    return presets


def chapter_6_layer() -> dict[str, Any]:
    """One layer's share of chapter 6's decode step: Llama-3 70B, one token, batch 1, on the book's device.

    ``operators`` is the step's operator time on one device (weights read at
    the serving model's memory efficiency, the output head included) divided
    by the layers, ``fixed`` the fixed cost per layer
    (``lib.serving.Engine``'s ``layer_overhead``, which no split shrinks),
    ``allreduces`` the all-reduces per layer, ``message_bytes`` one token's
    activations, and ``one_shot`` the engine's one-shot all-reduce kernel on
    NVLink 4 (``latency`` alpha_1 and read ``bandwidth`` B_1, SI units).

    >>> from lib.units import ms, us
    >>> layer = chapter_6_layer()
    >>> round(layer["fixed"] / us), layer["allreduces"], layer["message_bytes"]
    (110, 2, 16384)
    >>> round(layer["operators"] / ms, 4)
    0.576
    """
    from lib import hardware, serving, transformer
    from lib.collectives.engine import ONE_SHOT

    model = transformer.PRESETS["llama-3-70b"]
    device = hardware.DEVICES[hardware.BOOK_DEVICE]
    work = serving.decode_step(model, serving.Cluster(device), serving.Layout(tp=1), batch=1, context=1)
    work = work.stage_works[0]
    operators = float(work.linear_time + work.attention_time + work.head_time)
    return {
        "operators": operators / model.layers,
        "fixed": float(work.fixed_time) / model.layers,
        "allreduces": transformer.tp_collectives_per_token(model) // model.layers,
        "message_bytes": model.hidden * 2,  # one token's activations, 16 bits
        "one_shot": {
            "latency": ONE_SHOT.latency,
            "bandwidth": ONE_SHOT.link_share * hardware.LINKS[hardware.FAST_LINK].bandwidth,
        },
    }


def data_links() -> dict:
    """The base case's link (chapter 2's scaled PCIe startup, 10 GB/s) and each of :data:`LINKS` by protocol."""
    from lib import collectives, hardware
    from lib.experiment import BASE, base_startup

    links = {
        "base": {
            "name": "the base case's link (10 GB/s, chapter 2)",
            "protocols": {"Simple": {**_startup_terms(lambda k: float(base_startup(k))), "bandwidth": BASE.bandwidth}},
        }
    }
    for slug in LINKS:
        links[slug] = {
            "name": hardware.LINKS[slug].name,
            "protocols": {p: _link(slug, p) for p in collectives.PROTOCOLS},
        }
    return links


def calculator_data() -> dict:
    """Everything the calculator's model mode computes with, in SI units (seconds, bytes, bytes per second)."""
    return {
        "collectives": {kind: _collective(kind) for kind in ("allreduce", "allgather", "reducescatter", "alltoall")},
        "links": data_links(),
        "presets": _presets(),
        "max_devices": MAX_DEVICES,
    }


def script() -> str:
    """:func:`calculator_data` as a script that sets ``window.CALCULATOR_DATA``."""
    return page_data.as_script(GLOBAL, calculator_data())


def setup(app: Any) -> dict:
    """Sphinx entry point: write the data when the HTML builder starts, and load it."""
    page_data.connect(app, SCRIPT_NAME, script)
    return {"parallel_read_safe": True, "parallel_write_safe": True}


def main(argv: list[str] | None = None) -> int:
    return page_data.main(argv, __doc__.splitlines()[0], SCRIPT_NAME, script)


if __name__ == "__main__":
    sys.exit(main())
