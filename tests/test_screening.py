"""Theorem 1 (safe feature elimination) checked by brute force."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spca


def cardinality_problem(Sigma, lam):
    """psi = max_x x'Sigma x - lam ||x||_0 over unit x, by enumerating supports.

    Returns psi and the list of optimal supports (within 1e-12 relative).
    """
    n = Sigma.shape[0]
    values = {}
    for k in range(1, n + 1):
        for S in itertools.combinations(range(n), k):
            values[S] = np.linalg.eigvalsh(Sigma[np.ix_(S, S)])[-1] - lam * k
    psi = max(values.values())
    tol = 1e-12 * max(1.0, abs(psi))
    return psi, [S for S, v in values.items() if v >= psi - tol]


@settings(max_examples=60)
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 8),
    m=st.integers(1, 10),
    quantile=st.floats(0.0, 1.0),
)
def test_no_eliminated_feature_in_an_optimal_support(seed, n, m, quantile):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n)) * rng.uniform(0.1, 2.0, size=n)
    Sigma = A.T @ A
    lam = float(np.quantile(np.diag(Sigma), quantile)) * 0.999
    kept = spca.safe_feature_elimination(np.diag(Sigma), lam)
    psi, optimal = cardinality_problem(Sigma, lam)
    if psi > 0:  # otherwise x = 0 is as good and there is no pattern to keep
        assert any(set(S) <= set(kept) for S in optimal)
        for S in optimal:
            assert set(S) <= set(kept), (S, kept)
    # the reduced problem has the same optimum
    if kept.size:
        psi_red, _ = cardinality_problem(Sigma[np.ix_(kept, kept)], lam)
        assert max(psi_red, 0.0) == pytest.approx(max(psi, 0.0), rel=1e-12, abs=1e-12)
    else:
        assert psi <= 0


def test_elimination_rule_and_ties():
    v = np.array([3.0, 1.0, 0.5, 1.0 + 1e-12, 0.0])
    np.testing.assert_array_equal(spca.safe_feature_elimination(v, 1.0), [0, 3])
    # lam = 0 keeps every feature with positive variance
    np.testing.assert_array_equal(spca.safe_feature_elimination(v, 0.0), [0, 1, 2, 3])
    assert spca.safe_feature_elimination(v, 5.0).size == 0
    assert spca.safe_feature_elimination(v, 1.0).dtype == np.intp


@pytest.mark.parametrize(
    "variances, lam, exc, match",
    [
        ([1.0, -0.5], 0.1, ValueError, r"variances must be >= 0, got -0\.5 at index 1"),
        ([1.0, np.nan], 0.1, ValueError, r"variances must be finite, got nan at index 1"),
        ([[1.0]], 0.1, ValueError, r"variances must be 1-D, got an array of shape \(1, 1\)"),
        (["a"], 0.1, TypeError, r"variances must be real numbers"),
        ([1.0], -1.0, ValueError, r"lam must be >= 0, got -1\.0"),
        ([1.0], np.inf, ValueError, r"lam must be finite, got inf"),
        ([1.0], "1", TypeError, r"lam must be a real number, got '1'"),
    ],
)
def test_bad_input(variances, lam, exc, match):
    with pytest.raises(exc, match=match):
        spca.safe_feature_elimination(variances, lam)
