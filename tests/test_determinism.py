"""Same input, same answer: no decision of the solvers reads the clock.

Every decision inside ``dspca_bca`` (when to polish, how long each polish
method runs, when a method drops out, when the polish stops) counts work;
only the caller's ``time_limit`` reads a clock, through ``spca._limits``.
"""

import threading
import time
import warnings

import numpy as np
import pytest
from _reference import high_rank_problem, sdp_value  # noqa: E402

import spca
import spca._bca as bca
import spca._first_order as first_order
import spca._interior as interior
import spca._limits as limits
from spca._certificate import dspca_objective


def _polish_case():
    # Gaussian n = 60 at a tenth of the largest off-diagonal entry: an
    # optimum of rank about 3 that the sweeps alone do not certify
    return high_rank_problem()


def _same(a, b):
    assert a.status == b.status
    assert a.objective == b.objective
    assert a.upper_bound == b.upper_bound
    assert a.gap == b.gap
    assert a.n_sweeps == b.n_sweeps
    assert a.primal == b.primal and a.dual == b.dual
    np.testing.assert_array_equal(a.support, b.support)
    np.testing.assert_array_equal(a.Z, b.Z)
    np.testing.assert_array_equal(a.X, b.X)
    assert a.history == b.history


class _Busy:
    """A Python thread that spins (holding the interpreter half of the time)
    while the solve runs: a loaded machine."""

    def __enter__(self):
        self.stop = False

        def spin():
            x = 0
            while not self.stop:
                x += 1

        self.thread = threading.Thread(target=spin, daemon=True)
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop = True
        self.thread.join()


def test_a_polished_solve_gives_the_same_answer_on_a_loaded_machine():
    Sigma, lam = _polish_case()
    quiet = spca.dspca_bca(Sigma, lam, working_set=False)
    # the certificate needs the polish here
    assert quiet.converged and quiet.status == "optimal"
    assert quiet.dual in ("proximal point", "alternating directions")
    with _Busy():
        loaded = spca.dspca_bca(Sigma, lam, working_set=False)
    _same(quiet, loaded)
    # the timings are measurements only, and they did change
    assert loaded.timings["total"] != quiet.timings["total"]


def _forbid_clock(monkeypatch):
    """Make every clock of the time module raise; return the stopwatch
    readings taken for the results' timings (a counter)."""

    def forbidden(*args, **kwargs):
        raise AssertionError("a solver read the clock")

    for name in ("perf_counter", "perf_counter_ns", "time", "time_ns", "monotonic",
                 "monotonic_ns", "process_time", "process_time_ns", "thread_time"):
        monkeypatch.setattr(time, name, forbidden)
    monkeypatch.setattr(limits, "clock", forbidden)
    readings = []

    def stopwatch():
        readings.append(len(readings))
        return float(len(readings))

    monkeypatch.setattr(bca, "stopwatch", stopwatch)
    monkeypatch.setattr(first_order, "stopwatch", stopwatch)
    monkeypatch.setattr(interior, "stopwatch", stopwatch)
    return readings


def test_no_decision_reads_the_clock(monkeypatch):
    Sigma, lam = _polish_case()
    expected = spca.dspca_bca(Sigma, lam, working_set=False)
    readings = _forbid_clock(monkeypatch)
    res = spca.dspca_bca(Sigma, lam, working_set=False)
    # the polish ran (it is where the old deadlines were) and nothing but
    # the timings' stopwatch was read; the answer is the one of a free clock
    assert res.dual in ("proximal point", "alternating directions")
    assert readings
    _same(res, expected)
    # the working sets and the first-order solver too
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, working_set=True, max_sweeps=60)
        # (60 features: the interior-point finish may certify it)
        assert res.status in ("optimal", "work_limit") and np.isfinite(res.upper_bound)
        res = spca.dspca_first_order(Sigma, lam, max_iter=30)
        assert res.status == "work_limit"


class _StubClock:
    """``spca._limits.clock`` that moves ``step`` seconds per reading once
    ``running`` is set."""

    def __init__(self, step):
        self.now, self.step, self.running, self.readings = 0.0, step, True, 0

    def __call__(self):
        self.readings += 1
        if self.running:
            self.now += self.step
        return self.now


def test_time_limit_ends_a_long_solve_with_valid_bounds(monkeypatch):
    Sigma, lam = _polish_case()
    clock = _StubClock(1.0)
    monkeypatch.setattr(limits, "clock", clock)
    with pytest.warns(spca.ConvergenceWarning, match="time limit"):
        res = spca.dspca_bca(Sigma, lam, working_set=False, time_limit=6.0 / limits.AIM)
    # the start reads 1 s (the solve plans to AIM of the limit: deadline
    # 7 s), the check after sweep k reads 1 + k s: each sweep takes 1 s and
    # leaves at least that for its certificate up to the fifth (see
    # spca._bca.CERT_SWEEPS); the sixth sweep's check ends the solve
    assert res.status == "time_limit" and not res.converged
    assert res.n_sweeps == 6
    assert "status=time_limit" in repr(res)
    ref = sdp_value(Sigma, lam)
    assert res.objective <= ref * (1 + 1e-7) and ref <= res.upper_bound * (1 + 1e-7)
    assert res.objective == pytest.approx(dspca_objective(Sigma, res.Z, lam), rel=1e-9)


def test_time_limit_is_checked_inside_the_polish(monkeypatch):
    Sigma, lam = _polish_case()
    clock = _StubClock(0.0)
    monkeypatch.setattr(limits, "clock", clock)
    calls = []

    def late(real, name):
        def run(*args, **kwargs):
            # the limit passes as soon as the polish starts
            clock.now = 100.0
            calls.append(name)
            out = real(*args, **kwargs)
            calls.append(out[4].k)
            return out
        return run

    monkeypatch.setattr(bca, "proximal_dual", late(bca.proximal_dual, "proximal"))
    monkeypatch.setattr(bca, "admm_dual", late(bca.admm_dual, "admm"))
    with pytest.warns(spca.ConvergenceWarning, match="time limit"):
        res = spca.dspca_bca(Sigma, lam, working_set=False, time_limit=50.0)
    # the first polish method stops before its first iteration, and the
    # solve ends there (no second method, no more sweeps)
    assert calls == ["proximal", 0]
    assert res.status == "time_limit"
    assert res.objective <= res.upper_bound


def test_time_limit_ends_the_working_sets(monkeypatch):
    from spca.datasets import make_correlation_few_samples

    Sigma = make_correlation_few_samples(500, 64, random_state=0)
    lam = 0.2 * np.abs(Sigma - np.diag(np.diag(Sigma))).max()
    clock = _StubClock(1.0)
    monkeypatch.setattr(limits, "clock", clock)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, working_set=True, time_limit=3.5, tol=1e-9)
    # a few working-set sweeps (each W sweep counts |W| / m of a sweep),
    # then the whole block certified once from the iterate reached
    assert res.status == "time_limit" and res.n_sweeps < 20
    assert res.objective <= res.upper_bound * (1 + 1e-12)
    assert res.objective == pytest.approx(dspca_objective(Sigma, res.Z, lam), rel=1e-9)


def test_statuses_of_finished_solves():
    Sigma, lam = _polish_case()
    with pytest.warns(spca.ConvergenceWarning, match="max_sweeps"):
        capped = spca.dspca_bca(Sigma, lam, max_sweeps=3, working_set=False)
    assert capped.status == "work_limit"
    # a limit that does not end the solve leaves it optimal
    res = spca.dspca_bca(Sigma, 10 * lam, time_limit=1e6)
    assert res.converged and res.status == "optimal"


@pytest.mark.parametrize("bad, error, match", [
    (0, ValueError, "time_limit must be a number of seconds > 0, got 0"),
    (-1.0, ValueError, "got -1.0"),
    (float("nan"), ValueError, "got nan"),
    ("10", TypeError, "time_limit must be a number of seconds or None, got '10'"),
    (True, TypeError, "got True"),
])
def test_bad_time_limit_is_refused(bad, error, match):
    Sigma, lam = _polish_case()
    with pytest.raises(error, match=match):
        spca.dspca_bca(Sigma, lam, time_limit=bad)


def test_support_refinements_report_their_work():
    from spca._certificate import barrier_matrix, refine_on_support

    Sigma, lam = _polish_case()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, max_sweeps=30, working_set=False)
    scale = float(np.diag(Sigma).max())
    S, lam_n = Sigma / scale, lam / scale
    base = barrier_matrix(S, lam_n, res._dual_columns)
    support = np.sort(np.argsort(-np.diag(res.X))[:12])
    runs = []
    for _ in range(2):
        evaluations = []
        lower, Z, upper = refine_on_support(S, lam_n, support, base, max_iter=20,
                                            evaluations=evaluations)
        runs.append(evaluations)
        assert lower <= upper
    # each smoothing stage reports (|S|, its function evaluations), the same
    # count every run: the refinement's work is charged by evaluations
    assert runs[0] == runs[1]
    assert runs[0] and all(k == 12 and n > 0 for k, n in runs[0])
