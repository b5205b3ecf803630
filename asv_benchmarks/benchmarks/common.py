"""Seeded benchmark problems, cached per process, and the thread limit.

Set ``SPCA_BENCH_XSLOW=1`` to include the largest sizes.

Every benchmark runs with one thread for BLAS and OpenMP (threadpoolctl, as
``ratios.py`` does), set when asv imports this module: with default threads
the timings depend on what else runs on the machine (the first-order baseline
at n = 80 took 167 s against 14 s with one thread on a busy 2-core machine, as
reported in issue 16).
``SPCA_BENCH_THREADS=N`` sets another limit; ``Threads.track_max_threads``
records the limit in force.
"""

from __future__ import annotations

import functools
import os

import numpy as np
from threadpoolctl import threadpool_info, threadpool_limits

import spca.text  # noqa: F401 - loads the OpenMP runtime of the pass-2 kernel before the limit
from spca.datasets import make_gaussian_covariance, make_spiked_covariance


def thread_limit() -> int:
    value = os.environ.get("SPCA_BENCH_THREADS", "1")
    try:
        limit = int(value)
    except ValueError:
        raise ValueError(f"SPCA_BENCH_THREADS must be a positive integer, got {value!r}") from None
    if limit < 1:
        raise ValueError(f"SPCA_BENCH_THREADS must be a positive integer, got {value!r}")
    return limit


# Libraries loaded later (e.g. by scikit-learn) read these; those already
# loaded (NumPy's BLAS, spca's OpenMP) are limited by threadpoolctl.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = str(thread_limit())
_LIMITS = threadpool_limits(limits=thread_limit())


class Threads:
    """The thread limit every benchmark of this suite runs under."""

    def track_max_threads(self):
        return max((lib["num_threads"] for lib in threadpool_info()), default=1)

SIZES = [50, 100, 200, 500, 1000]
FAMILIES = ["gaussian", "spiked"]
# lam as a fraction of the largest off-diagonal |Sigma_ij|: sparse and denser.
LAM_LEVELS = [0.5, 0.25]


def is_xslow() -> bool:
    return os.environ.get("SPCA_BENCH_XSLOW", "0") not in ("", "0")


# Combinations that take more than a minute per solve, the hard regime: at
# n = 500 and the denser lam both families have optima of rank in the
# hundreds. The sweeps alone end at max_sweeps=500 with a gap of about 2e-3;
# with the polish's alternating directions (spca/_admm.py) both are
# certified, in 95 and 97 s (one thread). asv solves once in each setup and
# once per benchmark method, eight solves per problem, about 25 minutes for
# the two. Only with SPCA_BENCH_XSLOW=1, so that
# `asv run --quick` finishes in under 15 minutes.
XSLOW_PROBLEMS = {("gaussian", 500, 0.25), ("spiked", 500, 0.25)}


@functools.cache
def _problem(family: str, n: int, level: float) -> tuple[np.ndarray, float]:
    if family == "gaussian":
        Sigma = make_gaussian_covariance(n, random_state=0)
    elif family == "spiked":
        Sigma, _ = make_spiked_covariance(n, random_state=0)
    else:  # pragma: no cover
        raise ValueError(family)
    off = np.abs(Sigma - np.diag(np.diag(Sigma))).max()
    return Sigma, float(level * off)


def problem(family: str, n: int, level: float) -> tuple[np.ndarray, float]:
    """Covariance of the family at size n and lam = level * max offdiag |Sigma_ij|.

    Raises NotImplementedError (asv: skipped) for the XSLOW_PROBLEMS unless
    SPCA_BENCH_XSLOW=1.
    """
    if (family, n, level) in XSLOW_PROBLEMS and not is_xslow():
        raise NotImplementedError("set SPCA_BENCH_XSLOW=1")
    return _problem(family, n, level)
