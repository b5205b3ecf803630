"""Import the helper modules that live next to the benchmark package.

``baselines.py`` and ``hard_problems.py`` sit in ``asv_benchmarks/`` (so
that ``ratios.py`` and the tests use them too); they are loaded by path, so
that the benchmarks do not depend on how asv sets ``sys.path``.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

_DIR = Path(__file__).resolve().parents[1]


def load(name: str):
    """The module ``asv_benchmarks/<name>.py`` (imported once)."""
    key = f"spca_asv_{name}"
    if key not in sys.modules:
        spec = importlib.util.spec_from_file_location(key, _DIR / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[key] = module
        spec.loader.exec_module(module)
    return sys.modules[key]
