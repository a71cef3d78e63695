"""Tests for lib.serving.disagg: the KV transfer, the balance of the two pools, and the disaggregated plan."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from serving_support import H100

from lib.collectives import send_time
from lib.serving import Layout, capacity, kv_cache_bytes
from lib.serving.disagg import POOL_BINDINGS, balance, disaggregate, kv_transfer
from lib.transformer import PRESETS

LLAMA8 = PRESETS["llama-3-8b"]


def test_kv_transfer_by_hand():
    # 4,096 tokens of Llama-3 8B: 128 KiB a token (32 layers x 8 KV heads x 128 x 2 x 2 B), half a GiB,
    # sent by one device over its own 400 Gb/s port (one port per GPU on an H100 server).
    t = kv_transfer(LLAMA8, 4096, Layout(), H100)
    assert t.bytes == kv_cache_bytes(LLAMA8, 4096) == 4096 * 131_072
    assert t.senders == 1 and t.bandwidth == H100.inter_link.bandwidth
    assert t.time == pytest.approx(float(send_time(t.bytes, H100.inter_link)), rel=1e-12)
    # Two senders halve the share each sends; NVLink inside one server is faster still.
    two = kv_transfer(LLAMA8, 4096, Layout(tp=2), H100)
    assert two.time < t.time
    assert kv_transfer(LLAMA8, 4096, Layout(), H100, same_node=True).time < t.time / 5
    # FP8 halves the bytes.
    assert kv_transfer(LLAMA8, 4096, Layout(), H100, kv_format="fp8").bytes == t.bytes / 2


@given(st.floats(0.01, 1e4), st.floats(0.01, 1e4), st.integers(2, 1024))
def test_the_balanced_split_runs_both_pools_at_the_same_rate(r_p, r_d, devices):
    prefill, rate = balance(r_p, r_d, devices)
    assert 0 < prefill < devices
    assert prefill * r_p == pytest.approx((devices - prefill) * r_d, rel=1e-9)
    assert rate == pytest.approx(prefill * r_p, rel=1e-9)
    # No other split carries more: the rate is the smaller pool's.
    for other in (prefill * 0.9, prefill * 1.1):
        assert min(other * r_p, (devices - other) * r_d) <= rate * (1 + 1e-12)


def test_a_decode_pool_carries_more_than_the_same_replica_colocated():
    alone = capacity(LLAMA8, "h100-sxm", Layout(), 2048, 256, tpot_limit=0.02, prefill=False)
    colocated = capacity(LLAMA8, "h100-sxm", Layout(), 2048, 256, tpot_limit=0.02)
    assert alone.rate > colocated.rate > 0
    assert alone.load.tpot_quantile <= 0.02 and alone.load.prefill_utilisation == 0


@pytest.fixture(scope="module")
def long_prompts():
    return disaggregate(LLAMA8, "h100-sxm", 4, 4096, 128, ttft_limit=1.0, tpot_limit=0.02)


def test_the_plan_is_the_least_of_its_pools_and_meets_the_targets(long_prompts):
    plan = long_prompts
    assert plan.devices <= 4 and plan.prefill.dp >= 1 and plan.decode.dp >= 1
    rates = {
        "prefill pool": plan.prefill.dp * plan.prefill_replica.rate,
        "decode pool": plan.decode.dp * plan.decode_replica.rate,
        "KV transfer": plan.prefill.dp / plan.transfer.time,
    }
    assert plan.binding in POOL_BINDINGS and plan.rate == pytest.approx(min(rates.values()), rel=1e-12)
    assert rates[plan.binding] == pytest.approx(plan.rate, rel=1e-12)
    # The prefill pool meets what is left of the TTFT after the transfer and one decode step.
    assert plan.prefill_replica.load.ttft_quantile <= 1.0 - plan.transfer.time - 0.02
    assert plan.decode_replica.load.tpot_quantile <= 0.02


def test_no_split_of_the_same_shapes_carries_more(long_prompts):
    plan = long_prompts
    p, d = plan.prefill.devices // plan.prefill.dp, plan.decode.devices // plan.decode.dp
    for prefill in range(1, 4):
        decode = (4 - prefill * p) // d
        if decode >= 1:
            assert min(prefill * plan.prefill_replica.rate, decode * plan.decode_replica.rate) <= plan.rate + 1e-12


@pytest.mark.parametrize(
    "call,name",
    [
        (lambda: kv_transfer(LLAMA8, 0, Layout(), H100), "prompt_tokens"),
        (lambda: kv_transfer(LLAMA8, 10, Layout(), H100, same_node="yes"), "same_node"),
        (lambda: balance(0, 1, 2), "prefill_rate_per_device"),
        (lambda: balance(1, 1, -2), "devices"),
        (lambda: disaggregate(LLAMA8, "h100-sxm", 1, 10, 10), "devices"),
        (lambda: capacity(LLAMA8, "h100-sxm", Layout(), 10, 10, ttft_limit=1.0, prefill=False), "ttft_limit"),
    ],
)
def test_bad_input_names_the_parameter(call, name):
    with pytest.raises(ValueError, match=name):
        call()


@pytest.mark.slow
def test_the_command_line_plans_pools_speculation_and_experts(capsys):
    from lib.serving.__main__ import main

    main(
        [
            "--model",
            "llama-3-8b",
            "--devices",
            "4",
            "--ttft-ms",
            "1000",
            "--tpot-ms",
            "20",
            "--prompt",
            "4096",
            "--output",
            "128",
            "--disaggregate",
        ]
    )
    out = capsys.readouterr().out
    plan = disaggregate(LLAMA8, "h100-sxm", 4, 4096, 128, ttft_limit=1.0, tpot_limit=0.02)
    assert f"disaggregated: {plan.name}: {plan.rate:.2f} requests/s" in out and "colocated:" in out
    with pytest.raises(SystemExit) as refused:
        main(["--model", "llama-3-8b", "--devices", "4", "--ttft-ms", "1000", "--disaggregate"])
    assert refused.value.code == 2 and "--tpot-ms" in capsys.readouterr().err
    main(["--model", "llama-3-70b", "--devices", "4", "--batch", "4", "--speculate", "0.7", "3"])
    rows = [line for line in capsys.readouterr().out.splitlines() if " yes " in line]
    assert rows and all(" spec x" in line for line in rows)
    main(["--model", "mixtral-8x7b", "--devices", "2", "--batch", "8", "--expert-parallel", "all"])
    out = capsys.readouterr().out
    assert "adp2-ep2-pp1-dp1" in out and "ep2-pp1-dp1" in out
