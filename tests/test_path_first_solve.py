"""Where the cardinality search makes its first solve over a large matrix
(issue 27): at the soft-thresholded cut of least bound, unless the work left
holds no whole-block sweep over its features in the probes' scaled model
(spca._path.sweep_cost); then at the largest lam whose soft cut is within
FIRST_SLACK of the least.  Decided by work, never by the clock."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
from spca import _ksparse, _path


def cut_value(c: _ksparse.Cut, k: int) -> float:
    return c.upper_bound + c.lam * k


cuts_st = st.lists(
    st.builds(_ksparse.Cut, st.floats(0.01, 1.0), st.floats(0.0, 50.0), st.floats(0.0, 500.0)),
    min_size=1, max_size=8)


@settings(max_examples=300, deadline=None)
@given(soft=cuts_st, k=st.integers(1, 200), size=st.integers(1, 20_000),
       eigs=st.floats(0.0, 100.0))
def test_first_lam_rule(soft, k, size, eigs):
    left = eigs * float(size) ** 3
    best = min(soft, key=lambda c: cut_value(c, k))
    lam = _path.first_lam(soft, k, size, left)
    assert lam in [c.lam for c in soft]
    if size <= _path.SWEEP_SCALE_FROM or _path.probe_sweeps(size, left) >= 1:
        assert lam == best.lam  # unchanged where a whole-block sweep fits
        return
    chosen = [c for c in soft if c.lam == lam]
    # never below the least cut's lam, within FIRST_SLACK of its value
    assert lam >= best.lam
    assert min(cut_value(c, k) for c in chosen) <= cut_value(best, k) * (1 + _path.FIRST_SLACK)
    # the largest such lam
    for c in soft:
        if c.lam > lam:
            assert cut_value(c, k) > cut_value(best, k) * (1 + _path.FIRST_SLACK)


def test_nci60_sizes():
    # NCI60's 5,000 genes: the first solve works on all 5,000 features with
    # SEARCH_WORK eigvalsh left; the scaled model holds no sweep there (the
    # flat one planned 2), while at 2,000 genes it holds one (unchanged)
    left = _path.SEARCH_WORK * 5000.0**3
    assert _path.probe_sweeps(5000, left) == 0
    assert _path.probe_sweeps(2000, _path.SEARCH_WORK * 2000.0**3) == 1
    # NCI60's 5,000 genes: the soft cuts' U + lam k at k = 100 and k = 50
    lams = [0.4388, 0.5244, 0.5483, 0.5733, 0.5995, 0.6268, 0.8954]
    at100 = [72.735, 63.631, 63.145, 63.306, None, 67.113, 90.155]
    at50 = [50.797, 37.410, None, 34.640, 34.898, 35.774, 45.384]
    for k, values, least, chosen in ((100, at100, 0.5483, 0.5733),
                                     (50, at50, 0.5733, 0.5733)):
        soft = [_ksparse.Cut(lam, v - lam * k, 0.0) for lam, v in zip(lams, values, strict=True)
                if v is not None]
        assert _path.first_lam(soft, k, 5000, left) == chosen
        # unchanged where a whole-block sweep fits, or up to SWEEP_SCALE_FROM
        assert _path.first_lam(soft, k, 2000, _path.SEARCH_WORK * 2000.0**3) == least
        assert _path.first_lam(soft, k, 1000, 0.0) == least


def gaussian_correlation(n_samples: int, n: int, seed: int) -> np.ndarray:
    """Correlation of Gaussian data with few samples: at the first solve's
    lam every feature is relevant (no block splits off)."""
    X = np.random.default_rng(seed).standard_normal((n_samples, n))
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    return X.T @ X


@pytest.mark.parametrize("scale_from", [None, 500])
def test_search_places_first_solve(monkeypatch, scale_from):
    """The first solve of a default search over 1,400 features goes where
    first_lam says: the soft cut of least bound while the scaled model holds
    a sweep over them, another when it does not (SWEEP_SCALE_FROM lowered to
    500 makes a sweep over 1,400 features cost 2.8 times more); the solve
    is recorded and stopped (the answer then needs no solve and stays valid)."""
    n, k = 1400, 20
    if scale_from is not None:
        monkeypatch.setattr(_path, "SWEEP_SCALE_FROM", scale_from)
    S = gaussian_correlation(20, n, seed=0)
    softs: list[list[_ksparse.Cut]] = []
    orig_soft = _path._soft_cuts

    def soft_cuts(*args, **kw):
        cuts, v = orig_soft(*args, **kw)
        softs.append(list(cuts))
        return cuts, v

    calls: list[tuple[float, int, int | None, str]] = []

    def solve(self, lam, tol, max_sweeps=None, role="search", **kw):
        calls.append((lam, self.size_at(lam), max_sweeps, role))
        raise _path._Stop("work")

    monkeypatch.setattr(_path, "_soft_cuts", soft_cuts)
    monkeypatch.setattr(_path._Solver, "solve", solve)
    res = spca.dspca_cardinality(S, k)
    assert np.count_nonzero(res.loadings) == k
    assert res.variance_upper_bound >= res.explained_variance
    assert len(softs) == 1 and len(calls) == 1
    lam, size, cap, role = calls[0]
    soft = softs[0]
    best = min(soft, key=lambda c: cut_value(c, k))
    assert role == "search" and size == n
    left = _path.SEARCH_WORK * float(n) ** 3  # nothing spent before it
    if scale_from is None:
        assert _path.probe_sweeps(n, left) >= 1
        assert lam == best.lam
    else:
        assert _path.probe_sweeps(n, left) == 0
        assert lam == _path.first_lam(soft, k, n, left)
        assert lam >= best.lam
    # the flat model still plans its sweeps
    assert cap == min(_path.SEARCH_SWEEPS,
                      int((left / float(n) ** 3 - _path.SOLVE_BASE) / _path.SWEEP_COST))


@pytest.mark.parametrize("k", [5, 60])
def test_first_solve_is_loose_and_an_exact_one_is_confirmed(monkeypatch, k):
    """The first solve of a default search (placed by the soft cuts) is made
    to FIRST_TOL, not tol; one that has k nonzeros is re-solved at tol
    before it is accepted (the result the search returns is then converged
    to tol); every later search solve keeps tol."""
    S = gaussian_correlation(40, 450, seed=2)
    tols: list[tuple[float, str]] = []
    real = _path._Solver.solve

    def spy(self, lam, tol, *args, **kw):
        tols.append((tol, kw.get("role", "search")))
        return real(self, lam, tol, *args, **kw)

    monkeypatch.setattr(_path._Solver, "solve", spy)
    res = spca.dspca_cardinality(S, k, tol=1e-6)
    assert tols, "the search made no solve"
    assert tols[0] == (_path.FIRST_TOL, "search")
    search = [t for t, role in tols if role == "search"]
    assert all(t == 1e-6 for t in search[1:])
    if res.relaxation_exact:
        assert res.result.gap <= 1e-6 or not res.converged
        assert res.trials[-1].tol == 1e-6 or res.trials[-1].role == "bound"
    assert res.variance_upper_bound >= res.explained_variance


def test_first_solve_is_not_loose_above_first_tol_max(monkeypatch):
    """Over more than FIRST_TOL_MAX features the first solve is made to the
    search's tolerance (a loose one left work for a phase-1 solve inside a
    jump that ran whole-block sweeps at NCI60's 5,000 genes), and below it
    the same search starts loose: the size is the only difference."""
    S = gaussian_correlation(40, 450, seed=2)
    real = _path._Solver.solve

    def first_tol(max_features: int) -> float:
        tols: list[float] = []

        def spy(self, lam, tol, *args, **kw):
            tols.append(tol)
            return real(self, lam, tol, *args, **kw)

        monkeypatch.setattr(_path, "FIRST_TOL_MAX", max_features)
        monkeypatch.setattr(_path._Solver, "solve", spy)
        res = spca.dspca_cardinality(S, 5, tol=1e-6)
        assert np.count_nonzero(res.loadings) == 5
        assert res.variance_upper_bound >= res.explained_variance
        return tols[0]

    assert first_tol(S.shape[0]) == _path.FIRST_TOL
    assert first_tol(S.shape[0] - 1) == 1e-6
