"""Number formats of weights and of the KV cache: bytes per number, and which tensor-core peak computes them.

Introduced in chapter 7 (serving many users). Serving engines rarely keep a
model in the 16 bits it was trained in. The format of the weights sets two
things: how many bytes a step reads, and which arithmetic multiplies them.

* **W8A8 FP8** (``"fp8"``): weights and activations in 8-bit floats (E4M3)
  with per-tensor or per-channel scales, multiplied on the FP8 tensor cores,
  whose peak is twice the 16-bit one on Hopper, Ada and Blackwell. A GPU
  without FP8 tensor cores (Ampere) runs an FP8 checkpoint as W8A16: vLLM's
  Marlin kernel dequantises the weights to 16 bits, so the bytes halve but
  the arithmetic stays at the 16-bit peak.
* **W8A16 and W4A16** (``"int8"``, ``"int4"``): integer weights in groups of
  128 with one 16-bit scale per group (GPTQ, AWQ), dequantised to 16 bits in
  the kernel: fewer bytes, 16-bit arithmetic.
* **BF16** (``"bf16"``): two bytes, 16-bit arithmetic.

The KV cache is 16-bit (``"bf16"``) or 8-bit (``"fp8"``, vLLM's
``--kv-cache-dtype fp8``). Attention computes at the 16-bit peak either way
(the cache is dequantised as it is read), and activations on the wire are
16-bit. The input embedding and the output head stay in 16 bits whatever the
format, as published FP8, GPTQ and AWQ checkpoints leave ``lm_head`` out of
the quantisation.

>>> WEIGHT_FORMATS["int4"].bytes_per_weight
0.515625
>>> compute_peak("h100-sxm", "fp8") / compute_peak("h100-sxm", "bf16")
2.0
>>> compute_peak("a100-80gb", "fp8") == compute_peak("a100-80gb", "bf16")   # no FP8 tensor cores: W8A16
True
"""

from __future__ import annotations

from dataclasses import dataclass

from lib.hardware import Device
from lib.hardware import device as lookup_device

__all__ = [
    "WeightFormat",
    "WEIGHT_FORMATS",
    "KV_FORMATS",
    "UNQUANTISED_BYTES",
    "weight_format",
    "kv_bytes",
    "compute_peak",
]

#: Bytes per number of what no format quantises: the embedding, the output head, activations on the wire.
UNQUANTISED_BYTES = 2.0

#: Weights per group that share one 16-bit scale in the integer formats (GPTQ and AWQ's default).
_GROUP = 128


@dataclass(frozen=True)
class WeightFormat:
    """How weights are stored and multiplied.

    ``bytes_per_weight`` counts the scales too; ``compute`` names the
    tensor-core arithmetic (``"bf16"`` or ``"fp8"``) the matrix products run
    in where the device has it.
    """

    name: str
    bytes_per_weight: float
    compute: str
    description: str


#: The weight formats :func:`lib.serving.plan` knows, keyed by name.
WEIGHT_FORMATS: dict[str, WeightFormat] = {
    "bf16": WeightFormat("bf16", 2.0, "bf16", "16-bit weights and activations"),
    "fp8": WeightFormat("fp8", 1.0, "fp8", "W8A8: FP8 (E4M3) weights and activations, FP8 tensor cores"),
    "int8": WeightFormat(
        "int8", 1.0 + 2 / _GROUP, "bf16", "W8A16: 8-bit integer weights, a 16-bit scale per 128, dequantised to 16 bits"
    ),
    "int4": WeightFormat(
        "int4",
        0.5 + 2 / _GROUP,
        "bf16",
        "W4A16: 4-bit integer weights (GPTQ, AWQ), a 16-bit scale per 128, dequantised",
    ),
}

#: Bytes per cached key or value number, by KV-cache format.
KV_FORMATS: dict[str, float] = {"bf16": 2.0, "fp8": 1.0}


def weight_format(name: str | WeightFormat) -> WeightFormat:
    """The :class:`WeightFormat` called ``name`` (one passes through).

    >>> weight_format("fp4")
    Traceback (most recent call last):
    ...
    ValueError: weight_format must be one of ['bf16', 'fp8', 'int4', 'int8'], got 'fp4'
    """
    if isinstance(name, WeightFormat):
        return name
    if name not in WEIGHT_FORMATS:
        raise ValueError(f"weight_format must be one of {sorted(WEIGHT_FORMATS)}, got {name!r}")
    return WEIGHT_FORMATS[name]


def kv_bytes(name: str) -> float:
    """Bytes per cached number of the KV-cache format ``name``.

    >>> kv_bytes("fp8"), kv_bytes("bf16")
    (1.0, 2.0)
    >>> kv_bytes("int4")
    Traceback (most recent call last):
    ...
    ValueError: kv_format must be one of ['bf16', 'fp8'], got 'int4'
    """
    if name not in KV_FORMATS:
        raise ValueError(f"kv_format must be one of {sorted(KV_FORMATS)}, got {name!r}")
    return KV_FORMATS[name]


def compute_peak(device: Device | str, name: str | WeightFormat) -> float:
    """Dense tensor-core FLOP/s the matrix products of weights in format ``name`` run at on ``device``.

    FP8 runs at the device's FP8 peak where it has one (``Device.fp8_flops``),
    and at the 16-bit peak elsewhere (W8A16); every other format at the
    16-bit peak.
    """
    dev = lookup_device(device)
    fmt = weight_format(name)
    if fmt.compute == "fp8" and dev.fp8_flops > 0:
        return dev.fp8_flops
    return dev.peak_flops
