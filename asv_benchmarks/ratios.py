"""Speed ratios of spca's paths against their baselines, measured in one process.

Usage::

    python asv_benchmarks/ratios.py [--quick] [--first-order-sizes 40 100 200]
                                    [--max-first-order-seconds 60]

Every pair runs on the same input in this process, one after the other, and
the table prints ``baseline seconds / spca seconds``.  Sections:

1. ``dspca_bca`` vs ``dspca_first_order`` to the same certified relative gap
   (1e-3); the first-order method is capped in time, and a capped run makes
   the ratio a lower bound (marked ``>=``).
2. ``dspca_bca`` (tol 1e-6) vs cvxpy + Clarabel (interior point) at n = 40, 80.
3. ``dspca_bca`` (tol 1e-4) vs cvxpy + SCS at n = 160 (SCS certifies no gap;
   its objective is shown against BCA's bounds).
4. ``dspca_bca`` (tol 1e-6) vs ``numpy.linalg.eigh`` of the same matrix (the
   cost of ordinary PCA) at n = 500, 1000.
5. Corpus to 5 sparse components of 5 words (``spca.text.sparse_topics``) vs
   scikit-learn's ``TruncatedSVD(n_components=5)`` on the bundled NYT sample.

lam is half the largest off-diagonal ``|Sigma_ij|`` (Gaussian ``F'F / n`` and
spiked ``u u' + V V' / m`` families, seed 0).  BLAS is limited to one thread
(threadpoolctl) so that both sides of a ratio run alike.
"""

from __future__ import annotations

import argparse
import subprocess
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import spca
from spca.datasets import load_nytimes_sample, make_gaussian_covariance, make_spiked_covariance


def _problem(family: str, n: int) -> tuple[np.ndarray, float]:
    if family == "gaussian":
        S = make_gaussian_covariance(n, random_state=0)
    else:
        S, _ = make_spiked_covariance(n, random_state=0)
    return S, 0.5 * float(np.abs(S - np.diag(np.diag(S))).max())


def _timed(fn, repeat: int = 1):
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t0)
    return best, out


def _bca(S, lam, tol):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        return spca.dspca_bca(S, lam, tol=tol)


def _row(rows, what, n, base_s, ours_s, note="", lower_bound=False):
    ratio = base_s / ours_s if ours_s > 0 else np.inf
    rows.append((what, n, base_s, ours_s, (">=" if lower_bound else "") + f"{ratio:.3g}", note))


def first_order(rows, sizes, cap):
    for family in ("gaussian", "spiked"):
        for n in sizes:
            S, lam = _problem(family, n)
            ours_s, ours = _timed(lambda S=S, lam=lam: _bca(S, lam, 1e-3), repeat=3)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", spca.ConvergenceWarning)
                base_s, base = _timed(lambda S=S, lam=lam: spca.dspca_first_order(
                    S, lam, tol=1e-3, max_time=cap))
            capped = not base.converged
            _row(rows, f"first-order / BCA ({family})", n, base_s, ours_s,
                 f"gaps {base.gap:.1e} / {ours.gap:.1e}", lower_bound=capped)


def cvxpy_rows(rows, quick):
    try:
        import cvxpy as cp
    except ImportError:
        rows.append(("cvxpy", "-", np.nan, np.nan, "-", "cvxpy not installed: skipped"))
        return

    def solve(S, lam, solver):
        n = S.shape[0]
        Z = cp.Variable((n, n), PSD=True)
        prob = cp.Problem(cp.Maximize(cp.trace(S @ Z) - lam * cp.sum(cp.abs(Z))),
                          [cp.trace(Z) == 1])
        prob.solve(solver=solver)
        return prob.value

    for n in ([40] if quick else [40, 80]):
        S, lam = _problem("gaussian", n)
        ours_s, ours = _timed(lambda S=S, lam=lam: _bca(S, lam, 1e-6), repeat=3)
        base_s, val = _timed(lambda S=S, lam=lam: solve(S, lam, cp.CLARABEL))
        _row(rows, "cvxpy+Clarabel / BCA (gaussian)", n, base_s, ours_s,
             f"Clarabel {val:.8g}, BCA [{ours.objective:.8g}, {ours.upper_bound:.8g}]")
    n = 80 if quick else 160
    S, lam = _problem("gaussian", n)
    ours_s, ours = _timed(lambda: _bca(S, lam, 1e-4), repeat=3)
    base_s, val = _timed(lambda: solve(S, lam, cp.SCS))
    _row(rows, "cvxpy+SCS / BCA tol 1e-4 (gaussian)", n, base_s, ours_s,
         f"SCS {val:.8g}, BCA [{ours.objective:.8g}, {ours.upper_bound:.8g}]")


def eigh_rows(rows, quick):
    for family in ("gaussian", "spiked"):
        for n in ([300] if quick else [500, 1000]):
            S, lam = _problem(family, n)
            ours_s, ours = _timed(lambda S=S, lam=lam: _bca(S, lam, 1e-6))
            base_s, _ = _timed(lambda S=S: np.linalg.eigh(S), repeat=3)
            _row(rows, f"eigh / BCA ({family})", n, base_s, ours_s,
                 f"BCA gap {ours.gap:.1e}; < 1 means BCA is slower")


def corpus_rows(rows):
    try:
        from sklearn.decomposition import TruncatedSVD
    except ImportError:
        rows.append(("TruncatedSVD", "-", np.nan, np.nan, "-", "scikit-learn missing: skipped"))
        return
    corpus = load_nytimes_sample()
    ours_s, res = _timed(lambda: spca.text.sparse_topics(corpus, n_components=5,
                                                         cardinality=5), repeat=3)
    base_s, _ = _timed(lambda: TruncatedSVD(n_components=5, random_state=0).fit(
        corpus.counts), repeat=3)
    _row(rows, "TruncatedSVD(5) / topics (NYT sample)", f"{corpus.n_docs}x{corpus.n_words}",
         base_s, ours_s, f"topic words: {', '.join(res.topics[0].words)}; ...")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (about 30 s)")
    parser.add_argument("--first-order-sizes", type=int, nargs="+", default=None,
                        help="n for section 1 (default 40 100 200; quick: 40)")
    parser.add_argument("--max-first-order-seconds", type=float, default=60.0,
                        help="time cap of each first-order run (default 60)")
    args = parser.parse_args(argv)
    sizes = args.first_order_sizes or ([40] if args.quick else [40, 100, 200])
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True,
                                text=True, cwd=Path(__file__).parent).stdout.strip()
    except OSError:
        commit = "?"
    print(f"spca {spca.__version__} (commit {commit or '?'}), numpy {np.__version__}")
    rows: list[tuple] = []
    with threadpool_limits(1):
        first_order(rows, sizes, 5.0 if args.quick else args.max_first_order_seconds)
        cvxpy_rows(rows, args.quick)
        eigh_rows(rows, args.quick)
        corpus_rows(rows)
    print(f"{'comparison':40s} {'n':>12s} {'baseline s':>11s} {'spca s':>9s} "
          f"{'ratio':>8s}  note")
    for what, n, b, o, r, note in rows:
        print(f"{what:40s} {str(n):>12s} {b:11.4g} {o:9.4g} {r:>8s}  {note}")


if __name__ == "__main__":
    main()
