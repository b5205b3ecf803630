"""Shared test configuration: hypothesis profiles.

The deterministic profile is the default (CI); set
``SPCA_HYPOTHESIS_PROFILE=random`` for a nondeterministic, longer run.
"""

import os

from hypothesis import settings

settings.register_profile(
    "deterministic", derandomize=True, database=None, deadline=None, print_blob=True
)
settings.register_profile("random", deadline=None, max_examples=200, print_blob=True)
settings.load_profile(os.environ.get("SPCA_HYPOTHESIS_PROFILE", "deterministic"))
