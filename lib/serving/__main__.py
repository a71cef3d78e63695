"""Plan a deployment from a shell: every layout, the frontier, or the fewest devices for a request rate.

Usage (``python -m lib.serving --help``)::

    python -m lib.serving --model llama-3-70b --device h100-sxm --devices 8 --batch 64
    python -m lib.serving --model llama-3-70b --devices 8 --weight-format fp8 --ttft-ms 1000 --tpot-ms 50
    python -m lib.serving --config path/to/config.json --devices 8 --ttft-ms 1000 --tpot-ms 50
    python -m lib.serving --model llama-3-70b --weight-format fp8 --rate 20 --ttft-ms 1000 --tpot-ms 50
    python -m lib.serving --model llama-3-70b --weight-format fp8 --rate 20 --ttft-ms 1000 --tpot-ms 50 --confidence 0.9
    python -m lib.serving --model llama-3-8b --rate 50 --tpot-ms 30 --lengths requests.csv
    python -m lib.serving --model llama-3-8b --devices 8 --ttft-ms 1000 --tpot-ms 30 --lengths-inline 1024:256*3,8000:64
    python -m lib.serving --model llama-3-70b --device h100-sxm --devices 8 --frontier
    python -m lib.serving --model deepseek-v3 --device h200 --devices 16 --weight-format fp8 --ttft-ms 2000 --tpot-ms 50
    python -m lib.serving --model llama-3-8b --devices 8 --ttft-ms 1000 --tpot-ms 20 --prompt 4096 --output 128 --disaggregate
    python -m lib.serving --model llama-3-70b --devices 8 --batch 8 --speculate 0.7 3 --draft-head-layers 1

With latency targets every row shows the highest request rate the layout
carries within them (capacity) and what binds it, and the best row's
``vllm serve`` and SGLang ``launch_server`` lines are printed. With ``--rate`` the fewest devices that
carry that rate are found instead; ``--confidence 0.9`` sizes for that rate with
90 % probability given chapter 11's held-out errors, and says what the
model's own estimate needs. ``--lengths FILE`` plans and sizes for a sample of
requests' prompt and output lengths (CSV or JSON Lines,
:func:`lib.serving.lengths.read_lengths`) instead of one of each (``--prompt``
and ``--output``), in the table, the frontier and the disaggregated plan
too (:func:`lib.serving.plan` takes samples); ``--lengths-inline
1024:256*3,95:410`` gives a short sample as text
(:func:`lib.serving.lengths.parse_lengths`: ``prompt:output`` pairs, each
``*count`` times). The deploy lines' ``--max-model-len`` is the longest
request's, and a request past the model's context is refused. Every
capacity carries its 90 % range from those errors (:mod:`lib.serving.trust`). A mixture of experts lists its tensor-parallel
layouts only, as :func:`lib.serving.plan` and the planner page do by default;
``--expert-parallel all`` adds the expert-parallel and
attention-data-parallel ones.
``--disaggregate`` prints the best split into prefill and decode pools beside
the best colocated layout; ``--speculate ALPHA GAMMA`` the speed-up of
speculative decoding for every row.

The percentile of the targets is read as the planner page reads it
(:func:`lib.serving.capacity.percentile_fraction`: 0.9 and 90 are both p90),
and the devices are capped as there (:data:`lib.serving.layout.MAX_DEVICES`).
The "max batch" column counts the sequences of the full context the whole
layout holds at once (every replica's), as the page's "Most sequences".
A bad input prints one line, ``error: ...`` naming the option and the value,
on stderr and exits with status 2 (``--help`` has the usage).
"""

from __future__ import annotations

import argparse
import inspect
import sys

import numpy as np

from lib import _checks
from lib.collectives import ALLREDUCE_CHOICES
from lib.formats import KV_FORMATS, WEIGHT_FORMATS
from lib.hardware import DEVICES
from lib.serving.capacity import Workload, percentile_fraction
from lib.serving.command import sglang_command, vllm_command
from lib.serving.disagg import disaggregate
from lib.serving.engine import EXPERT_EXCHANGES, configure
from lib.serving.layout import MAX_DEVICES, Cluster, check_devices
from lib.serving.lengths import describe_lengths, format_lengths, parse_lengths, read_lengths
from lib.serving.memory import check_context
from lib.serving.plan import best, frontier, mean_context, plan, tie_note
from lib.serving.sizing import best_capacity, size
from lib.serving.speculative import speculative_step
from lib.serving.trust import INTERVAL_LEVEL, capacity_interval, capacity_ratio, check_confidence, regime
from lib.transformer import PRESETS, parameter_count, read_hf_config
from lib.units import GB, ms


class _Parser(argparse.ArgumentParser):
    """argparse's parser whose errors are one line, ``error: ...``, on stderr (status 2).

    argparse prints the whole usage before the error; with this many options
    that hides the one line that says what is wrong (``--help`` prints it).
    """

    def error(self, message: str) -> None:
        _fail(message)


def _fail(message: str) -> None:
    """Print ``error: message`` as one line on stderr and exit with status 2 (a usage error, as argparse's)."""
    sys.stderr.write("error: " + " ".join(str(message).split()) + "\n")
    raise SystemExit(2)


def _parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="python -m lib.serving", description=__doc__.splitlines()[0])
    model = parser.add_mutually_exclusive_group()
    model.add_argument("--model", choices=sorted(PRESETS), default="llama-3-70b", help="a preset")
    model.add_argument("--config", help="a Hugging Face config.json instead of a preset")
    parser.add_argument("--name", help="the model's name in the vllm serve line (default: the preset's or folder's)")
    parser.add_argument("--device", choices=sorted(DEVICES), default="h100-sxm")
    parser.add_argument("--devices", type=int, default=8, help=f"devices in the cluster (at most {MAX_DEVICES})")
    parser.add_argument("--batch", type=int, default=64, help="concurrent sequences across the cluster")
    parser.add_argument("--prompt", type=int, help=f"prompt tokens per request (default {PROMPT_DEFAULT})")
    parser.add_argument("--output", type=int, help=f"generated tokens per request (default {OUTPUT_DEFAULT})")
    parser.add_argument("--prefix-hit-rate", type=float, default=0.0, help="share of each prompt already cached")
    parser.add_argument("--weight-format", choices=sorted(WEIGHT_FORMATS), default="bf16")
    parser.add_argument("--kv-format", choices=sorted(KV_FORMATS), default="bf16")
    parser.add_argument("--allreduce", choices=ALLREDUCE_CHOICES, default="engine")
    parser.add_argument("--eager", action="store_true", help="no CUDA graphs (vLLM's --enforce-eager)")
    parser.add_argument("--max-num-seqs", type=int, help="the scheduler's sequences per replica (default: vLLM's)")
    parser.add_argument("--max-num-batched-tokens", type=int, help="the token budget per step (default: vLLM's)")
    parser.add_argument("--ttft-ms", type=float, help="time-to-first-token target, ms, at --percentile")
    parser.add_argument("--tpot-ms", type=float, help="time-per-output-token target, ms, at --percentile")
    parser.add_argument(
        "--percentile",
        type=float,
        default=90,
        help="the targets' percentile: a fraction in (0, 1) or a percent in [1, 100) (0.9 or 90 for p90)",
    )
    parser.add_argument("--rate", type=float, help="requests per second to size the cluster for")
    sample = parser.add_mutually_exclusive_group()
    sample.add_argument(
        "--lengths",
        metavar="FILE",
        help="a CSV or JSON Lines file of requests' prompt_tokens and output_tokens to plan or size for, "
        "instead of --prompt and --output",
    )
    sample.add_argument(
        "--lengths-inline",
        metavar="TEXT",
        help="requests' lengths as prompt:output pairs, each optionally *count, joined by commas "
        "(1024:256*3,95:410), instead of --prompt and --output",
    )
    parser.add_argument(
        "--confidence",
        type=float,
        help="with --rate: carry it with this probability, from chapter 11's held-out errors (0.9 or 90; 0.05-0.95)",
    )
    parser.add_argument(
        "--max-devices", type=int, default=64, help=f"the most devices --rate may use (at most {MAX_DEVICES})"
    )
    parser.add_argument("--frontier", action="store_true", help="sweep the batch and print the Pareto frontier")
    parser.add_argument(
        "--expert-parallel",
        choices=sorted(EXPERT_PARALLEL),
        default=EXPERT_PARALLEL_DEFAULT,
        help="a mixture of experts' layouts: tensor-parallel experts only (tp), whole experts (ep), "
        "both, or all (also attention run data-parallel); default %(default)s, lib.serving.plan's and "
        "the planner page's",
    )
    parser.add_argument(
        "--expert-exchange",
        choices=EXPERT_EXCHANGES,
        default=EXPERT_EXCHANGES[0],
        help="how attention-data-parallel ranks exchange tokens with the experts",
    )
    parser.add_argument(
        "--disaggregate",
        action="store_true",
        help="plan separate prefill and decode pools (needs --ttft-ms and --tpot-ms)",
    )
    parser.add_argument(
        "--speculate",
        nargs=2,
        type=float,
        metavar=("ALPHA", "GAMMA"),
        help="speculative decoding: acceptance rate and draft tokens per step",
    )
    parser.add_argument(
        "--draft-head-layers",
        type=float,
        default=1.0,
        help="the drafter as this many of the model's layers (an MTP or EAGLE head)",
    )
    parser.add_argument("--draft-model", choices=sorted(PRESETS), help="the drafter as a small model instead")
    return parser


#: ``--expert-parallel`` words and what :func:`lib.serving.layouts` takes for them.
EXPERT_PARALLEL = {"tp": False, "ep": True, "both": "both", "all": "all"}
#: The word for :func:`lib.serving.plan`'s own ``expert_parallel`` default, which the planner page starts from too.
EXPERT_PARALLEL_DEFAULT = next(
    word
    for word, value in EXPERT_PARALLEL.items()
    if value is inspect.signature(plan).parameters["expert_parallel"].default
)

#: ``--prompt`` and ``--output`` when neither they nor a sample of lengths are given.
PROMPT_DEFAULT, OUTPUT_DEFAULT = 1024, 256
#: Options that are whole numbers >= 1, and those that may be left out (``None``).
_COUNTS = ("--batch",)
_OPTIONAL_COUNTS = ("--prompt", "--output", "--max-num-seqs", "--max-num-batched-tokens")
#: Options that are positive finite numbers when given.
_OPTIONAL_POSITIVES = ("--ttft-ms", "--tpot-ms", "--rate")


def _value(args: argparse.Namespace, option: str):
    return getattr(args, option.removeprefix("--").replace("-", "_"))


def _check(args: argparse.Namespace) -> float:
    """Refuse a bad number with a ValueError naming its option and value; return the percentile as a fraction."""
    check_devices(args.devices, "--devices")
    check_devices(args.max_devices, "--max-devices")
    for option in _COUNTS:
        _checks.scalar_count(option, _value(args, option), minimum=1)
    for option in _OPTIONAL_COUNTS:
        if _value(args, option) is not None:
            _checks.scalar_count(option, _value(args, option), minimum=1)
    for option in _OPTIONAL_POSITIVES:
        if _value(args, option) is not None:
            _checks.scalar(option, _value(args, option), _checks.positive)
    hit = _checks.scalar("--prefix-hit-rate", args.prefix_hit_rate, _checks.nonnegative)
    if hit >= 1:
        raise ValueError(f"--prefix-hit-rate must be in [0, 1), got {args.prefix_hit_rate!r}")
    _checks.scalar("--draft-head-layers", args.draft_head_layers, _checks.positive)
    if args.speculate:
        alpha, gamma = args.speculate
        if not 0 <= _checks.scalar("--speculate ALPHA", alpha) <= 1:
            raise ValueError(f"--speculate ALPHA must be an acceptance rate in [0, 1], got {alpha:g}")
        _checks.scalar_count("--speculate GAMMA", gamma, minimum=1)
    sample = _sample_option(args)
    for option in ("--prompt", "--output"):
        if sample is not None and _value(args, option) is not None:
            raise ValueError(
                f"{option} {_value(args, option)} and {sample} {_value(args, sample)} both give the lengths: "
                "give one or the other"
            )
    if args.confidence is not None:
        if args.rate is None:
            raise ValueError(f"--confidence {args.confidence:g} needs --rate: it sizes a cluster for a rate")
        check_confidence(args.confidence, "--confidence")
    if args.disaggregate and (args.ttft_ms is None or args.tpot_ms is None):
        raise ValueError("--disaggregate needs both --ttft-ms and --tpot-ms: each pool is sized by its own target")
    return percentile_fraction(args.percentile, "--percentile")


def _sample_option(args: argparse.Namespace) -> str | None:
    """``"--lengths"`` or ``"--lengths-inline"``, whichever gives a sample of lengths, or ``None``."""
    return next((option for option in ("--lengths", "--lengths-inline") if _value(args, option) is not None), None)


def _requests(args: argparse.Namespace, config) -> tuple:
    """``(prompts, outputs, words)``: one length each (``--prompt``, ``--output``) or a sample read from
    ``--lengths`` or ``--lengths-inline``, and the request in words for the headings. A sample with a
    request past the model's context is refused naming its option."""
    option = _sample_option(args)
    if option is None:
        prompt = PROMPT_DEFAULT if args.prompt is None else args.prompt
        output = OUTPUT_DEFAULT if args.output is None else args.output
        return prompt, output, f"prompt {prompt}, output {output}"
    if option == "--lengths":
        prompts, outputs = read_lengths(args.lengths, option)
        source = args.lengths
    else:
        prompts, outputs = parse_lengths(args.lengths_inline, option)
        source = f"{option} {format_lengths(prompts, outputs)}"
    try:
        check_context(config, prompts, outputs)
    except ValueError as error:
        raise ValueError(f"{option} {_value(args, option)}: {error}") from None
    return prompts, outputs, f"lengths of {describe_lengths(prompts, outputs)} from {source}"


def _longest(prompts, outputs) -> int:
    """The longest request, prompt and output together: what ``--max-model-len`` must admit."""
    return int(np.max(np.asarray(prompts) + np.asarray(outputs)))


def _model(args: argparse.Namespace):
    """The preset, or the model of ``--config`` (a file that cannot be read or parsed is a ValueError naming it)."""
    if not args.config:
        return PRESETS[args.model]
    try:
        return read_hf_config(args.config, args.name)
    except OSError as error:
        raise ValueError(f"--config cannot be read: {args.config!r}: {error.strerror or error}") from None
    except (ValueError, TypeError, KeyError, AttributeError) as error:
        raise ValueError(f"--config {args.config!r} is not a model's config.json: {error}") from None


def main(argv: list[str] | None = None) -> None:
    args = _parser().parse_args(argv)
    try:
        _run(args)
    except ValueError as error:
        _fail(error)


def _run(args: argparse.Namespace) -> None:
    quantile = _check(args)
    config = _model(args)
    requests = _requests(args, config)
    model_id = args.name or config.hf_id or config.name
    print(f"{config.name}: {parameter_count(config) / 1e9:.2f} billion parameters")
    engine = dict(
        weight_format=args.weight_format,
        kv_format=args.kv_format,
        allreduce=args.allreduce,
        expert_exchange=args.expert_exchange,
        cuda_graphs=not args.eager,
        max_num_seqs=args.max_num_seqs,
        max_num_batched_tokens=args.max_num_batched_tokens,
    )
    targets = dict(
        ttft_limit=None if args.ttft_ms is None else args.ttft_ms * ms,
        tpot_limit=None if args.tpot_ms is None else args.tpot_ms * ms,
        percentile=quantile,
    )
    resolved = configure(args.device, **engine)
    if args.rate is not None:
        _sizing(args, config, model_id, engine, targets, resolved, requests)
    elif args.disaggregate:
        _disaggregated(args, config, engine, targets, requests)
    elif args.frontier:
        _frontier(args, config, engine, requests)
    else:
        _table(args, config, model_id, engine, targets, resolved, requests)


def _range(rate: float, targets: dict) -> str:
    """``rate``'s range from chapter 11's held-out errors, in words: "90 % range 10.6-26.7"."""
    low, high = capacity_interval(rate, regime(targets["ttft_limit"], targets["tpot_limit"]))
    return f"{100 * INTERVAL_LEVEL:.0f} % range {low:.2f}-{high:.2f}"


def _sizing(args, config, model_id: str, engine: dict, targets: dict, resolved, requests: tuple) -> None:
    options = dict(
        max_devices=args.max_devices,
        prefix_hit_rate=args.prefix_hit_rate,
        expert_parallel=EXPERT_PARALLEL[args.expert_parallel],
        **targets,
        **engine,
    )
    sure = None if args.confidence is None else check_confidence(args.confidence, "--confidence")
    prompts, outputs, requests = requests
    plan_ = size(config, args.device, args.rate, prompts, outputs, confidence=sure, **options)
    goal = f"{args.rate:g} requests/s" + ("" if sure is None else f" with {100 * sure:g} % confidence")
    if plan_ is None:
        print(
            f"No layout of at most {args.max_devices} x {DEVICES[args.device].name} carries {goal} within the targets."
        )
        return
    print(
        f"{goal}, {requests}: {plan_.devices} x "
        f"{DEVICES[args.device].name} as {plan_.layout.name} ({plan_.layout.dp} replicas of "
        f"{plan_.replica.rate:.2f} requests/s each, {plan_.capacity.rate:.2f} in all, "
        f"{_range(plan_.capacity.rate, targets)}; binding: {plan_.replica.binding})"
    )
    if sure is not None:
        ratio = capacity_ratio(sure, regime(targets["ttft_limit"], targets["tpot_limit"]))
        point = size(config, args.device, args.rate, prompts, outputs, **options)
        print(
            f"sized for {args.rate / ratio:.3g} requests/s as predicted: {100 * sure:g} % of chapter 11's held-out "
            f"runs delivered at least {ratio:.2f} x the prediction; the model's own estimate needs "
            + ("more than the limit" if point is None else f"{point.devices} x {DEVICES[args.device].name}")
        )
    _print_commands(config, model_id, plan_.layout, resolved, _longest(prompts, outputs))


def _disaggregated(args, config, engine: dict, targets: dict, requests: tuple) -> None:
    ep = EXPERT_PARALLEL[args.expert_parallel]
    prompts, outputs, words = requests
    pools = disaggregate(config, args.device, args.devices, prompts, outputs, expert_parallel=ep, **targets, **engine)
    together = best_capacity(
        config,
        args.device,
        args.devices,
        prompts,
        outputs,
        expert_parallel=ep,
        prefix_hit_rate=args.prefix_hit_rate,
        **targets,
        **engine,
    )
    print(
        f"{args.devices} x {DEVICES[args.device].name}, {words}, "
        f"TTFT {args.ttft_ms:g} ms and TPOT {args.tpot_ms:g} ms at p{100 * targets['percentile']:g}"
    )
    if together is None:
        print("colocated: no layout carries anything within the targets")
    else:
        print(
            f"colocated:     {together.layout.name}: {together.capacity.rate:.2f} requests/s "
            f"({_range(together.capacity.rate, targets)}; binding: {together.capacity.binding})"
        )
    if pools is None:
        print("disaggregated: no pair of pools carries anything within the targets")
        return
    print(
        f"disaggregated: {pools.name}: {pools.rate:.2f} requests/s ({_range(pools.rate, targets)}; "
        f"binding: {pools.binding}; KV transfer "
        f"{pools.transfer.bytes / GB:.2f} GB in {pools.transfer.time / ms:.1f} ms over {pools.transfer.link})"
    )


def _speculation(args, config, cluster: Cluster, row, engine: dict, context: float) -> str:
    """The speed-up of speculative decoding for ``row``, at ``context`` (the context its steps read)."""
    alpha, gamma = args.speculate
    drafter = dict(draft=PRESETS[args.draft_model]) if args.draft_model else dict(head_layers=args.draft_head_layers)
    step = speculative_step(
        config,
        cluster,
        row.layout,
        row.batch,
        context,
        alpha,
        int(gamma),
        **drafter,
        **engine,
    )
    return f" spec x{float(step.speedup):.2f}"


def _frontier(args, config, engine: dict, requests: tuple) -> None:
    prompts, outputs, words = requests
    _, front = frontier(config, args.device, args.devices, prompts, outputs, **engine)
    print(f"{args.devices} x {DEVICES[args.device].name}, {words}: the throughput-latency frontier")
    print(f"{'layout':>18} {'batch':>6} {'tokens/s per user':>18} {'tokens/s per device':>20}")
    for point in front:
        print(
            f"{point.name:>14} {point.batch:>6} {point.tokens_per_s_per_user:>18.1f} "
            f"{point.tokens_per_s_per_device:>20.1f}"
        )


def _table(args, config, model_id: str, engine: dict, targets: dict, resolved, requests: tuple) -> None:
    prompts, outputs, words = requests
    rows = plan(
        config,
        args.device,
        args.devices,
        args.batch,
        prompts,
        outputs,
        prefix_hit_rate=args.prefix_hit_rate,
        expert_parallel=EXPERT_PARALLEL[args.expert_parallel],
        **targets,
        **engine,
    )
    cluster = Cluster(args.device)
    chosen = best(rows, cluster.devices_per_node)
    with_targets = rows and rows[0].capacity is not None
    print(
        f"{args.devices} x {DEVICES[args.device].name}, batch {args.batch}, {words}, "
        f"weights {args.weight_format}, KV cache {args.kv_format}"
    )
    band = f"{100 * INTERVAL_LEVEL:.0f} % range"
    extra = f" {'req/s':>7} {band:>13} {'req/s/dev':>9}  binding" if with_targets else ""
    print(
        f"{'layout':>18} {'fits':>5} {'GB/device':>10} {'max batch (all dp)':>18} {'TTFT ms':>8} {'TPOT ms':>8} "
        f"{'tok/s/dev':>10}{extra}  note"
    )
    # the context a step reads, as plan prices it: one length's mean over its generation, or the sample's
    context = mean_context(prompts, outputs) if np.ndim(prompts) == 0 else Workload(prompts, outputs).context
    for row in rows:
        mark = "  <- best" if row is chosen else ""
        more = ""
        if with_targets:
            low, high = capacity_interval(row.capacity, "load")
            more = f" {row.capacity:>7.2f} {f'{low:.2f}-{high:.2f}':>13} {row.requests_per_s_per_device:>9.3f}  {row.binding}"
        if args.speculate and row.fits:
            more += _speculation(args, config, cluster, row, engine, context)
        print(
            f"{row.name:>18} {'yes' if row.fits else 'no':>5} {row.memory_per_device / GB:>10.1f} "
            f"{row.max_batch * row.dp:>18} {row.ttft / ms:>8.1f} {row.tpot / ms:>8.2f} {row.tokens_per_s_per_device:>10.1f}"
            f"{more}  {row.reason}{mark}"
        )
    if chosen is not None:
        note = tie_note(rows, chosen, cluster.devices_per_node)
        if note:
            print(note)
        _print_commands(config, model_id, chosen.layout, resolved, _longest(prompts, outputs))


def _print_commands(config, model_id: str, layout, resolved, length: int) -> None:
    """The vLLM and SGLang lines (and their notes) that deploy ``layout`` for requests of at most ``length``
    tokens (the longest request, prompt and output together)."""
    context = getattr(config, "context_length", 0)
    print(
        vllm_command(
            model_id, layout, resolved, length, context_length=context, mixture_of_experts=config.experts > 1
        ).text
    )
    print(sglang_command(model_id, layout, resolved, length, context_length=context).text)


if __name__ == "__main__":
    main()
