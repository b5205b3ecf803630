"""The proximal-point dual bound (spca/_proximal.py) and its use by dspca_bca."""

import warnings

import numpy as np
import pytest
from _reference import half_max_offdiag, high_rank_problem, sdp_value  # noqa: E402

import spca
from spca._certificate import dspca_objective
from spca._proximal import _Projection, _simplex, proximal_dual
from spca.datasets import make_gaussian_covariance


def test_simplex_projection_is_the_closest_point():
    rng = np.random.default_rng(0)
    for _ in range(20):
        a = rng.standard_normal(7) * 3
        p = _simplex(a)
        assert p.min() >= 0 and p.sum() == pytest.approx(1.0)
        # optimality: a - p = tau on the support, <= tau off it
        tau = (a - p)[p > 0]
        assert np.ptp(tau) < 1e-12
        assert np.all((a - p)[p == 0] <= tau[0] + 1e-12)


def test_projection_jacobian_matches_finite_differences():
    rng = np.random.default_rng(1)
    A = rng.standard_normal((9, 9))
    A = 0.3 * (A + A.T)
    H = rng.standard_normal((9, 9))
    H = H + H.T
    P = _Projection(A)
    assert 1 <= P.rank < 9
    assert np.trace(P.Z) == pytest.approx(1.0)
    assert np.linalg.eigvalsh(P.Z).min() > -1e-12
    e = 1e-6
    fd = (_Projection(A + e * H).Z - _Projection(A - e * H).Z) / (2 * e)
    assert np.abs(fd - P.jacobian(H)).max() < 1e-7


def _bca_state(Sigma, lam, sweeps):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, max_sweeps=sweeps, eliminate=False, working_set=False)
    from spca._certificate import barrier_matrix

    scale = float(np.diag(Sigma).max())
    S, lam_n = Sigma / scale, lam / scale
    X = res.X / scale
    D = barrier_matrix(S, lam_n, res._dual_columns)
    return res, S, lam_n, X / np.trace(X), D - S, scale


def test_proximal_dual_tightens_a_rank_three_bound():
    Sigma, lam = high_rank_problem()
    res, S, lam_n, Z0, U0, scale = _bca_state(Sigma, lam, 30)
    Z_in, U_in = Z0.copy(), U0.copy()
    upper, D, value, Z, _ = proximal_dual(S, lam_n, Z0, U0, work=np.inf, max_outer=12)
    # nothing the caller passed is modified
    np.testing.assert_array_equal(Z0, Z_in)
    np.testing.assert_array_equal(U0, U_in)
    # D is Sigma plus a symmetric U in the box, and upper bounds its top eigenvalue
    U = D - S
    np.testing.assert_array_equal(U, U.T)
    assert np.abs(U).max() <= lam_n * (1 + 1e-12)
    assert upper >= np.linalg.eigvalsh(D)[-1]
    # Z is feasible and its value is what is reported
    assert np.trace(Z) == pytest.approx(1.0) and np.linalg.eigvalsh(Z).min() > -1e-12
    assert value == pytest.approx(dspca_objective(S, Z, lam_n), rel=1e-12)
    # both bracket the interior-point value, and the dual side is much
    # tighter than the sweeps' (the 30 sweeps' upper bound is 2.4e-3 above)
    ref = sdp_value(Sigma, lam) / scale
    assert value <= ref * (1 + 1e-7) and ref <= upper * (1 + 1e-7)
    assert upper - ref < 0.1 * (res.upper_bound / scale - ref)


def test_dspca_bca_certifies_a_rank_three_optimum(monkeypatch):
    import spca._bca as bca

    Sigma, lam = high_rank_problem()
    # max_sweeps bounds the polish's work too (its horizon counts sweeps)
    res = spca.dspca_bca(Sigma, lam, max_sweeps=2000, working_set=False)
    assert res.converged and res.gap <= 1e-6
    # either polish may win the first slices here (both certify it)
    assert res.dual in ("proximal point", "alternating directions")
    # the sweeps stop once they stall (about 100 here), long before max_sweeps
    assert res.n_sweeps < 500
    ref = sdp_value(Sigma, lam)
    assert res.objective <= ref * (1 + 1e-7) <= res.upper_bound * (1 + 2e-7)
    # the returned Z is feasible and has the reported value
    Z = res.Z
    assert np.trace(Z) == pytest.approx(1.0) and np.linalg.eigvalsh(Z).min() > -1e-10
    assert res.objective == pytest.approx(dspca_objective(Sigma, Z, lam), rel=1e-9)
    # without the polish the sweeps do not certify it
    monkeypatch.setattr(bca, "POLISH_MIN_SWEEPS", 10**9)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        plain = spca.dspca_bca(Sigma, lam, max_sweeps=300, working_set=False)
    assert not plain.converged and plain.gap > 100 * res.gap


def test_capped_and_converged_solves_are_not_polished(monkeypatch):
    import spca._bca as bca

    called = []
    monkeypatch.setattr(bca, "proximal_dual", lambda *a, **k: called.append(1))
    monkeypatch.setattr(bca, "admm_dual", lambda *a, **k: called.append(2))
    Sigma, lam = high_rank_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        capped = spca.dspca_bca(Sigma, lam, max_sweeps=20, working_set=False)
    assert not capped.converged
    assert capped.dual not in ("proximal point", "alternating directions")
    G = make_gaussian_covariance(30, random_state=3)
    assert spca.dspca_bca(G, half_max_offdiag(G)).converged
    assert called == []


def test_sweep_rate_is_the_recent_log_gap_slope():
    from spca._bca import _sweep_rate

    assert _sweep_rate([(10, 1e-2), (20, 1e-3)]) == pytest.approx(np.log(10) / 10)
    assert _sweep_rate([(10, 1e-3), (20, 1e-3)]) == 0.0  # no progress
    assert _sweep_rate([(10, 1e-3), (20, 2e-3)]) == 0.0


def test_sweeps_go_on_when_the_polish_loses_the_race(monkeypatch):
    import spca._bca as bca

    # sweeps that (seemingly) shrink the gap faster than any polish can:
    # after one slice the polish hands back, and all the sweeps are run
    monkeypatch.setattr(bca, "_sweep_rate", lambda checks: 1e9)
    calls = []

    def counting(real, name):
        def run(*args, **kwargs):
            calls.append(name)
            return real(*args, **kwargs)
        return run

    monkeypatch.setattr(bca, "proximal_dual", counting(bca.proximal_dual, "proximal"))
    monkeypatch.setattr(bca, "admm_dual", counting(bca.admm_dual, "admm"))
    Sigma, lam = high_rank_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, max_sweeps=150, working_set=False)
    assert res.n_sweeps == 150
    # at most one slice of each method (the second is skipped when the
    # first certifies), and no second try at the last sweep
    assert calls in (["proximal"], ["proximal", "admm"])
    ref = sdp_value(Sigma, lam)
    assert res.objective <= ref * (1 + 1e-7) <= res.upper_bound * (1 + 2e-7)
