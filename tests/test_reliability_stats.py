"""Pass 1 and pass 2 of the text pipeline on data that defeats naive formulas:
large nearly-constant counts (cancellation), counts near the limits of
int32 and float64 (overflow)."""

from __future__ import annotations

import subprocess
import sys
from fractions import Fraction

import numpy as np
import pytest
import scipy.sparse as sp

from spca.text import candidate_covariance, word_statistics, write_uci


def exact_covariance(C: np.ndarray) -> np.ndarray:
    """Population covariance of integer columns, exactly (fractions), rounded once."""
    rows = [[int(v) for v in r] for r in C]
    D, k = C.shape
    sums = [sum(r[i] for r in rows) for i in range(k)]
    out = np.empty((k, k))
    for i in range(k):
        for j in range(i, k):
            g = sum(r[i] * r[j] for r in rows)
            out[i, j] = out[j, i] = float(Fraction(g * D - sums[i] * sums[j], D * D))
    return out


def shifted_corpus(seed: int = 0, D: int = 200) -> np.ndarray:
    """Columns ``1e8 + b``, ``1e9 + b``, ``2e9 + b`` (every document) and two
    ordinary sparse words."""
    rng = np.random.default_rng(seed)
    b = rng.integers(0, 5, size=(D, 3))
    big = np.array([1e8, 1e9, 2e9]) + b
    sparse = rng.integers(0, 2, size=(D, 2)) * rng.integers(1, 6, size=(D, 2))
    return np.column_stack([big, sparse]).astype(np.float64)


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("chunk_size", [7, 1 << 20])
def test_pass2_is_accurate_on_large_nearly_constant_counts(seed, chunk_size):
    C = shifted_corpus(seed)
    ref = exact_covariance(C)
    words = [4, 0, 3, 2, 1]  # any order
    cov = candidate_covariance(sp.csr_array(C), words, chunk_size=chunk_size)
    ref = ref[np.ix_(words, words)]
    sd = np.sqrt(np.diag(ref))
    assert np.all(np.abs(cov - ref) <= 1e-8 * np.outer(sd, sd))
    np.testing.assert_array_equal(cov, cov.T)
    stats = word_statistics(sp.csr_array(C))
    np.testing.assert_allclose(np.diag(cov), stats.variance[words], rtol=1e-8)


def test_pass2_constant_word_has_zero_variance_and_covariance():
    C = shifted_corpus(3)
    C[:, 1] = 1e9 + 7  # the same in every document
    cov = candidate_covariance(sp.csr_array(C), [0, 1, 2, 3])
    assert np.all(cov[1] == 0) and np.all(cov[:, 1] == 0)


def test_pass2_with_normalisation_matches_the_dense_formula():
    # a shifted word under l1 normalisation: the accurate rows see the same
    # transformed values as the kernel
    C = shifted_corpus(4)
    X = C / C.sum(axis=1, keepdims=True)
    ref = np.cov(X.T, bias=True)
    cov = candidate_covariance(sp.csr_array(C), np.arange(5), normalize="l1")
    sd = np.sqrt(np.diag(ref))
    assert np.all(np.abs(cov - ref) <= 1e-6 * np.outer(sd, sd))


def test_topics_cli_finds_the_words_of_large_counts(tmp_path):
    # words 0 and 1: 1e8 + the same spread, far the largest (co)variance;
    # with G / D - mean mean' their variances came out negative (-4, -6) and
    # two other words were printed
    rng = np.random.default_rng(5)
    D = 200
    z = rng.integers(0, 4, D)
    C = np.column_stack([1e8 + 3 * z + rng.integers(0, 2, D), 1e8 + 3 * z,
                         rng.integers(0, 3, (D, 4))]).astype(np.int64)
    docword, vocab = tmp_path / "docword.big.txt", tmp_path / "vocab.big.txt"
    write_uci(docword, vocab, sp.csr_array(C), [f"w{i}" for i in range(6)])
    proc = subprocess.run(
        [sys.executable, "-m", "spca", "topics", str(docword), str(vocab), "--components",
         "1", "--cardinality", "2", "--format", "csv"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    words = {line.split(",")[2] for line in proc.stdout.strip().splitlines()[1:]}
    assert words == {"w0", "w1"}


def test_uci_count_at_the_int32_limit_gives_its_topic(tmp_path):
    rng = np.random.default_rng(0)
    C = sp.random(191, 12, density=0.3, random_state=rng,
                  data_rvs=lambda n: rng.integers(1, 5, n)).tocsr()
    C.data[5] = 2147483647
    big = int(C.indices[5])
    docword, vocab = tmp_path / "docword.t.txt", tmp_path / "vocab.t.txt"
    write_uci(docword, vocab, C, [f"w{i}" for i in range(12)])
    proc = subprocess.run(
        [sys.executable, "-m", "spca", "topics", str(docword), str(vocab), "--components",
         "2", "--cardinality", "2", "--format", "csv"],
        capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = proc.stdout.strip().splitlines()[1:]
    assert rows, "empty table"
    assert rows[0].split(",")[2] == f"w{big}"  # the word of the huge count comes first
    stats = word_statistics(docword)
    assert np.isclose(stats.variance[big], np.var(C.toarray()[:, big].astype(float)))


def test_sparse_pca_keeps_features_of_very_different_scales():
    # the deflation's variance floor is per feature: a feature 1e12 times
    # smaller than another one still has variance left
    import spca

    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    z1, z2 = rng.standard_normal((2, 200))
    X = np.column_stack([1e6 * z1, z1 + 0.1 * z2, z2])
    est = spca.SparsePCA(n_components=2, cardinality=1).fit(X)
    assert est.components_.shape == (2, 3)
    assert np.count_nonzero(est.components_[1]) == 1
