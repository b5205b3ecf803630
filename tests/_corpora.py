"""Small corpora and comparisons shared by the Parquet and Dask tests
(importable via pytest's pythonpath)."""

import numpy as np
import scipy.sparse as sp

from spca.text import write_uci


def counts_with_edge_cases(seed: int = 0, d: int = 90, w: int = 31) -> np.ndarray:
    """A count matrix with leading, inner and trailing empty documents, an absent
    word, a word in every non-empty document and one long document."""
    rng = np.random.default_rng(seed)
    C = rng.poisson(0.4, size=(d, w)) * rng.integers(1, 30, size=(d, w))
    C[:, 4] = 0
    C[:, 7] = rng.integers(1, 6, size=d)
    C[:3] = 0
    C[d // 2:d // 2 + 4] = 0
    C[-3:] = 0
    C[10] = rng.integers(1, 9, size=w)
    C[10, 4] = 0
    return C


def write_counts(path, C: np.ndarray) -> None:
    """Write a dense count matrix as a UCI docword file (gzip if ``.gz``)."""
    write_uci(path, None, sp.csr_array(C))


def assert_stats_equal(a, b, msg: str = "") -> None:
    """Integers exactly, floats to 1e-12 relative (zeros exactly)."""
    assert (a.n_docs, a.n_words, a.nnz) == (b.n_docs, b.n_words, b.nnz), msg
    np.testing.assert_array_equal(a.document_frequency, b.document_frequency, err_msg=msg)
    np.testing.assert_allclose(a.mean, b.mean, rtol=1e-12, atol=0, err_msg=msg)
    np.testing.assert_allclose(a.variance, b.variance, rtol=1e-12, atol=0, err_msg=msg)


def assert_cov_equal(a: np.ndarray, b: np.ndarray, msg: str = "") -> None:
    """Covariances to 1e-12 of their scale (off-diagonal entries near zero come from
    the cancellation ``G / D - mean mean'``)."""
    scale = np.abs(b).max()
    np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12 * scale, err_msg=msg)
