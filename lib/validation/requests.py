"""What a published figure measured, priced with the serving model: whole batches, first tokens, loaded servers.

Introduced in chapter 11 (does the model hold?). Every function takes an
:class:`lib.serving.Engine` resolved for the cluster's device and prices a
whole measurement with :func:`lib.serving.pass_work` and
:func:`lib.serving.decode_step`:

* :func:`batch_time`: a **static batch** of ``B`` requests of ``N`` prompt
  and ``O`` output tokens, submitted together. Where the cache of all ``B``
  does not fit the device, the engine runs them in **waves** of as many as
  fit. Each wave is a prefill of its ``b N`` prompt tokens, in steps of at
  most ``budget`` tokens, then ``O - 1`` decode steps (the prefill samples
  the first token) or ``O`` (FasterTransformer's loop), taken at the mean
  context ``N + O / 2``:

      T = waves x (prefill(b N) + steps x t_step(b, N + O / 2))

* :func:`first_token_time`: one prompt on an idle engine
  (:func:`lib.serving.prefill_time`);
* :func:`loaded_step`: one steady-state step of a server holding ``B``
  sequences of a workload's mean lengths (decode plus the prefill of the
  prompts that replace finished sequences), and :func:`capacity`, the
  sequences that fit; :func:`open_loop_batch`, the batch an open-loop
  arrival rate ``lambda`` settles at, from Little's law: ``B = lambda O
  t_step(B)``, capped at the capacity (saturated).

Each function is affine in the engine's ``layer_overhead`` and
``step_overhead`` wherever ``pp = 1`` (a pass costs ``L o_layer + o_step``
more), which is what lets :mod:`lib.validation.calibrate` fit them
exactly.

>>> from lib.serving import Cluster, Layout, Engine
>>> from lib.transformer import PRESETS
>>> engine = Engine().resolved("a100-80gb")
>>> t = batch_time(PRESETS["llama-2-7b"], Cluster("a100-80gb"), Layout(), engine, 1, 128, 128)
>>> round(t, 2)                                    # seconds for one request of 128 + 128 tokens
1.38
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from lib import _checks
from lib.serving import (
    ACTIVATION_BYTES,
    Cluster,
    Engine,
    Layout,
    decode_step,
    hop_time,
    memory_fit,
    pass_work,
    prefill_time,
)
from lib.transformer import ModelConfig

__all__ = [
    "Workload",
    "batch_prefill_time",
    "batch_time",
    "waves",
    "first_token_time",
    "capacity",
    "loaded_step",
    "open_loop_batch",
]


def batch_prefill_time(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    engine: Engine,
    batch: int,
    prompt_tokens: int,
    budget: int | None = None,
) -> float:
    """Prefill of ``batch`` prompts of ``prompt_tokens`` each, sampling one token per prompt, in seconds.

    The ``B N`` tokens go in chunks of at most ``budget`` (``None``: all in
    one step), and at least ``min(pp, B)`` of them so that a pipeline has a
    microbatch per stage; the chunks flow through the stages one behind the
    other: ``n max(stage) + sum(stage) - max(stage)``, plus the hops.
    """
    b = _checks.scalar_count("batch", batch, minimum=1)
    n = _checks.scalar_count("prompt_tokens", prompt_tokens, minimum=1)
    tokens = b * n
    chunks = max(1 if budget is None else math.ceil(tokens / budget), min(layout.pp, b))
    chunk = tokens / chunks
    stages = [
        float(
            pass_work(
                config, cluster, layout, s, engine, prefill=chunk, prefill_context=(n + 1) / 2, sampled=b / chunks
            ).time
        )
        for s in range(layout.pp)
    ]
    hops = float(hop_time(cluster, layout, chunk * config.hidden * ACTIVATION_BYTES))
    return chunks * max(stages) + sum(stages) - max(stages) + hops


def waves(config: ModelConfig, cluster: Cluster, layout: Layout, engine: Engine, batch: int, tokens: int) -> int:
    """How many waves ``batch`` sequences of ``tokens`` tokens need on the cluster's device (0: none fits).

    >>> from lib.serving import Cluster, Layout, Engine
    >>> from lib.transformer import PRESETS
    >>> engine = Engine(gpu_memory_utilization=0.9).resolved("a100-40gb")
    >>> waves(PRESETS["llama-2-7b"], Cluster("a100-40gb"), Layout(), engine, 64, 4096)
    7
    """
    fit = memory_fit(config, cluster.device, layout, 1, tokens, engine).max_sequences
    return 0 if fit == 0 else math.ceil(batch / fit)


def batch_time(
    config: ModelConfig,
    cluster: Cluster,
    layout: Layout,
    engine: Engine,
    batch: int,
    input_tokens: int,
    output_tokens: int,
    budget: int | None = None,
    loop_steps: int = -1,
    memory_waves: bool = False,
) -> float:
    """A static batch of ``batch`` requests, from submission to the last token, in seconds (module notes).

    ``loop_steps`` is ``-1`` when the prefill samples the first token (``O - 1``
    decode steps follow) and ``0`` for an engine whose loop runs ``O`` steps.
    With ``memory_waves`` the batch runs in :func:`waves`; a batch whose
    first sequence does not fit raises a ValueError.
    """
    b = _checks.scalar_count("batch", batch, minimum=1)
    n = _checks.scalar_count("input_tokens", input_tokens, minimum=1)
    o = _checks.scalar_count("output_tokens", output_tokens, minimum=1)
    count = waves(config, cluster, layout, engine, b, n + o) if memory_waves else 1
    if count == 0:
        raise ValueError(
            f"batch of {config.name} at {layout.name} does not fit one sequence of {n + o} tokens "
            f"on a {cluster.device.name}"
        )
    wave = math.ceil(b / count)
    steps = o + loop_steps
    step = float(decode_step(config, cluster, layout, wave, n + o / 2, engine=engine).tpot) if steps else 0.0
    return count * (batch_prefill_time(config, cluster, layout, engine, wave, n, budget) + steps * step)


def first_token_time(
    config: ModelConfig, cluster: Cluster, layout: Layout, engine: Engine, prompt_tokens: int
) -> float:
    """Time to first token of one prompt on an idle engine: :func:`lib.serving.prefill_time`."""
    return float(prefill_time(config, cluster, layout, prompt_tokens, engine=engine))


@dataclass(frozen=True)
class Workload:
    """Mean prompt and output tokens per request of a benchmark's request set (workload properties, not speeds)."""

    prompt_tokens: float
    output_tokens: float

    def __post_init__(self) -> None:
        for name in ("prompt_tokens", "output_tokens"):
            _checks.scalar(name, getattr(self, name), _checks.positive)

    @property
    def lengths(self) -> tuple[int, int]:
        """The mean lengths rounded to whole tokens (at least 1, and 2 outputs for one decode step)."""
        return max(1, round(self.prompt_tokens)), max(2, round(self.output_tokens))

    @property
    def context(self) -> float:
        """Mean tokens a running sequence holds: its prompt and half its output."""
        return self.prompt_tokens + self.output_tokens / 2


def capacity(config: ModelConfig, cluster: Cluster, layout: Layout, engine: Engine, workload: Workload) -> int:
    """Sequences of the workload's mean context a replica runs at once: memory and ``max_num_seqs`` allowing.

    >>> from lib.serving import Cluster, Layout, Engine
    >>> from lib.transformer import PRESETS
    >>> capacity(PRESETS["llama-2-7b"], Cluster("a100-80gb"), Layout(), Engine().resolved("a100-80gb"),
    ...          Workload(300, 200))
    256
    """
    fit = memory_fit(config, cluster.device, layout, 1, math.ceil(workload.context), engine).max_sequences
    return min(int(engine.max_num_seqs), fit)


def loaded_step(
    config: ModelConfig, cluster: Cluster, layout: Layout, engine: Engine, batch: object, workload: Workload
) -> np.ndarray:
    """Seconds per steady-state step of ``batch`` sequences of the workload (broadcasts over ``batch``)."""
    prompt, output = workload.lengths
    return np.asarray(
        decode_step(
            config, cluster, layout, batch, workload.context, prompt_tokens=prompt, output_tokens=output, engine=engine
        ).tpot,
        dtype=float,
    )


def open_loop_batch(
    config: ModelConfig, cluster: Cluster, layout: Layout, engine: Engine, workload: Workload, rate: float
) -> int:
    """Running sequences under Poisson arrivals at ``rate`` requests per second: Little's law, or the capacity.

    A request stays for about ``O`` steps, so ``B = rate O t_step(B)``: the
    smallest whole ``B`` with ``rate O t_step(B) <= B``; if even the capacity
    cannot keep up, the server is saturated and runs at its capacity.

    >>> from lib.serving import Cluster, Layout, Engine
    >>> from lib.transformer import PRESETS
    >>> args = PRESETS["llama-3-8b"], Cluster("a100-80gb"), Layout(), Engine().resolved("a100-80gb")
    >>> open_loop_batch(*args, Workload(220, 190), rate=4.0), open_loop_batch(*args, Workload(220, 190), rate=1e4)
    (10, 256)
    """
    lam = _checks.scalar("rate", rate, _checks.positive)
    top = capacity(config, cluster, layout, engine, workload)
    if top < 1:
        raise ValueError(f"rate: no sequence of {config.name} fits at {layout.name}, so no rate can be served")
    batch = np.arange(1, top + 1)
    keeps_up = lam * workload.output_tokens * loaded_step(config, cluster, layout, engine, batch, workload) <= batch
    return int(batch[np.argmax(keeps_up)]) if keeps_up.any() else top
