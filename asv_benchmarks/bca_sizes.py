"""Print n, sweeps, seconds and certified gap of dspca_bca across problem sizes.

Usage::

    python asv_benchmarks/bca_sizes.py [--sizes 50 100 200 300 500] [--tol 1e-6]

Both families of the paper's Figure 1 are run with lam = half the largest
off-diagonal |Sigma_ij|: Gaussian ``Sigma = F'F / n`` and spiked
``Sigma = u u' + V V' / m`` with card(u) = n / 10 and m = n.  Every number
printed is measured in this run; the seeds are fixed.
"""

from __future__ import annotations

import argparse
import platform
import time
import warnings

import numpy as np

import spca
from spca.datasets import make_gaussian_covariance, make_spiked_covariance


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 300, 500])
    parser.add_argument("--tol", type=float, default=1e-6, help="target relative gap")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    cpu = platform.processor() or platform.machine()
    print(f"spca {spca.__version__}, numpy {np.__version__}, {cpu}")
    print(f"{'family':9s} {'n':>5s} {'reduced':>7s} {'sweeps':>6s} {'seconds':>8s} "
          f"{'gap':>9s} {'conv':>5s} {'card':>4s}  eigh(s)")
    for n in args.sizes:
        for family in ("gaussian", "spiked"):
            if family == "gaussian":
                Sigma = make_gaussian_covariance(n, random_state=args.seed)
            else:
                Sigma, _ = make_spiked_covariance(n, random_state=args.seed)
            lam = 0.5 * np.abs(Sigma - np.diag(np.diag(Sigma))).max()
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", spca.ConvergenceWarning)
                res = spca.dspca_bca(Sigma, lam, tol=args.tol)
            seconds = time.perf_counter() - t0
            t0 = time.perf_counter()
            np.linalg.eigh(Sigma)
            t_eigh = time.perf_counter() - t0
            print(f"{family:9s} {n:5d} {res.reduced_size:7d} {res.n_sweeps:6d} {seconds:8.3f} "
                  f"{res.gap:9.2e} {str(res.converged):>5s} {res.support.size:4d}  {t_eigh:.3f}")


if __name__ == "__main__":
    main()
