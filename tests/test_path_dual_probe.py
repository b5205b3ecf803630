"""Certificate probes without a solve (issue 27, spca._path._Solver.dual_probe):
a rank-one primal polished from a nearby solve's loadings, the rank-one dual
built around it and its leading eigenvector, alternated, with cluster duals
for the groups of features that hold the eigenvalue up off the support.  Its
cut is checked against Clarabel's value of the relaxation (an independent
reference) and against dspca_bca's certified bracket; a problem whose
optimum has rank three makes it give up (and the probe solve runs)."""

import math

import numpy as np
import pytest
from _reference import high_rank_problem, sdp_value
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
from spca import _path
from spca._certificate import rank_one_dual
from spca._path import _Solver, _solver_options
from spca._variance import _MatrixCovariance
from spca.datasets import load_nytimes_sample
from spca.text import candidate_covariance


def factor_correlation(seed: int, n: int, n_samples: int = 80) -> np.ndarray:
    """Correlation of data with one strong factor on a third of the features:
    rank-one optima of the relaxation over a range of lam."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n))
    X[:, : n // 3] += 1.5 * rng.standard_normal((n_samples, 1))
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    return X.T @ X


def solver_for(S: np.ndarray) -> _Solver:
    return _Solver(_MatrixCovariance(S), max_sweeps=500,
                   options=_solver_options(5, 1e-3, True), verbose=False)


def test_dual_probe_cut_bounds_clarabels_value():
    pytest.importorskip("cvxpy")
    S = factor_correlation(0, 24)
    top = float(np.abs(S - np.eye(24)).max())
    solver = solver_for(S)
    solver.solve(0.5 * top, 1e-8)  # the nearby solve whose loadings start it
    lam = 0.45 * top
    n_trials = len(solver.trials)
    work = solver.dual_probe(lam, math.inf)
    assert work is not None and work > 0
    assert len(solver.trials) == n_trials + 1
    t = solver.trials[-1]
    assert t.sweeps == 0 and t.role == "bound" and t.lam == lam
    phi = sdp_value(S, lam)
    # a bound, and a tight one at this rank-one optimum
    assert t.upper_bound >= phi - 1e-7 * abs(phi)
    assert t.upper_bound <= phi * (1 + 2 * _path.DUAL_PROBE_GAP) + 1e-7
    assert t.gap <= _path.DUAL_PROBE_GAP * 1.01


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), frac=st.floats(0.2, 0.8), step=st.floats(0.8, 1.25))
def test_dual_probe_cut_is_above_the_certified_objective(seed, frac, step):
    """Wherever a dual probe is accepted its bound lies above the objective
    dspca_bca certifies at the same lam (a lower bound of phi), and within
    DUAL_PROBE_GAP (plus the solve's own gap) of the solve's upper bound."""
    S = factor_correlation(seed % 1000, 40)
    top = float(np.abs(S - np.eye(40)).max())
    solver = solver_for(S)
    solver.solve(frac * top, 1e-6)
    lam = min(frac * step, 0.95) * top
    if solver.dual_probe(lam, math.inf) is None or solver.trials[-1].sweeps != 0:
        return  # (not accepted: no cut)
    cut = solver.trials[-1].upper_bound
    ref = spca.dspca_bca(S, lam, tol=1e-9, max_sweeps=2000)
    assert cut >= ref.objective * (1 - 1e-12)
    assert cut <= ref.upper_bound * (1 + 2 * _path.DUAL_PROBE_GAP) + 1e-12


# The 119 words (vocabulary ids of the NYT sample) that the fourth topic's
# certificate probe works on in sparse_topics(load_nytimes_sample(),
# n_components=5, cardinality=5): the 1,024 candidates less the first three
# topics' words, the block relevant at NYT_CLUSTER_LAM.
NYT_CLUSTER_WORDS = [
    2, 6, 7, 8, 9, 10, 13, 14, 16, 17, 18, 19, 20, 21, 22, 23, 25, 26, 27, 29, 30, 31,
    32, 33, 38, 39, 40, 41, 42, 43, 44, 45, 46, 48, 49, 50, 51, 55, 57, 58, 59, 61, 63,
    64, 67, 68, 69, 70, 71, 72, 74, 75, 77, 80, 81, 82, 84, 86, 87, 88, 90, 91, 92, 93,
    95, 96, 97, 98, 99, 101, 102, 115, 120, 121, 124, 125, 126, 132, 150, 152, 153, 154,
    157, 162, 169, 177, 179, 181, 187, 188, 195, 216, 218, 222, 225, 228, 237, 252, 253,
    257, 263, 273, 277, 292, 294, 313, 319, 324, 353, 358, 391, 409, 433, 459, 488, 507,
    558, 565, 836,
]
NYT_CLUSTER_LAM = 0.0652590438456858


@pytest.mark.parametrize("near", [0.075, 0.0816, 0.09])
def test_dual_probe_cluster_dual_on_the_nyt_block(near):
    """At this lam the relaxation's optimum is rank one (9 words), yet the
    rank-one dual of that very x, soft-thresholded elsewhere, is 2.3% above
    phi: another topic's words hold its largest eigenvalue up.  The probe's
    cluster dual for them closes the gap to DUAL_PROBE_GAP (without it the
    probe was rejected and a 10 ms solve followed), and its cut lies inside
    dspca_bca's certified bracket."""
    C = candidate_covariance(load_nytimes_sample(), NYT_CLUSTER_WORDS)
    lam = NYT_CLUSTER_LAM
    ref = spca.dspca_bca(C, lam, tol=1e-10)
    assert ref.gap <= 1e-10 and np.count_nonzero(ref.loadings) == 9
    assert rank_one_dual(C, lam, ref.loadings) > 1.02 * ref.upper_bound
    solver = solver_for(C)
    solver.solve(near, 1e-6)  # (5 or 7 nonzeros: not the support at lam)
    before = len(solver.trials)
    assert solver.dual_probe(lam, math.inf) is not None
    assert len(solver.trials) == before + 1
    t = solver.trials[-1]
    assert t.sweeps == 0 and t.role == "bound" and t.lam == lam
    assert t.upper_bound >= ref.objective * (1 - 1e-12)
    assert t.upper_bound <= ref.upper_bound * (1 + _path.DUAL_PROBE_GAP)
    assert t.cardinality == 9


def test_dual_probe_gives_up_at_a_rank_three_optimum(monkeypatch):
    """high_rank_problem's optimum has rank about 3: no rank-one pair closes
    the gap, the probe records no cut (its rounds' work is returned), and
    _certify's probe solve runs instead."""
    Sigma, lam = high_rank_problem()
    solver = solver_for(Sigma)
    solver.solve(1.3 * lam, 1e-6)
    before = len(solver.trials)
    work = solver.dual_probe(lam, math.inf)
    assert work is not None and work > 0
    assert len(solver.trials) == before


def test_no_dual_probe_without_work_left():
    S = factor_correlation(1, 30)
    solver = solver_for(S)
    top = float(np.abs(S - np.eye(30)).max())
    solver.solve(0.5 * top, 1e-6)
    m = solver.size_at(0.45 * top)
    need = (_path.DUAL_PROBE_ITERS + 1) * _path.DUAL_PROBE_WORK * float(m) ** 3
    assert solver.dual_probe(0.45 * top, need * (1 - 1e-9)) is None
    assert solver.dual_probe(0.45 * top, need) is not None


def test_search_with_dual_probes_matches_probe_solves(monkeypatch):
    """A default search on 450 features with and without the dual probes:
    the same answer; a bound within 1e-6 relative of the probe solves'
    (or better), fewer sweeps (its probe is a dual one); no dual probe
    under a time limit."""
    k = 30
    S = factor_correlation(3, 450, n_samples=200)
    runs = {}
    for dual in (True, False):
        monkeypatch.setattr(_path, "DUAL_PROBES", dual)
        runs[dual] = spca.dspca_cardinality(S, k)
    on, off = runs[True], runs[False]
    assert np.array_equal(on.support, off.support)
    assert on.variance_upper_bound <= off.variance_upper_bound * (1 + 1e-6)
    assert on.variance_upper_bound >= on.explained_variance
    assert on.n_sweeps < off.n_sweeps
    assert any(t.sweeps == 0 and t.role == "bound" for t in on.trials)
    assert all(t.sweeps > 0 for t in off.trials)
    monkeypatch.setattr(_path, "DUAL_PROBES", True)
    limited = spca.dspca_cardinality(S, k, time_limit=60.0)
    assert all(t.sweeps > 0 for t in limited.trials)


def test_every_probe_is_first_tried_without_a_solve(monkeypatch):
    """The 60-feature Gaussian covariance at k = 20 makes three probe
    solves when no dual probe is accepted: each of them is preceded by a
    dual probe at the same lam (not only the first)."""
    from spca.datasets import make_gaussian_covariance

    S = make_gaussian_covariance(60, random_state=0)
    tried: list[float] = []

    def refuse(self, lam, left):
        tried.append(lam)
        return 0.0  # (tried, not accepted, no work)

    monkeypatch.setattr(_path._Solver, "dual_probe", refuse)
    res = spca.dspca_cardinality(S, 20)
    probes = [t.lam for t in res.trials if t.role == "bound"]
    assert len(probes) >= 2
    assert tried == probes
