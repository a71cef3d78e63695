"""Hypothesis settings for the whole suite.

No deadline: these machines are shared and noisy, and a deadline is a timing
assertion in disguise. In CI (``CI`` set) the examples are derandomized, so a
red run can be reproduced exactly; locally each run explores new examples.
"""

import os

from hypothesis import settings

settings.register_profile("local", deadline=None)
settings.register_profile("ci", deadline=None, derandomize=True)
settings.load_profile("ci" if os.environ.get("CI") else "local")
