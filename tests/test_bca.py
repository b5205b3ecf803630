"""dspca_bca against an interior-point SDP solver and against its own certificate."""

import dataclasses
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import spca
from spca.datasets import make_gaussian_covariance, make_spiked_covariance

cp = pytest.importorskip("cvxpy")

from _reference import half_max_offdiag, high_rank_problem, sdp_value  # noqa: E402


def instances():
    out = []
    for seed in range(3):
        for n in (6, 12):
            G = make_gaussian_covariance(n, random_state=seed)
            out.append((f"gaussian-{n}-{seed}", G, half_max_offdiag(G)))
            S, _ = make_spiked_covariance(n, cardinality=max(2, n // 5), random_state=seed)
            out.append((f"spiked-{n}-{seed}", S, half_max_offdiag(S)))
    # a lam that eliminates some features and leaves a non-trivial problem
    G = make_gaussian_covariance(10, 30, random_state=7)
    out.append(("gaussian-eliminating", G, float(np.sort(np.diag(G))[3])))
    return out


@pytest.mark.parametrize("eliminate", [True, False])
@pytest.mark.parametrize("name, Sigma, lam", instances(), ids=[i[0] for i in instances()])
def test_objective_matches_interior_point(name, Sigma, lam, eliminate):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, eliminate=eliminate, max_sweeps=2000)
    # the problem actually solved: reduced with elimination, full without
    sub = Sigma[np.ix_(res.kept, res.kept)]
    ref = sdp_value(sub, lam)
    assert res.objective == pytest.approx(ref, rel=1e-4)
    # both bounds sandwich the interior-point value (to its own accuracy)
    assert res.objective <= ref * (1 + 1e-6)
    assert res.upper_bound >= ref * (1 - 1e-6)
    assert res.converged == (res.gap <= res.tol)
    # the reported objective is the objective of the returned Z
    Z = res.Z
    assert res.objective == pytest.approx(
        np.vdot(Sigma, Z) - lam * np.abs(Z).sum(), rel=1e-12, abs=1e-14
    )
    np.testing.assert_allclose(np.trace(Z), 1.0, rtol=1e-12)
    assert np.linalg.eigvalsh(Z)[0] >= -1e-12
    assert np.all(Z[res.eliminated] == 0) and np.all(Z[:, res.eliminated] == 0)


def test_elimination_changes_the_relaxation_but_never_upwards():
    # Theorem 1 is exact for the cardinality problem, not for the relaxation:
    # the full relaxation can only be larger (it contains the reduced one).
    found_difference = False
    for seed in range(40):
        G = make_gaussian_covariance(6, 8, random_state=seed)
        lam = float(np.sort(np.diag(G))[1]) + 1e-9  # eliminates the 2 smallest
        full = spca.dspca_bca(G, lam, eliminate=False, tol=1e-9)
        red = spca.dspca_bca(G, lam, eliminate=True, tol=1e-9)
        assert red.reduced_size < full.reduced_size == 6
        assert full.objective >= red.objective - 1e-9 * abs(red.objective)
        if full.objective > red.upper_bound * (1 + 1e-7):
            found_difference = True
            # the full solution then puts weight on an eliminated feature
            assert np.abs(full.Z[np.ix_(red.eliminated, red.eliminated)]).max() > 0
    assert found_difference


def test_certificate_holds_even_when_stopped_early():
    G = make_gaussian_covariance(120, random_state=2)
    lam = half_max_offdiag(G)
    with pytest.warns(spca.ConvergenceWarning, match="relative gap"):
        res = spca.dspca_bca(G, lam, max_sweeps=1, tol=1e-12)
    assert not res.converged
    assert res.gap > 1e-12
    ref = spca.dspca_bca(G, lam, tol=1e-9)
    assert res.objective <= ref.upper_bound * (1 + 1e-12)
    assert res.upper_bound >= ref.objective * (1 - 1e-12)


@pytest.mark.parametrize("n", [50, 150, 300])
@pytest.mark.parametrize("family", ["gaussian", "spiked"])
def test_certified_at_default_settings(n, family):
    if family == "gaussian":
        Sigma = make_gaussian_covariance(n, random_state=n)
    else:
        Sigma, _ = make_spiked_covariance(n, random_state=n)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = spca.dspca_bca(Sigma, half_max_offdiag(Sigma))
    assert res.converged and res.gap <= res.tol == 1e-6


def test_spiked_support_is_recovered():
    rng = np.random.default_rng(0)
    n, k, m = 60, 6, 3000
    u = np.zeros(n)
    support = np.sort(rng.choice(n, size=k, replace=False))
    u[support] = rng.choice([-1.0, 1.0], size=k) / np.sqrt(k)
    V = rng.standard_normal((n, m))
    Sigma = 2.0 * np.outer(u, u) + V @ V.T / m
    res = spca.dspca_bca(Sigma, lam=0.2)
    np.testing.assert_array_equal(res.support, support)
    assert abs(res.loadings @ u) > 0.99


def test_loadings_and_support_rule():
    G = make_gaussian_covariance(40, random_state=5)
    res = spca.dspca_bca(G, half_max_offdiag(G))
    x = res.loadings
    assert np.linalg.norm(x) == pytest.approx(1.0)
    np.testing.assert_array_equal(res.support, np.flatnonzero(x))
    assert x[np.argmax(np.abs(x))] > 0  # deterministic sign
    assert res.explained_variance == pytest.approx(x @ G @ x)
    if res.primal == "rank-one polish":
        np.testing.assert_allclose(res.Z, np.outer(x, x), atol=1e-15)
    # x is a leading eigenvector of Z
    w, V = np.linalg.eigh(res.Z)
    assert abs(V[:, -1] @ x) == pytest.approx(1.0, abs=1e-8)


def test_every_feature_eliminated_gives_empty_result():
    G = make_gaussian_covariance(5, random_state=1)
    with pytest.warns(spca.EmptyProblemWarning, match="every feature"):
        res = spca.dspca_bca(G, lam=10.0)
    assert res.support.size == 0 and res.reduced_size == 0
    assert res.objective == 0.0 and res.converged
    assert res.Z.shape == (5, 5) and not res.Z.any()
    np.testing.assert_array_equal(res.eliminated, np.arange(5))
    assert "converged" in repr(res)


def test_single_feature():
    res = spca.dspca_bca(np.array([[2.0]]), 0.5)
    assert res.objective == pytest.approx(1.5)
    assert res.upper_bound == pytest.approx(1.5)
    np.testing.assert_array_equal(res.support, [0])


def test_lam_zero_is_ordinary_pca():
    G = make_gaussian_covariance(15, random_state=3)
    res = spca.dspca_bca(G, 0.0, tol=1e-9)
    assert res.objective == pytest.approx(np.linalg.eigvalsh(G)[-1], rel=1e-8)


def test_float32_integer_and_sparse_input_agree():
    G = make_gaussian_covariance(20, random_state=4)
    lam = half_max_offdiag(G)
    ref = spca.dspca_bca(G, lam)
    r32 = spca.dspca_bca(G.astype(np.float32), lam)
    assert r32.objective == pytest.approx(ref.objective, rel=1e-5)
    rs = spca.dspca_bca(sp.csr_matrix(G), lam)
    assert rs.objective == pytest.approx(ref.objective, rel=1e-12)
    ri = spca.dspca_bca(np.round(G * 100).astype(np.int64), lam * 100)
    assert ri.Z.dtype == np.float64 and ri.converged


def test_caller_array_is_not_modified():
    G = make_gaussian_covariance(30, random_state=6)
    G_copy = G.copy()
    res = spca.dspca_bca(G, half_max_offdiag(G))
    np.testing.assert_array_equal(G, G_copy)
    X0 = res.X.copy()
    spca.dspca_bca(G, half_max_offdiag(G) * 0.9, X0=X0)
    np.testing.assert_array_equal(X0, res.X)


def test_warm_start_from_result():
    G = make_gaussian_covariance(150, random_state=8)
    lam = half_max_offdiag(G)
    first = spca.dspca_bca(G, lam, tol=1e-8)
    again = spca.dspca_bca(G, lam, tol=1e-8, X0=first)
    assert again.converged
    assert again.n_sweeps <= first.n_sweeps
    assert again.objective == pytest.approx(first.objective, rel=1e-8)
    nearby = spca.dspca_bca(G, 0.95 * lam, tol=1e-8, X0=first)
    assert nearby.converged


def test_paper_coordinate_descent_only():
    G = make_gaussian_covariance(30, random_state=9)
    lam = half_max_offdiag(G)
    ref = spca.dspca_bca(G, lam, tol=1e-8)
    res = spca.dspca_bca(G, lam, tol=1e-6, qp_finish=False, max_sweeps=2000)
    assert res.timings["n_exact_qp"] == 0
    assert res.objective <= ref.upper_bound * (1 + 1e-12)
    if res.converged:
        assert res.objective == pytest.approx(ref.objective, rel=1e-5)


def test_fixed_beta_is_used():
    G = make_gaussian_covariance(20, random_state=10)
    res = spca.dspca_bca(G, half_max_offdiag(G), beta=1e-5)
    assert res.beta == pytest.approx(1e-5)
    assert res.objective <= res.upper_bound


def test_repr_is_readable():
    G = make_gaussian_covariance(10, random_state=11)
    text = repr(spca.dspca_bca(G, half_max_offdiag(G)))
    assert text.startswith("DSPCAResult(converged")
    assert "gap=" in text and "support=[" in text and "\n" not in text


def test_rank_two_optimum_is_certified():
    # On this instance the optimal Z has eigenvalues 0.970 and 0.030 (interior
    # point), so no rank-one certificate exists; the interior-point finish of
    # small blocks (spca/_interior.py; the support refinement before it) finds it.
    G = make_gaussian_covariance(12, random_state=2)
    lam = half_max_offdiag(G)
    res = spca.dspca_bca(G, lam, tol=1e-7)
    assert res.converged and res.gap <= 1e-7
    assert res.primal == "interior point"
    ev = np.linalg.eigvalsh(res.Z)
    assert ev[-2] > 1e-2  # genuinely rank two
    ref = sdp_value(G, lam)
    assert res.objective == pytest.approx(ref, rel=1e-6)
    assert res.objective <= res.upper_bound
    assert res.objective == pytest.approx(np.vdot(G, res.Z) - lam * np.abs(res.Z).sum())


def test_disconnected_problem_splits_into_blocks():
    # |Sigma_ij| <= lam between the two groups: the relaxation splits and its
    # value is the larger of the two blocks' values
    rng = np.random.default_rng(12)
    A1 = make_gaussian_covariance(7, random_state=1)
    A2 = 1.3 * make_gaussian_covariance(5, random_state=2)
    n = 12
    Sigma = np.zeros((n, n))
    p = rng.permutation(n)
    b1, b2 = np.sort(p[:7]), np.sort(p[7:])
    Sigma[np.ix_(b1, b1)] = A1
    Sigma[np.ix_(b2, b2)] = A2
    lam = 0.3
    cross = 0.2 * lam * rng.uniform(-1, 1, size=(7, 5))  # below lam: no edge
    Sigma[np.ix_(b1, b2)] = cross
    Sigma[np.ix_(b2, b1)] = cross.T
    Sigma += 0.5 * np.eye(n)  # keep it PSD
    res = spca.dspca_bca(Sigma, lam, tol=1e-8)
    assert res.n_blocks >= 2 and res.converged
    v1 = spca.dspca_bca(Sigma[np.ix_(b1, b1)], lam, tol=1e-9).objective
    v2 = spca.dspca_bca(Sigma[np.ix_(b2, b2)], lam, tol=1e-9).objective
    assert res.objective == pytest.approx(max(v1, v2), rel=1e-7)
    assert res.objective == pytest.approx(sdp_value(Sigma, lam), rel=1e-5)
    # the barrier iterate stays positive definite for warm starts
    assert np.linalg.eigvalsh(res.X_reduced)[0] > 0
    again = spca.dspca_bca(Sigma, 0.9 * lam, X0=res)
    assert again.converged


def test_isolated_features_are_exact_singletons():
    # a diagonal covariance: every feature is its own block, phi = max_i S_ii - lam
    d = np.array([1.0, 3.0, 2.0, 0.5])
    res = spca.dspca_bca(np.diag(d), 0.25)
    assert res.n_blocks == 4 and res.n_blocks_solved == 1
    # (the upper bound carries its rounding margin, a few eps)
    assert res.objective == pytest.approx(2.75) and 0 <= res.upper_bound - 2.75 <= 1e-14
    np.testing.assert_array_equal(res.support, [1])


def _many_blocks(seed, n_blocks=8, size=4, lam=0.3):
    """Block-diagonal covariance with weak (< lam) couplings between blocks."""
    rng = np.random.default_rng(seed)
    n = n_blocks * size
    Sigma = np.zeros((n, n))
    for b in range(n_blocks):
        sl = slice(b * size, (b + 1) * size)
        Sigma[sl, sl] = rng.uniform(0.3, 1.5) * make_gaussian_covariance(
            size, random_state=seed * 100 + b)
    noise = 0.3 * lam * rng.uniform(-1, 1, size=(n, n))
    mask = np.kron(np.eye(n_blocks), np.ones((size, size))) == 0
    Sigma[mask] += (0.5 * (noise + noise.T))[mask]
    Sigma += 0.6 * np.eye(n)  # keeps it PSD despite the couplings
    p = rng.permutation(n)
    return Sigma[np.ix_(p, p)], lam


@pytest.mark.parametrize("seed", range(4))
def test_restriction_to_relevant_blocks_matches_full_solve(seed, monkeypatch):
    # Blocks whose cheap bound is below the best single feature are left out
    # of the solve; the answer must not change.
    Sigma, lam = _many_blocks(seed)
    res = spca.dspca_bca(Sigma, lam, tol=1e-8)
    monkeypatch.setattr("spca._bca.RESTRICT_FRACTION", 1.0)  # never restrict
    full = spca.dspca_bca(Sigma, lam, tol=1e-8)
    assert res.converged and full.converged and res.n_blocks > 1
    assert res.objective == pytest.approx(full.objective, rel=1e-7)
    assert res.upper_bound == pytest.approx(full.upper_bound, rel=1e-7)
    np.testing.assert_array_equal(res.support, full.support)
    np.testing.assert_array_equal(res.kept, full.kept)
    assert res.objective == pytest.approx(sdp_value(Sigma, lam), rel=1e-5)
    assert np.linalg.eigvalsh(res.X_reduced)[0] > 0  # usable as a warm start
    again = spca.dspca_bca(Sigma, 0.9 * lam, X0=res)
    assert again.converged


def test_restriction_is_taken_on_a_diagonal_dominated_problem():
    # one strong pair among many weak single features: only the pair is solved
    n = 40
    Sigma = np.diag(np.linspace(0.2, 0.5, n))
    Sigma[0, 0] = Sigma[1, 1] = 1.0
    Sigma[0, 1] = Sigma[1, 0] = 0.8
    res = spca.dspca_bca(Sigma, 0.1, tol=1e-9)
    assert res.reduced_size == n and res.n_blocks == n - 1
    np.testing.assert_array_equal(res.support, [0, 1])
    # phi = lambda_max of [[0.9, 0.7], [0.7, 0.9]] = 1.6 (Z = 11'/2)
    assert res.objective == pytest.approx(1.6, rel=1e-9)
    assert res.upper_bound == pytest.approx(1.6, rel=1e-9)
    assert np.all(res.Z_reduced[2:, :] == 0)


def test_checked_entry_point_agrees_with_public_solver():
    from spca._bca import _dspca_bca_checked

    Sigma, _ = make_spiked_covariance(30, random_state=3)
    lam = half_max_offdiag(Sigma)
    pub = spca.dspca_bca(Sigma, lam, eliminate=False)
    chk = _dspca_bca_checked(np.ascontiguousarray(Sigma), lam, tol=1e-6, max_sweeps=500,
                             X0=None, max_qp_passes=5, qp_tol=1e-3, qp_finish=True)
    assert chk.objective == pytest.approx(pub.objective, rel=1e-9)
    np.testing.assert_array_equal(chk.support, pub.support)
    warm = _dspca_bca_checked(np.ascontiguousarray(Sigma), 0.9 * lam, tol=1e-6,
                              max_sweeps=500, X0=chk, max_qp_passes=5, qp_tol=1e-3,
                              qp_finish=True)
    assert warm.converged
    assert warm.objective == pytest.approx(spca.dspca_bca(Sigma, 0.9 * lam).objective,
                                           rel=1e-5)


def _factor_correlation(n, seed, samples=40, factors=3):
    """Correlation matrix of few samples of low-rank-plus-noise data (does not split)."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((samples, factors))
    L = rng.standard_normal((n, factors)) * (rng.random((n, factors)) < 0.3)
    return np.corrcoef(F @ L.T + rng.standard_normal((samples, n)), rowvar=False)


@pytest.fixture
def small_working_sets(monkeypatch):
    """Working sets that start and grow small, so that small problems use them."""
    import spca._bca as bca

    monkeypatch.setattr(bca, "WS_START", 6)
    monkeypatch.setattr(bca, "WS_GROW", 4)


@pytest.mark.parametrize("seed", [0, 1])
def test_working_set_matches_interior_point(seed, small_working_sets):
    Sigma = _factor_correlation(36, seed)
    lam = 0.35
    res = spca.dspca_bca(Sigma, lam, working_set=True)
    assert res.converged
    assert res.dual == "working set"
    phi = sdp_value(Sigma, lam)
    # rigorous bounds around the interior-point value (its accuracy ~1e-7)
    assert res.objective <= phi + 1e-6 * abs(phi)
    assert res.upper_bound >= phi - 1e-6 * abs(phi)
    assert res.upper_bound - res.objective <= 1e-6 * res.upper_bound
    # the solve on the whole block agrees
    full = spca.dspca_bca(Sigma, lam, working_set=False)
    assert abs(full.objective - res.objective) <= 2e-6 * abs(full.objective)


def test_working_set_grows_and_certifies_on_the_whole_block(small_working_sets):
    Sigma = _factor_correlation(120, 3, samples=30)
    lam = 0.3
    res = spca.dspca_bca(Sigma, lam, working_set=True)
    assert res.converged and res.dual == "working set"
    # KKT of the rank-one optimum on the whole block: off the support,
    # |(Sigma x)_i| <= lam ||x||_1 (x is an eigenvector of a feasible Sigma + U)
    x = res.loadings
    off = x == 0
    assert off.any()
    assert np.all(np.abs(Sigma @ x)[off] <= lam * np.abs(x).sum() * (1 + 1e-8))
    # Z is feasible: PSD, trace one, zero outside the support
    assert abs(np.trace(res.Z) - 1.0) < 1e-12
    assert np.linalg.eigvalsh(res.Z)[0] > -1e-12


def test_working_set_gives_up_on_a_high_rank_optimum(small_working_sets, monkeypatch):
    # a W solve that cannot reach its gap in its sweeps hands over to the
    # whole block, which still certifies
    import spca._bca as bca

    monkeypatch.setattr(bca, "WS_MAX_W_SWEEPS", 1)
    monkeypatch.setattr(bca, "WS_LOOSE", 0.0)  # W solved to tol / 2 in one sweep: no
    Sigma = make_gaussian_covariance(40, random_state=0)
    lam = 0.5 * half_max_offdiag(Sigma)
    res = spca.dspca_bca(Sigma, lam, working_set=True)
    assert res.converged
    assert res.dual != "working set"


def _solve_with_w_spy(monkeypatch, stall_first_w):
    """dspca_bca on a 120-feature factor correlation (lam 0.3) with working
    sets, recording ``(size, working_set, qp_finish)`` of every block solve.
    With ``stall_first_w`` the first W solve reports a W gap of 5e-3 (above
    its 1e-3 target, as a W solve that ran out of sweeps does)."""
    import dataclasses

    import spca._bca as bca

    orig = bca._solve_block
    calls = []

    def spy(S, lam_n, X, M, history, opts):
        out = orig(S, lam_n, X, M, history, opts)
        w_solve = opts.working_set is False and S.shape[0] < 120
        first_w = w_solve and not any(c[1] is False and c[0] < 120 for c in calls)
        calls.append((S.shape[0], opts.working_set, opts.qp_finish))
        if stall_first_w and first_w:
            cert = out[1]
            out = (out[0], dataclasses.replace(cert, upper=cert.lower * (1 + 5e-3)),
                   *out[2:])
        return out

    monkeypatch.setattr(bca, "_solve_block", spy)
    Sigma = _factor_correlation(120, 3, samples=30)
    return spca.dspca_bca(Sigma, 0.3, working_set=True), calls


@pytest.mark.parametrize("missing, stall_work, grows",
                         [(10.0, 20.0, True), (np.inf, 20.0, False), (10.0, 0.0, False)])
def test_a_stalled_working_set_that_misses_features_grows(small_working_sets, monkeypatch,
                                                          missing, stall_work, grows):
    # The whole block's gap with the dual built around the 6 features of the
    # stalled first W solve is near 1, far over WS_MISSING times the W gap:
    # W misses features, so it grows and the working set certifies. With
    # WS_MISSING = inf every stall hands the whole block over, as before; so
    # does a stall budget already spent.
    import spca._bca as bca

    monkeypatch.setattr(bca, "WS_MISSING", missing)
    monkeypatch.setattr(bca, "WS_STALL_WORK", stall_work)
    res, calls = _solve_with_w_spy(monkeypatch, stall_first_w=True)
    sizes = [c[0] for c in calls if c[1] is False and c[0] < 120]
    assert res.converged
    if grows:
        assert len(sizes) > 1 and sizes[1] > sizes[0]
        assert res.dual == "working set"
    else:
        assert sizes == [6]
        assert res.dual != "working set"


@pytest.mark.parametrize("stall", [False, True])
def test_whole_block_after_working_set_skips_exact_finish_only_from_a_w_iterate(
        small_working_sets, monkeypatch, stall):
    # W outgrows its cap after the first W solve. From that W iterate the
    # whole block runs without the exact box-QP finish; after a stalled W
    # solve it starts from the caller's start, with the finish.
    import spca._bca as bca

    monkeypatch.setattr(bca, "WS_MAX_FRACTION", 0.06)
    res, calls = _solve_with_w_spy(monkeypatch, stall_first_w=stall)
    assert res.converged
    whole = [c for c in calls if c[0] == 120 and c[1] is False]
    assert len(whole) == 1
    assert whole[0][2] is stall
    assert calls[0][0] == 6 and calls[0][2] is True  # the W solve keeps the finish


def test_purge_off_support_keeps_x_positive_definite_and_the_support_block():
    import spca._bca as bca

    rng = np.random.default_rng(3)
    A = rng.standard_normal((30, 30))
    X = A @ A.T + 0.1 * np.eye(30)
    x = np.zeros(30)
    support = np.array([2, 5, 11, 17, 29])
    x[support] = rng.standard_normal(support.size)
    before = X.copy()
    trace = bca._purge_off_support(X, x, 1e-2)
    off = np.setdiff1d(np.arange(30), support)
    np.testing.assert_array_equal(X[np.ix_(support, support)], before[np.ix_(support, support)])
    assert not np.any(X[np.ix_(off, support)])
    offdiag = X[np.ix_(off, off)] - np.diag(np.diag(X)[off])
    assert not np.any(offdiag)
    cap = 1e-2 * np.diag(before).max()
    np.testing.assert_array_equal(np.diag(X)[off], np.minimum(np.diag(before)[off], cap))
    assert np.linalg.eigvalsh(X)[0] > 0
    assert trace == pytest.approx(np.trace(X), rel=1e-15)


def test_whole_block_after_working_set_purges_off_support_rows(monkeypatch):
    # make_correlation_few_samples(500) at the lam of the hard benchmark's
    # 100-nonzero case: the working set grows to 324 features and hands its
    # iterate to the whole block, where the rows outside the rank-one
    # support are cut back once two checks agree on it: 36 sweeps without,
    # 14 with (same certified optimum).
    import spca._bca as bca
    from spca.datasets import make_correlation_few_samples

    Sigma = make_correlation_few_samples(500, 64, random_state=0)
    lam = 0.10561791420442636
    res = spca.dspca_bca(Sigma, lam)
    monkeypatch.setattr(bca, "PURGE_CAP", None)
    plain = spca.dspca_bca(Sigma, lam)
    assert res.converged and plain.converged
    assert res.support.size == plain.support.size == 100
    assert res.objective == pytest.approx(plain.objective, rel=1e-9)
    assert res.n_sweeps <= 20 < plain.n_sweeps


@pytest.mark.parametrize("seed", [0, 1])
def test_working_set_from_a_dense_warm_start(seed, small_working_sets):
    # X0 couples every pair of features; the W iterate is kept block
    # diagonal (W x W and a diagonal), so W solves start positive definite
    # and certify (with X0's couplings kept next to the W iterate they lost
    # definiteness and the whole block was solved instead)
    Sigma = _factor_correlation(36, seed)
    A = np.random.default_rng(seed).standard_normal((36, 3))
    X0 = A @ A.T + 1e-3 * np.eye(36)
    X0_copy = X0.copy()
    res = spca.dspca_bca(Sigma, 0.35, working_set=True, X0=X0)
    cold = spca.dspca_bca(Sigma, 0.35, working_set=True)
    np.testing.assert_array_equal(X0, X0_copy)
    assert res.converged and res.dual == "working set"
    assert np.linalg.eigvalsh(res.X_reduced)[0] > 0
    assert res.objective == pytest.approx(cold.objective, rel=2e-6)


def _soft(Sigma, lam):
    soft = Sigma - np.clip(Sigma, -lam, lam)
    np.fill_diagonal(soft, np.diag(Sigma) - lam)
    return soft


def test_first_working_set_holds_a_concentrated_support():
    # the hard benchmark's 50-nonzero case at n = 500: the leading
    # eigenvector of the soft-thresholded matrix puts every feature of the
    # optimal support in the first working set; the row masses do not
    import spca._bca as bca
    from spca.datasets import make_correlation_few_samples

    Sigma = make_correlation_few_samples(500, 64, random_state=0)
    lam = 0.1740796819788149
    res = spca.dspca_bca(Sigma, lam)
    assert res.converged and res.support.size == 50
    soft = _soft(Sigma, lam)
    first = bca._start_order(soft, bca.WS_START)[: bca.WS_START]
    by_mass = np.argsort(-np.abs(soft).sum(axis=1), kind="stable")[: bca.WS_START]
    assert set(res.support) <= set(first)
    assert not set(res.support) <= set(by_mass)


def test_working_set_solves_leave_out_the_support_refinement(monkeypatch):
    # The W solves only need a rank-one primal and their own loose gap; the
    # support refinement (certify(refine=True)) is for the whole block. On
    # this problem the W solves' refinements took 1.8 s of a 3 s solve and
    # never helped (their global bounds were 0.29-0.47 above their values).
    import spca._certificate as cert

    calls = []
    original = cert.refine_on_support

    def recording(Sigma, *args, **kwargs):
        calls.append(Sigma.shape[0])
        return original(Sigma, *args, **kwargs)

    monkeypatch.setattr(cert, "refine_on_support", recording)
    Sigma = make_gaussian_covariance(700, random_state=0)
    res = spca.dspca_bca(Sigma, half_max_offdiag(Sigma))
    assert res.converged and res.dual == "working set"
    assert all(m == 700 for m in calls)


def test_first_working_set_falls_back_to_row_mass(monkeypatch):
    import scipy.sparse.linalg

    import spca._bca as bca
    from spca.datasets import make_correlation_few_samples

    Sigma = make_correlation_few_samples(500, 64, random_state=0)
    # at the 100-nonzero lam the vector spreads: 84% of its squared norm on
    # 64 features, below WS_START_MASS
    soft = _soft(Sigma, 0.10561791420442636)
    by_mass = np.argsort(-np.abs(soft).sum(axis=1), kind="stable")
    np.testing.assert_array_equal(bca._start_order(soft, bca.WS_START), by_mass)
    # and when Lanczos fails
    soft = _soft(Sigma, 0.1740796819788149)
    by_mass = np.argsort(-np.abs(soft).sum(axis=1), kind="stable")
    assert not np.array_equal(bca._start_order(soft, bca.WS_START), by_mass)

    def fail(*args, **kwargs):
        raise scipy.sparse.linalg.ArpackNoConvergence("no convergence", np.empty(0),
                                                      np.empty((0, 0)))

    monkeypatch.setattr(scipy.sparse.linalg, "eigsh", fail)
    np.testing.assert_array_equal(bca._start_order(soft, bca.WS_START), by_mass)


def test_working_set_flag_is_checked():
    with pytest.raises(TypeError, match="working_set"):
        spca.dspca_bca(np.eye(3), 0.1, working_set="yes")


def test_certificates_follow_a_geometric_schedule():
    Sigma, lam = high_rank_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, max_sweeps=40, working_set=False)
    assert not res.converged and res.n_sweeps == 40
    checked = [h[0] for h in res.history]
    assert checked == [1, 2, 3, 4, 5, 6, 8, 10, 12, 15, 19, 24, 30, 38, 40]


def test_failed_refinements_back_off(monkeypatch):
    import spca._bca as bca

    calls = []
    real = bca.certify

    def counting(*args, **kwargs):
        if kwargs.get("refine"):
            calls.append(1)
            return real(*args, **kwargs)
        # report every barrier stage as solved, so that every check
        # qualifies for a refinement (as when the barrier gap is small but
        # the optimum's rank keeps the gap above tol)
        cert = real(*args, **kwargs)
        return dataclasses.replace(cert, barrier_lower=cert.barrier_upper)

    monkeypatch.setattr(bca, "certify", counting)
    # (the proximal point polish would certify this problem at about sweep 100)
    monkeypatch.setattr(bca, "POLISH_MIN_SWEEPS", 10**9)
    Sigma, lam = high_rank_problem()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        res = spca.dspca_bca(Sigma, lam, max_sweeps=300, working_set=False)
    assert not res.converged
    n_checks = len(res.history)
    # refinements that fail double the wait: at most about log2(checks) + 1
    # of them (one per check without the back-off)
    assert n_checks >= 20
    assert 1 <= len(calls) <= int(np.log2(n_checks)) + 2


@pytest.mark.parametrize(
    ("checks", "expected"),
    [
        ([(10, 1e-2), (60, 1e-3)], False),  # too early to judge: < GIVE_UP_MIN
        ([(30, 1e-3), (60, 1e-3)], True),  # no progress over half the sweeps
        ([(30, 1e-2), (60, 1e-3)], True),  # a decade per 30 sweeps: 1e-6 at 150
        ([(30, 1e-2), (60, 1e-4)], False),  # two decades per 30 sweeps: 1e-6 at 90
        ([(10, 1.0), (30, 1e-2), (59, 1e-2), (60, 1e-5)], False),  # recent rate counts
    ],
)
def test_hopeless_extrapolates_the_recent_rate(checks, expected):
    from spca._bca import _hopeless

    assert _hopeless(checks, 1e-6, 100) is expected


def test_give_up_stops_a_hopeless_solve_with_valid_bounds():
    from spca._bca import _dspca_bca_checked

    Sigma, lam = high_rank_problem()
    options = dict(tol=1e-6, max_sweeps=500, X0=None, max_qp_passes=5, qp_tol=1e-3,
                   qp_finish=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", spca.ConvergenceWarning)
        early = _dspca_bca_checked(Sigma, lam, give_up=True, **options)
    assert not early.converged
    assert 50 <= early.n_sweeps < 500
    assert early.objective <= early.upper_bound
    ref = sdp_value(Sigma, lam)
    assert early.objective <= ref * (1 + 1e-6) and ref <= early.upper_bound * (1 + 1e-6)
    # a problem that converges is not stopped
    G = make_gaussian_covariance(12, random_state=2)
    res = _dspca_bca_checked(G, half_max_offdiag(G), give_up=True, **options)
    assert res.converged


MAX_POSITIONAL = 8


def _pyx_positional(text, open_paren):
    """Number of positional parameters of the Cython signature whose ``(``
    is at ``open_paren`` (commas inside ``[...]`` types do not count; a bare
    ``*`` ends them)."""
    depth, i, params, current = 0, open_paren, [], ""
    while True:
        c = text[i]
        if c in "([":
            depth += 1
        elif c in ")]":
            depth -= 1
            if depth == 0:
                break
        elif c == "," and depth == 1:
            params.append(current.strip())
            current = ""
            i += 1
            continue
        if depth >= 1 and not (depth == 1 and c == "("):
            current += c
        i += 1
    params.append(current.strip())
    n = 0
    for p in params:
        if not p or p.startswith("*"):
            break
        n += 1
    return n


def test_pyx_signature_parser_counts_positional_parameters():
    text = ("def f(const double[:, ::1] A, double[::1] b, Py_ssize_t n=3, *, "
            "double tol):\n    pass\n")
    assert _pyx_positional(text, text.index("(")) == 3
    text = "cpdef double g(double x, (int, int) pair, double[:, :, ::1] T):\n"
    assert _pyx_positional(text, text.index("(")) == 3


def test_no_function_takes_more_than_eight_positional_parameters():
    import ast
    import pathlib
    import re

    root = pathlib.Path(__file__).resolve().parents[1] / "spca"  # the source tree
    offenders, seen = [], 0
    for path in sorted(root.rglob("*.py")):
        rel = path.relative_to(root.parent).as_posix()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
                seen += 1
                n = len(node.args.posonlyargs) + len(node.args.args)
                if n > MAX_POSITIONAL:
                    offenders.append(f"{rel}:{node.lineno} {getattr(node, 'name', 'lambda')} "
                                     f"({n})")
    signature = re.compile(r"^[ \t]*(?:cpdef|def)\s+(?:[\w.]+\s+)?(\w+)\s*\(", re.M)
    n_pyx = 0
    for path in sorted(root.rglob("*.pyx")):
        rel = path.relative_to(root.parent).as_posix()
        text = path.read_text(encoding="utf-8")
        for match in signature.finditer(text):
            n_pyx += 1
            n = _pyx_positional(text, match.end() - 1)
            if n > MAX_POSITIONAL:
                offenders.append(f"{rel} {match.group(1)} ({n})")
    # the scan saw the package (the kernels' .pyx sources included)
    assert seen > 300 and n_pyx >= 10
    assert offenders == []


def _sweep_state(n=30, seed=0):
    from spca import _bca, _bca_fast

    Sigma = make_gaussian_covariance(n, random_state=seed)
    S = np.ascontiguousarray(Sigma / Sigma.diagonal().max())
    lam = 0.5 * half_max_offdiag(S)
    X, M = _bca._start(S, lam, 1.0 - lam, None, np.arange(n), 1.0, True)
    return _bca_fast, S, lam, X, M


def test_a_sweep_in_column_chunks_is_bitwise_one_sweep():
    # the time limit's checkpoint: chunks that pass trace on make the same
    # arithmetic as one call of the kernel
    fast, S, lam, X, M = _sweep_state()
    n = S.shape[0]
    X1, M1, H1 = X.copy(), M.copy(), np.linalg.inv(X)
    X2, M2, H2 = X.copy(), M.copy(), H1.copy()
    w1, w2 = fast.Workspace(n, 128), fast.Workspace(n, 128)
    kw = dict(max_passes=5, qp_tol=1e-3, max_rounds=50)
    t1, p1, e1 = fast.bca_sweep(S, X1, H1, M1, lam, 1e-3, float(np.trace(X)), w1, **kw)
    t2, p2, e2 = float(np.trace(X)), 0, 0
    for start, stop in [(0, 7), (7, 8), (8, 8), (8, 29), (29, n)]:
        t2, p, e = fast.bca_sweep(S, X2, H2, M2, lam, 1e-3, t2, w2, start=start, stop=stop,
                                  **kw)
        p2, e2 = p2 + p, e2 + e
    assert (t1, p1, e1) == (t2, p2, e2)
    for A, B in [(X1, X2), (M1, M2), (H1, H2)]:
        assert np.array_equal(A, B)
    assert not np.array_equal(X1, X)  # (the sweep did move the iterate)


@pytest.mark.parametrize("start, stop", [(-1, 5), (6, 5), (0, 31)])
def test_sweep_column_range_is_checked(start, stop):
    fast, S, lam, X, M = _sweep_state()
    with pytest.raises(ValueError, match=f"start={start}..stop={stop}"):
        fast.bca_sweep(S, X, np.linalg.inv(X), M, lam, 1e-3, 1.0, fast.Workspace(30, 128),
                       max_passes=5, qp_tol=1e-3, max_rounds=50, start=start, stop=stop)


@pytest.mark.parametrize("seed", range(6))
def test_metzler_bound_is_above_every_matrix_it_covers(seed):
    from spca._certificate import metzler_bound

    rng = np.random.default_rng(seed)
    n = int(rng.integers(2, 40))
    off = np.abs(rng.standard_normal((n, n)))
    off = off + off.T
    off[rng.random((n, n)) < 0.5] = 0.0
    off = np.maximum(off, off.T)
    np.fill_diagonal(off, 0.0)
    d = rng.standard_normal(n)
    bound = metzler_bound(d, off)
    gersh = float(np.max(d + off.sum(axis=1)))
    assert bound <= gersh * (1 + 1e-12) + 1e-12  # (v = 1 is among the vectors)
    B = off + np.diag(d)
    assert bound >= np.linalg.eigvalsh(B)[-1]
    for _ in range(5):  # any signs inside the box
        A = off * rng.uniform(-1, 1, (n, n))
        A = np.triu(A, 1)
        A = A + A.T + np.diag(d)
        assert bound >= np.linalg.eigvalsh(A)[-1]
    # the Perron vector's bound is exact for B (up to the power steps' accuracy)
    assert bound <= np.linalg.eigvalsh(B)[-1] + 0.5 * (gersh - np.linalg.eigvalsh(B)[-1]) + 1e-9


def test_quick_certificate_brackets_the_relaxation():
    from spca import _bca
    from spca._certificate import dspca_objective, quick_certificate

    Sigma = make_gaussian_covariance(25, random_state=3)
    S = np.ascontiguousarray(Sigma / Sigma.diagonal().max())
    lam = 0.3 * half_max_offdiag(S)
    phi = sdp_value(S, lam)
    X, M = _bca._start(S, lam, 1.0 - lam, None, np.arange(25), 1.0, True)
    X0, M0 = X.copy(), M.copy()
    cert = quick_certificate(S, lam, X, M)
    assert np.array_equal(X, X0) and np.array_equal(M, M0)
    assert cert.lower <= phi + 1e-7 <= cert.upper + 2e-7
    assert cert.lower == pytest.approx(dspca_objective(S, cert.Z, lam), abs=1e-12)
    assert np.trace(cert.Z) == pytest.approx(1.0)
    assert np.linalg.eigvalsh(cert.Z)[0] >= -1e-12
