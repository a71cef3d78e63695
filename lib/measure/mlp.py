"""The two-layer MLP of the experiment, whole and split over K ranks (torch).

Introduced in chapter 10 (measure it). It is the toy network of chapter 1 at a
real size: ``y = ReLU(x A) B`` with ``x`` of shape ``batch x width``, ``A`` of
shape ``width x hidden`` and ``B`` of shape ``hidden x width``. Rank ``k`` of
``K`` keeps columns ``k`` of ``A`` and the matching rows of ``B``; its
partial output has the full shape, and one all-reduce (a sum) of the
partials gives ``y``:

>>> x, a, b = make_layer(batch=2, width=4, hidden=8, seed=0)
>>> parts = [shard_forward(x, *shard(a, b, rank, 2)) for rank in range(2)]
>>> bool(torch.allclose(parts[0] + parts[1], whole_forward(x, a, b), atol=1e-6))
True
"""

from __future__ import annotations

import torch

from lib import _checks

__all__ = ["make_layer", "whole_forward", "shard", "shard_forward", "message_bytes"]


def make_layer(
    batch: int,
    width: int,
    hidden: int,
    seed: int = 0,
    dtype: torch.dtype = torch.float32,
    device: str | torch.device = "cpu",
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Deterministic input ``x`` and weights ``A``, ``B`` (same on every rank).

    Entries are normal with variances ``1``, ``1 / width`` and ``1 / hidden``,
    so outputs stay of order one at every size.

    >>> x, a, b = make_layer(batch=3, width=4, hidden=6)
    >>> tuple(x.shape), tuple(a.shape), tuple(b.shape)
    ((3, 4), (4, 6), (6, 4))
    """
    for name, value in (("batch", batch), ("width", width), ("hidden", hidden)):
        _checks.count(name, value, minimum=1)
    generator = torch.Generator().manual_seed(int(seed))
    x = torch.randn(batch, width, generator=generator, dtype=dtype)
    a = torch.randn(width, hidden, generator=generator, dtype=dtype) / width**0.5
    b = torch.randn(hidden, width, generator=generator, dtype=dtype) / hidden**0.5
    return x.to(device), a.to(device), b.to(device)


def whole_forward(x: torch.Tensor, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
    """``ReLU(x A) B`` on one device.

    >>> whole_forward(torch.tensor([[1., 2.]]), torch.tensor([[1., -1.], [0., 1.]]), torch.eye(2)).tolist()
    [[1.0, 1.0]]
    """
    return torch.relu(x @ a) @ b


def shard(a: torch.Tensor, b: torch.Tensor, rank: int, parts: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rank ``rank``'s shard: a block of ``A``'s columns and the same rows of ``B``.

    ``hidden`` must divide evenly by ``parts``; the shards are contiguous
    copies, as a real deployment would hold them.

    >>> a, b = torch.ones(2, 6), torch.ones(6, 2)
    >>> [tuple(t.shape) for t in shard(a, b, 1, 3)]
    [(2, 2), (2, 2)]
    >>> shard(torch.ones(2, 5), torch.ones(5, 2), 0, 2)
    Traceback (most recent call last):
    ...
    ValueError: hidden must be a multiple of parts, got hidden=5, parts=2
    """
    _checks.count("parts", parts, minimum=1)
    hidden = a.shape[1]
    if hidden % parts:
        raise ValueError(f"hidden must be a multiple of parts, got hidden={hidden}, parts={parts}")
    if not 0 <= rank < parts:
        raise ValueError(f"rank must be in [0, {parts}), got {rank}")
    size = hidden // parts
    block = slice(rank * size, (rank + 1) * size)
    return a[:, block].contiguous(), b[block, :].contiguous()


def shard_forward(x: torch.Tensor, a_part: torch.Tensor, b_part: torch.Tensor) -> torch.Tensor:
    """One rank's partial output ``ReLU(x A_k) B_k``; the all-reduce sums these.

    The ReLU is applied per column, so it stays exact under a column split.
    """
    return whole_forward(x, a_part, b_part)


def message_bytes(batch: int, width: int, dtype: torch.dtype = torch.float32) -> int:
    """Bytes of the one all-reduce: the ``batch x width`` output.

    >>> message_bytes(32, 1024)
    131072
    """
    return int(batch) * int(width) * torch.tensor([], dtype=dtype).element_size()
