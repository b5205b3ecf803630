"""k-sparse components: scale-free answers, supports that match the loadings,
and bounds that hold in floating point (issue 28, items 2, 3 and 5).

References are independent of the package: brute force over every support
for the k-sparse optimum, closed forms for tiny relaxations.
"""

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spca


def brute_values(Sigma, k):
    """The largest eigenvalue of every k x k principal block (computed by LAPACK)."""
    n = Sigma.shape[0]
    return np.array([np.linalg.eigvalsh(Sigma[np.ix_(T, T)])[-1]
                     for T in map(list, itertools.combinations(range(n), k))])


def full_vector_exists(Sigma, k, value, rtol=1e-9):
    """Whether some unit vector with exactly k nonzeros has variance >= value (1 - rtol):
    some k-support whose leading eigenspace (eigenvalues within rtol of value) has no
    zero row."""
    n = Sigma.shape[0]
    for T in map(list, itertools.combinations(range(n), k)):
        w, V = np.linalg.eigh(Sigma[np.ix_(T, T)])
        if w[-1] < value * (1 - rtol):
            continue
        E = V[:, w >= w[-1] - rtol * abs(w[-1])]
        if np.all(np.linalg.norm(E, axis=1) > 1e-6):
            return True
    return False


def random_covariance(seed, n):
    rng = np.random.default_rng(seed)
    m = int(rng.integers(2, 12))
    A = rng.standard_normal((m, n)) * rng.uniform(0.2, 2.0, size=n)
    return A.T @ A / m


def cardinality(Sigma, k, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return spca.dspca_cardinality(Sigma, k, **kw)


# -- item 5: bounds with a rounding margin ----------------------------------------


def test_rank_one_relaxation_brackets_the_exact_optimum():
    # Sigma = 1 1' (rank one), lam = 0.3: phi = 2 - 2 lam = 1.4 exactly, at x = (1, 1)/sqrt 2.
    # The computed objective lands above 1.4 by rounding; the bound must stay above both.
    res = spca.dspca_bca(np.ones((2, 2)), 0.3)
    assert res.upper_bound >= 1.4
    assert res.upper_bound >= res.objective
    assert res.upper_bound - 1.4 <= 1e-13


def test_relaxation_upper_bound_never_below_objective():
    bad = []
    for seed in range(120):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(1, 7))
        Sigma = random_covariance(seed, n)
        if rng.random() < 0.3:  # rank one: many ties between the two sides
            a = rng.standard_normal(n)
            Sigma = np.outer(a, a)
        off = np.abs(Sigma - np.diag(np.diag(Sigma))).max() if n > 1 else 0.0
        lam = float(rng.uniform(0.05, 1.0) * max(off, 1e-3))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = spca.dspca_bca(Sigma, lam)
        if not res.upper_bound >= res.objective:
            bad.append(seed)
    assert bad == []


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 12), k_frac=st.floats(0.0, 1.0),
       log_scale=st.floats(-280, 140))
def test_bound_above_every_brute_force_value_at_every_scale(seed, n, k_frac, log_scale):
    """bound >= every k-sparse value found by brute force (n <= 12, scales 1e-280..1e140),
    and the certified ratio is at most 1."""
    Sigma = random_covariance(seed, n) * 10.0**log_scale
    npos = int(np.count_nonzero(np.diag(Sigma) > 0))
    k = min(max(1, int(round(k_frac * n))), npos)  # (at most C(12, 6) = 924 blocks)
    res = cardinality(Sigma, k)
    assert res.variance_upper_bound >= brute_values(Sigma, k).max()
    assert res.certified_ratio <= 1.0
    assert res.explained_variance <= res.variance_upper_bound


def test_bound_margin_on_many_small_problems():
    # (the setting: 145 of 1,487 bounds were below the brute-force optimum)
    below, ratios = 0, []
    for seed in range(60):
        rng = np.random.default_rng(1000 + seed)
        n = int(rng.integers(2, 9))
        Sigma = random_covariance(seed, n)
        k = int(rng.integers(1, n + 1))
        res = cardinality(Sigma, k)
        below += res.variance_upper_bound < brute_values(Sigma, k).max()
        ratios.append(res.certified_ratio)
    assert below == 0
    assert max(ratios) <= 1.0


def test_cardinality_path_bounds_keep_the_margin():
    Sigma = random_covariance(7, 8)
    path = spca.cardinality_path(Sigma, [1, 2, 3, 4, 8])
    for k, r in zip(path.ks, path.results, strict=True):
        assert r.variance_upper_bound >= brute_values(Sigma, int(k)).max()
    assert np.all(path.certified_ratios <= 1.0)


# -- item 3: support and loadings agree ---------------------------------------------


def test_diagonal_k2_reports_one_nonzero():
    res = cardinality(np.diag([2.0, 1.0]), 2)
    np.testing.assert_array_equal(res.support, [0])
    np.testing.assert_array_equal(res.loadings, [1.0, 0.0])
    assert res.cardinality == 1 and not res.exact
    assert "nonzero loadings only" in res.message


def test_equicorrelated_block_gets_k_nonzeros():
    # off-diagonals -1/8: every 7-block has the top eigenvalue 1 + 1/8 six times
    n = 9
    S = np.full((n, n), -1 / 8)
    np.fill_diagonal(S, 1.0)
    res = cardinality(S, 7)
    assert res.cardinality == 7 == np.count_nonzero(res.loadings)
    np.testing.assert_array_equal(res.support, np.flatnonzero(res.loadings))
    assert res.explained_variance == pytest.approx(1.125, rel=1e-12)
    assert np.linalg.norm(res.loadings) == pytest.approx(1.0)


def test_estimator_cardinalities_match_components():
    pytest.importorskip("sklearn")
    est = spca.SparsePCA(1, cardinality=3).fit_covariance(np.diag([3.0, 2.0, 1.0]))
    np.testing.assert_array_equal(est.cardinalities_, [1])
    np.testing.assert_array_equal(est.components_, [[1.0, 0.0, 0.0]])


def test_equal_variance_support_with_k_nonzeros_is_preferred():
    # Feature 0 alone has variance 2; features 1 and 2 together reach 2 with two
    # nonzeros: the 2-sparse answer is (0, 1, 1) / sqrt 2, not e_0.
    S = np.zeros((3, 3))
    S[0, 0] = 2.0
    S[1:, 1:] = [[1.5, 0.5], [0.5, 1.5]]
    res = cardinality(S, 2)
    np.testing.assert_array_equal(res.support, [1, 2])
    assert res.explained_variance == pytest.approx(2.0, rel=1e-12)


def degenerate_covariance(seed, n, kind):
    rng = np.random.default_rng(seed)
    if kind == "diagonal":  # ties among integer variances
        return np.diag(rng.integers(1, 4, size=n).astype(float))
    if kind == "equicorrelated":
        rho = float(rng.choice([-1.0, 1.0])) / (2 * n)
        S = np.full((n, n), rho)
        np.fill_diagonal(S, 1.0)
        return S
    if kind == "repeated_blocks":  # two copies of one block, and a weaker rest
        b = max(1, n // 3)
        A = rng.standard_normal((b + 2, b))
        B = A.T @ A / (b + 2)
        S = np.zeros((n, n))
        S[:b, :b] = B
        S[b:2 * b, b:2 * b] = B
        rest = n - 2 * b
        if rest:
            S[2 * b:, 2 * b:] = np.diag(rng.uniform(0.01, 0.5, rest) * np.diag(B).min())
        return S
    return random_covariance(seed, n)


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(2, 8), k_frac=st.floats(0.0, 1.0),
       kind=st.sampled_from(["diagonal", "equicorrelated", "repeated_blocks", "random"]))
def test_support_is_the_nonzero_loadings_and_has_k_when_it_can(seed, n, k_frac, kind):
    Sigma = degenerate_covariance(seed, n, kind)
    npos = int(np.count_nonzero(np.diag(Sigma) > 0))
    k = min(max(1, int(round(k_frac * n))), npos)
    res = cardinality(Sigma, k)
    np.testing.assert_array_equal(res.support, np.flatnonzero(res.loadings))
    assert res.cardinality == res.support.size <= k
    assert res.exact == (res.cardinality == k)
    best = brute_values(Sigma, k).max()
    if full_vector_exists(Sigma, k, best):
        assert res.cardinality == k


# -- item 2: the same support at every scale ----------------------------------------


@pytest.mark.parametrize("scale", [1e-280, 1e-200, 1e-160, 2.0**-500, 1e100, 1e140])
def test_same_support_at_every_scale(scale):
    differ, raised = [], []
    for seed in range(40):
        rng = np.random.default_rng(seed)
        n = int(rng.integers(4, 11))
        m = int(rng.integers(2, 12))
        A = rng.standard_normal((m, n)) * rng.uniform(0.2, 2, n)
        Sigma = A.T @ A / m
        k = int(rng.integers(1, min(n, np.linalg.matrix_rank(A)) + 1))
        ref = cardinality(Sigma, k)
        try:
            res = cardinality(Sigma * scale, k)
        except ValueError:
            raised.append(seed)
            continue
        if not np.array_equal(res.support, ref.support):
            differ.append(seed)
        else:
            assert res.explained_variance == pytest.approx(scale * ref.explained_variance,
                                                           rel=1e-9)
    assert raised == [] and differ == []


def test_estimator_fit_is_scale_free():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(3)
    X = rng.standard_normal((60, 12))
    X[:, :4] += 2 * rng.standard_normal((60, 1))
    X[:, 6:9] += rng.standard_normal((60, 1))
    ref = spca.SparsePCA(2, cardinality=3).fit(X)
    for c in (1e-100, 1e-70, 1e60):
        est = spca.SparsePCA(2, cardinality=3).fit(X * c)
        for a, b in zip(ref.components_, est.components_, strict=True):
            np.testing.assert_array_equal(np.flatnonzero(a), np.flatnonzero(b))
        np.testing.assert_allclose(est.components_, ref.components_, atol=1e-8)


# -- item 7: SparsePCA.fit checks the data's scale ----------------------------------


@pytest.mark.parametrize("sparse", [False, True])
@pytest.mark.parametrize("factor", [1e77, 1e160, 1e-150])
def test_fit_refuses_data_out_of_scale_with_a_clear_error(factor, sparse):
    pytest.importorskip("sklearn")
    import scipy.sparse as sp

    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 8)) * factor
    X_in = sp.csr_array(X) if sparse else X
    before = X.copy()
    with pytest.raises(ValueError, match=r"X's largest column variance .* is outside"):
        spca.SparsePCA(1, cardinality=2).fit(X_in)
    np.testing.assert_array_equal(X, before)


def test_fit_accepts_data_inside_the_scale_range():
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((50, 8))
    ref = spca.SparsePCA(1, cardinality=2).fit(X)
    for factor in (1e-100, 1e70):
        est = spca.SparsePCA(1, cardinality=2).fit(X * factor)
        np.testing.assert_allclose(est.components_, ref.components_, atol=1e-10)
        np.testing.assert_allclose(est.mean_, ref.mean_ * factor, rtol=1e-12)


# -- items 4 and 10: the text pipeline ---------------------------------------------


def small_corpus(seed=0, n_docs=60, n_words=10):
    import scipy.sparse as sp

    rng = np.random.default_rng(seed)
    M = rng.poisson(rng.uniform(0.2, 2.0, n_words), size=(n_docs, n_words)).astype(float)
    M[:, 1] += M[:, 0]  # correlated words, so that deflation matters
    M[:, 3] += M[:, 2]
    return sp.csr_array(M), M


@pytest.mark.parametrize("deflation", ["schur", "projection", "removal"])
def test_topic_explained_variance_is_on_the_original_covariance(deflation):
    from spca.text import sparse_topics

    X, M = small_corpus()
    Sigma = np.cov(M.T, bias=True)  # the pipeline's covariance: X_c' X_c / n_docs
    res = sparse_topics(X, n_components=3, cardinality=3, deflation=deflation)
    for t in res.topics:
        x = np.zeros(M.shape[1])
        x[t.word_ids] = t.loadings
        assert t.explained_variance == pytest.approx(x @ Sigma @ x, rel=1e-10)
        assert t.certified_ratio == pytest.approx(t.deflated_variance / t.variance_upper_bound,
                                                  rel=1e-12)
        assert t.certified_ratio <= 1.0
    first = res.topics[0]
    assert first.deflated_variance == pytest.approx(first.explained_variance, rel=1e-12)
    if deflation == "schur":
        # the later topics' deflated variance is below the original one
        # (projection deflation keeps it for loadings orthogonal to the earlier)
        assert any(t.deflated_variance < t.explained_variance * (1 - 1e-6)
                   for t in res.topics[1:])


def test_no_refit_ratio_compares_like_with_like():
    # two words that always co-occur: the relaxation keeps both at cardinality 1
    import scipy.sparse as sp

    from spca.text import sparse_topics

    rng = np.random.default_rng(0)
    c = rng.integers(0, 3, size=40)
    M = np.column_stack([c, c, rng.integers(0, 2, size=40),
                         rng.integers(0, 2, size=40)]).astype(float)
    with pytest.warns(UserWarning, match="refit=False keeps the relaxation's own support"):
        res = sparse_topics(sp.csr_array(M), n_components=1, cardinality=1, refit=False)
    t = res.topics[0]
    assert len(t.words) == 2
    assert t.certified_ratio <= 1.0
    # the bound refers to two-word lists, and covers the best of them
    Sigma = np.cov(M.T, bias=True)
    assert t.variance_upper_bound >= brute_values(Sigma, 2).max()


def test_no_refit_components_never_certify_above_one():
    ratios = []
    for seed in range(12):
        Sigma = random_covariance(seed, 9)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = spca.sparse_components(Sigma, 3, cardinality=2, refit=False)
        for comp in res.components:
            ratios.append(comp.certified_ratio)
            assert comp.variance_upper_bound >= comp.variance
    assert max(ratios) <= 1.0


# -- issue 29: no unconverged answer without a warning ----------------------------


def test_unconverged_relaxation_answer_warns():
    Sigma = random_covariance(11, 30)
    off = np.abs(Sigma - np.diag(np.diag(Sigma))).max()
    with pytest.warns(spca.ConvergenceWarning, match=r"component\(s\) 0 \(gap"):
        res = spca.sparse_components(Sigma, 1, lam=0.05 * off, max_sweeps=1, tol=1e-10)
    assert not res.components[0].converged


def test_converged_relaxation_answer_is_silent():
    Sigma = random_covariance(11, 12)
    off = np.abs(Sigma - np.diag(np.diag(Sigma))).max()
    with warnings.catch_warnings():
        warnings.simplefilter("error", spca.ConvergenceWarning)
        res = spca.sparse_components(Sigma, 2, lam=0.5 * off)
    assert all(c.converged for c in res.components)


def test_estimator_unconverged_components_warn_or_are_documented():
    """A fitted SparsePCA never reports converged=False silently where the
    component relies on the solve: with refit=False or a given lam it warns;
    with a cardinality and refit=True the solve only proposes the support (the
    documented case), and the component's certificate holds regardless."""
    pytest.importorskip("sklearn")
    rng = np.random.default_rng(0)
    X = rng.standard_normal((100, 200))
    X = (X - X.mean(0)) / X.std(0)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        est = spca.SparsePCA(3, cardinality=5, max_sweeps=30).fit(X)
    late = [c for c in est.result_.components if not c.converged]
    assert late, "the case of issue 29 should have an unconverged relaxation"
    assert not any(issubclass(w.category, spca.ConvergenceWarning) for w in caught)
    for c in late:
        assert "stopped at relative gap" in c.search.message
        assert c.certified_ratio <= 1.0
    with pytest.warns(spca.ConvergenceWarning):
        spca.SparsePCA(3, cardinality=5, refit=False, max_sweeps=30).fit(X)


def test_topics_are_scale_free():
    import scipy.sparse as sp

    from spca.text import sparse_topics

    rng = np.random.default_rng(1)
    M = rng.poisson(rng.uniform(0.2, 2.0, 30), size=(80, 30)).astype(float)
    M[:, 1] += M[:, 0]
    M[:, 5] += M[:, 4] + M[:, 3]
    ref = [t.words for t in sparse_topics(sp.csr_array(M), n_components=3, cardinality=4,
                                          deflation="schur").topics]
    for c in (1e-140, 1e-100, 1e60):
        got = sparse_topics(sp.csr_array(M * c), n_components=3, cardinality=4,
                            deflation="schur").topics
        assert [t.words for t in got] == ref
