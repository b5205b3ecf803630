"""The work model of the certificate probes at large n (issue 27): a probe's
planned work stays within the probes' budget when a sweep over a large block
costs more than the model calibrated at n = 500 says (see
spca._path.sweep_cost), and the model is unchanged up to SWEEP_SCALE_FROM."""

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
from spca import _path
from spca.datasets import make_correlation_few_samples


def old_probe_sweeps(size: int, left: float) -> int:
    """The probes' sweep count before sweep_cost (SWEEP_COST at every size)."""
    m3 = float(max(size, 1)) ** 3
    return int(max((left / m3 - _path.SOLVE_BASE) / _path.SWEEP_COST, 0.0))


def planned(size: int, sweeps: int) -> float:
    return float(size) ** 3 * (_path.SOLVE_BASE + _path.sweep_cost(size) * sweeps)


@pytest.mark.parametrize("size", [1, 32, 400, 500, 752, 1071, _path.SWEEP_SCALE_FROM])
@pytest.mark.parametrize("eigs", [0.0, 1.9, 6.0, 16.0, 30.5, 1e3])
def test_model_unchanged_up_to_scale_from(size, eigs):
    left = eigs * float(size) ** 3
    assert _path.sweep_cost(size) == _path.SWEEP_COST
    assert _path.probe_sweeps(size, left) == old_probe_sweeps(size, left)


@settings(max_examples=200, deadline=None)
@given(size=st.integers(1, 20_000), eigs=st.floats(0.0, 1e3))
def test_planned_work_fits(size, eigs):
    left = eigs * float(size) ** 3
    sweeps = _path.probe_sweeps(size, left)
    assert sweeps >= 0
    if sweeps:
        assert planned(size, sweeps) <= left * (1 + 1e-12)
    # one more sweep would not fit
    assert planned(size, sweeps + 1) > left * (1 - 1e-12)
    assert sweeps <= old_probe_sweeps(size, left)


def test_sweep_cost_grows_with_size():
    sizes = [500, 1100, 1500, 2000, 3000, 5000, 10_000]
    costs = [_path.sweep_cost(m) for m in sizes]
    assert costs == sorted(costs)
    assert costs[-1] > costs[0]


def test_no_whole_block_probe_at_5000_features():
    # the probes' budget (BOUND_EIGS eigvalsh of all 5,000 features) holds no
    # sweep over 4,944 of them (NCI60's 5,000 genes at k = 50: one such sweep
    # took more than the whole budget); the old model planned 3
    left = _path.BOUND_EIGS * 5000.0**3
    assert old_probe_sweeps(4944, left) == 3
    assert _path.probe_sweeps(4944, left) == 0


def test_probes_stay_within_budget_at_large_n(monkeypatch):
    """Every probe of a search over 1,600 synthetic features, planned and made,
    within BOUND_EIGS eigvalsh of the problem in the probes' work model."""
    n, k = 1600, 100
    S = make_correlation_few_samples(n, random_state=0)
    plans: list[tuple[int, float, int]] = []
    probes: list[tuple[int, int, int]] = []  # (size, max_sweeps, sweeps made)
    orig_plan = _path.probe_sweeps

    def plan(size: int, left: float) -> int:
        out = orig_plan(size, left)
        plans.append((size, left, out))
        return out

    orig_solve = _path._Solver.solve

    def solve(self, lam, tol, max_sweeps=None, role="search", **kw):
        size = max(self.size_at(lam), 1)
        out = orig_solve(self, lam, tol, max_sweeps, role, **kw)
        if role == "bound":
            probes.append((size, max_sweeps, self.trials[-1].sweeps))
        return out

    monkeypatch.setattr(_path, "probe_sweeps", plan)
    monkeypatch.setattr(_path._Solver, "solve", solve)
    res = spca.dspca_cardinality(S, k)
    assert res.support.size == k
    assert res.variance_upper_bound >= res.explained_variance
    # the large-n model was exercised
    assert any(size > _path.SWEEP_SCALE_FROM for size, _, _ in plans)
    budget = max(_path.BOUND_EIGS * float(n) ** 3, _path.WORK_FLOOR)
    for size, left, sweeps in plans:
        assert left <= budget
        if sweeps:
            assert planned(size, sweeps) <= left
    used = 0.0
    for size, cap, made in probes:
        assert cap is not None and cap >= 1
        assert used + planned(size, cap) <= budget
        used += planned(size, made)
    assert math.isfinite(used)
    # the certificate is valid: above the best k-sparse variance found
    assert res.variance_upper_bound >= res.explained_variance
    assert np.count_nonzero(res.loadings) == k


def _probe_plans(monkeypatch):
    """Record each certificate's ``search_work`` (the solver's work when it
    starts, for a capped one; else inf) and each probe solve's ``(size,
    max_sweeps, search_work)``."""
    seen: dict[str, float] = {}
    probes: list[tuple[int, int, float]] = []
    orig_certify = _path._certify

    def certify(*args, **kw):
        seen["search_work"] = args[0].work if kw.get("capped") else math.inf
        return orig_certify(*args, **kw)

    orig_solve = _path._Solver.solve

    def solve(self, lam, tol, max_sweeps=None, role="search", **kw):
        if role == "bound":
            probes.append((max(self.size_at(lam), 1), max_sweeps, seen["search_work"]))
        return orig_solve(self, lam, tol, max_sweeps, role, **kw)

    monkeypatch.setattr(_path, "_certify", certify)
    monkeypatch.setattr(_path._Solver, "solve", solve)
    return probes


def test_probe_solves_planned_within_the_searchs_work(monkeypatch):
    """The 60-feature Gaussian covariance at k = 20 makes probe solves: each
    is planned within PROBE_SOLVE_WORK times the solver's modelled work (or
    WORK_FLOOR); with both 0 none is made and the bound still holds."""
    from spca.datasets import make_gaussian_covariance

    S = make_gaussian_covariance(60, random_state=0)
    probes = _probe_plans(monkeypatch)
    res = spca.dspca_cardinality(S, 20)
    assert probes
    for size, cap, search_work in probes:
        assert 0 < search_work < math.inf
        room = max(_path.PROBE_SOLVE_WORK * search_work, _path.WORK_FLOOR)
        assert planned(size, cap) <= room * (1 + 1e-12)
    probes.clear()
    monkeypatch.setattr(_path, "PROBE_SOLVE_WORK", 0.0)
    monkeypatch.setattr(_path, "WORK_FLOOR", 0.0)
    none = spca.dspca_cardinality(S, 20)
    assert probes == []
    assert all(t.sweeps == 0 for t in none.trials if t.role == "bound")
    assert none.variance_upper_bound >= none.explained_variance
    assert none.variance_upper_bound >= res.variance_upper_bound * (1 - 1e-12)


def test_a_rejected_dual_probe_leaves_its_solve_the_budget(monkeypatch):
    """A dual probe that spends all the probes' work left and is rejected
    does not take it from the solve at its own lam: the first probe solve is
    the same as after a rejected probe that spent nothing."""
    from spca.datasets import make_gaussian_covariance

    S = make_gaussian_covariance(60, random_state=0)
    firsts = {}
    for spends in ("nothing", "everything"):
        def refuse(self, lam, left, spends=spends):
            return 0.0 if spends == "nothing" else float(left)

        monkeypatch.setattr(_path._Solver, "dual_probe", refuse)
        res = spca.dspca_cardinality(S, 20)
        first = next(t for t in res.trials if t.role == "bound")
        firsts[spends] = (first.lam, first.sweeps, first.upper_bound)
    assert firsts["everything"] == firsts["nothing"]


def test_nyt_topics_make_no_probe_solve_beyond_the_room(monkeypatch):
    """The NYT sample's five topics: the fourth one's probe at the
    candidates' variance floor was planned at 280 times its search's work
    (59 ms for a cut that did not lower the bound); now every probe solve
    fits its room, and the certified ratios are at least those of the
    release before the cluster duals (0.9109, 0.9610, 0.9824, 0.9288,
    0.9618)."""
    from spca.datasets import load_nytimes_sample
    from spca.text import sparse_topics

    probes = _probe_plans(monkeypatch)
    res = sparse_topics(load_nytimes_sample(), n_components=5, cardinality=5)
    for size, cap, search_work in probes:
        room = max(_path.PROBE_SOLVE_WORK * search_work, _path.WORK_FLOOR)
        assert planned(size, cap) <= room * (1 + 1e-12)
    before = [0.910885, 0.961009, 0.982386, 0.928777, 0.961845]
    ratios = [t.certified_ratio for t in res.topics]
    assert all(r >= b - 1e-6 for r, b in zip(ratios, before, strict=True)), ratios
