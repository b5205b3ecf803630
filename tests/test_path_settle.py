"""Solves that settle for their working sets' certificate (issue 27).

A bracketing solve of the cardinality search, or a certificate probe, whose
working sets use up its sweeps returns the certificate of its best round
(``spca._bca._out_of_sweeps``) instead of one sweep over the whole block.
Its bounds are checked against Clarabel and converged solves; the search
that takes it, against a dense scan of ``phi(lam) + lam k``.
"""

import warnings

import numpy as np
import pytest
from _reference import sdp_value
from test_ksparse_wide import factor_covariance

import spca
from spca import _bca, _path
from spca._bca import ConvergenceWarning


def one_sweep(S, lam, settle):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ConvergenceWarning)
        return _bca._dspca_bca_checked(S, lam, tol=1e-6, max_sweeps=1, X0=None,
                                       max_qp_passes=5, qp_tol=1e-3, qp_finish=True,
                                       refine=False, settle=settle)


@pytest.mark.parametrize(("seed", "frac"), [(0, 0.3), (1, 0.15), (3, 0.4)])
def test_settled_solve_brackets_the_sdp_value(monkeypatch, seed, frac):
    pytest.importorskip("cvxpy")
    # (working sets of 12 features and more from 24 on, so that a block
    # small enough for Clarabel uses them)
    monkeypatch.setattr(_bca, "WS_MIN", 24)
    monkeypatch.setattr(_bca, "WS_START", 12)
    monkeypatch.setattr(_bca, "WS_GROW", 6)
    S = factor_covariance(seed, 50)
    before = S.copy()
    lam = frac * np.abs(S - np.diag(np.diag(S))).max()
    settled = one_sweep(S, lam, True)
    # the working sets' certificate, within the one sweep
    assert settled.dual == "working set" and settled.n_sweeps == 1
    assert not settled.converged
    # without settle the same solve ends in a sweep over the whole block
    assert one_sweep(S, lam, False).dual != "working set"
    phi = sdp_value(S, lam)
    assert settled.objective <= phi + 1e-6 * abs(phi)
    assert phi <= settled.upper_bound + 1e-6 * abs(phi)
    # the primal is the loadings' rank-one value
    x = settled.loadings
    assert settled.objective == pytest.approx(x @ S @ x - lam * np.abs(x).sum() ** 2,
                                              rel=1e-9)
    np.testing.assert_array_equal(S, before)


def jump_matrix(seed: int, n: int = 500, samples: int = 60, a: int = 19, b: int = 120,
                la: float = 0.95, lb: float = 0.7) -> np.ndarray:
    """Correlations of ``samples`` draws: a tight factor on ``a`` features, a
    looser one on the next ``b``, noise on the rest.  The relaxation's
    support jumps from about ``a`` to about ``b`` features as lam falls."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((samples, 2))
    L = np.zeros((2, n))
    L[0, :a] = la
    L[1, a:a + b] = lb
    X = F @ L + rng.standard_normal((samples, n)) * np.sqrt(1 - L.max(axis=0) ** 2)
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    return X.T @ X


def test_search_settles_inside_a_jump(monkeypatch):
    S = jump_matrix(1)
    k = 25
    settled = {"n": 0}
    real = _bca._out_of_sweeps

    def counting(*args):
        cert = real(*args)
        settled["n"] += cert is not None
        return cert

    monkeypatch.setattr(_bca, "_out_of_sweeps", counting)
    res = spca.dspca_cardinality(S, k)
    cards = [t.cardinality for t in res.trials if t.role == "search"]
    # the path jumps over k (from 19 to about a hundred) and the solve that
    # steps across it settles for its working sets' certificate
    assert min(cards) < k < max(cards) and max(cards) > 3 * k
    assert settled["n"] >= 1
    assert res.cardinality == k
    assert res.explained_variance <= res.variance_upper_bound
    # every cut is above phi(lam) + lam k (converged solves)
    for t in res.trials:
        ref = spca.dspca_bca(S, t.lam, tol=1e-9, max_sweeps=3000)
        assert ref.converged
        assert ref.upper_bound <= t.upper_bound * (1 + 1e-9)
    # and the bound is within BOUND_RTOL of the least cut on a dense scan
    lams = np.linspace(0.8, 1.2, 41) * res.bound_lam
    scan = min(spca.dspca_bca(S, lam, tol=1e-8, max_sweeps=3000).upper_bound + lam * k
               for lam in lams)
    assert scan <= res.variance_upper_bound <= scan * (1 + _path.BOUND_RTOL)
    # no looser than the search that makes the whole-block sweep instead
    monkeypatch.setattr(_path, "SETTLE", False)
    swept = spca.dspca_cardinality(S, k)
    assert settled["n"] >= 1
    assert res.variance_upper_bound <= swept.variance_upper_bound * (1 + 1e-12)
    assert res.explained_variance >= swept.explained_variance * (1 - 1e-12)
