"""The k-sparse baselines of the benchmarks (``asv_benchmarks/baselines.py``).

They are not part of the package, but the ratio report and the exact-k
tests compare spca against them, so they are checked here: exactly ``k``
features, unit loadings that are the best on their support, planted
supports recovered, and GPower equal to brute force where it should be.
"""

import importlib.util
import itertools
from pathlib import Path

import numpy as np
import pytest

from spca.datasets import load_pitprops, make_gaussian_covariance, make_spiked_covariance

_PATH = Path(__file__).resolve().parents[1] / "asv_benchmarks" / "baselines.py"
_spec = importlib.util.spec_from_file_location("spca_bench_baselines", _PATH)
baselines = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(baselines)

FAST = [baselines.forward_greedy, baselines.truncated_power, baselines.gpower_l0]


def brute_force(Sigma, k):
    """The k-sparse optimum max lambda_max(Sigma_SS) over all |S| = k, and its support."""
    best, arg = -np.inf, None
    for S in itertools.combinations(range(Sigma.shape[0]), k):
        v = np.linalg.eigvalsh(Sigma[np.ix_(S, S)])[-1]
        if v > best:
            best, arg = v, S
    return best, np.array(arg)


def check_result(Sigma, k, res):
    n = Sigma.shape[0]
    assert res.support.size == min(k, n)
    assert np.all(np.diff(res.support) > 0)
    assert np.isclose(np.linalg.norm(res.loadings), 1.0)
    off = np.setdiff1d(np.arange(n), res.support)
    assert np.all(res.loadings[off] == 0)
    assert np.isclose(res.loadings @ Sigma @ res.loadings, res.variance, rtol=1e-10)
    # the loadings are the best on their support: the block's top eigenvalue
    block = Sigma[np.ix_(res.support, res.support)]
    assert np.isclose(res.variance, np.linalg.eigvalsh(block)[-1], rtol=1e-10)


@pytest.mark.parametrize("method", FAST, ids=lambda f: f.__name__)
@pytest.mark.parametrize("k", [1, 3, 7, 15])
def test_exact_k_unit_loadings_below_optimum(method, k):
    Sigma = make_gaussian_covariance(12, 40, random_state=3)
    before = Sigma.copy()
    res = method(Sigma, k)
    assert np.array_equal(Sigma, before)  # the input is not modified
    check_result(Sigma, k, res)
    best, _ = brute_force(Sigma, min(k, 12))
    assert res.variance <= best * (1 + 1e-12)


@pytest.mark.parametrize("seed", [1, 2])
def test_all_recover_a_planted_support(seed):
    Sigma, u = make_spiked_covariance(40, cardinality=5, strength=4.0, random_state=seed)
    planted = np.flatnonzero(u)
    for method in [*FAST, baselines.sklearn_sparse_pca]:
        res = method(Sigma, 5)
        check_result(Sigma, 5, res)
        assert np.array_equal(res.support, planted), method.__name__


def test_gpower_matches_brute_force_on_pitprops():
    # Jeffers' 13 variables: every k is reached by some gamma, and the
    # refitted pattern is the exact k-sparse optimum.
    P = load_pitprops().correlation
    for k in range(1, 13):
        best, support = brute_force(P, k)
        res = baselines.gpower_l0(P, k)
        assert res.exact, k
        assert np.array_equal(res.support, support), k
        assert res.variance == pytest.approx(best, rel=1e-10)


def test_gpower_on_a_data_matrix():
    # A = centred samples / sqrt(m), so that A'A is the sample covariance
    rng = np.random.default_rng(0)
    m, n = 300, 25
    X = rng.standard_normal((m, n))
    X[:, :4] += 2.0 * rng.standard_normal((m, 1))
    X -= X.mean(axis=0)
    A = X / np.sqrt(m)
    Sigma = A.T @ A
    res = baselines.gpower_l0(Sigma, 4, A=A)
    check_result(Sigma, 4, res)
    assert np.array_equal(res.support, np.arange(4))
    with pytest.raises(ValueError, match="A must have 25 columns"):
        baselines.gpower_l0(Sigma, 4, A=A[:, :-1])


def test_gpower_keeps_top_k_when_the_pattern_jumps():
    # two identical features enter together: no gamma selects one of them
    # alone, so k = 1 comes from cutting the 2-feature pattern to its top entry
    Sigma = np.array([[2.0, 2.0, 0.3, 0.0],
                      [2.0, 2.0, 0.3, 0.0],
                      [0.3, 0.3, 1.0, 0.0],
                      [0.0, 0.0, 0.0, 0.5]])
    res = baselines.gpower_l0(Sigma, 1)
    assert not res.exact
    for k in (1, 2, 3, 4):
        res = baselines.gpower_l0(Sigma, k)
        check_result(Sigma, k, res)
        assert res.variance == pytest.approx(brute_force(Sigma, k)[0], rel=1e-10)


def test_sklearn_sparse_pca_matches_nonzeros():
    Sigma, _ = make_spiked_covariance(30, cardinality=6, strength=3.0, random_state=0)
    res = baselines.sklearn_sparse_pca(Sigma, 4)
    check_result(Sigma, 4, res)
    assert res.nnz == 4
    # the refit is the best on the same support: never less variance
    assert res.variance_as_returned <= res.variance * (1 + 1e-12)
    assert res.alpha > 0 and res.iterations >= 1


def test_factor_and_errors():
    Sigma = make_gaussian_covariance(6, 3, random_state=0)  # rank 3, PSD
    A = baselines.factor(Sigma)
    assert np.allclose(A.T @ A, Sigma, atol=1e-12)
    with pytest.raises(ValueError, match="k must be a positive integer, got 0"):
        baselines.gpower_l0(Sigma, 0)
    with pytest.raises(ValueError, match="square"):
        baselines.truncated_power(np.ones((3, 4)), 2)
    with pytest.raises(ValueError, match="Sigma is zero"):
        baselines.gpower_l0(np.zeros((3, 3)), 2)
