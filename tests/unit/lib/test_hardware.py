"""Tests for lib.hardware: every entry is complete, cited and in SI units."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lib import hardware
from lib.hardware import DEVICES
from lib.units import GB, TB, GiB, MiB, s, us

BIB_KEYS = set(re.findall(r"^@\w+\{([^,]+),", (Path(__file__).parents[3] / "references.bib").read_text(), re.M))


@pytest.mark.parametrize("slug", sorted(hardware.DEVICES))
def test_every_device_is_complete_and_cited(slug):
    device = hardware.DEVICES[slug]
    assert device.source in BIB_KEYS, f"{slug}: {device.source} is not in references.bib"
    assert device.source_note
    assert 8 * GiB <= device.memory_bytes <= 512 * GiB
    assert 100 * GB / s <= device.memory_bandwidth <= 20 * TB / s
    assert 1e13 <= device.peak_flops <= 1e16  # 10 TFLOP/s to 10 PFLOP/s
    assert device.link in hardware.LINKS and device.network in hardware.LINKS
    assert hardware.LINKS[device.network].kind == "net" and 0 < device.nics_per_gpu <= 1
    assert device.fp8_flops == 0 or 1.9 < device.fp8_flops / device.peak_flops < 2.1


@pytest.mark.parametrize("slug", sorted(hardware.LINKS))
def test_every_link_is_complete_and_cited(slug):
    link = hardware.LINKS[slug]
    assert link.source in BIB_KEYS, f"{slug}: {link.source} is not in references.bib"
    assert link.source_note
    assert 1 * GB / s <= link.bandwidth <= 2 * TB / s
    assert link.kind in hardware.HOP_LATENCY
    assert 0 < link.nccl_share <= 1
    assert 0 < link.latency < 10 * us
    assert 0 <= link.in_network_efficiency < 1


def test_datasheet_figures_by_hand():
    # The A100 datasheet prints 312 TFLOPS dense; H100's 1,979 is with sparsity, dense is half.
    assert hardware.DEVICES["a100-80gb"].peak_flops == 312e12
    assert hardware.DEVICES["h100-sxm"].peak_flops == 1979e12 / 2
    # Memory as the driver reports it: an H100 sold as "80GB" shows 81,559 MiB, an A100 80GB 81,920 MiB.
    assert hardware.DEVICES["h100-sxm"].memory_bytes == 81559 * 1024**2
    assert hardware.DEVICES["a100-80gb"].memory_bytes == 81920 * 1024**2
    # FP8 dense peaks: H100 3,958 with sparsity, so 1,979; none on the A100.
    assert hardware.DEVICES["h100-sxm"].fp8_flops == 1979e12 and hardware.DEVICES["a100-80gb"].fp8_flops == 0
    # NVLink 4 is 900 GB/s in both directions together: 450 GB/s each way.
    assert hardware.LINKS["nvlink4"].bandwidth == 450e9
    # A 400 Gb/s port moves 50 GB/s each way; PCIe Gen4 x16 31.5 GB/s after 128b/130b encoding.
    assert hardware.LINKS["ib-ndr"].bandwidth == 50e9
    assert round(hardware.LINKS["pcie4"].bandwidth / 1e9, 2) == 31.51


def test_nccl_credits_about_80_percent_of_nvlink():
    # NCCL 2.30.7 topo.h: 20.6 GB/s per H100 NVLink (18 links), its ring search settles on 12 x 30 = 360.
    assert hardware.LINKS["nvlink4"].nccl_bandwidth == pytest.approx(360e9)
    assert hardware.LINKS["pcie4"].nccl_bandwidth == pytest.approx(24e9)


def test_book_assumptions_name_catalogue_entries():
    assert hardware.BOOK_DEVICE in hardware.DEVICES
    assert hardware.FAST_LINK in hardware.LINKS and hardware.SLOW_LINK in hardware.LINKS
    assert hardware.LINKS[hardware.SLOW_LINK].bandwidth < hardware.LINKS[hardware.FAST_LINK].bandwidth


@pytest.mark.parametrize(
    "lookup, bad", [(hardware.device, "h300"), (hardware.link, "nvlink9"), (hardware.device, None)]
)
def test_unknown_names_are_refused_with_the_choices(lookup, bad):
    with pytest.raises(ValueError, match=f"must be one of .*got {bad!r}"):
        lookup(bad)


def test_the_catalogue_holds_what_the_driver_reports():
    # nvidia-smi's totals, in MiB: the L4 sold as 24GB has 23,034 MiB, not 24 GiB.
    assert DEVICES["l4"].memory_bytes == 23034 * MiB < 24 * GiB
    assert DEVICES["l40s"].memory_bytes == 46068 * MiB and DEVICES["h100-sxm"].memory_bytes == 81559 * MiB
    for device in DEVICES.values():
        assert device.memory_note and device.memory_label


def test_every_peak_cites_a_datasheet():
    for slug, device in DEVICES.items():
        assert device.source and device.source_note, slug
        if device.fp8_flops:
            assert "FP8" in device.source_note, slug
            assert 1.99 < device.fp8_flops / device.peak_flops < 2.03, slug  # the L40S prints 733 and 362.05
