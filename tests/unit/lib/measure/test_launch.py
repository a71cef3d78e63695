"""Tests for lib.measure.launch: the backend and the device count are checked before any rank starts."""

from __future__ import annotations

import pytest

from lib.measure import launch


def test_more_devices_than_cores_is_refused_naming_devices():
    too_many = launch.available_cores() + 1
    with pytest.raises(ValueError, match="devices must be <="):
        launch.resolve_backend(too_many, "gloo")


def test_unknown_backend_is_refused():
    with pytest.raises(ValueError, match="backend"):
        launch.resolve_backend(2, "mpi", cores=2, gpus=0)
