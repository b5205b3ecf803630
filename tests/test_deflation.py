"""Deflation: PSD-ness, annihilation, disjoint supports, planted recovery, explained variance."""

from __future__ import annotations

import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spca._deflation import (
    DeflationWarning,
    _DeflatedCovariance,
    deflate,
    sparse_components,
)
from spca._variance import _MatrixCovariance, explained_variance


def random_psd(seed: int, n: int, rank: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((rank, n)) * rng.uniform(0.2, 3.0, n)
    return A.T @ A / rank


def random_sparse(rng: np.random.Generator, n: int) -> np.ndarray:
    x = np.zeros(n)
    s = rng.integers(1, n + 1)
    x[rng.choice(n, s, replace=False)] = rng.standard_normal(s)
    return x / np.linalg.norm(x)


def planted(seed: int, n_samples: int = 400, n: int = 30) -> tuple[np.ndarray, list[set[int]]]:
    """Three disjoint sparse factors of decreasing strength plus noise."""
    rng = np.random.default_rng(seed)
    blocks = [range(0, 5), range(10, 15), range(20, 25)]
    X = rng.standard_normal((n_samples, n))
    for strength, cols in zip((4.0, 3.0, 2.0), blocks, strict=True):
        X[:, list(cols)] += strength * rng.standard_normal((n_samples, 1))
    Xc = X - X.mean(0)
    return Xc.T @ Xc / (n_samples - 1), [set(b) for b in blocks]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12), rank_frac=st.floats(0.2, 1.5))
def test_schur_keeps_psd_and_annihilates_all_earlier(seed, n, rank_frac):
    rng = np.random.default_rng(seed)
    S = random_psd(seed, n, max(1, int(rank_frac * n)))
    scale = np.abs(S).max()
    xs = []
    for _ in range(min(3, n)):
        x = random_sparse(rng, n)
        if x @ S @ x <= 1e-8 * scale:
            break
        S = deflate(S, x, "schur")
        xs.append(x)
        assert np.allclose(S, S.T, atol=0)
        assert np.linalg.eigvalsh(S)[0] >= -1e-9 * scale
        for y in xs:
            assert np.linalg.norm(S @ y) <= 1e-8 * scale


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12))
def test_projection_keeps_psd_and_annihilates_last(seed, n):
    rng = np.random.default_rng(seed)
    S = random_psd(seed, n, n)
    scale = np.abs(S).max()
    for _ in range(2):
        x = random_sparse(rng, n)
        S = deflate(S, 3.0 * x, "projection")  # any scaling of x
        assert np.linalg.eigvalsh(S)[0] >= -1e-9 * scale
        assert np.linalg.norm(S @ x) <= 1e-9 * scale


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), method=st.sampled_from(["schur", "projection", "removal"]))
def test_operator_matches_dense_deflation(seed, method):
    rng = np.random.default_rng(seed)
    n = 9
    S = random_psd(seed, n, 12)
    op = _DeflatedCovariance(_MatrixCovariance(S))
    dense = S.copy()
    for _ in range(3):
        x = random_sparse(rng, n)
        if x @ dense @ x <= 1e-6:
            break
        op.deflate(x, method)
        dense = deflate(dense, x, method)
        scale = np.abs(S).max()
        np.testing.assert_allclose(op.block(np.arange(n)), dense, atol=1e-9 * scale)
        d = np.where(np.diag(dense) > op.floor, np.diag(dense), 0.0)
        np.testing.assert_allclose(op.diag, d, atol=1e-9 * scale)
        v = rng.standard_normal(n)
        np.testing.assert_allclose(op.matvec(v), dense @ v, atol=1e-9 * scale * n)


def test_deflate_does_not_modify_and_validates():
    S = random_psd(0, 4, 6)
    copy = S.copy()
    deflate(S, [1.0, 0, 0, 0])
    np.testing.assert_array_equal(S, copy)
    with pytest.raises(ValueError, match="deflation must be one of"):
        deflate(S, [1.0, 0, 0, 0], "hotelling")
    with pytest.raises(ValueError, match="x must have shape"):
        deflate(S, [1.0, 0])
    with pytest.raises(ValueError, match="nonzero"):
        deflate(S, np.zeros(4))
    Z = S.copy()
    Z[0, :] = Z[:, 0] = 0.0
    with pytest.raises(ValueError, match="x' Sigma x > 0"):
        deflate(Z, [1.0, 0, 0, 0], "schur")


@pytest.mark.parametrize("deflation", ["schur", "projection", "removal"])
def test_planted_three_components_recovered(deflation):
    Sigma, blocks = planted(0)
    res = sparse_components(Sigma, 3, cardinality=5, deflation=deflation)
    assert res.n_components == 3 and not res.message
    assert [set(c.support.tolist()) for c in res.components] == blocks
    for c in res.components:
        assert c.search is not None and c.search.exact
        assert c.cardinality == 5 and c.gap <= 1e-6 and c.converged
        assert np.linalg.norm(c.loadings) == pytest.approx(1.0)
        assert c.objective <= c.upper_bound * (1 + 1e-12)
    assert np.all(np.diff(res.explained.cumulative) > 0)
    assert np.all(res.explained.pca_ratio <= 1 + 1e-9)
    assert res.loadings.shape == (3, 30) and res.lambdas.shape == (3,)



@pytest.mark.parametrize("deflation", ["schur", "removal"])
def test_formed_covariance_is_used_as_is_with_the_same_answer(deflation):
    # The text pipeline hands its own covariance over unvalidated
    # (_MatrixCovariance.formed): same components as the validated path, the
    # array neither copied nor modified, a rounding-negative diagonal read as 0.
    Sigma, _ = planted(0)
    S = np.ascontiguousarray(Sigma)
    before = S.copy()
    cov = _MatrixCovariance.formed(S)
    assert cov.S is S and cov.psd_checked and cov.dense_view() is S
    got = sparse_components(cov, 3, cardinality=5, deflation=deflation)
    ref = sparse_components(Sigma, 3, cardinality=5, deflation=deflation)
    np.testing.assert_array_equal(S, before)
    for a, b in zip(got.components, ref.components, strict=True):
        np.testing.assert_array_equal(a.support, b.support)
        assert a.lam == pytest.approx(b.lam, rel=1e-9)
        assert a.objective == pytest.approx(b.objective, rel=1e-9)
    T = np.zeros((3, 3))
    T[0, 0], T[1, 1], T[2, 2] = -1e-18, 1.0, 2.0
    assert _MatrixCovariance.formed(T).diag.tolist() == [0.0, 1.0, 2.0]


def test_pca_eigenvalues_of_a_formed_covariance_are_computed_on_first_access(monkeypatch):
    # The text pipeline never reads explained.pca_variance, so for an operator
    # the package formed the eigensolver runs only when it is read; the values
    # are those of the eager path (a caller's array gets them at once).
    Sigma, _ = planted(1)
    cov = _MatrixCovariance.formed(np.ascontiguousarray(Sigma))
    calls = []
    real = _MatrixCovariance.top_eigenvalues

    def counted(self, q):
        calls.append(q)
        return real(self, q)

    monkeypatch.setattr(_MatrixCovariance, "top_eigenvalues", counted)
    got = sparse_components(cov, 2, cardinality=5)
    assert calls == []
    ref = sparse_components(Sigma, 2, cardinality=5)
    assert calls == [2]
    np.testing.assert_allclose(got.explained.pca_variance, np.linalg.eigvalsh(Sigma)[::-1][:2],
                               rtol=1e-9)
    assert calls == [2, 2]
    np.testing.assert_array_equal(got.explained.pca_variance, ref.explained.pca_variance)
    np.testing.assert_array_equal(got.explained.pca_ratio, ref.explained.pca_ratio)
    assert calls == [2, 2]  # cached
    lazy = sparse_components(cov, 2, cardinality=5).explained
    back = pickle.loads(pickle.dumps(lazy))  # pickled with the values, not the operator
    assert calls == [2, 2, 2]
    np.testing.assert_array_equal(back.pca_ratio, ref.explained.pca_ratio)

def test_removal_gives_disjoint_supports():
    Sigma = random_psd(3, 14, 30)
    with pytest.warns(DeflationWarning, match=r"only 3 of n_components=4"):
        res = sparse_components(Sigma, 4, cardinality=4, deflation="removal")
    seen: set[int] = set()
    for c in res.components:
        s = set(c.support.tolist())
        assert not s & seen
        seen |= s
    assert "only 2 feature(s) have variance left" in res.message


def test_schur_components_scores_uncorrelated():
    Sigma, _ = planted(1)
    res = sparse_components(Sigma, 3, cardinality=[5, 4, 6])
    assert [c.cardinality for c in res.components] == [5, 4, 6]
    V = res.loadings
    # Schur deflation: later components are uncorrelated with the earlier scores
    # after conditioning -- the Gram matrix of the deflated problems is diagonal.
    S = Sigma.copy()
    for t, v in enumerate(V):
        for u in V[:t]:
            assert abs(u @ S @ v) <= 1e-8 * np.abs(Sigma).max()
        S = deflate(S, v, "schur")


def test_fixed_lam_and_per_component_lam():
    Sigma, blocks = planted(2)
    res = sparse_components(Sigma, 2, lam=[3.0, 2.0])
    assert res.lambdas.tolist() == [3.0, 2.0]
    assert all(c.search is None for c in res.components)
    assert set(res.components[0].support.tolist()) <= blocks[0]


def test_too_many_components_stop_with_warning_not_nan():
    Sigma = random_psd(4, 5, 2)  # rank 2
    with pytest.warns(DeflationWarning, match=r"only 2 of n_components=4"):
        res = sparse_components(Sigma, 4, cardinality=2)
    assert res.n_components == 2
    assert np.all(np.isfinite(res.loadings))
    assert "no variance left" in res.message or "explains no variance" in res.message


def test_lam_eliminating_everything():
    Sigma = random_psd(5, 6, 10)
    big = float(np.diag(Sigma).max()) * 2
    with pytest.raises(ValueError, match=rf"lam={big!r} eliminates every feature"):
        sparse_components(Sigma, 2, lam=big)
    # Later components: warning, not an error.
    lam = float(np.sort(np.diag(Sigma))[-1]) * 0.99
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        res = sparse_components(Sigma, 6, lam=lam)
    assert res.n_components >= 1
    assert any(issubclass(w.category, DeflationWarning) for w in rec)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({}, "give exactly one of cardinality and lam"),
        ({"cardinality": 2, "lam": 0.1}, "give exactly one of cardinality and lam"),
        ({"cardinality": 0}, "cardinality must be >= 1, got 0"),
        ({"cardinality": 9}, "cardinality must be <= n_features = 6, got 9"),
        ({"cardinality": [2, 2, 2]}, "one entry per component"),
        ({"lam": -1.0}, "lam must be >= 0, got -1.0"),
        ({"cardinality": 2, "deflation": "hotelling"}, "deflation must be one of"),
    ],
)
def test_bad_arguments(kwargs, match):
    with pytest.raises(ValueError, match=match):
        sparse_components(random_psd(0, 6, 10), 2, **kwargs)


def test_explained_variance_definitions():
    rng = np.random.default_rng(0)
    S = random_psd(6, 8, 20)
    w, U = np.linalg.eigh(S)
    V = U[:, ::-1][:, :3].T
    ev = explained_variance(S, V)
    np.testing.assert_allclose(ev.variance, w[::-1][:3], rtol=1e-10)
    np.testing.assert_allclose(ev.pca_ratio, 1.0, rtol=1e-10)
    assert ev.total_variance == pytest.approx(np.trace(S))
    # Non-orthogonal loadings: cumulative = Tr(P S P) with P the projector on their span.
    V = np.vstack([random_sparse(rng, 8) for _ in range(3)])
    ev = explained_variance(S, V)
    for t in range(1, 4):
        Q, _ = np.linalg.qr(V[:t].T)
        assert ev.cumulative[t - 1] == pytest.approx(np.trace(Q.T @ S @ Q), rel=1e-10)
    assert np.all(ev.pca_ratio <= 1 + 1e-12)
    # A repeated loading adds nothing.
    ev = explained_variance(S, np.vstack([V[0], V[0]]))
    assert ev.variance[1] == pytest.approx(0.0, abs=1e-10)
    # Adjusted variance: the first equals v' S v, the others are residual variances.
    adj = explained_variance(S, V, method="adjusted")
    v0 = V[0] / np.linalg.norm(V[0])
    assert adj.variance[0] == pytest.approx(v0 @ S @ v0)
    assert np.all(adj.variance <= np.einsum("ij,jk,ik->i", V, S, V) + 1e-12)
    with pytest.raises(ValueError, match="method must be"):
        explained_variance(S, V, method="zht")
    with pytest.raises(ValueError, match=r"components must have shape \(n_components, 8\)"):
        explained_variance(S, np.ones((2, 3)))


def test_refit_gives_the_variance_maximising_loadings_on_the_support():
    rng = np.random.default_rng(3)
    F = rng.standard_normal((400, 20))
    F[:, :5] += 2.0 * rng.standard_normal((400, 1)) * rng.uniform(0.5, 1.5, 5)
    F[:, 8:12] += 1.5 * rng.standard_normal((400, 1)) * rng.uniform(0.5, 1.5, 4)
    Sigma = F.T @ F / 400
    fit = sparse_components(Sigma, 2, cardinality=4)
    raw = sparse_components(Sigma, 2, cardinality=4, refit=False)
    a, b = fit.components[0], raw.components[0]
    np.testing.assert_array_equal(a.support, b.support)  # the relaxation is the same
    assert a.lam == b.lam and a.objective == b.objective
    vals, vecs = np.linalg.eigh(Sigma[np.ix_(a.support, a.support)])
    np.testing.assert_allclose(a.loadings[a.support], vecs[:, -1] * np.sign(
        vecs[np.argmax(np.abs(vecs[:, -1])), -1]), atol=1e-12)
    assert a.variance == pytest.approx(vals[-1], rel=1e-12)
    assert a.variance >= b.variance
    assert np.linalg.norm(a.loadings) == pytest.approx(1.0)
    assert fit.explained.cumulative[0] >= raw.explained.cumulative[0]
    with pytest.raises(TypeError, match="refit must be True or False"):
        sparse_components(Sigma, 1, cardinality=3, refit="yes")


def test_removal_view_is_the_deflated_matrix_and_leaves_the_base_alone():
    S = random_psd(3, 12, 12)
    before = S.copy()
    base = _MatrixCovariance.formed(S)
    op = _DeflatedCovariance(base)
    assert op.dense_view() is base.dense_view() and not op.inactive_rows_zero
    rng = np.random.default_rng(0)
    expected = S
    for _ in range(2):
        x = np.zeros(12)
        x[rng.choice(np.flatnonzero(op.active), 3, replace=False)] = 1.0 / np.sqrt(3)
        op.deflate(x, "removal")
        expected = deflate(expected, x, "removal")
        # one copy made at the first deflation, its removed rows zeroed in place
        np.testing.assert_array_equal(op.dense_view(), expected)
        assert op.inactive_rows_zero
    np.testing.assert_array_equal(S, before)


@pytest.mark.parametrize("n_words", [300, 1024])
def test_removal_pool_without_copy_gives_the_same_components(monkeypatch, n_words):
    # The pool of a removal-deflated component is the whole view (removed rows
    # zero) instead of a copy of its active rows: same supports, variances and
    # bounds as with the copy (the NYT sample's words of largest variance).
    from spca._path import _pool_block, _Solver
    from spca.datasets import load_nytimes_sample

    X = load_nytimes_sample().counts
    X = X[:, np.argsort(-np.asarray(X.power(2).mean(0)).ravel(), kind="stable")[:n_words]]
    S = np.cov(X.toarray(), rowvar=False)

    def run():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return sparse_components(S, 4, cardinality=5, deflation="removal")

    new = run()
    op = _DeflatedCovariance(_MatrixCovariance.formed(S))
    op.deflate(new.components[0].loadings, "removal")
    solver = _Solver(op, max_sweeps=50, options={}, verbose=False)
    solver._ensure_block(0.0, np.flatnonzero(op.diag > 0))
    P, B = _pool_block(solver, 5, [])
    assert B is op.dense_view() and P.size == n_words  # no copy
    monkeypatch.setattr(_DeflatedCovariance, "inactive_rows_zero", property(lambda self: False))
    P, B = _pool_block(solver, 5, [])
    assert P.size == n_words - 5 and B is not op.dense_view()
    old = run()
    for a, b in zip(new.components, old.components, strict=True):
        np.testing.assert_array_equal(a.support, b.support)
        np.testing.assert_allclose(a.variance, b.variance, rtol=1e-12)
        np.testing.assert_allclose(a.variance_upper_bound, b.variance_upper_bound, rtol=1e-12)
