"""The alternating direction bounds (spca/_admm.py), the bounds of both polish
methods on random problems, and the polish that runs them in turns."""

import math
import warnings

import numpy as np
import pytest
from _reference import half_max_offdiag, high_rank_problem, sdp_value  # noqa: E402
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
from spca import _admm as admm
from spca._admm import admm_dual
from spca._certificate import Certificate, dspca_objective
from spca._proximal import proximal_dual
from spca.datasets import make_gaussian_covariance


def _scaled(Sigma, lam):
    scale = float(np.diag(Sigma).max())
    return Sigma / scale, lam / scale, scale


def test_admm_certifies_a_rank_three_optimum_from_a_cold_start():
    Sigma, lam = high_rank_problem()
    S, lam_n, scale = _scaled(Sigma, lam)
    n = S.shape[0]
    Z0, U0 = np.eye(n) / n, np.zeros((n, n))
    Z_in, U_in = Z0.copy(), U0.copy()
    upper, D, value, Z, state = admm_dual(S, lam_n, Z0, U0, work=math.inf, tol=1e-6,
                                          max_iter=5000)
    # nothing the caller passed is modified
    np.testing.assert_array_equal(Z0, Z_in)
    np.testing.assert_array_equal(U0, U_in)
    # D is Sigma plus a symmetric U in the box, and upper bounds its top eigenvalue
    U = D - S
    np.testing.assert_allclose(U, U.T, atol=1e-15)
    assert np.abs(U).max() <= lam_n * (1 + 1e-12)
    assert upper >= np.linalg.eigvalsh(D)[-1]
    # Z is feasible and its value is what is reported
    assert np.trace(Z) == pytest.approx(1.0) and np.linalg.eigvalsh(Z).min() > -1e-12
    assert value == pytest.approx(dspca_objective(S, Z, lam_n), rel=1e-12)
    # the bounds meet to the requested gap and bracket the interior-point value
    assert (upper - value) <= 1e-6 * abs(upper)
    assert state.k < 5000
    ref = sdp_value(Sigma, lam) / scale
    assert value <= ref * (1 + 1e-7) and ref <= upper * (1 + 1e-7)
    # the optimum is not rank one: no rank-one bound could have done this
    w = np.linalg.eigvalsh(Z)
    assert w[-2] > 0.05 * w[-1]


def test_admm_resumes_where_it_stopped():
    Sigma, lam = high_rank_problem()
    S, lam_n, _ = _scaled(Sigma, lam)
    n = S.shape[0]
    Z0, U0 = np.eye(n) / n, np.zeros((n, n))
    *_, whole = admm_dual(S, lam_n, Z0, U0, work=math.inf, max_iter=40)
    *_, half = admm_dual(S, lam_n, Z0, U0, work=math.inf, max_iter=20)
    *_, resumed = admm_dual(S, lam_n, Z0, U0, work=math.inf, max_iter=20, state=half)
    assert resumed.k == whole.k == 40
    # the work is counted across calls, the same as in one call
    assert resumed.work == pytest.approx(whole.work, rel=1e-12) and whole.work > 0
    assert resumed.rho == whole.rho
    np.testing.assert_array_equal(resumed.Y, whole.Y)
    np.testing.assert_array_equal(resumed.W, whole.W)


def test_admm_stops_at_its_work_budget():
    Sigma, lam = high_rank_problem()
    S, lam_n, _ = _scaled(Sigma, lam)
    n = S.shape[0]
    upper, D, value, Z, state = admm_dual(S, lam_n, np.eye(n) / n, np.zeros((n, n)),
                                          work=0.0)
    # one iteration, whose bounds are still evaluated
    assert state.k == 1 and np.isfinite(upper) and np.isfinite(value)
    # a budget of b sweep equivalents runs the iterations that fit in it
    *_, state = admm_dual(S, lam_n, np.eye(n) / n, np.zeros((n, n)), work=3.0)
    assert 3.0 <= state.work < 3.0 + admm.ITERATION_WORK + admm.RANK_WORK + admm.BOUND_WORK
    assert 1 < state.k < 3.0 / admm.ITERATION_WORK + 1


@pytest.mark.parametrize("method", ["proximal", "admm"])
def test_polish_methods_stop_at_the_callers_time_limit(monkeypatch, method):
    import spca._limits as limits
    from spca._limits import TimeLimit

    Sigma, lam = high_rank_problem()
    S, lam_n, _ = _scaled(Sigma, lam)
    n = S.shape[0]
    now = [0.0]
    monkeypatch.setattr(limits, "clock", lambda: now[0])
    limit = TimeLimit(1.0)
    now[0] = 2.0  # the limit has passed before the first check
    run = admm_dual if method == "admm" else proximal_dual
    upper, D, value, Z, state = run(S, lam_n, np.eye(n) / n, np.zeros((n, n)),
                                    work=math.inf, time_limit=limit)
    # at most one iteration (ADMM evaluates its bounds at the last one)
    assert state.k <= 1
    assert state.work < 5.0


@pytest.mark.parametrize("method", ["proximal", "admm"])
@settings(max_examples=25, deadline=None)
@given(n=st.integers(2, 7), seed=st.integers(0, 10**6), frac=st.floats(0.01, 0.9))
def test_polish_bounds_bracket_the_solver_on_random_problems(method, n, seed, frac):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n + 2, n))
    Sigma = A.T @ A / (n + 2)
    lam = frac * float(np.diag(Sigma).max())
    res = spca.dspca_bca(Sigma, lam, eliminate=False, working_set=False)
    Z0 = np.eye(n) / n
    U0 = rng.uniform(-2 * lam, 2 * lam, (n, n))  # not even symmetric: made so, then clipped
    if method == "proximal":
        upper, D, value, Z, _ = proximal_dual(Sigma, lam, Z0, U0, work=math.inf, max_outer=6)
    else:
        upper, D, value, Z, _ = admm_dual(Sigma, lam, Z0, U0, work=math.inf, max_iter=60)
        assert Z is not None  # bounds are evaluated at the last iteration
    # weak duality against the certified solve on both sides
    assert upper >= res.objective - 1e-12 * abs(res.objective) - 1e-15
    if Z is not None:
        assert value <= res.upper_bound + 1e-12 * abs(res.upper_bound) + 1e-15
        assert value == pytest.approx(dspca_objective(Sigma, Z, lam), rel=1e-9, abs=1e-12)
    assert np.abs(D - Sigma).max() <= lam * (1 + 1e-12)


def _gaussian_high_rank():
    # Gaussian n = 120 at 0.15 x the largest off-diagonal entry: at the
    # polish the sweeps' Z has 24 eigenvalues above 1% of its largest
    Sigma = make_gaussian_covariance(120, random_state=0)
    return Sigma, 0.3 * half_max_offdiag(Sigma)


def test_dspca_bca_certifies_a_high_rank_optimum_by_alternating_directions(monkeypatch):
    import spca._bca as bca

    Sigma, lam = _gaussian_high_rank()
    res = spca.dspca_bca(Sigma, lam)
    assert res.converged and res.gap <= 1e-6
    assert res.dual == "alternating directions"
    assert res.n_sweeps < 200
    assert res.objective == pytest.approx(dspca_objective(Sigma, res.Z, lam), rel=1e-9)
    w = np.linalg.eigvalsh(res.Z)
    assert np.count_nonzero(w >= 1e-2 * w[-1]) > 10
    # with the proximal point iterations alone the same solve is not certified

    def unavailable(*args, **kwargs):
        raise np.linalg.LinAlgError("disabled in this test")

    monkeypatch.setattr(bca, "admm_dual", unavailable)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        plain = spca.dspca_bca(Sigma, lam)
    assert not plain.converged and plain.gap > 100 * res.gap


class _State:
    """A stub method's state: its call count and the work it has done."""

    def __init__(self, k=0, work=0.0):
        self.k, self.work = k, work


def _fake(name, calls, uppers, values):
    """A polish method whose k-th call returns uppers[k] and values[k] and
    uses all of its work budget."""

    def run(S, lam, Z0, U0, *, work, lower, tol, state=None, time_limit=None):
        state = state or _State()
        k = state.k
        calls.append(name)
        n = S.shape[0]
        return uppers[k], S.copy(), values[k], np.eye(n) / n, _State(k + 1, state.work + work)

    return run


def _polish(monkeypatch, proximal, admm, lower, *, rate=0.0):
    """Run _polish on a 4 x 4 stand-in with stub methods from bounds [lower, 2]."""
    import spca._bca as bca

    n = 4
    S = np.eye(n)
    monkeypatch.setattr(bca, "barrier_matrix", lambda S, lam, M: S)
    monkeypatch.setattr(bca, "proximal_dual", proximal)
    monkeypatch.setattr(bca, "admm_dual", admm)
    start = Certificate(lower=lower, upper=2.0, Z=np.eye(n) / n, x=None, primal="barrier",
                        dual="barrier", barrier_lower=lower, barrier_upper=2.0)
    return bca._polish(S, 0.1, np.eye(n), None, start, bca._SolveOptions(tol=1e-6),
                       budget=1.0, horizon=100.0, rate=rate)


def test_polish_takes_turns_drops_the_stalled_method_and_combines_bounds(monkeypatch):
    calls = []
    # the proximal point stub only ever improves the upper bound, quickly;
    # the alternating direction stub only the lower one, once, then stalls
    cert, spent, lost = _polish(
        monkeypatch, _fake("proximal", calls, [1.5, 1.2, 1.1, 1.0 + 1e-7], [-1.0] * 4),
        _fake("admm", calls, [9.0] * 4, [1.0, 1.0, 1.0, 1.0]), 0.5)
    # the stalled method drops out after its second slice (no progress),
    # the other goes on until the combined bounds certify
    assert calls == ["proximal", "admm", "proximal", "admm", "proximal", "proximal"]
    assert not lost and cert.gap <= 1e-6
    assert cert.lower == 1.0 and cert.primal == "alternating directions"
    assert cert.upper == 1.0 + 1e-7 and cert.dual == "proximal point"


def test_polish_drops_a_method_far_behind_and_slower(monkeypatch):
    calls = []
    # both improve, but the proximal point stub's gap is 20x the other's
    # after the first turn and shrinks more slowly
    cert, spent, lost = _polish(
        monkeypatch, _fake("proximal", calls, [1.2, 1.19, 1.18], [1.0] * 3),
        _fake("admm", calls, [1.01, 1.0 + 1e-3, 1.0 + 5e-7], [1.0] * 3), 0.9)
    assert calls == ["proximal", "admm", "admm", "admm"]
    assert not lost and cert.gap <= 1e-6 and cert.dual == "alternating directions"


def test_polish_hands_back_when_both_lose_the_race(monkeypatch):
    calls = []
    # sweeps that would reach tol in a fraction of a sweep's work
    cert, spent, lost = _polish(
        monkeypatch, _fake("proximal", calls, [1.9] * 3, [0.0] * 3),
        _fake("admm", calls, [1.95] * 3, [0.0] * 3), 1.0, rate=1e6)
    assert calls == ["proximal", "admm"] and lost
    assert cert.upper == 1.9  # the bounds they found are kept


def _metered(calls, name, gap0, rate, stall=math.inf):
    """A polish method that uses all of its ``work`` and whose upper bound
    is ``1 + gap0 exp(-rate min(w, stall))`` after ``w`` units of its own
    work (lower bound 1)."""

    def run(S, lam, Z0, U0, *, work, lower, tol, state=None, time_limit=None):
        w = (0.0 if state is None else state.work) + work
        calls.append((name, work))
        n = S.shape[0]
        return (1.0 + gap0 * math.exp(-rate * min(w, stall)), S.copy(), 1.0, np.eye(n) / n,
                _State(0, w))

    return run


@pytest.mark.parametrize("rate, extends, stall", [(1.0, True, math.inf), (0.5, False, math.inf),
                                                 (1.0, True, 6.0)])
def test_polish_goes_on_past_its_horizon_only_when_tol_is_near(monkeypatch, rate, extends,
                                                               stall):
    import spca._bca as bca

    calls = []
    n = 4
    S = np.eye(n)
    monkeypatch.setattr(bca, "barrier_matrix", lambda S, lam, M: S)
    # the proximal point stub makes no progress and drops out at once
    monkeypatch.setattr(bca, "proximal_dual", _metered(calls, "proximal", 1.0, 0.0))
    monkeypatch.setattr(bca, "admm_dual", _metered(calls, "admm", 1e-3, rate, stall))
    start = Certificate(lower=1.0, upper=2.0, Z=np.eye(n) / n, x=None, primal="barrier",
                        dual="barrier", barrier_lower=1.0, barrier_upper=2.0)
    cert, spent, lost = bca._polish(S, 0.1, np.eye(n), None, start,
                                    bca._SolveOptions(tol=1e-6), budget=1.0, horizon=6.0,
                                    rate=0.0)
    # slices of 1, 2 and 3 units fill the horizon of 6 (the stalled method's
    # second aside); the gap is then 1e-3 exp(-6 rate)
    assert [c for c in calls if c[0] == "admm"][:3] == [("admm", 1.0), ("admm", 2.0),
                                                        ("admm", 3.0)]
    assert not lost
    gap6 = 1e-3 * math.exp(-6.0 * rate)
    if extends:
        # tol is log(gap6 / tol) / rate = 0.92 units away, under a quarter of
        # the horizon: one more slice of twice that certifies
        assert len(calls) == 5 and calls[-1][0] == "admm"
        assert calls[-1][1] == pytest.approx(2.0 * math.log(gap6 / 1e-6) / rate, rel=1e-3)
        if stall == math.inf:
            assert cert.gap <= 1e-6
        else:
            # a method that stalls in its extension ends the polish there
            # (not handed back to the sweeps as a lost race)
            assert cert.gap == pytest.approx(gap6, rel=1e-3)
    else:
        # 7.8 units away: the polish stops at its horizon
        assert len(calls) == 4 and cert.gap == pytest.approx(gap6, rel=1e-3)
