"""The solves behind sparse_topics' searches: results formed on access, single-feature solves."""

import copy
import dataclasses
import pickle

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
from spca import _path
from spca._bca import DSPCAResult
from spca._variance import _MatrixCovariance
from spca.datasets import make_spiked_covariance


def _split_covariance(seed=0, blocks=(6, 5, 4), rho=0.6):
    """Block-diagonal covariance: at a lam between the blocks' couplings a
    solve works on the relevant block only."""
    rng = np.random.default_rng(seed)
    parts = []
    for size in blocks:
        A = rng.standard_normal((size, size))
        parts.append(rho * (A @ A.T) / size + np.diag(rng.uniform(0.5, 1.5, size)))
    n = sum(blocks)
    S = np.zeros((n, n))
    at = 0
    for P in parts:
        S[at:at + P.shape[0], at:at + P.shape[0]] = P
        at += P.shape[0]
    return S


def _restricted_solve(S, lam):
    solver = _path._Solver(_MatrixCovariance(S), max_sweeps=200,
                           options=_path._solver_options(5, 1e-3, True), verbose=False)
    W, R, _ = solver.plan(lam)
    res = solver.solve(lam, 1e-8)
    return solver, W, R, res


def _eager(res, W, diag, n_blocks):
    """The form of _Solver.full before it was lazy, written out."""
    pos = np.searchsorted(W, res.kept)
    Z = np.zeros((W.size, W.size))
    Z[np.ix_(pos, pos)] = res.Z_reduced
    X = np.diag(diag)
    X[np.ix_(pos, pos)] = res.X_reduced
    return Z, X


def test_full_result_formed_on_access_equals_eager_form():
    S = _split_covariance()
    d = np.diag(S)
    lam = 0.5 * float(np.sort(d)[-3])
    solver, W, R, res = _restricted_solve(S, lam)
    assert R is not None and R.size < W.size  # a restricted solve
    _, W_e, diag, n_blocks = solver._restricted[id(res)]
    Z_e, X_e = _eager(res, W_e, diag, n_blocks)
    full = solver.full(res)
    assert isinstance(full, DSPCAResult)
    assert "Z_reduced" not in full.__dict__ and "X_reduced" not in full.__dict__
    np.testing.assert_array_equal(full.kept, W)
    assert full.reduced_size == W.size and full.n_blocks == n_blocks
    np.testing.assert_array_equal(full.Z_reduced, Z_e)
    np.testing.assert_array_equal(full.X_reduced, X_e)
    assert full.Z_reduced is full.Z_reduced  # formed once
    # the other fields are the solve's
    for name in ("objective", "upper_bound", "gap", "lam", "converged", "status"):
        assert getattr(full, name) == getattr(res, name)
    np.testing.assert_array_equal(full.loadings, res.loadings)
    # Z over every feature: PSD, trace one, zero outside the relevant block
    Z = full.Z
    assert np.trace(Z) == pytest.approx(1.0)
    assert np.linalg.eigvalsh(Z).min() >= -1e-10
    outside = np.setdiff1d(np.arange(S.shape[0]), R)
    assert not np.any(Z[outside])


@pytest.mark.parametrize("how", ["pickle", "deepcopy", "replace", "warm start"])
def test_full_result_survives_copies_and_serves_as_warm_start(how):
    S = _split_covariance(seed=1)
    lam = 0.5 * float(np.sort(np.diag(S))[-3])
    solver, W, R, res = _restricted_solve(S, lam)
    assert R is not None
    _, W_e, diag, n_blocks = solver._restricted[id(res)]
    Z_e, X_e = _eager(res, W_e, diag, n_blocks)
    full = solver.full(res)
    if how == "pickle":
        other = pickle.loads(pickle.dumps(full))
    elif how == "deepcopy":
        other = copy.deepcopy(full)
    elif how == "replace":
        other = dataclasses.replace(full, tol=1e-3)
        assert other.tol == 1e-3
    else:
        # the result as X0 of dspca_bca at the same lam: the warm start reads
        # X_reduced and gives the same answer as the eager form
        a = spca.dspca_bca(S, lam, X0=full, tol=1e-8)
        eager = dataclasses.replace(res, Z_reduced=Z_e, X_reduced=X_e, kept=W_e,
                                    _dual_columns=None, n_features=S.shape[0])
        b = spca.dspca_bca(S, lam, X0=eager, tol=1e-8)
        np.testing.assert_array_equal(a.support, b.support)
        assert a.objective == b.objective and a.upper_bound == b.upper_bound
        return
    np.testing.assert_array_equal(other.Z_reduced, Z_e)
    np.testing.assert_array_equal(other.X_reduced, X_e)
    np.testing.assert_array_equal(other.kept, W_e)


def test_cardinality_result_matrices_as_before():
    # dspca_cardinality's result: its matrices over the surviving features,
    # with the eager form's values (Z zero outside the solve's features)
    S, _ = make_spiked_covariance(60, random_state=3)
    out = spca.dspca_cardinality(S, 5)
    res = out.result
    Z = res.Z_reduced
    assert Z.shape == (res.kept.size, res.kept.size)
    assert np.trace(Z) == pytest.approx(1.0)
    assert np.allclose(Z, Z.T)
    X = res.X_reduced
    assert np.linalg.eigvalsh(0.5 * (X + X.T)).min() > 0


# -- single-feature solves -----------------------------------------------------------

_FIELDS = ("objective", "upper_bound", "gap", "converged", "tol", "lam", "beta",
           "explained_variance", "n_features", "eliminate", "n_sweeps", "n_qp_passes",
           "primal", "dual", "history", "n_blocks", "n_blocks_solved", "status")


def _solved(B, lam, tol, X0):
    from spca._bca import _dspca_bca_checked

    return _dspca_bca_checked(B, lam, tol=tol, max_sweeps=5, X0=X0,
                              **_path._solver_options(5, 1e-3, True))


def _assert_same(a, b):
    for name in _FIELDS:
        assert getattr(a, name) == getattr(b, name), name
    for name in ("Z_reduced", "X_reduced", "loadings", "support", "kept", "_dual_columns"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b, name), err_msg=name)


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_single_feature_equals_the_solver(data):
    """The closed form gives the solver's result field for field, cold and
    warm-started (from a result or an iterate), over a range of scales."""
    b = data.draw(st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False,
                            allow_subnormal=False))
    frac = data.draw(st.floats(0.0, 0.999))
    lam = frac * b
    tol = data.draw(st.sampled_from([1e-6, 1e-3, 1e-8]))
    B = np.array([[b]])
    start = data.draw(st.sampled_from(["cold", "result", "iterate", "zero"]))
    X0 = None
    if start == "result":
        X0 = _solved(B, data.draw(st.floats(0.0, 0.999)) * b, tol, None)
    elif start == "iterate":
        X0 = np.array([[data.draw(st.floats(1e-3, 10.0)) * b]])
    elif start == "zero":
        X0 = np.zeros((1, 1))
    fast = _path._single_feature(B, lam, tol, X0)
    slow = _solved(B, lam, tol, X0)
    assert fast is not None
    _assert_same(fast, slow)
    # phi = b - lam (up to the rounding of the scaled units), below the
    # upper bound by the rounding margin only
    eps = np.finfo(float).eps
    assert abs(fast.objective - (b - lam)) <= 4 * eps * b
    assert fast.objective <= fast.upper_bound <= fast.objective + 1e-12 * b
    assert fast.converged and fast.support.tolist() == [0]


def test_single_feature_not_converged_left_to_the_solver():
    # a tol below the rounding margin: the solver's own path (and warning)
    assert _path._single_feature(np.array([[2.0]]), 1.0, 0.0, None) is None


def test_topics_single_feature_solves_match_the_solver(monkeypatch):
    """On the NYT sample every closed-form solve of the five searches equals
    the solver's at the same lam and warm start, and the searches make as
    many of them as the bracketing solves at one nonzero (24)."""
    from spca.datasets import load_nytimes_sample
    from spca.text import sparse_topics

    calls = []
    closed = _path._single_feature

    def spy(B, lam, tol, X0):
        out = closed(B, lam, tol, X0)
        calls.append(lam)
        _assert_same(out, _solved(B, lam, tol, X0))
        return out

    monkeypatch.setattr(_path, "_single_feature", spy)
    res = sparse_topics(load_nytimes_sample(), n_components=5, cardinality=5)
    assert len(calls) == 24
    assert [t.words[0] for t in res.topics] == ["company", "play", "official", "state", "man"]


# -- relevance checks without an edge ------------------------------------------------


def _relevant_reference(S, lam, W):
    """spca._bca's rule (blocks, cheap bounds, relevant blocks) over W."""
    from spca import _bca

    Sw = S[np.ix_(W, W)]
    blocks = _bca._blocks(Sw, lam)
    R = _bca._relevant(Sw, lam, blocks, _bca._cheap_bounds(Sw, lam, blocks))
    return (None if R is None else W[R]), len(blocks)


def _check_plan(solver, S, lam):
    """The solver's plan at ``lam`` has spca._bca's relevant features and
    block count."""
    W, R, n_blocks = solver.plan(lam)
    R_ref, n_ref = _relevant_reference(S, lam, W)
    assert n_blocks == n_ref
    if R_ref is None:
        assert R is None
    else:
        np.testing.assert_array_equal(R, R_ref)
        assert R.dtype == np.intp


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_relevant_features_match_the_solver_rule(data):
    """_Solver._relevant (with its shortcut when no entry off the diagonal
    passes lam) gives spca._bca's relevant features and block count, at lams
    with and without edges, ties of the largest variance included."""
    n = data.draw(st.integers(1, 12))
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((n, n + 2))
    S = A @ A.T / (n + 2)
    if n > 1 and data.draw(st.booleans()):
        # (a tie of the largest variance is possible; raising a diagonal
        # entry keeps S positive semidefinite)
        S[0, 0] = S[1, 1] = max(S[0, 0], S[1, 1])
    solver = _path._Solver(_MatrixCovariance(S), max_sweeps=50,
                           options=_path._solver_options(5, 1e-3, True), verbose=False)
    d = np.diag(S)
    off = np.abs(S - np.diag(d)).max() if n > 1 else 0.0
    frac = data.draw(st.floats(0.0, 0.999))
    lam = frac * float(d.max())
    if data.draw(st.booleans()) and off < d.max():
        lam = off + frac * (float(d.max()) - off)  # (no edge at this lam)
    _check_plan(solver, S, lam)


def test_relevant_shortcut_taken_on_the_topics(monkeypatch):
    """The NYT searches check relevance at lams without any edge (the
    shortcut's case: 19 of the checks, each lam once) and the first topic
    keeps its words."""
    from spca.datasets import load_nytimes_sample
    from spca.text import sparse_topics

    seen = []
    general = _path._Solver._relevant

    def spy(self, lam, W):
        out = general(self, lam, W)
        if not np.any(self._rowmax[W] > lam):
            seen.append(out)
        return out

    monkeypatch.setattr(_path._Solver, "_relevant", spy)
    res = sparse_topics(load_nytimes_sample(), n_components=5, cardinality=5)
    assert len(seen) >= 15
    assert all(R is not None and R.size == 1 for R, _ in seen)
    assert [t.words for t in res.topics][0] == ["company", "percent", "market", "business",
                                                "price"]


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_relevant_features_with_isolated_features_match_the_solver_rule(data):
    """_Solver._relevant works over the rows with an edge and the feature of
    largest variance only: on covariances of coupled blocks among many
    features without an edge (the NYT case, the largest variance either
    inside a block or alone), it gives spca._bca's features and block count."""
    seed = data.draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    blocks = data.draw(st.lists(st.integers(2, 5), min_size=1, max_size=3))
    alone = data.draw(st.integers(0, 25))
    S = _split_covariance(seed, blocks=tuple(blocks) + (1,) * alone)
    n = S.shape[0]
    perm = rng.permutation(n)
    S = S[np.ix_(perm, perm)]
    d = np.diag(S)
    if data.draw(st.booleans()):
        # the largest variance on a feature without an edge (if there is one)
        single = [i for i in range(n) if not np.any(np.delete(S[i], i))]
        if single:
            S[single[0], single[0]] = 1.5 * float(d.max())
            d = np.diag(S)
    off = np.abs(S - np.diag(d)).max()
    lam = data.draw(st.floats(0.05, 0.999)) * float(min(off, d.max()))
    solver = _path._Solver(_MatrixCovariance(S), max_sweeps=50,
                           options=_path._solver_options(5, 1e-3, True), verbose=False)
    _check_plan(solver, S, lam)


# -- the barrier iterate's inverse, written into one array per solve -----------------


def _inverse_reference(X):
    """The inverse as spca._bca._inverse formed it before (SciPy's LAPACK
    wrappers, the upper triangle mirrored)."""
    import scipy.linalg as sla

    c, info = sla.lapack.dpotrf(X, lower=False)
    assert info == 0
    inv, _ = sla.lapack.dpotri(c, lower=False)
    inv = np.triu(inv)
    inv = inv + np.triu(inv, 1).T
    return np.ascontiguousarray(inv)


@given(st.data())
@settings(max_examples=60, deadline=None)
def test_inverse_into_a_reused_array_is_bitwise_the_fresh_one(data):
    """spca._bca._inverse gives the bits of the LAPACK-wrapper form, fresh or
    written over an array holding anything (an earlier inverse, NaN), for an
    X whose two triangles differ by rounding."""
    from spca import _bca

    m = data.draw(st.integers(1, 40))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    A = rng.standard_normal((m, m + 3))
    X = A @ A.T / (m + 3) + 1e-3 * np.eye(m)
    if m > 1 and data.draw(st.booleans()):
        X[0, m - 1] = np.nextafter(X[0, m - 1], np.inf)  # (not exactly symmetric)
    X_before = X.copy()
    ref = _inverse_reference(X)
    fresh = _bca._inverse(X)
    buf = np.full((m, m), np.nan) if data.draw(st.booleans()) else _bca._inverse(X + np.eye(m))
    reused = _bca._inverse(X, buf)
    assert reused is buf and fresh.flags.c_contiguous
    for out in (fresh, reused):
        assert np.array_equal(out.view(np.int64), ref.view(np.int64))
    assert np.array_equal(X, X_before)


def test_inverse_kernel_refuses_mismatched_shapes():
    from spca import _bca_fast

    with pytest.raises(ValueError, match=r"square of the same size, got \(3, 3\) and \(2, 2\)"):
        _bca_fast.spd_inverse(np.eye(3), np.empty((2, 2)))
    assert _bca_fast.spd_inverse(np.eye(2) - 2.0, np.empty((2, 2))) != 0  # not PD: info


@given(st.data())
@settings(max_examples=40, deadline=None)
def test_principal_block_kernel_is_the_fancy_index_copy(data):
    """The solver's blocks (_Solver._sub) are A[np.ix_(idx, idx)] exactly."""
    from spca import _bca_fast

    n = data.draw(st.integers(1, 30))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    A = rng.standard_normal((n, n))
    idx = np.sort(rng.choice(n, data.draw(st.integers(0, n)), replace=False)).astype(np.intp)
    out = np.full((idx.size, idx.size), np.nan)
    _bca_fast.principal_block(A, idx, out)
    assert np.array_equal(out, A[np.ix_(idx, idx)])


def test_principal_block_kernel_refuses_bad_input():
    from spca import _bca_fast

    with pytest.raises(ValueError, match=r"idx\[1\] = 3 is out of range 0..2"):
        _bca_fast.principal_block(np.eye(3), np.array([0, 3], dtype=np.intp), np.empty((2, 2)))
    with pytest.raises(ValueError, match="out 2 x 2"):
        _bca_fast.principal_block(np.eye(3), np.array([0, 1], dtype=np.intp), np.empty((3, 3)))


@given(a=st.lists(st.integers(0, 60), max_size=40, unique=True),
       b=st.lists(st.integers(0, 60), max_size=40, unique=True),
       sort_a=st.booleans(), sort_b=st.booleans())
@settings(max_examples=200, deadline=None)
def test_matched_is_intersect1d(a, b, sort_a, sort_b):
    """The warm start's index matching gives np.intersect1d's indices,
    sorted inputs (binary search) or not (intersect1d itself)."""
    a = np.array(sorted(a) if sort_a else a, dtype=np.intp)
    b = np.array(sorted(b) if sort_b else b, dtype=np.intp)
    _, ia, ib = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    ja, jb = _path._matched(a, b)
    np.testing.assert_array_equal(ja, ia)
    np.testing.assert_array_equal(jb, ib)
    assert ja.dtype == ia.dtype and jb.dtype == ib.dtype
