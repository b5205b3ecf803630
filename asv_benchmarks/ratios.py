"""Speed ratios of spca's paths against their baselines, measured in one process.

Usage::

    python asv_benchmarks/ratios.py [--quick] [--first-order-sizes 40 100 200 500 1000]
                                    [--max-first-order-seconds 60] [--large-docs 300000]

Every pair runs on the same input in this process, one after the other, and
the table prints ``baseline seconds / spca seconds``.  Sections:

1. ``dspca_bca`` vs ``dspca_first_order`` to the same certified relative gap
   (1e-3); the first-order method is capped in time, and a capped run makes
   the ratio a lower bound (marked ``>=``).
2. ``dspca_bca`` (tol 1e-6) vs cvxpy + Clarabel (interior point) at n = 40, 80.
3. ``dspca_bca`` (tol 1e-4) vs cvxpy + SCS at n = 160 (SCS certifies no gap;
   its objective is shown against BCA's bounds).
4. ``dspca_bca`` (tol 1e-6) vs ``numpy.linalg.eigh`` of the same matrix (the
   cost of ordinary PCA) at n = 500, 1000, then the exponent of ``dspca_bca``'s
   time in n, fitted by least squares in log-log over n = 200 .. 1000.
5. Corpus to 5 sparse components of 5 words (``spca.text.sparse_topics``) vs
   scikit-learn's ``TruncatedSVD(n_components=5)`` of the same in-memory
   count matrix, on the bundled NYT sample and on a synthetic corpus of
   NYTimes size (300,000 x 102,660, about 70 million nonzeros).
6. ``spca.SparsePCA`` (3 components of 8 features) vs scikit-learn's
   ``SparsePCA`` at the ``alpha`` giving the nearest number of nonzeros, on
   data with three planted sparse factors; the explained variance of both
   (:func:`spca.explained_variance`) is shown.

A full run takes about 15 minutes (the first-order method is capped at 60 s
per size and runs up to n = 1000, where its ratio is a lower bound).

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


def slope_rows(rows, quick):
    """Fitted exponent of dspca_bca's time in n (least squares in log-log)."""
    sizes = [100, 200, 300] if quick else [200, 300, 500, 700, 1000]
    for family in ("gaussian", "spiked"):
        times = []
        for n in sizes:
            S, lam = _problem(family, n)
            t, res = _timed(lambda S=S, lam=lam: _bca(S, lam, 1e-6))
            times.append(t)
        slope = float(np.polyfit(np.log(sizes), np.log(times), 1)[0])
        rows.append((f"BCA time exponent ({family})", f"{sizes[0]}-{sizes[-1]}", np.nan,
                     np.nan, f"n^{slope:.2f}",
                     "seconds " + ", ".join(f"{t:.3g}" for t in times)))


def corpus_rows(rows, quick, large_docs):
    try:
        from sklearn.decomposition import TruncatedSVD
    except ImportError:
        rows.append(("TruncatedSVD", "-", np.nan, np.nan, "-", "scikit-learn missing: skipped"))
        return

    def compare(label, corpus, repeat):
        X = corpus.counts
        ours_s, res = _timed(lambda: spca.text.sparse_topics(corpus, n_components=5,
                                                             cardinality=5), repeat=repeat)
        base_s, _ = _timed(lambda: TruncatedSVD(n_components=5, random_state=0).fit(X),
                           repeat=repeat)
        t = res.timings
        _row(rows, f"TruncatedSVD(5) / topics ({label})", f"{X.shape[0]}x{X.shape[1]}",
             base_s, ours_s,
             f"pass1 {t['pass1']:.3g} s, pass2 {t['pass2']:.3g} s ({res.n_candidates} "
             f"words), solve {t['solve']:.3g} s; 1st topic: {', '.join(res.topics[0].words)}")

    compare("NYT sample", load_nytimes_sample(), 3)
    if large_docs:
        from spca.datasets import make_synthetic_corpus

        corpus = make_synthetic_corpus(large_docs, 102_660, random_state=0)
        compare(f"synthetic, {corpus.counts.nnz:.3g} nonzeros", corpus, 1)


def sparsepca_rows(rows, quick):
    """spca.SparsePCA vs scikit-learn's SparsePCA at about the same number of nonzeros."""
    try:
        from sklearn.decomposition import SparsePCA as SkSparsePCA
    except ImportError:
        rows.append(("SparsePCA", "-", np.nan, np.nan, "-", "scikit-learn missing: skipped"))
        return
    n_samples, n_features = (300, 50) if quick else (1000, 200)
    rng = np.random.default_rng(0)
    # three planted sparse factors of 8 features each, plus isotropic noise
    V = np.zeros((3, n_features))
    for t in range(3):
        V[t, 8 * t:8 * (t + 1)] = rng.choice([-1.0, 1.0], size=8) / np.sqrt(8)
    X = (rng.standard_normal((n_samples, 3)) * [3.0, 2.5, 2.0]) @ V
    X += rng.standard_normal((n_samples, n_features))
    Sigma = np.cov(X, rowvar=False, bias=True)
    ours_s, est = _timed(lambda: spca.SparsePCA(3, cardinality=8).fit(X))
    nnz = int(np.count_nonzero(est.components_))
    # The alpha giving about as many nonzeros is searched on a grid (not timed);
    # the baseline time is one fit at that alpha.
    best = None
    for alpha in np.geomspace(0.05, 20, 16):
        sk = SkSparsePCA(3, alpha=float(alpha), random_state=0).fit(X)
        k = int(np.count_nonzero(sk.components_))
        if best is None or abs(k - nnz) < abs(best[1] - nnz):
            best = (float(alpha), k)
    alpha, k_sk = best
    base_s, sk = _timed(lambda: SkSparsePCA(3, alpha=alpha, random_state=0).fit(X))
    ev_ours = spca.explained_variance(Sigma, est.components_).cumulative[-1]
    ev_sk = spca.explained_variance(Sigma, sk.components_).cumulative[-1]
    _row(rows, "sklearn SparsePCA / SparsePCA", f"{n_samples}x{n_features}", base_s, ours_s,
         f"nonzeros {k_sk} vs {nnz} (alpha={alpha:.3g}); explained variance "
         f"{ev_sk:.4g} vs {ev_ours:.4g}")


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small sizes only (about 30 s)")
    parser.add_argument("--first-order-sizes", type=int, nargs="+", default=None,
                        help="n for section 1 (default 40 100 200; quick: 40)")
    parser.add_argument("--max-first-order-seconds", type=float, default=60.0,
                        help="time cap of each first-order run (default 60)")
    parser.add_argument("--large-docs", type=int, default=300_000, metavar="D",
                        help="documents of the synthetic corpus of section 5 (default "
                             "300000, NYTimes size, about 70 million nonzeros and 2 GB; "
                             "0 skips it; --quick skips it)")
    args = parser.parse_args(argv)
    sizes = args.first_order_sizes or ([40] if args.quick else [40, 100, 200, 500, 1000])
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
        slope_rows(rows, args.quick)
        corpus_rows(rows, args.quick, args.large_docs if not args.quick else 0)
        sparsepca_rows(rows, args.quick)
    print(f"{'comparison':40s} {'n':>12s} {'baseline s':>11s} {'spca s':>9s} "
          f"{'ratio':>8s}  note")
    for what, n, b, o, r, note in rows:
        print(f"{what:40s} {str(n):>12s} {b:11.4g} {o:9.4g} {r:>8s}  {note}")


if __name__ == "__main__":
    main()
