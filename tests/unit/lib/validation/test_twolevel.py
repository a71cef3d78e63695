"""The two-level all-reduce calibration: levels fitted apart, the pre-registered split kept, systems left out."""

import re
from dataclasses import replace

import numpy as np
import pytest

from lib.validation import load_published
from lib.validation.allreduce import SYSTEMS
from lib.validation.published import allreduce_sweep
from lib.validation.schemas import COLLECTIVE_DATASETS, HARNESSES
from lib.validation.splits import FLOOR_SIZES_UP_TO, allreduce_floor_roles, allreduce_roles
from lib.validation.twolevel import (
    NETWORK_OF,
    NETWORKS,
    band_diagnosis,
    calibrate_two_level,
    harness_of,
    leave_one_system_out,
    predict_two_level,
    sweep_floors,
    validate_floor_split,
    validate_two_level,
)

VERSION = re.compile(r"^\d+\.\d+\.\d+$")


@pytest.fixture(scope="module")
def sweeps():
    return {name: allreduce_sweep(name) for name in SYSTEMS}


def test_every_collective_row_names_its_harness_and_nccl_version_with_a_source():
    for name in COLLECTIVE_DATASETS:
        for row in load_published(name):
            assert row["harness"] in HARNESSES, (name, row["harness"])
            version = row["nccl_version"]
            assert VERSION.match(version) or version == "unstated", (name, version)
            assert len(row["harness_source"]) > 20 and len(row["nccl_version_source"]) > 20, name
            if VERSION.match(version):
                assert version in row["nccl_version_source"], name


def test_every_multi_node_system_names_a_catalogued_network():
    multi = {n for n, s in SYSTEMS.items() if s.nodes > 1}
    assert multi == set(NETWORK_OF) and set(NETWORK_OF.values()) <= set(NETWORKS)
    assert {harness_of(n) for n in SYSTEMS} <= set(HARNESSES) - {"unstated"}


def test_intra_constants_ignore_multi_node_sweeps_and_the_reverse(sweeps):
    both = calibrate_two_level(sweeps)
    single = calibrate_two_level({n: s for n, s in sweeps.items() if SYSTEMS[n].nodes == 1})
    multi = calibrate_two_level({n: s for n, s in sweeps.items() if SYSTEMS[n].nodes > 1})
    assert both.intra() == single.intra() and both.inter() == multi.inter()
    assert single.inter() == {"network_scale": {}, "network_latency": {}}
    assert multi.intra() == {"intra_scale": {}, "harness_floor": {}}
    assert set(both.intra_scale) == {"nvlink3", "nvlink4", "nvlink5"} and set(both.network_scale) == {"efa"}


def test_the_levels_scale_their_own_links_only(sweeps):
    fit = calibrate_two_level(sweeps)
    slower_net = replace(fit, network_scale={"efa": fit.network_scale["efa"] / 2})
    one_node, two_nodes = sweeps["allreduce_a100_8gpu_mle"], sweeps["allreduce_a100_16gpu_aws_p4de"]
    assert np.array_equal(predict_two_level(fit, one_node), predict_two_level(slower_net, one_node))
    assert predict_two_level(slower_net, two_nodes)[-1] > 1.5 * predict_two_level(fit, two_nodes)[-1]


def test_pre_registered_split_fits_on_calibration_sizes_only(sweeps):
    before = validate_two_level(sweeps).constants
    changed = {}
    for name, s in sweeps.items():
        held = allreduce_roles(s.size)[0] != "calibration"
        changed[name] = replace(s, time=np.where(held, s.time * 3, s.time))
    assert validate_two_level(changed).constants == before
    assert not any(k.startswith(("harness_floor", "network_latency")) for k in before)


def test_a_left_out_system_is_predicted_without_its_own_figures(sweeps):
    name = "allreduce_h200_8gpu_mle"
    row = next(r for r in leave_one_system_out(sweeps) if r["system"] == name)
    doubled = dict(sweeps, **{name: replace(sweeps[name], time=sweeps[name].time * 2)})
    again = next(r for r in leave_one_system_out(doubled) if r["system"] == name)
    assert again["median"] != row["median"]  # its errors move with its own figures ...
    others = calibrate_two_level({n: s for n, s in sweeps.items() if n != name})
    assert np.isclose(
        np.median(np.abs(predict_two_level(others, sweeps[name]) / sweeps[name].time - 1)), row["median"], rtol=1e-12
    )  # ... but its constants come from the others only
    assert row["borrowed"] == ("NVLink scale", "harness floor")


def test_harness_floor_is_fitted_from_small_sizes(sweeps):
    fit = calibrate_two_level({n: sweeps[n] for n in ("allreduce_h200_8gpu_mle", "allreduce_b200_8gpu_mle")})
    assert 10e-6 < fit.harness_floor["all_reduce_bench.py"] < 60e-6


def test_unmodelled_sweeps_are_refused(sweeps):
    with pytest.raises(ValueError, match="modelled"):
        calibrate_two_level({"allreduce_h100_16gpu_gcp_a3mega": allreduce_sweep("allreduce_h100_16gpu_gcp_a3mega")})


def test_floor_split_scores_what_the_first_split_holds_out_above_1_kib(sweeps):
    first, second = validate_two_level(sweeps), validate_floor_split(sweeps)
    assert [(r["dataset"], r["size"]) for r in first.records] == [(r["dataset"], r["size"]) for r in second.records]
    held = {
        (r["dataset"], r["size"]) for r in first.records if r["role"] == "held-out" and r["size"] > FLOOR_SIZES_UP_TO
    }
    assert {(r["dataset"], r["size"]) for r in second.records if r["role"] == "held-out"} == held
    floor = [r for r in second.records if r["role"] == "floor"]
    assert floor and all(r["size"] <= FLOOR_SIZES_UP_TO for r in floor)
    # the link scales are the first split's: only the floor is new
    assert {k: v for k, v in second.constants.items() if not k.startswith("floor.")} == first.constants


def test_floor_split_fits_nothing_on_the_sizes_it_scores(sweeps):
    before = validate_floor_split(sweeps).constants
    changed = {}
    for name, s in sweeps.items():
        scored = ~np.isin(allreduce_floor_roles(s.size)[0], ["calibration", "floor"])
        changed[name] = replace(s, time=np.where(scored, s.time * 3, s.time))
    assert validate_floor_split(changed).constants == before
    # ... and a floor size does move the floor of its sweep
    name = "allreduce_h100_16gpu_aws_p5"
    s = sweeps[name]
    bumped = dict(sweeps, **{name: replace(s, time=np.where(s.size <= FLOOR_SIZES_UP_TO, s.time + 1e-4, s.time))})
    after = validate_floor_split(bumped).constants
    assert np.isclose(after[f"floor.{name}"] - before[f"floor.{name}"], 1e-4, rtol=1e-9)


def test_a_sweep_without_floor_sizes_borrows_from_its_harness_or_network(sweeps):
    fit = replace(
        calibrate_two_level(sweeps, {n: allreduce_roles(s.size)[0] == "calibration" for n, s in sweeps.items()})
    )
    floors = sweep_floors(fit, sweeps)
    own = {n for n, (_, where) in floors.items() if where == "own"}
    assert own == {n for n, s in sweeps.items() if s.size.min() <= FLOOR_SIZES_UP_TO}
    lenders = [floors[n][0] for n in ("allreduce_a100_16gpu_aws_p4de", "allreduce_h100_16gpu_aws_p5")]
    assert floors["allreduce_b200_32gpu_mle"] == (float(np.median(lenders)), "borrowed")  # the EFA sweeps lend
    assert floors["allreduce_h200_8gpu_mle"] == (0.0, "none")  # no all_reduce_bench.py sweep prints 1 KiB or less


def test_band_diagnosis_shows_the_model_too_fast_where_no_floor_is_measured():
    rows = {r["system"]: r for r in band_diagnosis()}
    for row in rows.values():
        assert row["first"] < 0 and row["second"] <= row["first"] + 0.5 and row["latency_share"] > 0.5
        if row["floor_from"] == "none":
            assert row["second"] == row["first"] and row["smallest_measured"] > 2 * row["smallest_model"]
