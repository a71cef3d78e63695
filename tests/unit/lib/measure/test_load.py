"""Tests for lib.measure.load: the machine's load between two snapshots."""

from __future__ import annotations

# --- machine load ----------------------------------------------------------------------


def test_load_between_by_hand_and_without_psutil():
    from lib.measure.load import load_between

    first = {"wall_s": 10.0, "machine_busy_s": 100.0, "loadavg": [1.0, 1.0, 1.0]}
    last = {"wall_s": 14.0, "machine_busy_s": 106.0, "loadavg": [2.0, 1.0, 1.0]}
    load = load_between(first, last, ranks_cpu_s=4.0, cores=4)  # 6 busy s over 4 s; ranks 4 s
    assert (load["machine_busy_cores"], load["ranks_busy_cores"], load["other_busy_cores"]) == (1.5, 1.0, 0.5)
    assert load["cpu_percent"] == 37.5 and load["loadavg_end"] == [2.0, 1.0, 1.0]
    blind = load_between({"wall_s": 0.0, "machine_busy_s": None}, {"wall_s": 2.0, "machine_busy_s": None}, 1.0, 2)
    assert blind["other_busy_cores"] is None and blind["ranks_busy_cores"] == 0.5


def test_steal_and_clock_are_recorded_between_snapshots():
    from lib.measure.load import combine_loads, load_between, snapshot

    first = {"wall_s": 0.0, "machine_busy_s": 10.0, "steal_s": 1.0, "cpu_mhz": 2600.0}
    last = {"wall_s": 4.0, "machine_busy_s": 14.0, "steal_s": 3.0, "cpu_mhz": 2400.0}
    load = load_between(first, last, ranks_cpu_s=2.0, cores=2)  # 2 s stolen over 4 s: half a core
    assert load["steal_cores"] == 0.5 and load["cpu_mhz_end"] == 2400.0
    assert load_between({"wall_s": 0.0}, {"wall_s": 1.0}, 0.0, 2)["steal_cores"] is None
    quiet = dict(load, wall_s=4.0, steal_cores=0.0)
    assert combine_loads([load, quiet])["steal_cores"] == 0.25
    now = snapshot()
    assert now["steal_s"] is None or now["steal_s"] >= 0
    assert now["cpu_mhz"] is None or now["cpu_mhz"] > 0
