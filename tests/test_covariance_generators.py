"""The seeded covariance generators of ``spca.datasets`` (the hard family's one)."""

from __future__ import annotations

import numpy as np
import pytest

import spca
from spca.datasets import make_correlation_few_samples


def test_correlation_few_samples_is_a_correlation_matrix():
    R = make_correlation_few_samples(150, 20, rank=3, random_state=4)
    assert R.shape == (150, 150)
    assert np.array_equal(R, R.T)
    assert np.allclose(np.diag(R), 1.0)
    w = np.linalg.eigvalsh(R)
    assert w[0] > -1e-10
    # centred data with m = 20 rows: rank m - 1
    assert np.sum(w > 1e-8 * w[-1]) == 19
    assert np.abs(R).max() <= 1 + 1e-12


def test_correlation_few_samples_is_seeded():
    a = make_correlation_few_samples(60, random_state=1)
    assert np.array_equal(a, make_correlation_few_samples(60, random_state=1))
    assert not np.allclose(a, make_correlation_few_samples(60, random_state=2))


def test_modules_are_correlated_and_nothing_is_eliminated():
    # one strong factor on a module of 10 features among 200: the module's
    # correlations stand out from the 1/sqrt(m) noise of the rest
    n, m = 200, 64
    R = make_correlation_few_samples(n, m, rank=1, module_size=10, noise=0.3, random_state=0)
    top = np.argsort(-np.abs(np.linalg.eigh(R)[1][:, -1]))[:10]
    inside = np.abs(R[np.ix_(top, top)][~np.eye(10, dtype=bool)]).mean()
    outside = np.abs(R[np.ix_(np.setdiff1d(np.arange(n), top),
                              np.setdiff1d(np.arange(n), top))]).mean()
    assert inside > 0.5 and outside < 2 / np.sqrt(m)
    # unit diagonal: Theorem 1 keeps every feature at any lam < 1
    res = spca.dspca_bca(R, 0.9)
    assert res.kept.size == n
    # pure noise (rank 0) is still a correlation matrix
    R0 = make_correlation_few_samples(30, 10, rank=0, random_state=0)
    assert np.allclose(np.diag(R0), 1.0)


def test_correlation_few_samples_errors():
    with pytest.raises(ValueError, match="n_samples must be >= 2, got 1"):
        make_correlation_few_samples(10, 1)
    with pytest.raises(ValueError, match="rank must be >= 0, got -1"):
        make_correlation_few_samples(10, rank=-1)
    with pytest.raises(ValueError, match="module_size must be <= n_features = 10, got 11"):
        make_correlation_few_samples(10, module_size=11)
    with pytest.raises(ValueError, match="noise must be > 0"):
        make_correlation_few_samples(10, noise=0.0)
    with pytest.raises(TypeError, match="n_features must be an integer"):
        make_correlation_few_samples(10.5)
