"""Transformer shapes, their parameter counts, and tensor parallelism per token.

Introduced in chapter 6 (tensor parallelism per generated token). A
:class:`ModelConfig` holds the few numbers that decide how big a decoder-only
transformer is and how it can be split; :data:`PRESETS` holds real published
configurations, each with the source of its numbers.

Tensor parallelism (Megatron-style) puts two all-reduces in every layer, one
after attention and one after the MLP. With hidden size ``d``, ``b`` bytes per
element, batch ``B`` and a ring over ``K`` devices, each moves about
``2 (K - 1) / K * d * b * B`` bytes per device:

>>> from lib.units import GB, KB, MB, s, us
>>> tp_bytes_per_collective(hidden=8192, bytes_per_element=2, batch=1, devices=4)
24576.0
>>> cost = tp_comm_per_token(PRESETS["llama-2-70b"], devices=4, batch=1, bytes_per_element=2,
...                          latency=5 * us, bandwidth=400 * GB / s)
>>> cost.collectives, round(cost.bytes / MB, 2), round(cost.latency_time / us), round(cost.transfer_time / us, 1)
(160, 3.93, 800, 9.8)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks, collectives

__all__ = [
    "ModelConfig",
    "PRESETS",
    "ParameterBreakdown",
    "parameter_breakdown",
    "parameter_count",
    "active_parameter_count",
    "decode_parameters_read",
    "kv_cache_bytes_per_token",
    "tp_bytes_per_collective",
    "tp_collectives_per_token",
    "TPComm",
    "tp_comm_per_token",
    "tp_crossover_batch",
    "decode_time_bound",
    "valid_tp_degrees",
    "kv_heads_per_device",
    "shard_efficiency",
]

Number = Any  # a float or a numpy array of floats


@dataclass(frozen=True)
class ModelConfig:
    """The shape of a decoder-only transformer (Llama-style blocks).

    Parameters
    ----------
    name : str
        Human-readable name, e.g. ``"Llama-2 70B"``.
    layers : int
        ``L``, the number of transformer blocks.
    hidden : int
        ``d``, the width of the residual stream.
    heads : int
        Attention (query) heads.
    kv_heads : int
        Key/value heads (fewer than ``heads`` with grouped-query attention).
    ffn_hidden : int
        Inner width of the MLP (of each expert, for a mixture of experts).
    vocab : int
        Vocabulary size (rows of the embedding).
    experts : int
        MLP experts per layer (1 for a dense model).
    experts_per_token : int
        Experts each token is routed to (1 for a dense model).
    gated_mlp : bool
        ``True`` for a SwiGLU MLP (three matrices), ``False`` for two.
    qkv_bias : bool
        Whether the query, key and value projections carry a bias (Qwen2).
    tied_embeddings : bool
        Whether the output head reuses the input embedding matrix.
    source : str
        Key in ``references.bib`` of the paper that publishes the model.
    source_note : str
        Where exactly the numbers come from.

    >>> ModelConfig("tiny", layers=2, hidden=64, heads=4, kv_heads=2, ffn_hidden=128, vocab=100).head_dim
    16
    >>> ModelConfig("bad", layers=2, hidden=60, heads=8, kv_heads=2, ffn_hidden=128, vocab=100)
    Traceback (most recent call last):
    ...
    ValueError: hidden must be a multiple of heads, got hidden=60, heads=8
    """

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn_hidden: int
    vocab: int
    experts: int = 1
    experts_per_token: int = 1
    gated_mlp: bool = True
    qkv_bias: bool = False
    tied_embeddings: bool = False
    source: str = ""
    source_note: str = ""

    def __post_init__(self) -> None:
        for name in ("layers", "hidden", "heads", "kv_heads", "ffn_hidden", "vocab",
                     "experts", "experts_per_token"):
            value = getattr(self, name)
            _checks.count(name, value, minimum=1)
            if isinstance(value, (float, np.floating)) or np.ndim(value) != 0:
                raise ValueError(f"{name} must be a plain integer, got {value!r}")
        if self.hidden % self.heads:
            raise ValueError(f"hidden must be a multiple of heads, got hidden={self.hidden}, heads={self.heads}")
        if self.heads % self.kv_heads:
            raise ValueError(
                f"heads must be a multiple of kv_heads, got heads={self.heads}, kv_heads={self.kv_heads}"
            )
        if self.experts_per_token > self.experts:
            raise ValueError(
                f"experts_per_token must be <= experts, got experts_per_token={self.experts_per_token}, "
                f"experts={self.experts}"
            )

    @property
    def head_dim(self) -> int:
        """Width of one attention head, ``hidden // heads``."""
        return self.hidden // self.heads


def _llama(name: str, layers: int, hidden: int, heads: int, kv_heads: int, ffn_hidden: int,
           vocab: int, source: str, source_note: str, **extra: Any) -> ModelConfig:
    return ModelConfig(name=name, layers=layers, hidden=hidden, heads=heads, kv_heads=kv_heads,
                       ffn_hidden=ffn_hidden, vocab=vocab, source=source, source_note=source_note, **extra)


#: Real published configurations, keyed by a short slug. ``source`` is a
#: ``references.bib`` key; ``source_note`` says which table or released
#: configuration file the numbers come from.
PRESETS: dict[str, ModelConfig] = {
    "llama-2-7b": _llama("Llama-2 7B", 32, 4096, 32, 32, 11008, 32000, "touvron2023llama2",
                         "Llama 2 paper (arXiv 2307.09288) and the released config.json of Llama-2-7b"),
    "llama-2-13b": _llama("Llama-2 13B", 40, 5120, 40, 40, 13824, 32000, "touvron2023llama2",
                          "Llama 2 paper (arXiv 2307.09288) and the released config.json of Llama-2-13b"),
    "llama-2-70b": _llama("Llama-2 70B", 80, 8192, 64, 8, 28672, 32000, "touvron2023llama2",
                          "Llama 2 paper (arXiv 2307.09288; GQA with 8 KV heads) and the released config.json"),
    "llama-3-8b": _llama("Llama-3 8B", 32, 4096, 32, 8, 14336, 128256, "grattafiori2024llama3",
                         "Llama 3 paper (arXiv 2407.21783), Table 3"),
    "llama-3-70b": _llama("Llama-3 70B", 80, 8192, 64, 8, 28672, 128256, "grattafiori2024llama3",
                          "Llama 3 paper (arXiv 2407.21783), Table 3"),
    "mistral-7b": _llama("Mistral 7B", 32, 4096, 32, 8, 14336, 32000, "jiang2023mistral",
                         "Mistral 7B paper (arXiv 2310.06825), Table 1"),
    "mixtral-8x7b": _llama("Mixtral 8x7B", 32, 4096, 32, 8, 14336, 32000, "jiang2024mixtral",
                           "Mixtral paper (arXiv 2401.04088), Table 1: 8 experts, 2 per token",
                           experts=8, experts_per_token=2),
    "qwen2-7b": _llama("Qwen2 7B", 28, 3584, 28, 4, 18944, 152064, "yang2024qwen2",
                       "Qwen2 technical report (arXiv 2407.10671), Table 1, and the released config.json",
                       qkv_bias=True),
    "qwen2-72b": _llama("Qwen2 72B", 80, 8192, 64, 8, 29568, 152064, "yang2024qwen2",
                        "Qwen2 technical report (arXiv 2407.10671), Table 1, and the released config.json",
                        qkv_bias=True),
}


@dataclass(frozen=True)
class ParameterBreakdown:
    """Where the parameters of a model sit, in counts of numbers (not bytes).

    Per layer: ``attention_qo`` (query and output projections, with the
    query bias), ``attention_kv`` (key and value projections, with their
    biases), ``mlp`` (one expert's MLP), ``router`` and ``norms``. Once per
    model: ``embedding`` (input), ``head`` (output; 0 when tied) and
    ``final_norm``. Tensor parallelism splits the attention by heads and the
    MLP by columns; a lookup reads one embedding row per token, not the table.

    >>> parts = parameter_breakdown(PRESETS["llama-3-8b"])
    >>> parts.embedding == parts.head == 128256 * 4096
    True
    """

    attention_qo: int
    attention_kv: int
    mlp: int
    router: int
    norms: int
    embedding: int
    head: int
    final_norm: int
    layers: int
    experts: int

    def layer(self, experts: int | None = None) -> int:
        """One layer's parameters with ``experts`` MLPs (all of them by default)."""
        count = self.experts if experts is None else experts
        return self.attention_qo + self.attention_kv + count * self.mlp + self.router + self.norms


def parameter_breakdown(config: ModelConfig) -> ParameterBreakdown:
    """The parameters of ``config`` by part; :func:`parameter_count` is their sum."""
    d, hd = config.hidden, config.head_dim
    q_width, kv_width = config.heads * hd, config.kv_heads * hd
    qo = 2 * d * q_width + (q_width if config.qkv_bias else 0)
    kv = 2 * d * kv_width + (2 * kv_width if config.qkv_bias else 0)
    mlp = (3 if config.gated_mlp else 2) * d * config.ffn_hidden
    router = d * config.experts if config.experts > 1 else 0
    embedding = config.vocab * d
    return ParameterBreakdown(attention_qo=qo, attention_kv=kv, mlp=mlp, router=router, norms=2 * d,
                              embedding=embedding, head=0 if config.tied_embeddings else embedding, final_norm=d,
                              layers=config.layers, experts=config.experts)


def _count(config: ModelConfig, experts: int) -> int:
    parts = parameter_breakdown(config)
    return config.layers * parts.layer(experts) + parts.embedding + parts.head + parts.final_norm


def parameter_count(config: ModelConfig) -> int:
    """All parameters of ``config`` (every expert counted), as an integer.

    Counts the attention projections (with biases where ``qkv_bias``), the
    MLP of every expert, the norms, the router of a mixture of experts, the
    input embedding and the output head (once if tied).

    >>> parameter_count(PRESETS["llama-2-7b"])
    6738415616
    """
    return _count(config, config.experts)


def active_parameter_count(config: ModelConfig) -> int:
    """Parameters one token actually uses: only ``experts_per_token`` experts.

    Equal to :func:`parameter_count` for a dense model.

    >>> round(active_parameter_count(PRESETS["mixtral-8x7b"]) / 1e9, 1)
    12.9
    """
    return _count(config, config.experts_per_token)


def decode_parameters_read(config: ModelConfig) -> int:
    """Parameters one token of a batch-1 decode step reads: the active ones, less the input embedding.

    The input embedding is a table lookup (one row per token), not a matrix
    read in full; the output head is read in full. With tied embeddings the
    head is the embedding table, so it still counts once.

    >>> config = PRESETS["llama-3-8b"]
    >>> active, read = active_parameter_count(config), decode_parameters_read(config)
    >>> round(100 * (active - read) / read, 1)      # % of bytes a bound that counted the lookup would add
    7.0
    """
    parts = parameter_breakdown(config)
    lookup = parts.embedding if parts.head else 0
    return active_parameter_count(config) - lookup


def kv_cache_bytes_per_token(config: ModelConfig, bytes_per_element: Number = 2) -> float | np.ndarray:
    """Bytes of keys and values one token adds to the KV cache (all layers).

    ``2 * layers * kv_heads * head_dim * b``.

    >>> kv_cache_bytes_per_token(PRESETS["llama-2-70b"])
    327680.0
    """
    b = _checks.positive("bytes_per_element", bytes_per_element)
    return _checks.result(2 * config.layers * config.kv_heads * config.head_dim * b)


def tp_bytes_per_collective(hidden: Number, bytes_per_element: Number, batch: Number,
                            devices: Number) -> float | np.ndarray:
    """Bytes each device sends in one tensor-parallel all-reduce (ring).

    The all-reduced activation holds ``hidden * batch`` elements of
    ``bytes_per_element`` bytes; a ring all-reduce sends ``2 (K - 1) / K`` of
    it from every device. Zero for one device.

    >>> tp_bytes_per_collective(8192, 2, 1, 4)
    24576.0
    >>> tp_bytes_per_collective(8192, 2, 1, [1, 2, 8]).tolist()
    [0.0, 16384.0, 28672.0]
    """
    d = _checks.count("hidden", hidden, minimum=1)
    b = _checks.positive("bytes_per_element", bytes_per_element)
    batch_ = _checks.count("batch", batch, minimum=1)
    k = _checks.count("devices", devices, minimum=1)
    return collectives.allreduce_bytes(d * b * batch_, k)


def tp_collectives_per_token(config: ModelConfig) -> int:
    """All-reduces per generated token: two per layer (after attention, after the MLP).

    >>> tp_collectives_per_token(PRESETS["llama-2-70b"])
    160
    """
    return 2 * config.layers


@dataclass(frozen=True)
class TPComm:
    """Communication of one generated token under tensor parallelism.

    Attributes are in SI units: ``bytes`` sent per device, times in seconds.
    Each is a plain number for one setting, or an array with the shape of
    the whole sweep (every argument of :func:`tp_comm_per_token` broadcast).
    """

    collectives: Any
    bytes: Any
    latency_time: Any
    transfer_time: Any

    @property
    def total_time(self) -> float | np.ndarray:
        """``latency_time + transfer_time``, in seconds."""
        return _checks.result(np.asarray(self.latency_time) + np.asarray(self.transfer_time))


def tp_comm_per_token(config: ModelConfig, devices: Number, batch: Number = 1, bytes_per_element: Number = 2,
                      latency: Number = 0.0, bandwidth: Number = np.inf) -> TPComm:
    """Per-token all-reduce cost of tensor parallelism over ``devices``.

    ``collectives = 2 L`` (none on one device), ``bytes`` is their total per
    device, ``latency_time = collectives * latency`` and ``transfer_time =
    bytes / bandwidth``; the article's per-collective model ``l + V / B``.

    >>> from lib.units import GB, s, us
    >>> c = tp_comm_per_token(PRESETS["llama-2-70b"], 1, latency=5 * us, bandwidth=400 * GB / s)
    >>> c.collectives, c.total_time
    (0, 0.0)

    Every field has the shape of the whole sweep, here the batch sizes:

    >>> sweep = tp_comm_per_token(PRESETS["llama-2-70b"], 4, batch=[1, 8, 64], latency=5 * us)
    >>> sweep.collectives.tolist(), sweep.latency_time.shape
    ([160, 160, 160], (3,))
    """
    k = _checks.count("devices", devices, minimum=1)
    latency_ = _checks.nonnegative("latency", latency)
    bandwidth_ = _checks.positive("bandwidth", bandwidth, allow_inf=True)
    per_collective = np.asarray(tp_bytes_per_collective(config.hidden, bytes_per_element, batch, k))
    # Every field gets the shape of the whole sweep (devices, batch, bytes, latency, bandwidth).
    shape = np.broadcast_shapes(per_collective.shape, latency_.shape, bandwidth_.shape)
    collectives = np.broadcast_to(np.where(k > 1, tp_collectives_per_token(config), 0), shape)
    total_bytes = collectives * per_collective
    collectives_out: Any = int(collectives) if collectives.ndim == 0 else collectives.copy()
    return TPComm(
        collectives=collectives_out,
        bytes=_checks.result(total_bytes),
        latency_time=_checks.result(collectives * latency_),
        transfer_time=_checks.result(total_bytes / bandwidth_),
    )


def tp_crossover_batch(hidden: Number, bytes_per_element: Number, devices: Number, latency: Number,
                       bandwidth: Number) -> float | np.ndarray:
    """Batch size at which an all-reduce's transfer time equals its startup.

    Solves ``latency = 2 (K - 1) / K * d * b * B / bandwidth`` for ``B``:
    :func:`lib.collectives.crossover_message_bytes` over the ``d * b`` bytes
    of one sample's activation.
    Below it the per-token communication is latency-bound, above it
    bandwidth-bound. Infinite for one device (nothing is sent). Zero when
    ``latency`` is 0, even with infinite ``bandwidth``: with no startup the
    transfer always dominates.

    >>> from lib.units import GB, s, us
    >>> round(tp_crossover_batch(8192, 2, 4, 5 * us, 400 * GB / s), 1)
    81.4
    >>> tp_crossover_batch(8192, 2, 4, 0.0, float("inf"))
    0.0
    """
    d = _checks.count("hidden", hidden, minimum=1)
    b = _checks.positive("bytes_per_element", bytes_per_element)
    message = np.asarray(collectives.crossover_message_bytes(latency, bandwidth, devices))
    return _checks.result(message / (d * b))


def decode_time_bound(parameter_bytes: Number, devices: Number, device_bandwidth: Number,
                      communication: Number = 0.0) -> float | np.ndarray:
    """Lower bound on the time of one decode step: ``P b / (K BW) + communication``.

    Each device must read its ``1/K`` share of the weights from memory for
    every token; ``communication`` (seconds, e.g. ``tp_comm_per_token(...).total_time``)
    is added on top.

    >>> from lib.units import GB, TB, s, ms
    >>> round(decode_time_bound(140 * GB, 4, 3.35 * TB / s) / ms, 2)
    10.45
    """
    p = _checks.nonnegative("parameter_bytes", parameter_bytes)
    k = _checks.count("devices", devices, minimum=1)
    bw = _checks.positive("device_bandwidth", device_bandwidth)
    comm = _checks.nonnegative("communication", communication)
    return _checks.result(p / (k * bw) + comm)


def valid_tp_degrees(config: ModelConfig, max_devices: int, replicate_kv: bool = False) -> list[int]:
    """Tensor-parallel degrees ``K <= max_devices`` that split the attention and the MLP evenly.

    ``K`` must divide the attention heads and the MLP's inner width
    ``ffn_hidden`` (each device takes whole columns of the gate and up
    projections: vLLM's ``MergedColumnParallelLinear`` asserts
    ``output_size % tp_size == 0``). Strict (``replicate_kv=False``): ``K``
    also divides the KV heads. Replicated: up to the number of KV heads it
    must divide them; beyond, it must be a multiple of them, so that every
    device holds a copy of one KV head (as serving engines do).

    >>> valid_tp_degrees(PRESETS["llama-3-8b"], 64)
    [1, 2, 4, 8]
    >>> valid_tp_degrees(PRESETS["llama-3-8b"], 64, replicate_kv=True)
    [1, 2, 4, 8, 16, 32]
    >>> valid_tp_degrees(PRESETS["llama-2-13b"], 64)      # 40 heads, but ffn_hidden 13824 = 2**9 * 27
    [1, 2, 4, 8]
    """
    top = _checks.scalar_count("max_devices", max_devices, minimum=1)
    degrees = []
    for k in range(1, top + 1):
        if config.heads % k or config.ffn_hidden % k:
            continue
        if k <= config.kv_heads or not replicate_kv:
            ok = config.kv_heads % k == 0
        else:
            ok = k % config.kv_heads == 0
        if ok:
            degrees.append(k)
    return degrees


def kv_heads_per_device(config: ModelConfig, devices: int) -> float:
    """KV heads whose cache each device stores at degree ``devices``.

    ``kv_heads / K`` while ``K`` divides them, then 1 (a replicated copy):
    past that point the per-device KV cache stops shrinking. ``devices`` must
    be one of ``valid_tp_degrees(config, devices, replicate_kv=True)``; other
    degrees would leave devices with fractions of a head.

    >>> [kv_heads_per_device(PRESETS["llama-3-8b"], k) for k in (1, 4, 8, 16)]
    [8.0, 2.0, 1.0, 1.0]
    """
    k = _checks.scalar_count("devices", devices, minimum=1)
    if k not in valid_tp_degrees(config, k, replicate_kv=True):
        raise ValueError(f"devices must split the {config.heads} heads and {config.kv_heads} KV heads "
                         f"of {config.name} evenly (see valid_tp_degrees), got {k}")
    return float(max(config.kv_heads / k, 1.0))


def shard_efficiency(work_per_device: Number, half_work: Number) -> float | np.ndarray:
    """An *assumed* efficiency curve: ``eta = w / (w + w_half)``.

    A Hockney-style model: a device reaches half its peak rate on a shard of
    size ``w_half`` and approaches full rate on much larger shards. It is a
    teaching assumption, not a measurement; fit ``half_work`` to your own
    hardware before trusting it.

    >>> shard_efficiency(4096, 1024)
    0.8
    """
    w = _checks.positive("work_per_device", work_per_device)
    half = _checks.nonnegative("half_work", half_work)
    return _checks.result(w / (w + half))
