"""Suite-wide settings: hypothesis profiles and the book's nbval comparison rules.

No deadline: these machines are shared and noisy, and a deadline is a timing
assertion in disguise. In CI (``CI`` set) the examples are derandomized, so a
red run can be reproduced exactly; locally each run explores new examples.
What nbval compares, and why, is in :mod:`tools.notebooks.nbval_rules`.
"""

import os

from hypothesis import settings

pytest_plugins = ["tools.notebooks.nbval_rules"]

settings.register_profile("local", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "local")
