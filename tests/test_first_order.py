"""dspca_first_order (d'Aspremont et al. 2007) against Clarabel, dspca_bca and its certificate."""

import contextlib
import time
import warnings

import numpy as np
import pytest
import scipy.sparse as sp

import spca
from spca._first_order import dspca_first_order
from spca.datasets import make_gaussian_covariance, make_spiked_covariance

cp = pytest.importorskip("cvxpy")

from _reference import half_max_offdiag, sdp_value  # noqa: E402


@pytest.fixture(autouse=True)
def single_threaded_blas():
    """Run with one BLAS thread: the eigenproblems here are small, and on a
    loaded machine a multithreaded OpenBLAS can make them 10-100x slower."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=1, user_api="blas")
    with limits:
        yield


def instances():
    out = []
    for seed in range(2):
        for n in (5, 8, 12):
            G = make_gaussian_covariance(n, random_state=seed)
            out.append((f"gaussian-{n}-{seed}", G, half_max_offdiag(G)))
            S, _ = make_spiked_covariance(n, cardinality=max(2, n // 5), random_state=seed)
            out.append((f"spiked-{n}-{seed}", S, half_max_offdiag(S)))
    G = make_gaussian_covariance(10, 30, random_state=7)
    out.append(("gaussian-eliminating", G, float(np.sort(np.diag(G))[3])))
    return out


def check_result_invariants(res, Sigma, lam):
    """Everything a DSPCAResult promises, for a non-empty result."""
    Z = res.Z
    # the reported objective is the objective of the returned Z, which is feasible
    assert res.objective == pytest.approx(
        np.vdot(Sigma, Z) - lam * np.abs(Z).sum(), rel=1e-12, abs=1e-14
    )
    np.testing.assert_allclose(np.trace(Z), 1.0, rtol=1e-12)
    np.testing.assert_array_equal(Z, Z.T)
    assert np.linalg.eigvalsh(res.Z_reduced)[0] > 0  # positive definite
    assert np.all(Z[res.eliminated] == 0) and np.all(Z[:, res.eliminated] == 0)
    assert res.objective <= res.upper_bound
    assert res.gap == pytest.approx((res.upper_bound - res.objective) / res.upper_bound)
    assert res.converged == (res.gap <= res.tol)
    # X = objective * Z is a positive definite warm start
    np.testing.assert_allclose(res.X_reduced, res.objective * res.Z_reduced, rtol=1e-12)
    np.linalg.cholesky(res.X_reduced)
    # loadings: unit norm, largest entry positive, zero outside the support
    x = res.loadings
    assert np.linalg.norm(x) == pytest.approx(1.0)
    assert x[np.argmax(np.abs(x))] > 0
    np.testing.assert_array_equal(res.support, np.flatnonzero(x))
    assert set(res.support) <= set(res.kept)
    assert res.explained_variance == pytest.approx(x @ Sigma @ x)
    assert res.primal == res.dual == "first-order"
    assert res.n_qp_passes == 0 and res.n_sweeps >= 0
    assert res.timings["total"] >= 0
    assert res.lam == lam


@pytest.mark.parametrize("name, Sigma, lam", instances(), ids=[i[0] for i in instances()])
def test_objective_matches_interior_point(name, Sigma, lam):
    res = dspca_first_order(Sigma, lam, tol=1e-3)
    assert res.converged and res.gap <= 1e-3
    ref = sdp_value(Sigma[np.ix_(res.kept, res.kept)], lam)
    # the bounds sandwich the interior-point value (to its own accuracy) ...
    assert res.objective <= ref * (1 + 1e-7)
    assert res.upper_bound >= ref * (1 - 1e-7)
    # ... so the objective is within the certified gap of it
    assert ref - res.objective <= res.gap * res.upper_bound + 1e-7 * ref
    check_result_invariants(res, Sigma, lam)


def test_without_elimination_matches_interior_point():
    G = make_gaussian_covariance(10, 30, random_state=7)
    lam = float(np.sort(np.diag(G))[3])
    res = dspca_first_order(G, lam, eliminate=False)
    assert res.reduced_size == 10 and not res.eliminate
    ref = sdp_value(G, lam)
    assert res.objective <= ref * (1 + 1e-7) <= res.upper_bound * (1 + 2e-7)
    assert res.gap <= 1e-3
    check_result_invariants(res, G, lam)


@pytest.mark.parametrize("max_iter", [1, 3])
def test_certificate_holds_even_when_stopped_early(max_iter):
    S, _ = make_spiked_covariance(12, cardinality=3, random_state=3)
    lam = half_max_offdiag(S)
    with pytest.warns(spca.ConvergenceWarning, match=f"max_iter after {max_iter} iterations"):
        res = dspca_first_order(S, lam, max_iter=max_iter)
    assert not res.converged and res.gap > res.tol
    assert res.n_sweeps == max_iter
    ref = sdp_value(S[np.ix_(res.kept, res.kept)], lam)
    assert res.objective <= ref * (1 + 1e-7)
    assert res.upper_bound >= ref * (1 - 1e-7)
    check_result_invariants(res, S, lam)


@pytest.mark.parametrize("family", ["gaussian", "spiked"])
def test_agrees_with_block_coordinate_ascent(family):
    n = 30
    if family == "gaussian":
        S = make_gaussian_covariance(n, random_state=11)
    else:
        S, _ = make_spiked_covariance(n, random_state=11)
    lam = half_max_offdiag(S)
    tol = 2e-3
    res = dspca_first_order(S, lam, tol=tol)
    ref = spca.dspca_bca(S, lam, tol=1e-9)
    assert res.converged
    # each method's certificate brackets the other's value
    assert res.objective <= ref.upper_bound * (1 + 1e-12)
    assert ref.objective <= res.upper_bound * (1 + 1e-12)
    assert abs(res.objective - ref.objective) <= tol * res.upper_bound
    assert res.upper_bound - ref.objective <= tol * res.upper_bound
    # the leading eigenvector of Z finds the same sparse direction
    assert abs(res.loadings @ ref.loadings) >= 0.95
    check_result_invariants(res, S, lam)
    # and the result is a valid warm start for dspca_bca
    warm = spca.dspca_bca(S, lam, tol=1e-9, X0=res)
    assert warm.converged
    assert warm.objective == pytest.approx(ref.objective, rel=1e-8)


def test_best_bounds_never_get_worse_and_history_is_consistent():
    G = make_gaussian_covariance(12, random_state=5)
    lam = half_max_offdiag(G)
    m = G.shape[0]
    res = dspca_first_order(G, lam, tol=1e-3)
    h = np.array(res.history)
    assert h.shape[1] == 4 and h.shape[0] >= 10
    its, mus, lowers, uppers = h.T
    assert np.all(np.diff(its) > 0) and its[0] == 1 and its[-1] == res.n_sweeps
    np.testing.assert_array_equal(mus, res.beta)
    assert np.all(np.diff(lowers) >= -1e-14 * np.abs(lowers[1:]))
    assert np.all(np.diff(uppers) <= 0)
    assert np.all(lowers <= uppers)
    gaps = (uppers - lowers) / uppers
    assert gaps[-1] <= 1e-3 < gaps[0]
    assert lowers[-1] == pytest.approx(res.objective, rel=1e-12)
    # (the reported bound adds its rounding margin to the last one)
    assert uppers[-1] <= res.upper_bound <= uppers[-1] * (1 + 1e-12)
    # default smoothing: mu = tol * (max_i Sigma_ii - lam) / (2 log n)
    mu = res.beta
    assert mu == pytest.approx(1e-3 * (G.diagonal().max() - lam) / (2 * np.log(m)))
    # Nesterov's bound for lambda_max(Sigma + Y_k) - obj(Xhat_k), both of which
    # enter the best bounds at every 10th iteration
    tenth = its % 10 == 0
    assert tenth.sum() >= 3
    k1 = its[tenth]
    bound = mu * np.log(m) + 2 * m**2 * lam**2 / (mu * k1 * (k1 + 1))
    assert np.all(uppers[tenth] - lowers[tenth] <= bound + 1e-8 * uppers[tenth])


def test_max_time_is_respected():
    S, _ = make_spiked_covariance(60, random_state=2)
    lam = half_max_offdiag(S)
    t0 = time.perf_counter()
    with pytest.warns(spca.ConvergenceWarning, match="max_time"):
        res = dspca_first_order(S, lam, tol=1e-6, max_time=0.3)
    elapsed = time.perf_counter() - t0
    assert not res.converged
    assert res.timings["total"] < 0.3 + 0.5
    assert elapsed < 0.3 + 1.0
    assert res.n_sweeps >= 1 and res.objective <= res.upper_bound
    assert res.status == "time_limit"


def test_max_time_reads_only_the_limits_clock(monkeypatch):
    import spca._limits as limits

    # a stub clock that moves one second per reading: the limit of 5.5 s
    # (deadline 6.5 s after the reading at the start) ends the iterations
    # at the sixth check, whatever the machine's speed
    now = [0.0]

    def clock():
        now[0] += 1.0
        return now[0]

    monkeypatch.setattr(limits, "clock", clock)
    S, _ = make_spiked_covariance(60, random_state=2)
    lam = half_max_offdiag(S)
    with pytest.warns(spca.ConvergenceWarning, match="max_time"):
        res = dspca_first_order(S, lam, tol=1e-6, max_time=5.5)
    assert res.n_sweeps == 6 and res.status == "time_limit"
    assert res.objective <= res.upper_bound
    # the same iterations as a run capped at 6 (work_limit)
    with pytest.warns(spca.ConvergenceWarning, match="max_iter"):
        capped = dspca_first_order(S, lam, tol=1e-6, max_iter=6)
    assert capped.status == "work_limit"
    assert (capped.objective, capped.upper_bound) == (res.objective, res.upper_bound)


def test_user_mu_is_used():
    G = make_gaussian_covariance(8, random_state=4)
    lam = half_max_offdiag(G)
    res = dspca_first_order(G, lam, mu=1e-3)
    assert res.beta == 1e-3
    assert {h[1] for h in res.history} == {1e-3}
    # scaling Sigma, lam and mu by c gives the same Z
    res2 = dspca_first_order(4.0 * G, 4.0 * lam, mu=4e-3)
    np.testing.assert_allclose(res2.Z, res.Z, atol=1e-12)
    assert res2.objective == pytest.approx(4.0 * res.objective, rel=1e-10)
    assert res2.n_sweeps == res.n_sweeps


def test_lam_zero_is_ordinary_pca():
    G = make_gaussian_covariance(15, random_state=3)
    res = dspca_first_order(G, 0.0, tol=1e-6)
    top = np.linalg.eigvalsh(G)[-1]
    assert res.converged
    assert res.objective <= top * (1 + 1e-12) <= res.upper_bound * (1 + 1e-12)
    assert res.objective == pytest.approx(top, rel=1e-6)


def test_sparse_and_integer_input():
    G = make_gaussian_covariance(10, random_state=6)
    lam = half_max_offdiag(G)
    ref = dspca_first_order(G, lam)
    rs = dspca_first_order(sp.csr_matrix(G), lam)
    assert rs.objective == pytest.approx(ref.objective, rel=1e-12)
    ri = dspca_first_order(np.round(G * 100).astype(np.int64), lam * 100)
    assert ri.Z.dtype == np.float64 and ri.converged


def test_caller_array_is_not_modified():
    G = make_gaussian_covariance(10, random_state=6)
    G_copy = G.copy()
    dspca_first_order(G, half_max_offdiag(G))
    np.testing.assert_array_equal(G, G_copy)


def test_every_feature_eliminated_gives_empty_result():
    G = make_gaussian_covariance(5, random_state=1)
    with pytest.warns(spca.EmptyProblemWarning, match="every feature"):
        res = dspca_first_order(G, lam=10.0)
    assert res.support.size == 0 and res.reduced_size == 0
    assert res.objective == 0.0 and res.converged and res.n_sweeps == 0
    assert res.Z.shape == (5, 5) and not res.Z.any()
    np.testing.assert_array_equal(res.eliminated, np.arange(5))


def test_single_feature():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = dspca_first_order(np.array([[2.0]]), 0.5)
    assert res.objective == pytest.approx(1.5)
    assert res.upper_bound == pytest.approx(1.5)
    assert res.converged and res.n_sweeps == 0
    np.testing.assert_array_equal(res.support, [0])
    np.testing.assert_array_equal(res.loadings, [1.0])


def test_single_surviving_feature():
    S = np.diag([3.0, 0.2, 0.1])
    S[0, 1] = S[1, 0] = 0.1
    res = dspca_first_order(S, 0.5)
    np.testing.assert_array_equal(res.kept, [0])
    assert res.objective == pytest.approx(2.5) and res.converged


GOOD = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 1.5]])


@pytest.mark.parametrize(
    "args, kwargs, exc, match",
    [
        ((np.ones((2, 3)), 0.1), {}, ValueError, r"Sigma must be square"),
        ((np.array([[1.0, 2.0], [0.0, 1.0]]), 0.1), {}, ValueError, r"Sigma must be symmetric"),
        ((np.array([[1.0, np.nan], [np.nan, 1.0]]), 0.1), {}, ValueError, r"must be finite"),
        ((np.array([[1.0, 3.0], [3.0, 1.0]]), 0.1), {}, ValueError, r"positive semidefinite"),
        ((np.eye(2) * (1 + 1j), 0.1), {}, TypeError, r"real numbers"),
        ((GOOD, -0.1), {}, ValueError, r"lam must be >= 0"),
        ((GOOD, "0.1"), {}, TypeError, r"lam must be a real number"),
        ((GOOD, 0.1), {"tol": 1.0}, ValueError, r"tol is a relative duality gap"),
        ((GOOD, 0.1), {"tol": 0.0}, ValueError, r"tol must be > 0"),
        ((GOOD, 0.1), {"max_iter": 0}, ValueError, r"max_iter must be >= 1"),
        ((GOOD, 0.1), {"max_iter": 2.5}, TypeError, r"max_iter must be an integer"),
        ((GOOD, 0.1), {"max_time": 0.0}, ValueError, r"max_time must be > 0"),
        ((GOOD, 0.1), {"mu": -1.0}, ValueError, r"mu must be > 0"),
        ((GOOD, 0.1), {"eliminate": "yes"}, TypeError, r"eliminate must be True or False"),
    ],
)
def test_bad_input(args, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        dspca_first_order(*args, **kwargs)


def test_repr_counts_iterations_not_sweeps():
    G = make_gaussian_covariance(8, random_state=3)
    res = dspca_first_order(G, half_max_offdiag(G), tol=1e-2)
    text = repr(res)
    assert f"iterations={res.n_sweeps}," in text and "sweeps=" not in text
    bca = spca.dspca_bca(G, half_max_offdiag(G))
    assert f"sweeps={bca.n_sweeps}," in repr(bca) and "iterations=" not in repr(bca)
