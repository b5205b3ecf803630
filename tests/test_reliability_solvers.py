"""Solver entry points on hostile arguments: feasible answers with valid
bounds, or a clear error naming the argument."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import spca
from spca import EmptyProblemWarning


def _sigma(n: int = 6, seed: int = 0) -> np.ndarray:
    F = np.random.default_rng(seed).standard_normal((3 * n, n))
    S = F.T @ F / (3 * n)
    return S / S.diagonal().max()


@pytest.mark.parametrize("solver", [spca.dspca_bca, spca.dspca_first_order])
@pytest.mark.parametrize("Sigma, lam", [(np.array([[2.0]]), 3.0),
                                        (_sigma(5), 1.5), (_sigma(4) * 7, 7.0)])
def test_no_elimination_with_lam_above_every_variance_is_feasible(solver, Sigma, lam):
    with pytest.warns(EmptyProblemWarning, match="single feature of largest variance"):
        res = solver(Sigma, lam, eliminate=False)
    Z = res.Z
    assert np.isclose(np.trace(Z), 1.0) and np.linalg.eigvalsh(Z)[0] >= -1e-12
    value = float(np.sum(Sigma * Z) - lam * np.abs(Z).sum())
    assert res.objective == pytest.approx(value)
    assert res.objective <= res.upper_bound + 1e-12
    # the optimum is max_i Sigma_ii - lam: no feasible Z does better
    best = float(Sigma.diagonal().max()) - lam
    assert res.objective == pytest.approx(best) and res.upper_bound == pytest.approx(best)
    rng = np.random.default_rng(1)
    for _ in range(20):
        v = rng.standard_normal(Sigma.shape[0])
        v /= np.linalg.norm(v)
        assert v @ Sigma @ v - lam * np.abs(v).sum() ** 2 <= res.upper_bound + 1e-12


_SOLVERS = [
    spca.dspca_bca, spca.dspca_first_order,
    lambda S, lam: spca.dspca_cardinality(S, 1).result,
    lambda S, lam: spca.sparse_components(S, 1, cardinality=1).components[0].result,
]


@pytest.mark.parametrize("solver", _SOLVERS)
@pytest.mark.parametrize("value", [1e308, 1.34e154, 1e151, 1e-300, 1e-295])
def test_entries_near_the_float_limits_are_refused_clearly(solver, value):
    with pytest.raises(ValueError, match=r"largest variance .* is outside \[1e-290, 1e\+150\]"):
        solver(np.array([[value, 0], [0, value / 3]]), value / 2)


@pytest.mark.parametrize("solver", _SOLVERS)
@pytest.mark.parametrize("c", [1e150, 1e-150, 1e-290])
def test_entries_at_the_limits_give_the_scaled_answer(solver, c):
    S = _sigma(6)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        r, r1 = solver(S * c, 0.3 * c), solver(S, 0.3)
    for a, b in ((r.objective, r1.objective), (r.upper_bound, r1.upper_bound)):
        assert np.isfinite(a) and a / c == pytest.approx(b, rel=1e-9)
    np.testing.assert_allclose(r.Z, r1.Z, atol=1e-9)


@pytest.mark.parametrize("kwargs, error, message", [
    ({"qp_finish": "no"}, TypeError, "qp_finish must be True or False, got 'no'"),
    ({"qp_finish": 1}, TypeError, "qp_finish must be True or False"),
    ({"verbose": ""}, TypeError, "verbose must be True or False, got ''"),
    ({"eliminate": 1}, TypeError, "eliminate must be True or False, got 1"),
    ({"tol": 1e-16}, ValueError, r"tol must be >= 1e-12"),
    ({"beta": 1e-300}, ValueError, r"beta must be >= 1e-20 x \(largest variance\)\^2"),
    ({"X0": np.eye(7)}, ValueError, r"X0 must have shape \(6, 6\) like Sigma, got \(7, 7\)"),
    ({"X0": np.eye(6) * (1 + 1j)}, TypeError, "X0 must hold real numbers"),
    ({"X0": np.diag([1.0, 1, 1, 1, 1, -1])}, ValueError, r"X0 must be positive semidefinite"),
    ({"X0": np.eye(6) - 0.3}, ValueError, r"X0 must be positive semidefinite, but has"),
])
def test_bad_options_are_named(kwargs, error, message):
    with pytest.raises(error, match=message):
        spca.dspca_bca(_sigma(6), 0.1, **kwargs)


def test_first_order_checks_verbose_too():
    with pytest.raises(TypeError, match="verbose must be True or False"):
        spca.dspca_first_order(_sigma(4), 0.1, verbose="yes")
    with pytest.raises(TypeError, match="qp_finish must be True or False"):
        spca.dspca_cardinality(_sigma(4), 2, qp_finish="no")
    with pytest.raises(TypeError, match="verbose must be True or False"):
        spca.dspca_cardinality(_sigma(4), 2, verbose=1)
    with pytest.raises(TypeError, match="verbose must be True or False"):
        spca.sparse_components(_sigma(4), 1, cardinality=2, verbose="")
    with pytest.raises(TypeError, match="qp_finish must be True or False"):
        spca.sparse_components(_sigma(4), 1, cardinality=2, qp_finish="no")


def test_an_indefinite_start_on_an_unsolved_feature_does_not_reach_the_result():
    S = _sigma(6)
    lam = float(np.sort(S.diagonal())[1])  # feature of smallest variance eliminated
    X0 = np.eye(6)
    X0[np.argmin(S.diagonal()), np.argmin(S.diagonal())] = -1.0
    with pytest.raises(ValueError, match="X0 must be positive semidefinite"):
        spca.dspca_bca(S, lam, X0=X0)
    res = spca.dspca_bca(S, lam)
    res2 = spca.dspca_bca(S, lam, X0=res)  # a result is a valid start
    assert np.linalg.eigvalsh(res2.X)[0] >= -1e-12


def test_the_smallest_accepted_tol_and_beta_work():
    S = _sigma(30, seed=3)
    res = spca.dspca_bca(S, 0.3, tol=1e-12)
    assert res.objective <= res.upper_bound
    res = spca.dspca_bca(S, 0.3, beta=1e-20)
    assert res.objective <= res.upper_bound and np.isfinite(res.objective)
