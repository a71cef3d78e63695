"""The message sizes shared by the tests of lib.measure.fit and lib.measure.report (tests/unit/lib/measure)."""

from __future__ import annotations

import numpy as np

from lib.units import KB, MB

SIZES = np.array([1 * KB, 16 * KB, 256 * KB, 4 * MB, 64 * MB])
