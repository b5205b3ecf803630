"""The branch and bound of ``spca.cardinality``: every "optimal" claim is
checked against brute force over supports; bounds against brute force on
random nodes; the time limit with a stub clock; Ctrl-C; bad input."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
import spca._limits
from spca import dspca_cardinality
from spca.cardinality import _bounds, _search, branch_and_bound
from spca.datasets import load_pitprops

GAP = 1e-4


def brute_force(Sigma, k, inside=(), allowed=None):
    """``max lambda_max(Sigma_SS)`` over ``k``-supports ``S`` with
    ``inside <= S <= allowed``, and the best ``S``."""
    p = Sigma.shape[0]
    allowed = list(range(p)) if allowed is None else list(allowed)
    inside = list(inside)
    rest = [j for j in allowed if j not in inside]
    best, arg = -math.inf, None
    combos = [inside + list(c) for c in itertools.combinations(rest, k - len(inside))]
    if not combos:
        return best, arg
    idx = np.array(combos)
    vals = np.linalg.eigvalsh(Sigma[idx[:, :, None], idx[:, None, :]])[:, -1]
    i = int(np.argmax(vals))
    return float(vals[i]), sorted(combos[i])


def wine_correlation():
    from sklearn.datasets import load_wine

    return np.corrcoef(load_wine().data, rowvar=False)


def random_node(rng, p, k):
    """A node's forced features (at most ``k - 1``) and its non-excluded ones
    (forced and free), each feature out / free / free / in at random."""
    state = rng.choice([-1, 0, 0, 1], size=p)
    inside = np.flatnonzero(state == 1)[: k - 1]
    state[np.flatnonzero(state == 1)[k - 1:]] = 0
    return inside, np.flatnonzero(state >= 0)


def random_covariance(seed, p, raw):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(max(2, p // 2), 3 * p))
    F = rng.standard_normal((n, p))
    F[:, : p // 3] += rng.standard_normal((n, 1)) * 1.5
    if raw:
        F *= rng.uniform(0.2, 5.0, size=p)
    return F.T @ F / n


def check_proven(Sigma, k):
    """The branch and bound proves ``k`` within 30 s, and its claim holds."""
    res = branch_and_bound(Sigma, k, optimality_gap=GAP,
                           time_limit=spca._limits.TimeLimit(30.0))
    assert res.status == "optimal"
    check_claim(Sigma, k, res)


def check_claim(Sigma, k, res, gap=GAP):
    """A result of the branch and bound against brute force."""
    best, _ = brute_force(Sigma, k)
    assert res.support.size == k
    assert np.unique(res.support).size == k
    var = np.linalg.eigvalsh(Sigma[np.ix_(res.support, res.support)])[-1]
    assert res.variance == pytest.approx(var, rel=1e-12, abs=1e-12)
    assert res.bound >= best * (1 - 1e-12)  # the bound is valid
    assert res.variance <= best * (1 + 1e-12)
    if res.status == "optimal":
        assert (res.bound - res.variance) <= gap * res.bound * (1 + 1e-9)
        assert res.variance >= best * (1 - gap)


@pytest.mark.parametrize("name", ["pitprops", "wine"])
def test_every_k_optimal_equals_brute_force(name):
    Sigma = load_pitprops().correlation if name == "pitprops" else wine_correlation()
    for k in range(1, Sigma.shape[0] + 1):
        res = dspca_cardinality(Sigma, k, optimality_gap=GAP, time_limit=30.0)
        assert res.status == "optimal", (k, res.message)
        best, _ = brute_force(Sigma, k)
        assert res.explained_variance == pytest.approx(best, rel=GAP)
        assert res.variance_upper_bound >= best * (1 - 1e-12)
        assert res.explained_variance <= res.variance_upper_bound
        assert res.cardinality == k
        assert np.count_nonzero(res.loadings) == k
        assert np.linalg.norm(res.loadings) == pytest.approx(1.0)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(2, 11), data=st.data(),
       raw=st.booleans())
def test_optimal_claims_on_random_covariances(seed, p, data, raw):
    Sigma = random_covariance(seed, p, raw)
    k = data.draw(st.integers(1, p))
    check_proven(Sigma, k)


@settings(max_examples=30)
@given(seed=st.integers(0, 2**32 - 1), p=st.integers(3, 10), data=st.data(),
       raw=st.booleans())
def test_node_bounds_are_valid(seed, p, data, raw):
    """Every bound of a node is at least the node's value (brute force)."""
    Sigma = random_covariance(seed, p, raw)
    rng = np.random.default_rng(seed)
    k = data.draw(st.integers(2, p - 1))
    s_cov = data.draw(st.booleans())
    inside, N = random_node(rng, p, k)
    if N.size < k:
        return
    value, _ = brute_force(Sigma, k, inside, N)
    free = np.setdiff1d(N, inside)
    mask = np.isin(N, inside)
    m, r = inside.size, k - inside.size
    d = np.diag(Sigma)
    BN = Sigma[np.ix_(N, N)]
    A = np.abs(BN)
    np.fill_diagonal(A, 0.0)
    tol = 1e-12 * value
    assert _bounds.trace_bound(d[inside], d[free], r) >= value - tol
    assert _bounds.gershgorin_bound(A, d[N], mask, k) >= value - tol
    g_node, g_free = _bounds.gershgorin_node(A, d[N], mask, k)
    assert g_node == _bounds.gershgorin_bound(A, d[N], mask, k)
    if r <= free.size:  # the free block alone, r features of it
        assert g_free >= brute_force(Sigma, r, (), free)[0] * (1 - 1e-12)
    assert _bounds.lambda_max_upper(BN) >= value - tol
    evals, evecs = np.linalg.eigh(BN)
    nrm = float(np.linalg.norm(BN))
    assert _bounds.spectral_bound(evals, evecs, mask, r, nrm) >= value - tol
    q = data.draw(st.integers(1, N.size))  # the q largest eigenpairs only
    assert _bounds.spectral_bound(evals[-q:], evecs[:, -q:], mask, r, nrm,
                                  tail=float(evals[-q])) >= value - tol
    if m:
        lam_in = _bounds.lambda_max_upper(BN[np.ix_(mask, mask)])
        beta, _ = brute_force(Sigma, r, (), free) if r <= free.size else (0.0, None)
        cols2 = (BN[np.ix_(mask, ~mask)] ** 2).sum(axis=0)
        assert _bounds.coupling_bound(lam_in, cols2, beta, r) >= value - tol
        sb = _bounds.schur_bound(BN[np.ix_(mask, mask)], BN[np.ix_(mask, ~mask)], d[free], r,
                                 Bc=BN[np.ix_(~mask, ~mask)] if s_cov else None)
        assert sb >= value * (1 - 1e-13)
        # a cap (a bound the caller has) only skips work: still a bound
        cap = float(rng.uniform(0.5, 1.5) * value)
        assert _bounds.schur_bound(BN[np.ix_(mask, mask)], BN[np.ix_(mask, ~mask)], d[free], r,
                                   Bc=BN[np.ix_(~mask, ~mask)], cap=cap) >= value * (1 - 1e-13)
        if r == 1:  # exact for one free slot
            assert sb == pytest.approx(value, rel=1e-9, abs=1e-12)
    # the partial dual with any multiplier in its box, any lam and any s
    lam = float(rng.uniform(0.0, 1.0) * d.max())
    s = data.draw(st.sampled_from([0.0, 0.5, 1.0]))
    w = np.where(mask, s, 1.0)
    pd = _bounds.PartialDual(BN, np.outer(w, w), lam, 1.0)
    L = rng.uniform(-2 * lam, 2 * lam, size=BN.shape)
    pd.start((L + L.T) / 2, np.ones(N.size) / math.sqrt(N.size))
    c = lam * (s * s * m + r)
    assert pd.bound() + c >= value - tol
    assert pd.run(10) + c >= value - tol
    spec = _bounds.PartialDual(BN, np.outer(w, w), lam, 1.0, mask, r)
    spec.start((L + L.T) / 2, np.ones(N.size) / math.sqrt(N.size))
    assert spec.bound() + c >= value - tol
    assert spec.run(10) + c >= value - tol
    # the row-norm bound with any symmetric multiplier (no box), and the
    # root's descent from one
    U = rng.normal(0.0, float(rng.uniform(0.01, 1.0)) * d.max(), size=BN.shape)
    U = (U + U.T) / 2
    val, _ = _bounds.row_norm_bound(BN, U, mask, r)
    assert val >= value - tol
    assert _bounds.row_norm_bound(BN, np.zeros_like(BN), mask, r)[0] >= value - tol
    if not m:
        best_all = brute_force(Sigma[np.ix_(N, N)], k)[0]
        rb, U1 = _bounds.row_norm_descent(BN, U, k, 5, lam + 1e-3)
        assert rb >= best_all * (1 - 1e-12)
        start = np.linalg.eigvalsh(BN + U)[-1] + _bounds.row_norm_penalty(U, mask, k)
        assert rb <= start + 1e-9 * abs(start)  # never above where it started
        assert np.allclose(U1, U1.T)
    # the node's own descent from any symmetric multiplier: every value it
    # returns bounds the node, its penalty is row_norm_penalty, and it never
    # rises above where it started
    # (at several scales of Sigma, U and the step)
    c = data.draw(st.sampled_from([1e-8, 1.0, 1e8]))
    step = data.draw(st.sampled_from([1e-3, 0.1, 1.0, 10.0])) * float(d.max()) * c
    q = data.draw(st.integers(1, 4))
    iters = data.draw(st.integers(0, 12))
    nb, U2, v2 = _bounds.node_descent(c * BN, c * U, mask, r, iters, step, q=q)
    assert nb >= (value - tol) * c
    assert np.allclose(U2, U2.T)
    assert v2.shape == (N.size,)
    nb0 = _bounds.node_descent(c * BN, c * U, mask, r, 0, step, q=q)[0]
    assert nb <= nb0  # the best value seen, the start included
    assert _bounds.row_norm_bound(c * BN, U2, mask, r)[0] >= (value - tol) * c
    # stopped at a cap: still a bound
    capped = _bounds.node_descent(c * BN, c * U, mask, r, iters, step, q=q, cap=nb0 * 0.999)
    assert capped[0] >= (value - tol) * c
    pen, G = _bounds.row_norm_subgradient(U, mask, r)
    assert pen == pytest.approx(_bounds.row_norm_penalty(U, mask, r), rel=1e-13)
    assert G.shape == U.shape
    # a feature's bound holds for every support containing it
    beta_all = brute_force(Sigma, k - 1)[0]
    fb = _bounds.feature_bounds(Sigma, k, beta_all)
    for j in range(p):
        assert fb[j] >= brute_force(Sigma, k, (j,))[0] - tol


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raw", [False, True])
@pytest.mark.parametrize("node_iter", [0, 10, 40])
def test_optimal_claims_with_the_dual_from_the_start(monkeypatch, seed, raw, node_iter):
    """The row-norm bound bounds every node (not only after DUAL_AFTER nodes),
    with the root's multiplier lowered from the second node on, and each
    node's own descent (none, or up to node_iter steps, at every node the
    parent's multiplier leaves open) from the third, its children
    warm-started from its (single-precision) multiplier and Ritz vectors."""
    monkeypatch.setattr(_search, "DUAL_AFTER", 0)
    monkeypatch.setattr(_search, "ROW_AFTER", 0)
    monkeypatch.setattr(_search, "FAST_ITER", node_iter)
    monkeypatch.setattr(_search, "FAST_WINDOW", math.inf)  # at every open node
    monkeypatch.setattr(_search, "DESC_KEEP", 0.0)  # (and never given up)
    p = 14
    Sigma = random_covariance(seed, p, raw)
    for k in (3, 6, 9):
        check_proven(Sigma, k)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("raw", [False, True])
def test_optimal_claims_without_the_nodes_own_spectrum(monkeypatch, seed, raw):
    """With the nodes' own spectrum skipped as soon as the root's multiplier
    is lowered (SPEC_TRIAL < 0: the row-norm bound alone bounds, rounds and
    branches), every "optimal" claim still holds (brute force)."""
    monkeypatch.setattr(_search, "DUAL_AFTER", 0)
    monkeypatch.setattr(_search, "ROW_AFTER", 0)
    monkeypatch.setattr(_search, "SPEC_TRIAL", -1)
    p = 14
    Sigma = random_covariance(seed + 100, p, raw)
    for k in (3, 6, 9):
        check_proven(Sigma, k)


def test_spectrum_skipped_only_after_its_trial(monkeypatch):
    """The nodes' own spectrum stops only once the row-norm bound was lower
    at its trial's nodes (work-based: the same search twice skips it at the
    same node count), and a search with it never skipped finds the same
    optimum."""
    rng = np.random.default_rng(3)
    F = rng.standard_normal((60, 40)) * rng.uniform(0.2, 5.0, size=40)
    F[:, :12] += rng.standard_normal((60, 1)) * 2.0
    Sigma = F.T @ F / 60
    monkeypatch.setattr(_search, "DUAL_AFTER", 0)
    monkeypatch.setattr(_search, "ROW_AFTER", 0)
    monkeypatch.setattr(_search, "SPEC_TRIAL", 8)
    seen = []
    orig = _search._Search.bound_node

    def spy(self, node):
        out = orig(self, node)
        seen.append((self.spec_on, self.spec_tries, self.spec_wins))
        return out

    monkeypatch.setattr(_search._Search, "bound_node", spy)
    res = branch_and_bound(Sigma, 8, optimality_gap=GAP, time_limit=spca._limits.TimeLimit(None))
    first = list(seen)
    seen.clear()
    again = branch_and_bound(Sigma, 8, optimality_gap=GAP, time_limit=spca._limits.TimeLimit(None))
    assert seen == first and np.array_equal(res.support, again.support)
    off = [s for s in first if not s[0]]
    assert off  # (this search does skip it)
    for _on, tries, wins in off:  # off only after the trial, with few wins
        assert tries >= 8 and wins < _search.SPEC_KEEP * tries
    monkeypatch.setattr(_search, "SPEC_TRIAL", 10**9)
    never = branch_and_bound(Sigma, 8, optimality_gap=GAP, time_limit=spca._limits.TimeLimit(None))
    assert res.status == never.status == "optimal"
    assert res.variance == pytest.approx(never.variance, rel=2 * GAP)


def test_split_follows_the_row_norm_eigenvector(monkeypatch):
    """Where a node's row-norm bound was evaluated, the split uses that
    bound's eigenvector (of Sigma_NN + U), whether or not it was the node's
    lowest bound; the claims stay optimal (brute force)."""
    monkeypatch.setattr(_search, "DUAL_AFTER", 0)
    monkeypatch.setattr(_search, "ROW_AFTER", 0)
    monkeypatch.setattr(_search, "FAST_ITER", 0)  # (LAPACK at every node)
    last = {}
    orig_descent, orig_bound, orig_choose = (_bounds.node_descent,
                                             _search._Search.bound_node, _search.choose_feature)

    def descent(*args, **kwargs):
        out = orig_descent(*args, **kwargs)
        last["vec"] = out[2]
        return out

    def bound_node(self, node):
        last.pop("vec", None)
        return orig_bound(self, node)

    checked = []

    def choose(node, N, v):
        if "vec" in last:
            checked.append(v is last["vec"])
        return orig_choose(node, N, v)

    monkeypatch.setattr(_bounds, "node_descent", descent)
    monkeypatch.setattr(_search._Search, "bound_node", bound_node)
    monkeypatch.setattr(_search, "choose_feature", choose)
    for seed in range(3):
        Sigma = random_covariance(seed + 200, 14, raw=True)
        for k in (4, 7):
            res = branch_and_bound(Sigma, k, optimality_gap=GAP,
                                   time_limit=spca._limits.TimeLimit(None))
            assert res.status == "optimal"
            check_claim(Sigma, k, res)
    assert checked and all(checked)


def test_time_limit_with_stub_clock(monkeypatch):
    """A clock that jumps a second per reading ends the search early: status
    "time_limit", k features, a valid bound."""
    rng = np.random.default_rng(7)
    Sigma = random_covariance(3, 22, raw=False) + 0.1 * np.eye(22) * rng.uniform()
    k = 6
    ticks = iter(range(10**6))
    monkeypatch.setattr(spca._limits, "clock", lambda: float(next(ticks)))
    with pytest.warns(spca.ConvergenceWarning, match=r"optimality_gap=1e-09 asked for\): "
                      r"the search \(k=6\): time_limit"):
        res = dspca_cardinality(Sigma, k, optimality_gap=1e-9, time_limit=3.0)
    assert res.status == "time_limit"
    assert res.cardinality == k
    assert np.count_nonzero(res.loadings) == k
    best, _ = brute_force(Sigma, k)
    assert res.variance_upper_bound >= best * (1 - 1e-12)
    assert res.explained_variance <= best * (1 + 1e-12)


@pytest.mark.parametrize("at", [1, 2, 5])
@pytest.mark.parametrize("seed", [5, 6])
def test_interrupt_returns_best_so_far(monkeypatch, at, seed):
    """Ctrl-C at the ``at``-th node: status "interrupted", k features, and a
    bound that still holds (the node in hand counts)."""
    Sigma = random_covariance(seed, 20, raw=True)
    k = 7
    calls = {"n": 0}
    original = _search._Search.bound_node

    def interrupted(self, node):
        calls["n"] += 1
        if calls["n"] == at:
            raise KeyboardInterrupt
        return original(self, node)

    monkeypatch.setattr(_search._Search, "bound_node", interrupted)
    res = branch_and_bound(Sigma, k, optimality_gap=1e-12,
                           time_limit=spca._limits.TimeLimit(None))
    assert calls["n"] == at
    assert res.status == "interrupted"
    check_claim(Sigma, k, res)


def test_interrupt_during_the_starts(monkeypatch):
    from spca.cardinality import _starts

    Sigma = random_covariance(2, 16, raw=False)
    k = 5

    def interrupted(self):
        raise KeyboardInterrupt

    monkeypatch.setattr(_starts.Incumbent, "starts", interrupted)
    res = dspca_cardinality(Sigma, k, optimality_gap=1e-6)
    assert res.status == "interrupted"
    assert res.cardinality == k
    assert res.variance_upper_bound >= brute_force(Sigma, k)[0] * (1 - 1e-12)


def test_default_path_unchanged():
    S = load_pitprops().correlation
    a = dspca_cardinality(S, 5)
    b = dspca_cardinality(S, 5, optimality_gap=None, time_limit=None)
    assert a.status is None and a.n_nodes == 0
    np.testing.assert_array_equal(a.support, b.support)
    assert a.explained_variance == b.explained_variance
    assert a.variance_upper_bound == b.variance_upper_bound


def test_proof_tightens_the_certificate():
    S = load_pitprops().correlation
    a = dspca_cardinality(S, 5)
    b = dspca_cardinality(S, 5, optimality_gap=GAP)
    assert b.status == "optimal" and b.n_nodes >= 1
    assert b.explained_variance >= a.explained_variance
    assert b.variance_upper_bound <= a.variance_upper_bound
    assert b.certified_ratio >= 1 - GAP


def test_verbose_log(capsys):
    S = load_pitprops().correlation
    dspca_cardinality(S, 6, optimality_gap=GAP, verbose=True)
    out = capsys.readouterr().out
    header = [line for line in out.splitlines() if line.split()[:3] == ["nodes", "open", "best"]]
    assert header and "gap" in header[0] and "time" in header[0]


@pytest.mark.parametrize("value, exc, match", [
    (0.0, ValueError, r"optimality_gap must be a relative gap in \(0, 1\), got 0.0"),
    (1.0, ValueError, r"got 1.0"),
    (-1e-3, ValueError, r"got -0.001"),
    (float("nan"), ValueError, r"got nan"),
    ("1e-4", TypeError, r"optimality_gap must be a real number .* got '1e-4'"),
])
def test_bad_optimality_gap(value, exc, match):
    with pytest.raises(exc, match=match):
        dspca_cardinality(np.eye(3), 1, optimality_gap=value)


@pytest.mark.parametrize("value, exc, match", [
    (0, ValueError, r"time_limit must be a number of seconds > 0, got 0"),
    (-5.0, ValueError, r"got -5.0"),
    ("60", TypeError, r"time_limit must be a number of seconds or None, got '60'"),
    (True, TypeError, r"got True"),
])
def test_bad_time_limit(value, exc, match):
    with pytest.raises(exc, match=match):
        dspca_cardinality(np.eye(3), 1, optimality_gap=1e-3, time_limit=value)


def test_time_limit_without_gap_limits_the_default_search():
    # no proof is asked for: the heuristic search runs within the limit, and
    # the result says no proof was made (no nodes, no "optimal" status)
    res = dspca_cardinality(np.eye(3), 1, time_limit=5.0)
    assert res.status is None and res.n_nodes == 0
    assert res.cardinality == 1 and res.explained_variance == pytest.approx(1.0)


def test_input_not_modified():
    S = wine_correlation()
    before = S.copy()
    dspca_cardinality(S, 4, optimality_gap=GAP)
    np.testing.assert_array_equal(S, before)


def test_sparse_components_and_estimator_pass_the_proof_through():
    from spca import SparsePCA, sparse_components

    S = load_pitprops().correlation
    res = sparse_components(S, 2, cardinality=4, deflation="removal", optimality_gap=GAP,
                            time_limit=20.0)
    for comp in res.components:
        assert comp.search.status == "optimal"
    best, support = brute_force(S, 4)
    np.testing.assert_array_equal(res.components[0].support, support)
    # the second component is the best 4-support of the features left
    left = np.setdiff1d(np.arange(13), support)
    best2, support2 = brute_force(S, 4, (), left)
    np.testing.assert_array_equal(res.components[1].support, support2)
    assert res.components[1].variance_upper_bound >= best2 * (1 - 1e-12)

    rng = np.random.default_rng(0)
    X = rng.standard_normal((60, 9))
    X[:, :4] += rng.standard_normal((60, 1))
    est = SparsePCA(n_components=1, cardinality=3, optimality_gap=GAP).fit(X)
    search = est.result_.components[0].search
    assert search.status == "optimal"
    # (the support of the best is the same whatever the covariance's normalisation)
    np.testing.assert_array_equal(search.support, brute_force(np.cov(X, rowvar=False), 3)[1])


def test_proof_options_need_a_cardinality():
    from spca import SparsePCA, sparse_components

    with pytest.raises(ValueError, match="optimality_gap=0.001 asks for a proof"):
        sparse_components(np.eye(4), 1, lam=0.1, optimality_gap=1e-3)
    with pytest.raises(ValueError, match="optimality_gap=0.001 asks for a proof"):
        SparsePCA(lam=0.1, optimality_gap=1e-3).fit(np.random.default_rng(0).normal(size=(9, 4)))
    with pytest.raises(ValueError, match=r"optimality_gap must be a relative gap in \(0, 1\)"):
        SparsePCA(cardinality=2, optimality_gap=2.0).fit(np.eye(4))


def test_same_input_same_search():
    """No decision reads the clock: two runs explore the same nodes."""
    Sigma = random_covariance(11, 24, raw=True)
    runs = [branch_and_bound(Sigma, 8, optimality_gap=1e-6,
                             time_limit=spca._limits.TimeLimit(None)) for _ in range(2)]
    assert runs[0].n_nodes == runs[1].n_nodes > 0
    np.testing.assert_array_equal(runs[0].support, runs[1].support)
    assert runs[0].bound == runs[1].bound


def test_progress_bar_only_on_a_terminal(monkeypatch):
    import io
    import sys

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.setattr(sys, "stderr", io.StringIO())
    assert _search._progress_bar(spca._limits.TimeLimit(None)) is None
    monkeypatch.setattr(sys, "stderr", Terminal())
    bar = _search._progress_bar(spca._limits.TimeLimit(None))
    assert bar is not None
    bar.close()


def test_sparse_input_and_constant_features():
    import scipy.sparse as sp

    R = load_pitprops().correlation.copy()
    R[3, :] = 0.0
    R[:, 3] = 0.0  # a constant feature never enters
    for S in (R, sp.csr_array(R)):
        res = dspca_cardinality(S, 5, optimality_gap=GAP)
        assert res.status == "optimal"
        assert 3 not in res.support
        best, support = brute_force(R, 5)
        assert res.explained_variance == pytest.approx(best, rel=GAP)


@pytest.mark.parametrize("seed", range(8))
def test_schur_bound_against_brute_force(seed):
    """The Schur-complement bound of a forced block over every r-subset of the
    free features, on random, raw and nearly duplicated covariances."""
    rng = np.random.default_rng(seed)
    p = 12
    Sigma = random_covariance(seed, p, raw=bool(seed % 2))
    if seed % 4 == 3:  # two copies of a feature: repeated eigenvalues
        Sigma[:, 1] = Sigma[:, 0]
        Sigma[1, :] = Sigma[0, :]
    for _ in range(25):
        m = int(rng.integers(1, 6))
        r = int(rng.integers(1, 4))
        perm = rng.permutation(p)
        inside, free = np.sort(perm[:m]), np.sort(perm[m:])
        value, _ = brute_force(Sigma, m + r, inside)
        sb = _bounds.schur_bound(Sigma[np.ix_(inside, inside)], Sigma[np.ix_(inside, free)],
                                 np.diag(Sigma)[free], r)
        assert sb >= value * (1 - 1e-13)
        sg = _bounds.schur_bound(Sigma[np.ix_(inside, inside)], Sigma[np.ix_(inside, free)],
                                 np.diag(Sigma)[free], r, Bc=Sigma[np.ix_(free, free)])
        assert value * (1 - 1e-13) <= sg <= sb
        if r == 1:
            assert sb == pytest.approx(value, rel=1e-8, abs=1e-10)


def test_a_tiny_solve_does_not_set_the_time_rate(monkeypatch):
    """Under a time limit, the default path plans a solve from the seconds per
    unit of modelled work of the solves before it.  A solve over a few
    features is all overhead: it must not set that rate (one over a single
    feature planned a 96-feature solve at 100 s and ended a 60 s search of
    the NYT sample's 300 words of largest variance, k = 20, after 0.2 s)."""
    from spca import _path
    from spca._variance import _MatrixCovariance

    ticks = iter(range(10**9))
    monkeypatch.setattr(spca._limits, "clock", lambda: 0.01 * next(ticks))
    rng = np.random.default_rng(0)
    p = 40
    F = rng.standard_normal((200, p))
    Sigma = F.T @ F / 200
    Sigma[0, 0] += 50.0  # alone above every |Sigma_ij| at large lam
    solver = _path._Solver(_MatrixCovariance(Sigma), max_sweeps=50,
                           options=_path._solver_options(5, 1e-3, True), verbose=False)
    limit = spca._limits.TimeLimit(1e6)
    solver.solve(10.0, 1e-6, limit=limit)
    assert solver.trials[-1].reduced_size < _path.RATE_MIN_SIZE
    assert solver._rate is None or not solver._rate_of_solves
    solver.solve(0.05, 1e-6, limit=limit)
    assert solver.trials[-1].reduced_size >= _path.RATE_MIN_SIZE
    assert solver._rate_of_solves  # a solve over enough features sets it


def test_row_norm_descent_lowers_the_root_bound_and_stops_at_the_limit():
    """From the DSPCA multiplier the descent never rises, lowers the bound on
    a dense problem, stays above brute force, and an expired time limit ends
    it at its start."""
    Sigma = random_covariance(3, 14, raw=True)
    k = 4
    best, _ = brute_force(Sigma, k)
    lam = 0.05 * float(np.diag(Sigma).max())
    pd = _bounds.PartialDual(Sigma, np.ones_like(Sigma), lam, 1.0)
    pd.start(Sigma, np.ones(14) / math.sqrt(14))
    dspca = pd.run(40) + lam * k
    U0 = -np.clip(pd.L, -lam, lam)
    start, _ = _bounds.row_norm_descent(Sigma, U0, k, 0, lam)
    assert start <= dspca * (1 + 1e-12)  # the row-norm term is at most lam k
    rb, _ = _bounds.row_norm_descent(Sigma, U0, k, 50, lam)
    assert best * (1 - 1e-12) <= rb < start  # (here 147.14 from 148.38; best 147.00)
    expired = spca._limits.TimeLimit(0.0, start=-math.inf)
    assert _bounds.row_norm_descent(Sigma, U0, k, 50, lam, limit=expired)[0] == start


@pytest.mark.parametrize("below_cut", [True, False])
def test_probing_skips_a_probe_that_could_not_be_probed(monkeypatch, below_cut):
    """The probing runs the branch and bound at k - 1 only when a bound at
    k - 1 could cut the search at k AND a bound at k - 2 could cut the one
    at k - 1 (``feature_bounds`` stubbed per level: every feature kept or
    none); the proof equals brute force either way."""
    from spca.cardinality import _prove

    k, p = 6, 20
    Sigma = random_covariance(77, p, raw=True)
    calls = []
    bb = _prove.branch_and_bound

    def spy(S, j, **kwargs):
        calls.append(j)
        return bb(S, j, **kwargs)

    def stub(S, j, beta):
        keep = below_cut or j != k - 1
        return np.full(S.shape[0], -math.inf if keep else math.inf)

    monkeypatch.setattr(_prove, "branch_and_bound", spy)
    monkeypatch.setattr(_prove, "feature_bounds", stub)
    monkeypatch.setattr(_prove, "PROBE_FROM", 0)
    monkeypatch.setattr(_prove, "PROBE_MARGIN", 1.0)  # the certificate never suffices
    res = dspca_cardinality(Sigma, k, optimality_gap=GAP, time_limit=30.0)
    assert res.status == "optimal"
    assert (k - 1 in calls) == below_cut
    assert calls[-1] == k
    best, _ = brute_force(Sigma, k)
    assert res.explained_variance == pytest.approx(best, rel=GAP)
    assert res.variance_upper_bound >= best * (1 - 1e-12)


def test_the_proof_runs_on_one_blas_thread(monkeypatch):
    # every node of the proof (and its probing) runs inside the one-thread
    # BLAS limit of the relaxation's solves, with the limit in force
    from threadpoolctl import threadpool_info

    from spca.cardinality import _prove

    seen = []
    real = _prove.branch_and_bound

    def spy(*args, **kwargs):
        seen.append([p["num_threads"] for p in threadpool_info() if p["user_api"] == "blas"])
        return real(*args, **kwargs)

    monkeypatch.setattr(_prove, "branch_and_bound", spy)
    rng = np.random.default_rng(5)
    A = rng.standard_normal((40, 14))
    S = A.T @ A / 40
    res = dspca_cardinality(S, 4, optimality_gap=1e-4, time_limit=30.0)
    assert res.status == "optimal"
    assert seen and all(threads and max(threads) == 1 for threads in seen)
