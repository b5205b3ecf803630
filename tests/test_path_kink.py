"""The kink probe at a cardinality jump (issue 27, spca._path._Solver.kink_probe):
the relaxation solved over a working set of features (at first the two
sides' supports), its dual extended to every feature and certified by one
eigenvalue.  Its cut is checked against Clarabel's value of the relaxation
and dspca_bca's certified objective (a lower bound of phi) at any lam and
working set, and a search whose other probes are switched off is checked
against a dense lam scan of converged solves."""

import math

import numpy as np
import pytest
from _reference import sdp_value
from hypothesis import given, settings
from hypothesis import strategies as st
from test_path_dual_probe import solver_for

import spca
from spca import _path
from spca._path import LamTrial, _kink


def jump_correlation(seed: int, n: int = 160, a: int = 8, b: int = 48,
                     n_samples: int = 120) -> np.ndarray:
    """Correlation of data with a strong factor on ``a`` features and a weak
    one on the next ``b`` (the rest noise): the relaxation's support jumps
    from about ``a`` to about ``b`` features as lam falls."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n))
    X[:, :a] += 2.0 * rng.standard_normal((n_samples, 1))
    X[:, a:a + b] += 0.9 * rng.standard_normal((n_samples, 1))
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    return X.T @ X




def scan_minimum(S: np.ndarray, k: int, lo: float, hi: float) -> float:
    """min over lam of phi(lam) + lam k by converged solves: a grid over
    [lo, hi], then a finer one around its best point."""
    def cut(lam: float) -> float:
        res = spca.dspca_bca(S, lam, tol=1e-8, max_sweeps=5000)
        assert res.converged
        return res.upper_bound + lam * k

    grid = np.linspace(lo, hi, 41)
    best = grid[int(np.argmin([cut(lam) for lam in grid]))]
    step = grid[1] - grid[0]
    return min(cut(lam) for lam in np.linspace(best - step, best + step, 41))


def kink_trials(res) -> list[LamTrial]:
    return [t for t in res.trials if t.role == "bound" and t.sweeps == 0
            and t.tol == _path.KINK_TOL]


@pytest.mark.parametrize("seed", [1, 2])
def test_kink_probe_alone_reaches_the_scan_minimum(seed, monkeypatch):
    """With the probe solves off (BOUND_SOLVES = 0), the search's solves on
    either side of the jump leave the bound more than 0.2% above the minimum
    over lam (0.3-0.4%); the kink probe, KINK_SHIFT of the way from the
    tangents' meeting point towards the near side, brings it to within 0.1%
    of a dense scan's minimum (0.004-0.04%)."""
    k = 20
    S = jump_correlation(seed)
    monkeypatch.setattr(_path, "BOUND_SOLVES", 0)
    runs = {}
    for on in (False, True):
        monkeypatch.setattr(_path, "KINK_PROBES", on)
        runs[on] = spca.dspca_cardinality(S, k)
    on, off = runs[True], runs[False]
    assert not kink_trials(off) and len(kink_trials(on)) == 1
    assert np.array_equal(on.support, off.support)
    ref = scan_minimum(S, k, 0.3, 0.55)
    assert off.variance_upper_bound > ref * (1 + 2e-3)
    assert on.variance_upper_bound <= ref * (1 + 1e-3)
    assert on.variance_upper_bound >= on.explained_variance
    # the kink probe's cut is a bound on phi at its lam
    t = kink_trials(on)[0]
    exact = spca.dspca_bca(S, t.lam, tol=1e-9, max_sweeps=5000)
    assert t.upper_bound >= exact.objective * (1 - 1e-12)


def test_kink_lies_between_the_two_sides():
    """_kink: the tangents of the two solves next to the jump meet between
    them; the probe goes KINK_SHIFT of the way back to the near side."""
    k = 20
    def trial(lam, card, value, l1):
        return LamTrial(lam=lam, cardinality=card, sweeps=1, seconds=0.0, gap=0.0,
                        reduced_size=100, tol=1e-6, upper_bound=value, l1_norm=l1,
                        role="search")
    # g(lam) = value + lam k; slopes k - l1: -10 at 0.4, +12 at 0.5
    near, far = trial(0.4, 40, 5.0, 30.0), trial(0.5, 8, 4.0, 8.0)
    lam, value, lam_near, lam_far = _kink([far, near], k)
    va, vb = 5.0 + 0.4 * k, 4.0 + 0.5 * k
    meet = (vb - va - 10 * 0.4 - 12 * 0.5) / (-10 - 12)
    assert va - 10 * (meet - 0.4) == pytest.approx(vb + 12 * (meet - 0.5))
    assert value == pytest.approx(va - 10 * (meet - 0.4))
    assert lam == pytest.approx(meet - _path.KINK_SHIFT * (meet - 0.4))
    assert (lam_near, lam_far) == (0.4, 0.5)
    # no jump: both sides within max(k / 4, 4) of k, or no solve above k
    assert _kink([trial(0.5, 17, 4.0, 8.0), near], k) is None
    assert _kink([far], k) is None


def test_kink_first_only_when_the_near_side_is_close():
    """_kink_first: a probe solve inside a jump is left to the kink probe
    when the near side's solve is within KINK_FIRST of the kink (its
    supports then hold the kink's), not when it is far below it."""
    k = 30

    def trial(lam, card, value, l1):
        return LamTrial(lam=lam, cardinality=card, sweeps=1, seconds=0.0, gap=0.0,
                        reduced_size=2000, tol=1e-6, upper_bound=value, l1_norm=l1,
                        role="search")
    # (NCI60's 2,000 genes at k = 30: 19 nonzeros at 0.5995, 117 at 0.5395)
    far = trial(0.5995, 19, 22.7935 - 0.5995 * k, 16.93)
    close = trial(0.5395, 117, 22.8512 - 0.5395 * k, 81.16)
    lam, _, lam_near, _ = _kink([far, close], k)
    assert lam - lam_near <= _path.KINK_FIRST * lam
    assert _path._kink_first([far, close], k)
    # (at k = 40: 200 nonzeros at 0.4652, 16% below the kink)
    low = trial(0.4652, 200, 33.6461 - 0.4652 * 40, 145.88)
    far40 = trial(0.5733, 19, 28.1904 - 0.5733 * 40, 17.27)
    assert _kink([far40, low], 40) is not None
    assert not _path._kink_first([far40, low], 40)
    # no jump, no kink first
    assert not _path._kink_first([far], k)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_kink_probe_cut_bounds_clarabels_value(seed):
    """On 36 features the kink probe's cut, from the supports of two solves
    across the jump, lies above Clarabel's phi at its lam (and close to it)."""
    pytest.importorskip("cvxpy")
    S = jump_correlation(seed, n=36, a=4, b=14, n_samples=60)
    k = 9
    solver = solver_for(S)
    top = float(np.abs(S - np.eye(36)).max())
    lams = top * np.geomspace(0.95, 0.2, 30)
    cards = []
    for lam in lams:
        cards.append(solver.solve(float(lam), 1e-8).support.size)
    kink = _kink(solver.trials, k)
    if kink is None:
        pytest.skip("no jump over k on this draw")  # (seeds 0-2 all have one)
    lam, _, near, far = kink
    inside = np.union1d(*[np.flatnonzero(v) for at, v in solver.loadings if at in (near, far)])
    before = len(solver.trials)
    work = solver.kink_probe(lam, k, inside.astype(np.intp), math.inf)
    assert work is not None and work > 0 and len(solver.trials) == before + 1
    t = solver.trials[-1]
    assert t.sweeps == 0 and t.role == "bound" and t.lam == lam
    phi = sdp_value(S, lam)
    assert t.upper_bound >= phi - 1e-7 * abs(phi)
    assert t.upper_bound <= phi * (1 + 1e-3)


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), frac=st.floats(0.15, 0.9),
       size=st.integers(2, 40))
def test_kink_probe_cut_is_above_the_certified_objective(seed, frac, size):
    """At any lam, from any working set, the kink probe's cut (when it records
    one) is above the objective that dspca_bca certifies there: the dual it
    extends is box-feasible for every feature."""
    rng = np.random.default_rng(seed)
    S = jump_correlation(seed % 1000, n=60, a=6, b=20, n_samples=50)
    top = float(np.abs(S - np.eye(60)).max())
    lam = frac * top
    solver = solver_for(S)
    inside = np.sort(rng.choice(60, size=size, replace=False)).astype(np.intp)
    if solver.kink_probe(lam, 10, inside, math.inf) is None or not solver.trials:
        return  # (nothing tried, or a restricted problem that splits: no cut)
    t = solver.trials[-1]
    ref = spca.dspca_bca(S, lam, tol=1e-9, max_sweeps=5000)
    assert t.upper_bound >= ref.objective * (1 - 1e-12)


def test_no_kink_probe_without_work_left():
    S = jump_correlation(0, n=60, a=6, b=20, n_samples=50)
    solver = solver_for(S)
    lam = 0.5 * float(np.abs(S - np.eye(60)).max())
    m = int(np.count_nonzero(np.diag(S) > lam))
    inside = np.arange(20, dtype=np.intp)
    need = (_path.solve_work(inside.size, _path.KINK_SWEEPS)
            + 2 * _path.DUAL_PROBE_WORK * float(m) ** 3)
    assert solver.kink_probe(lam, 10, inside, need * (1 - 1e-9)) is None
    assert len(solver.trials) == 0
    assert solver.kink_probe(lam, 10, inside, need) is not None
