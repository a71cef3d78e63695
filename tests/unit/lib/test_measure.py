"""Tests for the package lib.measure (__init__.py, __main__.py): run, check_split and the command line, on real ranks.

The distributed tests start real worker processes (gloo on 127.0.0.1), so
each takes a few seconds; they check numbers (the split equals the whole)
and clean endings (bad input refused, a failed, killed or hung rank ends
every process and leaves no child behind).
"""

from __future__ import annotations

import socket
import subprocess
import sys

import psutil
import pytest

from lib import measure
from lib.measure import launch

# --- launcher: bad input --------------------------------------------------------


def test_one_device_is_refused_naming_devices():
    with pytest.raises(ValueError, match="devices"):
        measure.run(devices=1)


@pytest.mark.parametrize("devices", ["1", str(launch.available_cores() + 1)])
def test_cli_refuses_bad_devices(tmp_path, devices):
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "lib.measure",
            "--devices",
            devices,
            "--backend",
            "gloo",
            "--json",
            str(tmp_path / "out.json"),
        ],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "devices" in done.stderr
    assert not (tmp_path / "out.json").exists()


# --- launcher: real ranks ---------------------------------------------------------


def _children() -> set[int]:
    return {child.pid for child in psutil.Process().children(recursive=True)}


@pytest.mark.slow
def test_split_mlp_equals_whole_on_two_ranks():
    before = _children()
    result = measure.check_split(devices=2, hidden=64, backend="gloo", timeout=120)
    assert result["devices"] == 2 and result["shape"] == [4, 16]
    assert result["max_abs_error"] < 1e-5
    assert _children() <= before


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["kill", "exit"])
def test_failed_rank_ends_every_process(mode):
    before = _children()
    with pytest.raises(measure.MeasureError, match="rank 1 of 2"):
        measure.check_split(devices=2, backend="gloo", timeout=120, fault={"rank": 1, "mode": mode})
    survivors = _children() - before
    assert not survivors, f"orphan processes: {survivors}"


@pytest.mark.slow
def test_a_taken_port_is_retried_once_on_a_fresh_one(monkeypatch):
    # Another program listens on the first port handed out, as if it grabbed it after free_port().
    before = _children()
    ports = []
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        taken = squatter.getsockname()[1]
        fresh = launch.free_port

        def handed_out() -> int:
            ports.append(taken if not ports else fresh())
            return ports[-1]

        monkeypatch.setattr(launch, "free_port", handed_out)
        result = measure.check_split(devices=2, hidden=64, backend="gloo", timeout=120)
    assert result["max_abs_error"] < 1e-5
    assert len(ports) == 2 and ports[0] == taken != ports[1]
    assert _children() <= before


@pytest.mark.slow
def test_a_port_taken_twice_fails_with_the_ranks_error(monkeypatch):
    before = _children()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as squatter:
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        monkeypatch.setattr(launch, "free_port", lambda: squatter.getsockname()[1])
        with pytest.raises(measure.MeasureError, match="rank 0 of 2"):
            measure.check_split(devices=2, backend="gloo", timeout=120)
    assert _children() <= before


@pytest.mark.slow
def test_hung_rank_ends_every_process_after_the_timeout():
    before = _children()
    with pytest.raises(measure.MeasureError, match="timeout"):
        measure.check_split(devices=2, backend="gloo", timeout=15, fault={"rank": 1, "mode": "hang"})
    survivors = _children() - before
    assert not survivors, f"orphan processes: {survivors}"
