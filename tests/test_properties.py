"""Invariants of dspca_bca checked by hypothesis on small random problems."""

import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import spca


def draw_problem(seed, n, m, frac):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n)) * rng.uniform(0.2, 2.0, size=n)
    Sigma = A.T @ A / m
    off = np.abs(Sigma - np.diag(np.diag(Sigma))).max() if n > 1 else 0.0
    lam = float(frac * max(off, 1e-3))
    return Sigma, lam


problems = dict(
    seed=st.integers(0, 2**32 - 1), n=st.integers(1, 9), m=st.integers(1, 12),
    frac=st.floats(0.05, 1.2),
)


def solve(*args, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", (spca.ConvergenceWarning, spca.EmptyProblemWarning))
        return spca.dspca_bca(*args, **kwargs)


@settings(max_examples=60)
@given(**problems, sweeps=st.integers(1, 4), eliminate=st.booleans())
def test_bounds_always_sandwich(seed, n, m, frac, sweeps, eliminate):
    Sigma, lam = draw_problem(seed, n, m, frac)
    early = solve(Sigma, lam, max_sweeps=sweeps, eliminate=eliminate)
    assert early.objective <= early.upper_bound * (1 + 1e-12) + 1e-15
    ref = solve(Sigma, lam, eliminate=eliminate, tol=1e-8, max_sweeps=3000)
    # any primal value is below any dual bound of the same problem
    assert early.objective <= ref.upper_bound * (1 + 1e-12) + 1e-15
    assert ref.objective <= early.upper_bound * (1 + 1e-12) + 1e-15
    Z = early.Z
    if early.reduced_size:
        assert np.trace(Z) == pytest.approx(1.0)
        assert np.linalg.eigvalsh(Z)[0] >= -1e-10


@settings(max_examples=40)
@given(**problems, log_c=st.floats(-3, 3))
def test_scaling_sigma_and_lam_together(seed, n, m, frac, log_c):
    Sigma, lam = draw_problem(seed, n, m, frac)
    c = 10.0**log_c
    a = solve(Sigma, lam)
    b = solve(c * Sigma, c * lam)
    assume(a.converged and b.converged)
    assert b.objective == pytest.approx(c * a.objective, rel=1e-5, abs=1e-12 * c)
    assert b.upper_bound >= c * a.objective * (1 - 1e-9)
    np.testing.assert_array_equal(a.kept, b.kept)
    # Z is the same when the optimum is unique enough to be found twice
    if a.support.size and a.primal == b.primal == "rank-one polish":
        if np.array_equal(a.support, b.support):
            np.testing.assert_allclose(a.loadings, b.loadings, atol=1e-5)


@settings(max_examples=40)
@given(**problems, perm_seed=st.integers(0, 2**32 - 1))
def test_permuting_features(seed, n, m, frac, perm_seed):
    Sigma, lam = draw_problem(seed, n, m, frac)
    p = np.random.default_rng(perm_seed).permutation(n)
    a = solve(Sigma, lam)
    b = solve(Sigma[np.ix_(p, p)], lam)
    assume(a.converged and b.converged)
    assert b.objective == pytest.approx(a.objective, rel=1e-5, abs=1e-12)
    np.testing.assert_array_equal(np.sort(p[b.kept]), a.kept)
    if a.primal == b.primal == "rank-one polish" and np.array_equal(
        np.sort(p[b.support]), a.support
    ):
        np.testing.assert_allclose(b.loadings, a.loadings[p], atol=1e-5)


@settings(max_examples=30)
@given(**problems)
def test_restarting_from_the_solution_changes_nothing(seed, n, m, frac):
    Sigma, lam = draw_problem(seed, n, m, frac)
    a = solve(Sigma, lam)
    assume(a.converged and a.reduced_size > 0)
    b = solve(Sigma, lam, X0=a)
    assert b.converged
    assert b.objective == pytest.approx(a.objective, rel=1e-6)
    assert b.n_sweeps <= max(a.n_sweeps, 3)


@settings(max_examples=80)
@given(seed=st.integers(0, 2**32 - 1), q=st.integers(1, 30), s=st.integers(1, 10),
       zeros=st.integers(0, 3), width=st.floats(1e-3, 2.0))
def test_row_projection_matches_references(seed, q, s, zeros, width):
    # The compiled _project_rows (bisection over sorted breakpoints) against
    # the NumPy references (every breakpoint; bisection on theta): the same
    # rows, each in its box and orthogonal to xs whenever the box meets the plane.
    from _reference import project_rows_bisection, project_rows_breakpoints

    import spca._certificate as cert

    rng = np.random.default_rng(seed)
    xs = rng.standard_normal(s)
    xs[rng.choice(s, min(zeros, s - 1), replace=False)] = 0.0
    box = rng.standard_normal((q, s))
    R0 = box + rng.uniform(-3, 3, (q, s)) * width
    lo, hi = box - width, box + width
    args = (R0.copy(), xs.copy(), lo.copy(), hi.copy())
    got = cert._project_rows(*args)
    for before, after in zip((R0, xs, lo, hi), args, strict=True):
        np.testing.assert_array_equal(before, after)  # inputs untouched
    tol = 1e-9 * (1 + np.abs(R0).max())
    np.testing.assert_allclose(got, project_rows_breakpoints(R0, xs, lo, hi), rtol=0, atol=tol)
    np.testing.assert_allclose(got, project_rows_bisection(R0, xs, lo, hi), rtol=0, atol=tol)
    assert np.all(got >= lo) and np.all(got <= hi)
    nz = xs != 0
    reach_lo = np.where(xs > 0, lo, hi)[:, nz] @ xs[nz]  # smallest r . xs in the box
    reach_hi = np.where(xs > 0, hi, lo)[:, nz] @ xs[nz]
    meets = (reach_lo < 0) & (reach_hi > 0)
    np.testing.assert_allclose((got @ xs)[meets], 0.0, atol=1e-9 * (1 + np.abs(box).max()))
