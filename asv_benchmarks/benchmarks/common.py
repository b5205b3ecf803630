"""Seeded benchmark problems, cached per process.

Set ``SPCA_BENCH_XSLOW=1`` to include the largest sizes.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from spca.datasets import make_gaussian_covariance, make_spiked_covariance

SIZES = [50, 100, 200, 500, 1000]
FAMILIES = ["gaussian", "spiked"]
# lam as a fraction of the largest off-diagonal |Sigma_ij|: sparse and denser.
LAM_LEVELS = [0.5, 0.25]


def is_xslow() -> bool:
    return os.environ.get("SPCA_BENCH_XSLOW", "0") not in ("", "0")


@functools.cache
def problem(family: str, n: int, level: float) -> tuple[np.ndarray, float]:
    """Covariance of the family at size n and lam = level * max offdiag |Sigma_ij|."""
    if family == "gaussian":
        Sigma = make_gaussian_covariance(n, random_state=0)
    elif family == "spiked":
        Sigma, _ = make_spiked_covariance(n, random_state=0)
    else:  # pragma: no cover
        raise ValueError(family)
    off = np.abs(Sigma - np.diag(np.diag(Sigma))).max()
    return Sigma, float(level * off)
