"""Unit constants, so that readers never multiply by powers of ten by hand.

Introduced in chapter 2 (the time budget). Inside ``lib`` everything is SI:
seconds, bytes and bytes per second. Multiply to put a value in, divide to
take it out:

>>> from lib.units import GB, MB, ms, s
>>> bandwidth = 10 * GB / s
>>> transfer = 2 * MB / bandwidth
>>> round(transfer / ms, 6)
0.2

Decimal prefixes (``KB``, ``MB``, ``GB``, ``TB``) are powers of 1000, binary
ones (``KiB``, ``MiB``, ``GiB``) powers of 1024, and ``bit`` is one eighth
of a byte, so a 100 Gbit/s network port moves 12.5 GB/s:

>>> round(100 * Gbit / GB, 6)
12.5
"""

from __future__ import annotations

__all__ = [
    "s",
    "ms",
    "us",
    "ns",
    "B",
    "KB",
    "MB",
    "GB",
    "TB",
    "KiB",
    "MiB",
    "GiB",
    "bit",
    "Gbit",
    "GBps",
    "TFLOPS",
]

# Time, in seconds.
s = 1.0
ms = 1e-3
us = 1e-6
ns = 1e-9

# Size, in bytes.
B = 1.0
KB = 1e3
MB = 1e6
GB = 1e9
TB = 1e12
KiB = 1024.0
MiB = 1024.0**2
GiB = 1024.0**3
bit = 1 / 8
Gbit = 1e9 * bit

# Data rate, in bytes per second.
GBps = GB / s

# Arithmetic rate, in FLOP per second.
TFLOPS = 1e12
