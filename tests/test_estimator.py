"""spca.SparsePCA: scikit-learn conventions, dense/sparse/covariance routes, bad input."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.sparse as sp

pytest.importorskip("sklearn")

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from sklearn.utils.estimator_checks import parametrize_with_checks  # noqa: E402

from spca._deflation import DeflationWarning  # noqa: E402
from spca._estimator import SparsePCA  # noqa: E402


def planted_data(seed: int = 0, n_samples: int = 300, n: int = 24) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n)) * rng.uniform(0.5, 1.5, n)
    for strength, cols in ((4.0, [0, 1, 2, 3]), (3.0, [8, 9, 10, 11]), (2.0, [16, 17, 18])):
        X[:, cols] += strength * rng.standard_normal((n_samples, 1))
    return X + 5.0


def sparse_data(seed: int = 1, n_samples: int = 200, n: int = 20) -> np.ndarray:
    rng = np.random.default_rng(seed)
    X = planted_data(seed, n_samples, n) - 5.0
    X[rng.random(X.shape) < 0.6] = 0.0
    return X


@parametrize_with_checks([
    SparsePCA(),
    SparsePCA(n_components=2, cardinality=2, deflation="removal", scale=True),
])
def test_sklearn_compatible(estimator, check):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeflationWarning)
        check(estimator)


def test_planted_supports_and_attributes():
    X = planted_data()
    est = SparsePCA(n_components=3, cardinality=[4, 4, 3]).fit(X)
    supports = [np.flatnonzero(c).tolist() for c in est.components_]
    assert supports == [[0, 1, 2, 3], [8, 9, 10, 11], [16, 17, 18]]
    assert est.n_components_ == 3 and est.n_features_in_ == 24
    assert est.cardinalities_.tolist() == [4, 4, 3]
    assert est.lambdas_.shape == (3,) and np.all(est.lambdas_ > 0)
    np.testing.assert_allclose(np.linalg.norm(est.components_, axis=1), 1.0)
    np.testing.assert_allclose(est.mean_, X.mean(0))
    np.testing.assert_array_equal(est.scale_, 1.0)
    assert est.total_variance_ == pytest.approx(X.var(0, ddof=1).sum())
    np.testing.assert_allclose(est.explained_variance_ratio_,
                               est.explained_variance_ / est.total_variance_)
    assert np.all(est.pca_variance_ratio_ <= 1 + 1e-10)
    assert np.all(est.pca_variance_ratio_ > 0.8)  # the planted factors dominate
    pca = np.linalg.eigvalsh(np.cov(X.T))[::-1][:3]
    np.testing.assert_allclose(est.pca_explained_variance_, pca, rtol=1e-8)
    assert est.get_feature_names_out().tolist() == ["sparsepca0", "sparsepca1", "sparsepca2"]
    assert all(c.gap <= 1e-6 for c in est.result_.components)


@pytest.mark.parametrize("scale", [False, True])
@pytest.mark.parametrize("center", [True, False])
def test_dense_and_sparse_give_same_components(center, scale):
    X = sparse_data()
    kw = dict(n_components=2, cardinality=4, center=center, scale=scale)
    a = SparsePCA(**kw).fit(X)
    for fmt in (sp.csr_array, sp.csc_matrix):
        b = SparsePCA(**kw).fit(fmt(X))
        np.testing.assert_allclose(b.components_, a.components_, atol=1e-8)
        np.testing.assert_allclose(b.lambdas_, a.lambdas_, rtol=1e-8)
        np.testing.assert_allclose(b.explained_variance_, a.explained_variance_, rtol=1e-8)
        np.testing.assert_allclose(b.transform(fmt(X)), a.transform(X), atol=1e-8)


@pytest.mark.parametrize("scale", [False, True])
def test_fit_equals_covariance_route(scale):
    X = planted_data(2)
    a = SparsePCA(n_components=3, cardinality=4, scale=scale).fit(X)
    b = SparsePCA(n_components=3, cardinality=4, scale=scale).fit_covariance(
        np.cov(X, rowvar=False), mean=X.mean(0))
    np.testing.assert_allclose(b.components_, a.components_, atol=1e-8)
    np.testing.assert_allclose(b.lambdas_, a.lambdas_, rtol=1e-8)
    np.testing.assert_allclose(b.scale_, a.scale_, rtol=1e-10)
    np.testing.assert_allclose(b.transform(X), a.transform(X), atol=1e-8)
    c = SparsePCA(n_components=3, cardinality=4, scale=scale).fit_covariance(
        sp.csr_array(np.cov(X, rowvar=False)), mean=X.mean(0))
    np.testing.assert_allclose(c.components_, a.components_, atol=1e-8)


def test_transform_inverse_transform_projection():
    X = planted_data(3)
    est = SparsePCA(n_components=3, cardinality=5)
    T = est.fit_transform(X)
    np.testing.assert_allclose(T, (X - X.mean(0)) @ est.components_.T, atol=1e-10)
    R = est.inverse_transform(T)
    # Orthogonal projection of the centred data on the span of the loadings:
    V = est.components_
    Q, _ = np.linalg.qr(V.T)
    np.testing.assert_allclose(R - est.mean_, (X - X.mean(0)) @ Q @ Q.T, atol=1e-9)
    # ... whose variance is the cumulative (additional) explained variance.
    assert np.var(R, axis=0, ddof=1).sum() == pytest.approx(est.explained_variance_.sum())
    np.testing.assert_allclose(est.transform(R), T, atol=1e-9)
    with pytest.raises(ValueError, match="X has 2 columns but the estimator has 3 components"):
        est.inverse_transform(T[:, :2])


def test_does_not_modify_input():
    X = sparse_data()
    Xs = sp.csr_array(X)
    X0, data0 = X.copy(), Xs.data.copy()
    SparsePCA(n_components=1, cardinality=3, scale=True).fit(X)
    SparsePCA(n_components=1, cardinality=3, scale=True).fit(Xs)
    np.testing.assert_array_equal(X, X0)
    np.testing.assert_array_equal(Xs.data, data0)


# -- bad input ----------------------------------------------------------------------


def test_nan_and_inf():
    X = planted_data()
    X[3, 4] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        SparsePCA(n_components=1, cardinality=2).fit(X)
    X[3, 4] = np.inf
    with pytest.raises(ValueError, match="infinity"):
        SparsePCA(n_components=1, cardinality=2).fit(X)


def test_too_few_samples():
    with pytest.raises(ValueError, match=r"1 sample\(s\)"):
        SparsePCA(n_components=1, cardinality=1).fit(np.ones((1, 4)))


def test_constant_features():
    X = planted_data()
    X[:, [5, 7]] = 3.0
    with pytest.warns(UserWarning, match=r"2 feature\(s\) of X are constant .*\[5, 7\]"):
        est = SparsePCA(n_components=2, cardinality=4).fit(X)
    assert np.all(est.components_[:, [5, 7]] == 0)
    with pytest.raises(ValueError, match="every feature of X is constant"):
        SparsePCA(n_components=1, cardinality=1).fit(np.ones((5, 3)))
    with pytest.warns(UserWarning, match="constant"), pytest.raises(
            ValueError, match=r"cardinality=3 but only 2 feature\(s\) have positive variance"):
        SparsePCA(n_components=1, cardinality=3).fit(np.c_[planted_data()[:, :2], np.ones(300)])


def test_too_many_components_warns_and_stops():
    X = planted_data()[:, :6]
    with pytest.warns(DeflationWarning, match=r"only 3 of n_components=5"):
        est = SparsePCA(n_components=5, cardinality=2, deflation="removal").fit(X)
    assert est.n_components_ == 3 and est.components_.shape == (3, 6)
    assert np.all(np.isfinite(est.components_))
    assert est.transform(X).shape == (300, 3)
    assert len(est.get_feature_names_out()) == 3


@pytest.mark.parametrize(
    ("params", "exc", "match"),
    [
        ({"cardinality": 0}, ValueError, "cardinality must be >= 1, got 0"),
        ({"cardinality": 30}, ValueError, "cardinality must be <= n_features = 24, got 30"),
        ({"cardinality": 2, "lam": 0.1}, ValueError, "give at most one of cardinality and lam"),
        ({"lam": 1e6}, ValueError, r"lam=1000000.0 eliminates every feature"),
        ({"lam": -0.5}, ValueError, r"lam must be >= 0, got -0.5"),
        ({"n_components": 0}, ValueError, "n_components must be >= 1, got 0"),
        ({"deflation": "hotelling"}, ValueError, "deflation must be one of"),
        ({"tol": 2.0}, ValueError, "tol is a relative duality gap and must be < 1"),
        ({"center": "yes"}, TypeError, "center must be True or False"),
        ({"n_components": 2, "cardinality": [2, 3, 4]}, ValueError, "one entry per component"),
    ],
)
def test_bad_parameters(params, exc, match):
    with pytest.raises(exc, match=match):
        SparsePCA(**params).fit(planted_data())


def test_lam_route_and_defaults():
    X = planted_data()
    est = SparsePCA(n_components=2, lam=2.0).fit(X)
    assert est.lambdas_.tolist() == [2.0, 2.0]
    default = SparsePCA(n_components=1).fit(X)
    assert default.cardinalities_.tolist() == [10]


def test_covariance_bad_mean():
    S = np.cov(planted_data(), rowvar=False)
    with pytest.raises(ValueError, match=r"mean must be a finite vector of shape \(24,\)"):
        SparsePCA(n_components=1, cardinality=2).fit_covariance(S, mean=np.zeros(3))


def test_feature_names_from_a_dataframe():
    pd = pytest.importorskip("pandas")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((80, 6))
    X[:, 2] += 3 * X[:, 0]
    df = pd.DataFrame(X, columns=[f"gene_{i}" for i in range(6)])
    est = SparsePCA(n_components=2, cardinality=2).fit(df)
    np.testing.assert_array_equal(est.feature_names_in_, df.columns.to_numpy())
    out = est.get_feature_names_out()
    assert list(out) == ["sparsepca0", "sparsepca1"]
    # the same data as an array gives the same components and no names
    est2 = SparsePCA(n_components=2, cardinality=2).fit(X)
    np.testing.assert_allclose(est.components_, est2.components_)
    assert not hasattr(est2, "feature_names_in_")


def test_nyt_sample_certificates_agree_with_the_topics():
    # The same components from the estimator (the covariance of all 3,012
    # words, formed block by block over the surviving features) and from
    # spca.text (the covariance of the candidate words): the estimator's
    # certificate probes below the search's last lam too, so its certified
    # ratios are the topics' (they were 0.905 / 0.967 against 0.949 / 0.982:
    # no probe went below the block the search had formed).
    from spca.datasets import load_nytimes_sample
    from spca.text import sparse_topics

    corpus = load_nytimes_sample()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        topics = sparse_topics(corpus, n_components=3, cardinality=5)
        est = SparsePCA(3, cardinality=5, deflation="removal").fit(corpus.counts)
    for t, (topic, row) in enumerate(zip(topics.topics, est.components_, strict=True)):
        assert sorted(corpus.vocabulary[np.abs(row) > 0]) == sorted(topic.words)
        # (the estimator's covariance divides by n - 1, the corpus pipeline's by n)
        assert est.certified_ratios_[t] >= topic.certified_ratio - 1e-3
        assert est.certified_ratios_[t] == pytest.approx(topic.certified_ratio, abs=2e-3)


# -- the data covariance is formed once (spca._estimator._BlockCache) ---------------


def _random_sparse(seed: int, n_samples: int, n: int, density: float) -> sp.csr_array:
    """Sparse data with values over six decades and both signs (the products
    of the covariance round differently at every scale)."""
    rng = np.random.default_rng(seed)
    X = sp.random(n_samples, n, density=density, random_state=seed, format="csr")
    X.data = rng.standard_normal(X.nnz) * 10.0 ** rng.uniform(-3, 3, X.nnz)
    return sp.csr_array(X)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), center=st.booleans(), scale=st.booleans(),
       data=st.data())
def test_block_cache_gives_the_blocks_of_a_fresh_product(seed, center, scale, data):
    # Every block served from the cache (sliced, or extended by the rows of new
    # features) is bit for bit the block a fresh sparse product gives, in any
    # order of requests; the caller's blocks are copies.
    from spca._estimator import _BlockCache
    from spca._variance import _DataCovariance

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 60))
    X = _random_sparse(seed, int(rng.integers(2, 80)), n, 0.2)
    cached = _BlockCache(X, center=center, scale=scale)
    fresh = _DataCovariance(X, center=center, scale=scale)
    for _ in range(data.draw(st.integers(1, 6), label="requests")):
        size = data.draw(st.integers(1, n), label="size")
        idx = np.sort(rng.choice(n, size=size, replace=False)).astype(np.intp)
        B = cached.block(idx)
        np.testing.assert_array_equal(B, fresh.block(idx))
        B[:] = np.nan  # a copy: the cache is unchanged
    idx = cached._kept_idx
    if idx.size:
        np.testing.assert_array_equal(cached.block(idx), fresh.block(idx))


def _count_products(monkeypatch):
    """Record the feature sets of the covariance products of the data (a
    whole block, or the new rows of an extended one)."""
    from spca import _estimator
    from spca._variance import _DataCovariance

    formed: list[tuple[str, int]] = []
    block, extend = _DataCovariance.block, _estimator._BlockCache._extend

    def counted_block(self, idx):
        formed.append(("block", len(idx)))
        return block(self, idx)

    def counted_extend(self, want):
        formed.append(("rows", int(want.size - self._kept_idx.size)))
        return extend(self, want)

    monkeypatch.setattr(_DataCovariance, "block", counted_block)
    monkeypatch.setattr(_estimator._BlockCache, "_extend", counted_extend)
    return formed


@pytest.mark.parametrize("deflation", ["schur", "projection", "removal"])
def test_fit_forms_the_dense_covariance_once(monkeypatch, deflation):
    # The PSD check and every component's search ask for the whole covariance
    # (24 features, up to PSD_ONCE_MAX): it is formed once (it was formed by
    # the check and again by each component).  Smaller blocks (the refit of a
    # support) are formed as asked.
    X = planted_data()
    formed = _count_products(monkeypatch)
    est = SparsePCA(n_components=3, cardinality=4, deflation=deflation).fit(X)
    assert est.n_components_ == 3
    assert [f for f in formed if f == ("block", X.shape[1])] == [("block", X.shape[1])]


def test_fit_sparse_forms_each_covariance_entry_once(monkeypatch):
    # Sparse data over more features than PSD_ONCE_MAX (lowered to 40 here):
    # the searches of the three components ask for the blocks of the features
    # surviving at each lam, and each component's search starts afresh.  The
    # rows of a feature are formed once (one product for the first block, the
    # new rows after), and the components and certificates are bit for bit
    # those of a fresh product per request.
    from spca import _estimator, _path
    from spca._variance import _DataCovariance

    monkeypatch.setattr(_path, "PSD_ONCE_MAX", 40)
    X = _random_sparse(3, 400, 150, 0.1)
    X = X + sp.csr_array(np.outer(np.arange(400) % 2, np.r_[np.ones(6), np.zeros(144)]))
    requests: list[int] = []
    serve = _estimator._BlockCache.block

    def counted(self, idx):
        requests.append(len(idx))
        return serve(self, idx)

    monkeypatch.setattr(_estimator._BlockCache, "block", counted)
    formed = _count_products(monkeypatch)
    est = SparsePCA(n_components=3, cardinality=5).fit(X)
    whole = [n for kind, n in formed if kind == "block"]
    rows = [n for kind, n in formed if kind == "rows"]
    assert len(whole) == 1 and all(n > 0 for n in rows)
    assert whole[0] + sum(rows) <= X.shape[1]  # no feature's rows twice
    assert len(requests) > len(formed) and sum(requests) > 2 * X.shape[1]
    monkeypatch.setattr(_estimator, "_BlockCache", _DataCovariance)
    ref = SparsePCA(n_components=3, cardinality=5).fit(X)
    np.testing.assert_array_equal(est.components_, ref.components_)
    np.testing.assert_array_equal(est.variance_upper_bounds_, ref.variance_upper_bounds_)


@settings(max_examples=40)
@given(seed=st.integers(0, 2**32 - 1), scale=st.booleans(), zeros=st.floats(0.0, 1.0))
def test_data_operator_scores_equal_the_column_product(seed, scale, zeros):
    # Xs @ x from the whole sparse X (x zero on some columns, -0.0 included)
    # is bit for bit the product over the nonzero columns alone.
    from spca._variance import _DataCovariance

    rng = np.random.default_rng(seed)
    X = _random_sparse(seed, int(rng.integers(2, 60)), int(rng.integers(1, 40)), 0.3)
    cov = _DataCovariance(X, scale=scale)
    x = rng.standard_normal(X.shape[1])
    x[rng.random(x.size) < zeros] = 0.0
    x[rng.random(x.size) < 0.1] = -0.0
    nz = np.flatnonzero(x)
    y = x[nz] / cov.scale[nz]
    ref = np.asarray(cov.X[:, nz] @ y).ravel() - float(cov.mean[nz] @ y)
    np.testing.assert_array_equal(cov.scores(x), ref)


@pytest.mark.parametrize("dense", [False, True])
def test_block_cache_keeps_nothing_above_its_size_cap(monkeypatch, dense):
    # A union of requests above CACHE_MAX_FEATURES (lowered to 8) is formed
    # for the request alone and not kept; the blocks are those of a fresh
    # product either way.
    from spca import _estimator
    from spca._variance import _DataCovariance

    monkeypatch.setattr(_estimator, "CACHE_MAX_FEATURES", 8)
    X = _random_sparse(5, 50, 20, 0.3)
    X = X.toarray() if dense else X
    cached = _estimator._BlockCache(X)
    fresh = _DataCovariance(X)
    for idx in (np.arange(5), np.arange(3, 9), np.arange(20), np.arange(2, 6)):
        np.testing.assert_array_equal(cached.block(idx), fresh.block(idx))
        assert cached._kept_idx.size <= 8
    assert cached.formed >= 3
