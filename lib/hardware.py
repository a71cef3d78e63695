"""The hardware catalogue: named devices and links, each figure with its source.

Introduced in chapter 2 (units) and used by every chapter after it: a
chapter names a device or a link by its slug and never types the figures
again. All values are SI: bytes, bytes per second, FLOP per second, seconds.

>>> from lib.units import MiB, GB, TB, s
>>> h100 = DEVICES["h100-sxm"]
>>> h100.memory_bytes / MiB, h100.memory_bandwidth / (TB / s)
(81559.0, 3.35)
>>> LINKS[h100.link].bandwidth / (GB / s), h100.network, h100.nics_per_gpu
(450.0, 'ib-ndr', 1.0)

Conventions, each stated once here:

* **Memory as the driver reports it.** ``memory_bytes`` is the total that
  ``nvidia-smi`` prints, in MiB: 81,559 MiB for an H100 sold as "80GB",
  23,034 MiB for an L4 sold as "24GB". That is what a serving engine divides
  up; the label as sold is ``memory_label``. Sources are in ``memory_note``.
* **Peak FLOP/s are dense tensor-core figures.** ``peak_flops`` is the
  16-bit (BF16/FP16) peak, ``fp8_flops`` the FP8 one (0 where the tensor
  cores have no FP8, as on the A100 and A10G). Where a datasheet prints only
  the figure "with sparsity", the dense one is half of it, as the
  datasheets' footnotes say.
* **The network by generation.** ``network`` is the port the reference
  servers have between them and ``nics_per_gpu`` how many per GPU: a DGX
  A100 has eight 200 Gb/s HDR ports for its eight GPUs; DGX H100, H200 and
  B200 eight 400 Gb/s NDR ConnectX-7 ports. PCIe inference servers (L4,
  L40S, A10G) are taken to have one 100 Gb/s Ethernet port per eight GPUs,
  as the cloud instances built from them do, and H100 PCIe servers one NDR
  port per eight (assumptions: these have no reference design).
* **Link bandwidth is per direction.** NVIDIA prints NVLink as the two-way
  total per GPU (900 GB/s on an H100); one direction carries half (450 GB/s),
  and that is what a ring step can use. PCIe is quoted after its 128b/130b
  line encoding; InfiniBand and Ethernet port rates are per direction.
* **What NCCL credits a link with.** NCCL's cost model does not use the line
  rate: it credits an NVLink with 20 GB/s (A100), 20.6 GB/s (H100) or 40.1 GB/s
  (B200) per link and direction against the nominal 25, 25 and 50, about 80 %;
  PCIe with what ``width x speed / 80`` gives (24 GB/s for Gen4 x16, 76 % of
  its line rate); a network port with its full rate (``Mb/s / 8000``). That
  share is ``Link.nccl_share`` (NCCL 2.30.7, ``src/graph/topo.h``, ``topo.cc``).
* **Link latency is NCCL's per-step hardware latency** for the link's class
  (``HOP_LATENCY``, copied from NCCL's ``src/graph/tuning.cc``, ``hwLat``): one
  value per algorithm and protocol. ``Link.latency`` is the smallest of them,
  a ring step with the LL protocol. They are tuning constants, not
  measurements; the base latency of a whole collective and the choice of
  algorithm live in :mod:`lib.collectives`.

The book's standing assumptions are named here too: :data:`BOOK_DEVICE`, the
fast link inside a server (:data:`FAST_LINK`) and the one slow link between
servers (:data:`SLOW_LINK`).
"""

from __future__ import annotations

from dataclasses import dataclass

from lib.units import GB, TB, TFLOPS, Gbit, MiB, s, us

__all__ = [
    "Device",
    "Link",
    "DEVICES",
    "LINKS",
    "HOP_LATENCY",
    "BOOK_DEVICE",
    "FAST_LINK",
    "SLOW_LINK",
    "device",
    "link",
]


@dataclass(frozen=True)
class Device:
    """One accelerator as its datasheet describes it.

    Attributes
    ----------
    name : str
        Human-readable name, e.g. ``"H100 SXM"``.
    memory_bytes : float
        Memory as the driver reports it, in bytes (``nvidia-smi``'s MiB).
    memory_bandwidth : float
        Peak memory bandwidth, bytes per second.
    peak_flops : float
        Dense 16-bit tensor-core peak, FLOP per second.
    link : str
        Slug in :data:`LINKS` of the link that joins these devices inside one server.
    source : str
        Key in ``references.bib``.
    source_note : str
        Which table and row the figures come from.
    fp8_flops : float
        Dense FP8 tensor-core peak, FLOP per second; 0 without FP8 tensor cores.
    memory_label : str
        The memory as sold, e.g. ``"80GB"``.
    memory_note : str
        Where the driver-reported memory comes from.
    network : str
        Slug in :data:`LINKS` of each network port between the reference servers.
    nics_per_gpu : float
        Network ports of the reference server per GPU (1 for one each, 1/8 for one per eight).
    """

    name: str
    memory_bytes: float
    memory_bandwidth: float
    peak_flops: float
    link: str
    source: str
    source_note: str
    fp8_flops: float = 0.0
    memory_label: str = ""
    memory_note: str = ""
    network: str = "eth-100g"
    nics_per_gpu: float = 1 / 8

    @property
    def ridge_intensity(self) -> float:
        """FLOP per byte at which compute and memory take equal time: ``peak_flops / memory_bandwidth``.

        >>> round(DEVICES["h100-sxm"].ridge_intensity)
        295
        """
        return self.peak_flops / self.memory_bandwidth


@dataclass(frozen=True)
class Link:
    """A class of link between two devices.

    Attributes
    ----------
    name : str
        Human-readable name.
    bandwidth : float
        Bytes per second in one direction.
    kind : str
        NCCL's hardware class for the link: ``"nvlink"``, ``"pcie"`` or ``"net"``.
    nccl_share : float
        Share of ``bandwidth`` NCCL's cost model credits (see the module notes).
    in_network_efficiency : float
        NCCL's efficiency for in-network reduction (NVLink SHARP, "NVLS") through
        this link's switches: 0.85 on Hopper, 0.74 on Blackwell, 0 where the
        switches cannot reduce (``nvlsEfficiency`` in ``src/graph/tuning.cc``).
    source : str
        Key in ``references.bib`` for the bandwidth.
    source_note : str
        Where the bandwidth comes from and how the per-direction figure follows.
    """

    name: str
    bandwidth: float
    kind: str
    nccl_share: float
    source: str
    source_note: str
    in_network_efficiency: float = 0.0

    @property
    def latency(self) -> float:
        """The smallest per-step latency NCCL assumes on this link: a ring step with LL, in seconds.

        >>> round(LINKS["nvlink4"].latency / 1e-6, 2), round(LINKS["ib-ndr"].latency / 1e-6, 2)
        (0.6, 2.7)
        """
        return HOP_LATENCY[self.kind]["ring"]["LL"]

    @property
    def nccl_bandwidth(self) -> float:
        """Bytes per second per direction that NCCL's model credits: ``bandwidth * nccl_share``.

        >>> round(LINKS["nvlink4"].nccl_bandwidth / 1e9)
        360
        """
        return self.bandwidth * self.nccl_share


_A100 = (
    "nvidia_a100_ds",
    "A100 datasheet, SXM columns: GPU Memory, GPU Memory Bandwidth, "
    "BFLOAT16 Tensor Core 312 TFLOPS (dense, printed); no FP8 tensor cores",
)
_SMI = "nvidia-smi memory.total as printed in "
_HOPPER = dict(network="ib-ndr", nics_per_gpu=1.0)  # DGX H100/H200/B200: 8 x ConnectX-7 at 400 Gb/s
_AMPERE = dict(network="ib-hdr", nics_per_gpu=1.0)  # DGX A100: 8 x ConnectX-6 at 200 Gb/s

#: The devices of the book, keyed by slug.
DEVICES: dict[str, Device] = {
    "a100-40gb": Device(
        "A100 40GB SXM",
        40960 * MiB,
        1555 * GB / s,
        312 * TFLOPS,
        "nvlink3",
        *_A100,
        memory_label="40GB",
        memory_note=_SMI + "bottlerocket-os/bottlerocket-core-kit PR #834 (598MiB / 40960MiB)",
        **_AMPERE,
    ),
    "a100-80gb": Device(
        "A100 80GB SXM",
        81920 * MiB,
        2039 * GB / s,
        312 * TFLOPS,
        "nvlink3",
        *_A100,
        memory_label="80GB",
        memory_note=_SMI + "allenai/PeerRead issue #40 (0MiB / 81920MiB)",
        **_AMPERE,
    ),
    "h100-sxm": Device(
        "H100 SXM",
        81559 * MiB,
        3.35 * TB / s,
        989.5 * TFLOPS,
        "nvlink4",
        "nvidia_h100_page",
        "H100 product page, SXM column: 80GB, 3.35TB/s, BFLOAT16 1,979 and FP8 3,958 teraFLOPS "
        "with sparsity (dense is half)",
        fp8_flops=1979 * TFLOPS,
        memory_label="80GB",
        memory_note=_SMI + "wilicc/gpu-burn issue #114 (72790MiB / 81559MiB, driver 550.90.07)",
        **_HOPPER,
    ),
    "h100-pcie": Device(
        "H100 PCIe",
        81559 * MiB,
        2.0 * TB / s,
        756.5 * TFLOPS,
        "pcie5",
        "nvidia_h100_page",
        "H100 product page, PCIe column: 80GB, 2TB/s, BFLOAT16 1,513 and FP8 3,026 teraFLOPS with "
        "sparsity (dense is half); PCIe Gen5",
        fp8_flops=1513 * TFLOPS,
        memory_label="80GB",
        memory_note=_SMI + "modal-labs/modal-client PR #2797 (H100: 81559MiB), the same for PCIe boards",
        network="ib-ndr",
    ),
    "h200": Device(
        "H200 SXM",
        143771 * MiB,
        4.8 * TB / s,
        989.5 * TFLOPS,
        "nvlink4",
        "nvidia_h200_page",
        "H200 product page, SXM column: 141GB, 4.8TB/s, BFLOAT16 1,979 and FP8 3,958 teraFLOPS with "
        "sparsity (dense is half)",
        fp8_flops=1979 * TFLOPS,
        memory_label="141GB",
        memory_note=_SMI + "sgl-project/sglang issue #3196 (124585MiB / 143771MiB)",
        **_HOPPER,
    ),
    "b200": Device(
        "B200 (HGX)",
        183359 * MiB,
        7.7 * TB / s,
        2250 * TFLOPS,
        "nvlink5",
        "nvidia_hgx_page",
        "HGX B200 column: 180 GB HBM3E, 7.7 TB/s, FP16/BF16 4.5 and FP8 9 PFLOPS sparse (dense is "
        "half); the DGX B200 page implies 8 TB/s",
        fp8_flops=4500 * TFLOPS,
        memory_label="180GB",
        memory_note=_SMI + "HGX B200 logs (0MiB / 183359MiB, 1000W)",
        **_HOPPER,
    ),
    "l40s": Device(
        "L40S",
        46068 * MiB,
        864 * GB / s,
        362.05 * TFLOPS,
        "pcie4",
        "nvidia_l40s_ds",
        "L40S datasheet: 48GB GDDR6, 864GB/s, BFLOAT16 362.05 TFLOPS (dense, printed), FP8 733 TFLOPS "
        "(dense, printed), PCIe Gen4 x16",
        fp8_flops=733 * TFLOPS,
        memory_label="48GB",
        memory_note=_SMI + "akash-network/provider-configs PR #99 (NVIDIA L40S, 46068 MiB)",
    ),
    "l4": Device(
        "L4",
        23034 * MiB,
        300 * GB / s,
        121 * TFLOPS,
        "pcie4",
        "nvidia_l4_page",
        "L4 product page: 24GB, 300GB/s, BFLOAT16 242 and FP8 485 teraFLOPS with sparsity (dense is half)",
        fp8_flops=242.5 * TFLOPS,
        memory_label="24GB",
        memory_note=_SMI + "modal-labs/modal-client PR #2797 (L4: 23034MiB)",
    ),
    "a10g": Device(
        "A10G",
        23028 * MiB,
        600 * GB / s,
        70 * TFLOPS,
        "pcie4",
        "baseten_a10g",
        "AWS's variant of the A10 (G5 instances; no NVIDIA datasheet): 24 GB GDDR6 at 600 GB/s and "
        "about 70 TFLOPS of dense BF16 tensor throughput, per Baseten's A10 vs A10G comparison; no "
        "FP8 tensor cores (Ampere)",
        memory_label="24GB",
        memory_note=_SMI + "modal-labs/modal-client PR #2797 (A10: 23028MiB), as on G5 instances",
    ),
}

#: NCCL's per-step hardware latencies in seconds, ``HOP_LATENCY[kind][algorithm][protocol]``
#: (``hwLat`` in ``src/graph/tuning.cc`` of NCCL 2.30.7; ``nvls_tree`` is NCCL's NVLSTree).
HOP_LATENCY: dict[str, dict[str, dict[str, float]]] = {
    kind: {
        algorithm: dict(zip(("LL", "LL128", "Simple"), (v * us for v in values))) for algorithm, values in table.items()
    }
    for kind, table in {
        "nvlink": {"ring": (0.6, 1.9, 3.4), "tree": (0.6, 1.25, 4.0), "nvls": (0, 0, 25.0), "nvls_tree": (0, 0, 25.0)},
        "pcie": {"ring": (1.0, 2.5, 5.7), "tree": (1.0, 1.9, 4.0), "nvls": (0, 0, 0), "nvls_tree": (0, 0, 0)},
        "net": {"ring": (2.7, 4.0, 14.0), "tree": (5.0, 8.5, 14.0), "nvls": (0, 0, 18.0), "nvls_tree": (0, 0, 20.9)},
    }.items()
}

_NVLINK_SHARE = 0.8  # 20 / 25 (A100), 20.6 / 25 (H100), 40.1 / 50 (B200) GB/s per link
_PCIE_SHARE = 24 / 31.5077  # NCCL reads 24 GB/s from a Gen4 x16 slot (48 from Gen5) against 31.5 (63.0)

#: The links of the book, keyed by slug.
LINKS: dict[str, Link] = {
    "nvlink3": Link(
        "NVLink 3 (A100)",
        300 * GB / s,
        "nvlink",
        _NVLINK_SHARE,
        "nvidia_ampere_tuning",
        "12 links x 50 GB/s bidirectional = 600 GB/s per GPU, 300 GB/s each way",
    ),
    "nvlink4": Link(
        "NVLink 4 (H100, H200)",
        450 * GB / s,
        "nvlink",
        _NVLINK_SHARE,
        "nvidia_hopper_tuning",
        "18 links x 50 GB/s bidirectional = 900 GB/s per GPU, 450 GB/s each way",
        in_network_efficiency=0.85,
    ),
    "nvlink5": Link(
        "NVLink 5 (B200)",
        900 * GB / s,
        "nvlink",
        _NVLINK_SHARE,
        "nvidia_nvlink_page",
        "NVLink bandwidth per GPU 1,800 GB/s (fifth generation), 900 GB/s each way",
        in_network_efficiency=0.74,
    ),
    "pcie4": Link(
        "PCIe Gen4 x16",
        16 * 16 * 128 / 130 * Gbit / s,
        "pcie",
        _PCIE_SHARE,
        "nvidia_a100_ds",
        "PCIe Gen4: 64GB/s both ways raw; 16 GT/s x 16 lanes x 128/130 encoding = 31.5 GB/s each way",
    ),
    "pcie5": Link(
        "PCIe Gen5 x16",
        32 * 16 * 128 / 130 * Gbit / s,
        "pcie",
        _PCIE_SHARE,
        "pcisig_pcie5_2019",
        "32 GT/s, up to 128 GB/s both ways raw; x 128/130 encoding = 63.0 GB/s each way",
    ),
    "ib-hdr": Link(
        "InfiniBand HDR (200 Gb/s)",
        200 * Gbit / s,
        "net",
        1.0,
        "nvidia_superpod_ndr_cabling",
        "HDR is four lanes of 50 Gb/s: 200 Gb/s = 25 GB/s per direction",
    ),
    "ib-ndr": Link(
        "InfiniBand NDR (400 Gb/s)",
        400 * Gbit / s,
        "net",
        1.0,
        "nvidia_superpod_h100_ra",
        "NDR has a peak speed of 400 Gb/s per direction = 50 GB/s",
    ),
    "eth-100g": Link(
        "Ethernet 100 GbE",
        100 * Gbit / s,
        "net",
        1.0,
        "ieee_8023ba_2010",
        "100 Gb/s full duplex = 12.5 GB/s per direction",
    ),
    "eth-400g": Link(
        "Ethernet 400 GbE",
        400 * Gbit / s,
        "net",
        1.0,
        "ieee_8023bs_2017",
        "400 Gb/s full duplex = 50 GB/s per direction",
    ),
}

#: The device the book assumes unless a section says otherwise.
BOOK_DEVICE = "h100-sxm"
#: The link inside one server of :data:`BOOK_DEVICE`.
FAST_LINK = DEVICES[BOOK_DEVICE].link
#: The one slow link of the book: a network port between servers.
SLOW_LINK = "ib-hdr"


def _lookup(catalogue: dict, kind: str, slug: str):
    try:
        return catalogue[slug]
    except (KeyError, TypeError):
        raise ValueError(f"{kind} must be one of {sorted(catalogue)}, got {slug!r}") from None


def device(slug: str | Device) -> Device:
    """The :class:`Device` named ``slug`` (a :class:`Device` passes through unchanged).

    >>> device("a100-80gb").memory_bandwidth / 1e9
    2039.0
    >>> device("h300")
    Traceback (most recent call last):
    ...
    ValueError: device must be one of ['a100-40gb', 'a100-80gb', 'a10g', 'b200', 'h100-pcie', 'h100-sxm', 'h200', 'l4', 'l40s'], got 'h300'
    """
    return slug if isinstance(slug, Device) else _lookup(DEVICES, "device", slug)


def link(slug: str | Link) -> Link:
    """The :class:`Link` named ``slug`` (a :class:`Link` passes through unchanged).

    >>> round(link("pcie4").bandwidth / 1e9, 1)
    31.5
    """
    return slug if isinstance(slug, Link) else _lookup(LINKS, "link", slug)
