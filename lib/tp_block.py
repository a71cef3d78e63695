"""A small numpy transformer block, whole and split K ways with tensor parallelism.

Introduced in chapter 6 (tensor parallelism per generated token). The block is
Llama-shaped: RMSNorm, causal grouped-query attention, residual, RMSNorm,
SwiGLU MLP, residual. The split follows Megatron-LM: attention by heads (each
device owns ``heads / K`` query heads and the key/value heads they use), the
MLP's first matrices by columns and its last by rows. Each device then holds a
*partial* sum of the attention output and of the MLP output, and one
all-reduce after each (through :func:`lib.collectives.ring_allreduce`)
restores the full result: two per block.

>>> w = random_block(hidden=32, heads=4, kv_heads=2, ffn_hidden=64, seed=0)
>>> x = np.random.default_rng(1).standard_normal((3, 32))
>>> run = tp_block_forward(x, w, devices=2)
>>> run.allreduces, bool(np.allclose(run.output, block_forward(x, w)))
(2, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from lib import _checks
from lib.collectives import ring_allreduce

__all__ = ["BlockWeights", "random_block", "block_forward", "TPBlockRun", "tp_block_forward"]


@dataclass(frozen=True)
class BlockWeights:
    """Weights of one block; matrices act on row vectors (``x @ w``).

    ``wq`` is ``(d, heads * hd)``, ``wk`` and ``wv`` ``(d, kv_heads * hd)``,
    ``wo`` ``(heads * hd, d)``, ``w_gate`` and ``w_up`` ``(d, f)``, ``w_down``
    ``(f, d)``; ``norm1`` and ``norm2`` are RMSNorm gains of length ``d``.
    """

    wq: np.ndarray
    wk: np.ndarray
    wv: np.ndarray
    wo: np.ndarray
    w_gate: np.ndarray
    w_up: np.ndarray
    w_down: np.ndarray
    norm1: np.ndarray
    norm2: np.ndarray
    heads: int
    kv_heads: int

    @property
    def hidden(self) -> int:
        """``d``, the residual width."""
        return self.wq.shape[0]

    @property
    def head_dim(self) -> int:
        """Width of one head."""
        return self.wq.shape[1] // self.heads


def random_block(hidden: int, heads: int, kv_heads: int, ffn_hidden: int, seed: int = 0) -> BlockWeights:
    """Seeded random weights, scaled so activations stay of order one.

    >>> random_block(16, 4, 2, 32).wk.shape
    (16, 8)
    """
    for name, value in (("hidden", hidden), ("heads", heads), ("kv_heads", kv_heads), ("ffn_hidden", ffn_hidden)):
        _checks.count(name, value, minimum=1)
    if hidden % heads or heads % kv_heads:
        raise ValueError(
            f"hidden must be a multiple of heads and heads of kv_heads, "
            f"got hidden={hidden}, heads={heads}, kv_heads={kv_heads}"
        )
    rng = np.random.default_rng(seed)
    hd = hidden // heads

    def mat(rows: int, cols: int) -> np.ndarray:
        return rng.standard_normal((rows, cols)) / np.sqrt(rows)

    return BlockWeights(
        wq=mat(hidden, heads * hd),
        wk=mat(hidden, kv_heads * hd),
        wv=mat(hidden, kv_heads * hd),
        wo=mat(heads * hd, hidden),
        w_gate=mat(hidden, ffn_hidden),
        w_up=mat(hidden, ffn_hidden),
        w_down=mat(ffn_hidden, hidden),
        norm1=1 + 0.1 * rng.standard_normal(hidden),
        norm2=1 + 0.1 * rng.standard_normal(hidden),
        heads=heads,
        kv_heads=kv_heads,
    )


def _rmsnorm(x: np.ndarray, gain: np.ndarray) -> np.ndarray:
    return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + 1e-6) * gain


def _silu(x: np.ndarray) -> np.ndarray:
    return x / (1 + np.exp(-x))


def _attention_partial(h: np.ndarray, w: BlockWeights, query_heads: range) -> np.ndarray:
    """Causal attention over ``query_heads`` only, projected by their rows of ``wo``.

    Summing this over a partition of the heads gives the full attention output.
    """
    tokens, hd = h.shape[0], w.head_dim
    group = w.heads // w.kv_heads
    mask = np.triu(np.full((tokens, tokens), -np.inf), k=1)
    out = np.zeros((tokens, w.hidden))
    for q_head in query_heads:
        kv_head = q_head // group
        q = h @ w.wq[:, q_head * hd : (q_head + 1) * hd]
        k = h @ w.wk[:, kv_head * hd : (kv_head + 1) * hd]
        v = h @ w.wv[:, kv_head * hd : (kv_head + 1) * hd]
        scores = q @ k.T / np.sqrt(hd) + mask
        scores = np.exp(scores - scores.max(axis=1, keepdims=True))
        probs = scores / scores.sum(axis=1, keepdims=True)
        out += (probs @ v) @ w.wo[q_head * hd : (q_head + 1) * hd, :]
    return out


def _mlp_partial(h: np.ndarray, w: BlockWeights, columns: slice) -> np.ndarray:
    """SwiGLU on a slice of the inner columns; partials over a partition sum to the MLP."""
    return (_silu(h @ w.w_gate[:, columns]) * (h @ w.w_up[:, columns])) @ w.w_down[columns, :]


def _check_input(x: Any, w: BlockWeights) -> np.ndarray:
    array = _checks.as_float("x", x)
    if array.ndim != 2 or array.shape[1] != w.hidden:
        raise ValueError(f"x must have shape (tokens, {w.hidden}), got shape {array.shape}")
    return array


def block_forward(x: Any, w: BlockWeights) -> np.ndarray:
    """The unsplit block on one device: ``x`` is ``(tokens, d)``.

    >>> w = random_block(8, 2, 1, 16)
    >>> block_forward(np.zeros((2, 8)), w).tolist() == np.zeros((2, 8)).tolist()
    True
    """
    x = _check_input(x, w)
    x = x + _attention_partial(_rmsnorm(x, w.norm1), w, range(w.heads))
    return x + _mlp_partial(_rmsnorm(x, w.norm2), w, slice(None))


@dataclass(frozen=True)
class TPBlockRun:
    """Output of a tensor-parallel block and what its communication cost.

    ``output`` is the result every device holds (device 0's copy);
    ``allreduces`` counts all-reduces performed; ``bytes_sent_per_device``
    totals what each device sent in them.
    """

    output: np.ndarray
    allreduces: int
    bytes_sent_per_device: np.ndarray


def tp_block_forward(x: Any, w: BlockWeights, devices: int) -> TPBlockRun:
    """The block split over ``devices`` simulated devices, Megatron style.

    ``devices`` must divide the attention heads. Devices that share a KV head
    each hold a copy of it (the replicated mode of
    :func:`lib.transformer.valid_tp_degrees`). With one device there is
    nothing to all-reduce.

    >>> w = random_block(16, 4, 4, 32)
    >>> tp_block_forward(np.ones((1, 16)), w, 4).bytes_sent_per_device.tolist()
    [384, 384, 384, 384]
    """
    x = _check_input(x, w)
    k = int(_checks.count("devices", devices, minimum=1))
    if w.heads % k:
        raise ValueError(f"devices must divide heads={w.heads}, got {k}")
    per_device = w.heads // k
    columns = np.array_split(np.arange(w.w_gate.shape[1]), k)
    count = 0
    sent = np.zeros(k, dtype=np.int64)

    def allreduce(partials: list[np.ndarray]) -> np.ndarray:
        nonlocal count, sent
        if k == 1:
            return partials[0]
        results, nbytes = ring_allreduce(partials)
        count += 1
        sent = sent + nbytes
        return results[0]

    h = _rmsnorm(x, w.norm1)  # every device holds x and computes the norm itself
    attention = [_attention_partial(h, w, range(i * per_device, (i + 1) * per_device)) for i in range(k)]
    x = x + allreduce(attention)
    h = _rmsnorm(x, w.norm2)
    mlp = [_mlp_partial(h, w, slice(int(c[0]), int(c[-1]) + 1)) if len(c) else np.zeros_like(x) for c in columns]
    x = x + allreduce(mlp)
    return TPBlockRun(output=x, allreduces=count, bytes_sent_per_device=sent)
