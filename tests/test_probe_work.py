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
