"""Small problems (n <= 100) whose optimum may have high rank (issue 28, defect 8).

Times ``spca.dspca_bca`` with its default arguments on:

* ``tridiagonal`` -- 1 on the diagonal, 0.5 beside it (n = 40, 60, 80, 100),
  at ``lam`` in 0.05, 0.1, 0.2, 0.3, 0.45 (the optimum's rank grows to about
  0.8 n at ``lam = 0.2``);
* ``gaussian`` -- ``F'F / 2n`` for ``F`` a ``2n x n`` standard Gaussian matrix
  (n = 60, 100);
* ``spiked`` -- the sample covariance of 2n draws of ``N(0, I + 4 v v')``
  with ``v`` 10-sparse (n = 60, 100);
* ``pitprops`` -- :func:`spca.datasets.load_pitprops`;
* ``wine``, ``breast_cancer`` -- scikit-learn's sets, standardised, ``Z'Z / m``
  (skipped without scikit-learn);

the last five at ``lam`` = 0.1, 0.3 and 0.6 times the largest off-diagonal
entry.  Each line gives the seconds, the relative gap, whether the solve was
certified (``gap <= tol``, default ``tol``), the sweeps and which bounds won.
``--clarabel`` adds the time of cvxpy with Clarabel on the same problem (for
reference; about 2 s at n = 40, 52 s at n = 80 and 110 s at n = 100 on the
tridiagonal case at ``lam = 0.2``), for n up to ``--clarabel-max`` (default
60).  ``--interior-fallback N`` hands uncertified blocks of up to ``N``
features to the interior-point method for this run (the package's
``INTERIOR_FALLBACK`` is 60): with 100, the tridiagonal n = 80 at
``lam = 0.2`` was certified in 35 s (24 iterations of 0.7-0.9 s each, loaded
machine).

``--reference`` adds, for the cases of ``REFERENCE`` (the optimum by Clarabel,
stored), how far each side of the bracket is from it: ``lower-phi`` (the
primal ``objective`` minus phi) and ``upper-phi``.  At ce1083e
(default arguments), one BLAS thread, both sides were loose, not only the dual:

=========  =====  ==========  =========  =========
n          lam    lower-phi   upper-phi  seconds
=========  =====  ==========  =========  =========
80         0.2    -4.0e-5     +3.2e-5    7.0
80         0.1    -8.2e-5     +5.6e-4    3.7
100        0.2    -3.6e-5     +3.2e-5    12.7
100        0.1    -7.2e-5     +1.2e-4    5.9
=========  =====  ==========  =========  =========

More sweeps move the primal side only (n = 80, lam = 0.2: ``max_sweeps``
1,000 and 2,000 give ``lower-phi`` -1.7e-5 and -1.2e-5, ``upper-phi``
+3.2e-5 unchanged, the bound of the alternating-direction polish).

Run with one BLAS thread, on a quiet machine::

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/small_problems.py [--only tridiagonal]
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Iterator

import numpy as np

import spca
from spca import _bca
from spca.datasets import load_pitprops

TRIDIAGONAL_SIZES = (40, 60, 80, 100)
TRIDIAGONAL_LAMS = (0.05, 0.1, 0.2, 0.3, 0.45)
RANDOM_SIZES = (60, 100)
FRACTIONS = (0.1, 0.3, 0.6)
# phi of the tridiagonal family by cvxpy 1.9.3 + Clarabel 0.11.1 (default
# tolerances; 44-214 s each, one BLAS thread), keyed by (n, lam).  phi grows
# with n (a principal block's Z embeds): n = 100 is above n = 80 by 1.3e-8
# and 6.3e-8.
REFERENCE = {
    (80, 0.1): 1.4436692290378836,
    (80, 0.2): 1.1367420054715403,
    (100, 0.1): 1.443669292063759,
    (100, 0.2): 1.1367420184518657,
}


def tridiagonal(n: int, off: float = 0.5) -> np.ndarray:
    """1 on the diagonal, ``off`` beside it."""
    return np.eye(n) + off * (np.eye(n, k=1) + np.eye(n, k=-1))


def gaussian(n: int, seed: int = 0) -> np.ndarray:
    """Sample covariance of ``2 n`` standard Gaussian vectors."""
    F = np.random.default_rng(seed).standard_normal((2 * n, n))
    return F.T @ F / F.shape[0]


def spiked(n: int, seed: int = 0, strength: float = 4.0, nnz: int = 10) -> np.ndarray:
    """Sample covariance of ``2 n`` draws of ``N(0, I + strength v v')``, ``v``
    a unit vector with ``nnz`` equal entries."""
    rng = np.random.default_rng(seed)
    v = np.zeros(n)
    v[rng.choice(n, nnz, replace=False)] = 1.0 / np.sqrt(nnz)
    F = rng.standard_normal((2 * n, n)) + np.sqrt(strength) * rng.standard_normal((2 * n, 1)) * v
    return F.T @ F / F.shape[0]


def standardised(name: str) -> np.ndarray | None:
    """``Z'Z / m`` of a scikit-learn set standardised column-wise (``None``
    without scikit-learn)."""
    try:
        from sklearn import datasets
    except ImportError:
        return None
    X = getattr(datasets, f"load_{name}")().data
    Z = (X - X.mean(axis=0)) / X.std(axis=0)
    return Z.T @ Z / Z.shape[0]


def max_offdiag(S: np.ndarray) -> float:
    return float(np.abs(S - np.diag(np.diag(S))).max())


def cases(only: str | None = None) -> Iterator[tuple[str, np.ndarray, float]]:
    """``(label, Sigma, lam)`` for every case (of family ``only``, if given)."""
    if only in (None, "tridiagonal"):
        for n in TRIDIAGONAL_SIZES:
            for lam in TRIDIAGONAL_LAMS:
                yield f"tridiagonal n={n}", tridiagonal(n), lam
    others: list[tuple[str, np.ndarray | None]] = []
    if only in (None, "gaussian"):
        others += [(f"gaussian n={n}", gaussian(n)) for n in RANDOM_SIZES]
    if only in (None, "spiked"):
        others += [(f"spiked n={n}", spiked(n)) for n in RANDOM_SIZES]
    if only in (None, "pitprops"):
        others.append(("pitprops n=13", load_pitprops().correlation))
    for name, n in (("wine", 13), ("breast_cancer", 30)):
        if only in (None, name):
            others.append((f"{name} n={n}", standardised(name)))
    for label, S in others:
        if S is None:
            print(f"{label}: skipped (scikit-learn is not installed)")
            continue
        for frac in FRACTIONS:
            yield label, S, round(frac * max_offdiag(S), 6)


def clarabel_seconds(S: np.ndarray, lam: float) -> tuple[float, float]:
    """Seconds and optimal value of cvxpy with Clarabel on the relaxation."""
    import cvxpy as cp

    n = S.shape[0]
    Z = cp.Variable((n, n), PSD=True)
    prob = cp.Problem(cp.Maximize(cp.trace(S @ Z) - lam * cp.sum(cp.abs(Z))),
                      [cp.trace(Z) == 1])
    t0 = time.perf_counter()
    prob.solve(solver=cp.CLARABEL)
    return time.perf_counter() - t0, float(prob.value)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", help="one family (tridiagonal, gaussian, spiked, pitprops, "
                        "wine, breast_cancer)")
    parser.add_argument("--max-n", type=int, default=100, help="skip larger problems")
    parser.add_argument("--clarabel", action="store_true", help="time cvxpy + Clarabel too")
    parser.add_argument("--clarabel-max", type=int, default=60,
                        help="largest n for --clarabel (default 60)")
    parser.add_argument("--reference", action="store_true",
                        help="add lower-phi and upper-phi for the cases of REFERENCE")
    parser.add_argument("--interior-fallback", type=int, default=None, metavar="N",
                        help="finish uncertified blocks of up to N features by the "
                        "interior-point method in this run (default: the package's "
                        "INTERIOR_FALLBACK)")
    args = parser.parse_args(argv)
    if args.interior_fallback is not None and args.interior_fallback < 1:
        parser.error(f"--interior-fallback must be >= 1, got {args.interior_fallback}")
    saved = _bca.INTERIOR_FALLBACK
    if args.interior_fallback is not None:
        _bca.INTERIOR_FALLBACK = args.interior_fallback
    try:
        _run(args)
    finally:
        _bca.INTERIOR_FALLBACK = saved


def _run(args: argparse.Namespace) -> None:
    for label, S, lam in cases(args.only):
        if S.shape[0] > args.max_n:
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", spca.ConvergenceWarning)
            t0 = time.perf_counter()
            res = spca.dspca_bca(S, lam)
            seconds = time.perf_counter() - t0
        line = (f"{label:22s} lam={lam:<9g} {seconds:8.3f} s  gap={res.gap:.1e}  "
                f"certified={res.converged!s:5s}  sweeps={res.n_sweeps:3d}  "
                f"{res.primal} / {res.dual}")
        phi = REFERENCE.get((S.shape[0], lam)) if label.startswith("tridiagonal") else None
        if args.reference and phi is not None:
            line += (f"  lower-phi={res.objective - phi:+.1e}"
                     f"  upper-phi={res.upper_bound - phi:+.1e}")
        if args.clarabel and S.shape[0] <= args.clarabel_max:
            t_ref, _ = clarabel_seconds(S, lam)
            line += f"  clarabel={t_ref:.2f} s"
        print(line, flush=True)


if __name__ == "__main__":
    main()
