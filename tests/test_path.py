"""Cardinality search: dspca_cardinality hits the target k or says why not."""

from __future__ import annotations

import math

import numpy as np
import pytest
import scipy.sparse as sp

import spca
from spca._bca import DSPCAResult
from spca._path import CardinalityResult, LamTrial, _search, _Solver, dspca_cardinality
from spca._variance import _MatrixCovariance


def gaussian_cov(seed: int, n: int = 16, m: int = 60) -> np.ndarray:
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((m, n)) * rng.uniform(0.5, 2.0, n)
    return A.T @ A / m


def spiked_cov(seed: int, n: int = 20, s: int = 6, strength: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    u = np.zeros(n)
    u[rng.choice(n, s, replace=False)] = rng.standard_normal(s)
    u /= np.linalg.norm(u)
    A = rng.standard_normal((200, n)) + strength * rng.standard_normal((200, 1)) * u
    return A.T @ A / 200


def check_result(res: CardinalityResult, Sigma: np.ndarray, k: int) -> None:
    n = Sigma.shape[0]
    assert res.k == k
    assert res.trials and all(isinstance(t, LamTrial) for t in res.trials)
    assert res.result.n_features == n and res.loadings.shape == (n,)
    # Exactly k features, always; the loadings are the leading eigenvector on them.
    assert res.cardinality == k == res.support.size and res.exact
    assert np.count_nonzero(res.loadings) == k
    np.testing.assert_array_equal(res.support, np.flatnonzero(res.loadings))
    vals, vecs = np.linalg.eigh(Sigma[np.ix_(res.support, res.support)])
    assert res.explained_variance == pytest.approx(vals[-1], rel=1e-10)
    assert res.loadings @ Sigma @ res.loadings == pytest.approx(vals[-1], rel=1e-10)
    assert res.explained_variance <= res.variance_upper_bound * (1 + 1e-9)
    assert 0 < res.certified_ratio <= 1 + 1e-9
    # Theorem 1: only features with variance > lam can be in the relaxation's support.
    assert np.all(np.diag(Sigma)[res.relaxation_support] > res.lam)
    np.testing.assert_array_equal(res.relaxation_loadings, res.result.loadings)
    if res.relaxation_exact:
        assert res.relaxation_support.size == k
        assert "exactly" in res.message
        assert res.gap <= 1e-6 and res.converged
        # The result is the solve at its lam: same objective as a fresh solve.
        fresh = spca.dspca_bca(Sigma, res.lam)
        assert res.objective == pytest.approx(fresh.objective, rel=1e-5)
    else:
        assert res.relaxation_support.size != k
        assert "no lam gives exactly" in res.message or "max_solves" in res.message
        assert res.origin.startswith(("grown from", "pruned from", "greedy"))


@pytest.mark.parametrize("make", [gaussian_cov, spiked_cov])
@pytest.mark.parametrize("seed", [0, 1])
def test_every_k(make, seed):
    Sigma = make(seed)
    n = Sigma.shape[0]
    n_exact = 0
    for k in range(1, n + 1, 3):
        res = dspca_cardinality(Sigma, k)
        check_result(res, Sigma, k)
        n_exact += res.relaxation_exact
    assert n_exact >= math.ceil(0.8 * len(range(1, n + 1, 3)))


def test_theorem1_bracket_and_trials():
    Sigma = spiked_cov(3)
    k = 4
    res = dspca_cardinality(Sigma, k)
    assert res.relaxation_exact
    v = np.sort(np.diag(Sigma))[::-1]
    # Every lam tried is below the k-th largest variance (above it < k survive).
    assert all(t.lam < v[k - 1] for t in res.trials)
    search = [t for t in res.trials if t.role == "search"]
    assert search[-1].lam == res.lam and search[-1].cardinality == k
    assert all(t.role in ("search", "bound") for t in res.trials)
    assert all(t.upper_bound >= 0 and t.l1_norm >= 1 - 1e-9 for t in res.trials)
    assert res.n_solves == len(res.trials)
    assert res.n_sweeps == sum(t.sweeps for t in res.trials) > 0
    assert res.seconds >= sum(t.seconds for t in res.trials) * 0.5
    lo, hi = res.bracket
    assert hi <= v[k - 1]
    assert "certified_ratio" in repr(res) and f"k={k}" in repr(res)


def correlation(seed: int) -> np.ndarray:
    C = gaussian_cov(seed, n=12)
    d = np.sqrt(np.diag(C))
    return C / np.outer(d, d)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_correlation_matrix_all_variances_tied(k):
    R = correlation(5)
    res = dspca_cardinality(R, k)
    check_result(res, R, k)
    assert res.relaxation_exact


@pytest.mark.parametrize("k", [5, 6])
def test_correlation_matrix_larger_k(k):
    R = correlation(5)
    res = dspca_cardinality(R, k)
    check_result(res, R, k)


def test_duplicated_features_jump_is_reported():
    rng = np.random.default_rng(0)
    A = rng.standard_normal((100, 6))
    A[:, 1] = A[:, 0]  # an exact duplicate: they enter together
    A[:, 0] *= 3.0
    A[:, 1] *= 3.0
    Sigma = A.T @ A / 100
    res = dspca_cardinality(Sigma, 1)
    assert not res.relaxation_exact
    assert set(res.relaxation_support.tolist()) == {0, 1}
    # ... but the answer has exactly one feature, one of the two.
    assert res.cardinality == 1 and res.support[0] in (0, 1)
    assert res.explained_variance == pytest.approx(Sigma[0, 0])
    assert res.certified_ratio == pytest.approx(1.0)  # k = 1: max variance, exact
    assert "no lam gives exactly k=1" in res.message
    lo, hi = res.bracket  # a narrow bracket, at most JUMP_RTOL wide
    assert hi / lo - 1 <= 1e-2


def test_sparse_sigma_same_as_dense():
    Sigma = spiked_cov(7)
    a = dspca_cardinality(Sigma, 5)
    b = dspca_cardinality(sp.csr_array(Sigma), 5)
    assert a.lam == pytest.approx(b.lam, rel=1e-12)
    np.testing.assert_allclose(a.loadings, b.loadings, atol=1e-10)


def test_does_not_modify_input():
    Sigma = gaussian_cov(2)
    copy = Sigma.copy()
    dspca_cardinality(Sigma, 3)
    np.testing.assert_array_equal(Sigma, copy)


def test_search_tol_reconfirms_at_tol():
    Sigma = gaussian_cov(4)
    res = dspca_cardinality(Sigma, 5, search_tol=1e-2)
    if res.relaxation_exact:
        assert res.result.tol == 1e-6
        assert [t for t in res.trials if t.role == "search"][-1].tol == 1e-6
    assert res.cardinality == 5


def test_max_solves_cap():
    Sigma = gaussian_cov(1, n=30)
    res = dspca_cardinality(Sigma, 17, max_solves=1)
    assert sum(t.role == "search" for t in res.trials) <= 2
    assert res.cardinality == 17
    if not res.relaxation_exact:
        assert "max_solves=1" in res.message


@pytest.mark.parametrize(
    ("k", "exc", "match"),
    [
        (0, ValueError, "k must be >= 1, got 0"),
        (-2, ValueError, "k must be >= 1, got -2"),
        (17, ValueError, "k must be <= n_features = 16, got k=17"),
        (2.0, TypeError, "k must be an integer, got 2.0"),
        (True, TypeError, "k must be an integer"),
    ],
)
def test_bad_k(k, exc, match):
    with pytest.raises(exc, match=match):
        dspca_cardinality(gaussian_cov(0), k)


def test_k_above_positive_variance_features():
    Sigma = gaussian_cov(0, n=8)
    Sigma[:, 2] = Sigma[2, :] = 0.0
    with pytest.raises(ValueError, match=r"k=8 nonzero loadings requested but only 7"):
        dspca_cardinality(Sigma, 8)
    res = dspca_cardinality(Sigma, 7)
    assert 2 not in res.support.tolist()


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"tol": 0.0}, "tol must be > 0"),
        ({"max_solves": 0}, "max_solves must be >= 1"),
        ({"lam_rtol": -1.0}, "lam_rtol must be > 0"),
    ],
)
def test_bad_options(kwargs, match):
    with pytest.raises(ValueError, match=match):
        dspca_cardinality(gaussian_cov(0), 3, **kwargs)


def test_bad_sigma():
    S = gaussian_cov(0)
    S[0, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        dspca_cardinality(S, 3)
    with pytest.raises(ValueError, match="square"):
        dspca_cardinality(np.ones((3, 4)), 1)


# -- the search logic against a scripted, non-monotone cardinality --------------------


def scripted(card_of_lam, n: int = 12):
    """A _Solver.solve replacement whose cardinality is card_of_lam(lam)."""

    def solve(self, lam, tol, max_sweeps=None, role="search", give_up=False, limit=None,
              refine=None):
        c = card_of_lam(lam)
        x = np.zeros(n)
        x[:c] = 1.0 / np.sqrt(c) if c else 0.0
        res = DSPCAResult(
            Z_reduced=np.eye(1), X_reduced=np.eye(1), objective=1.0, upper_bound=1.0,
            gap=0.0, converged=True, tol=tol, lam=lam, beta=0.0, loadings=x,
            support=np.flatnonzero(x).astype(np.intp), explained_variance=1.0,
            kept=np.arange(n, dtype=np.intp), n_features=n, eliminate=True, n_sweeps=1,
            n_qp_passes=0, primal="fake", dual="fake", timings={"total": 0.0}, history=(),
        )
        self.trials.append(LamTrial(lam, c, 1, 0.0, 0.0, n, tol, 1.0, 1.0, role))
        return res

    return solve


def run_scripted(monkeypatch, card_of_lam, k):
    monkeypatch.setattr(_Solver, "solve", scripted(card_of_lam))
    # (correlated features: every block's leading eigenvector has full support)
    cov = _MatrixCovariance(np.diag(np.linspace(1.0, 0.5, 12) - 0.05) + 0.05)
    return _search(cov, k, tol=1e-6, search_tol=1e-6, max_solves=60, lam_rtol=1e-6,
                   max_sweeps=10, options={}, verbose=False)


def non_monotone(lam: float) -> int:
    if lam < 0.2:
        return 9
    if lam < 0.3:
        return 3
    if lam < 0.35:
        return 6
    if lam < 0.5:
        return 2
    return 1


def test_non_monotone_ends_exact_or_at_a_crossing(monkeypatch):
    for k in (2, 3, 4, 6, 7, 8):
        res = run_scripted(monkeypatch, non_monotone, k)
        assert res.cardinality == k
        if res.relaxation_exact:
            assert non_monotone(res.lam) == k == res.result.support.size
        else:
            # The bracket kept card > k at lo and < k at hi while it shrank.
            lo, hi = res.bracket
            assert non_monotone(lo) > k > non_monotone(hi)
            # (narrowed to lam_rtol, or to JUMP_RTOL once bisections stop
            # changing the cardinalities at both ends)
            assert hi / lo - 1 <= 1e-2 and "jumps" in res.message


def test_non_monotone_jump_reports_nearest(monkeypatch):
    res = run_scripted(monkeypatch, non_monotone, 5)
    assert not res.relaxation_exact
    # Nearest cardinalities are 6 and 3 or 9 ... |6 - 5| = 1 wins.
    assert res.result.support.size == 6
    assert res.cardinality == 5
    lo, hi = res.bracket
    assert hi / lo - 1 <= 1e-2
    assert "jumps" in res.message


def test_unreachable_cardinality_at_lam_zero(monkeypatch):
    res = run_scripted(monkeypatch, lambda lam: 2 if lam > 0.1 else 4, 7)
    assert not res.relaxation_exact
    assert res.result.support.size == 4
    assert res.cardinality == 7 and res.origin.startswith(("grown from 4", "greedy"))
    assert any(t.lam == 0.0 for t in res.trials)
    assert "at most 4 nonzero loadings are reachable" in res.message


def test_ties_prefer_sparser(monkeypatch):
    res = run_scripted(monkeypatch, lambda lam: 6 if lam < 0.4 else 4, 5)
    assert not res.relaxation_exact and res.result.support.size == 4
    assert res.cardinality == 5


@pytest.mark.parametrize("once_max", [2048, 0])
def test_indefinite_covariance_is_rejected_by_the_searches(once_max, monkeypatch):
    # checked once up front (small n) or block by block as the search widens
    monkeypatch.setattr("spca._path.PSD_ONCE_MAX", once_max)
    S = np.array([[2.0, 1.9, 0.0], [1.9, 1.0, 0.0], [0.0, 0.0, 0.5]])  # eigenvalue < 0
    with pytest.raises(ValueError, match="positive semidefinite"):
        spca.dspca_cardinality(S, 2)
    with pytest.raises(ValueError, match="positive semidefinite"):
        spca.sparse_components(S, 1, cardinality=2)


def test_bracketing_solves_cut_short_still_give_a_certified_answer(monkeypatch):
    # With one sweep per bracketing solve most trials stop uncertified; the
    # accepted answer is always re-solved to tol with the full sweep limit.
    from spca.datasets import make_spiked_covariance

    S, _ = make_spiked_covariance(60, random_state=5)
    ref = spca.dspca_cardinality(S, 6)
    monkeypatch.setattr("spca._path.SEARCH_SWEEPS", 1)
    cut = spca.dspca_cardinality(S, 6)
    assert ref.relaxation_exact and cut.relaxation_exact
    assert cut.converged and cut.gap <= 1e-6
    assert cut.result.n_sweeps >= 1
    assert cut.objective <= cut.upper_bound
    np.testing.assert_array_equal(np.sort(cut.support).size, 6)


def _split_cov(seed: int, n_blocks: int = 10, size: int = 5) -> np.ndarray:
    """Many weakly coupled groups of correlated features, shuffled."""
    rng = np.random.default_rng(seed)
    n = n_blocks * size
    S = np.zeros((n, n))
    for b in range(n_blocks):
        A = rng.standard_normal((40, size)) + rng.uniform(0.5, 2.0) * rng.standard_normal((40, 1))
        S[b * size:(b + 1) * size, b * size:(b + 1) * size] = rng.uniform(0.3, 1.5) * A.T @ A / 40
    noise = 0.02 * rng.uniform(-1, 1, (n, n))
    off = np.kron(np.eye(n_blocks), np.ones((size, size))) == 0
    S[off] += (0.5 * (noise + noise.T))[off]
    S += 0.2 * np.eye(n)
    p = rng.permutation(n)
    return S[np.ix_(p, p)]


@pytest.mark.parametrize("storage", ["dense view", "sparse, formed once", "sparse, by blocks"])
@pytest.mark.parametrize("seed", range(3))
def test_solver_restricted_to_relevant_blocks_matches_full_solves(seed, storage, monkeypatch):
    # The search solves a split problem over its relevant blocks only; the
    # result it returns (expanded by _Solver.full) must be the solve of the
    # whole problem at that lam, and every trial's cardinality the same,
    # whether the solver slices a dense matrix, forms a sparse one once, or
    # forms the block of the lowest lam so far (large operators).
    Sigma = _split_cov(seed)
    if storage == "sparse, by blocks":
        monkeypatch.setattr("spca._path.PSD_ONCE_MAX", 0)
    cov = _MatrixCovariance(Sigma if storage == "dense view" else sp.csr_array(Sigma))
    solver = _Solver(cov, max_sweeps=500, options=dict(max_qp_passes=50, qp_tol=1e-12,
                                                      qp_finish=True), verbose=False)
    d = np.diag(Sigma)
    restricted = 0
    for lam in np.geomspace(0.9 * d.max(), 0.05, 12):
        out = solver.solve(float(lam), 1e-8)
        restricted += out.kept.size < np.count_nonzero(d > lam)
        res = solver.full(out)
        ref = spca.dspca_bca(Sigma, float(lam), tol=1e-8)
        np.testing.assert_array_equal(res.kept, ref.kept)
        np.testing.assert_array_equal(res.support, ref.support)
        assert res.objective == pytest.approx(ref.objective, rel=1e-7)
        assert res.upper_bound >= ref.objective * (1 - 1e-9)
        assert res.converged and res.gap <= 1e-8
        assert res.Z_reduced.shape == res.X_reduced.shape == (ref.kept.size,) * 2
        assert np.trace(res.Z_reduced) == pytest.approx(1.0, rel=1e-9)
        assert np.linalg.eigvalsh(res.X_reduced)[0] > 0  # still a usable warm start
        again = spca.dspca_bca(Sigma, float(lam), X0=res, tol=1e-8)
        np.testing.assert_array_equal(again.support, ref.support)
    assert restricted >= 3  # the restriction was actually exercised
    # The search gives the same answer with the restriction turned off.
    got = dspca_cardinality(Sigma, 4)
    monkeypatch.setattr("spca._path.RESTRICT_FRACTION", 1.0)
    monkeypatch.setattr("spca._bca.RESTRICT_FRACTION", 1.0)
    plain = dspca_cardinality(Sigma, 4)
    assert got.relaxation_exact == plain.relaxation_exact
    np.testing.assert_array_equal(got.support, plain.support)
    assert got.lam == pytest.approx(plain.lam, rel=1e-3)
    np.testing.assert_array_equal(got.result.kept, np.flatnonzero(d > got.lam))


def test_path_from_k_equal_one():
    # k = 1 searches above the largest variance, where no feature survives:
    # the empty block there is not a PSD check's business (the paper harness
    # failed on it with "zero-size array to reduction operation maximum")
    from spca.datasets import load_pitprops

    R = load_pitprops().correlation
    path = spca.cardinality_path(R, [1, 2])
    assert path.variances[0] == pytest.approx(R.diagonal().max())
    assert [r.cardinality for r in path.results] == [1, 2]


class _TickingClock:
    """A clock that advances by ``tick`` seconds at every reading."""

    def __init__(self, tick: float) -> None:
        self.now, self.tick = 0.0, tick

    def __call__(self) -> float:
        self.now += self.tick
        return self.now


@pytest.mark.parametrize("k", [3, 7])
@pytest.mark.parametrize("seconds", [0.02, 0.3])
def test_time_limit_is_said_once_in_the_message(monkeypatch, k, seconds):
    # The limit ended the solves (the reason of the search's end) and the
    # result is the best so far: one sentence, not the reason twice.
    from spca import _limits

    monkeypatch.setattr(_limits, "clock", _TickingClock(0.01))
    with pytest.warns(spca.ConvergenceWarning):
        res = dspca_cardinality(spike_for_limit(), k, time_limit=seconds)
    assert res.status == "time_limit"
    assert res.message.count("the time limit ended the search") == 1
    assert "the time limit ended the search: the best answer and bound so far" in res.message
    with pytest.warns(spca.ConvergenceWarning):
        comps = spca.sparse_components(spike_for_limit(), 2, cardinality=k,
                                       time_limit=seconds)
    for c in comps.components:
        assert c.search.message.count("the time limit ended the search") == 1


def spike_for_limit() -> np.ndarray:
    rng = np.random.default_rng(0)
    A = rng.standard_normal((80, 14))
    A[:, :5] += 1.5 * rng.standard_normal((80, 1))
    return A.T @ A / 80


def test_ctrl_c_in_the_path_probes_keeps_every_answer(monkeypatch):
    # Ctrl-C while cardinality_path tightens the bounds after its searches:
    # every k keeps its answer and a valid bound; the k whose probes did
    # not run say "interrupted", the others do not.
    from spca import _path

    S = spike_for_limit()
    real = _path._probe_path
    calls = []

    def probe(*args, **kwargs):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return real(*args, **kwargs)

    monkeypatch.setattr(_path, "_probe_path", probe)
    with pytest.warns(spca.ConvergenceWarning, match="interrupted"):
        path = spca.cardinality_path(S, [2, 4, 6])
    assert [r.status for r in path.results] == [None, "interrupted", "interrupted"]
    assert path.status == "interrupted"
    for r in path.results:
        assert r.support.size == r.k
        assert r.explained_variance <= r.variance_upper_bound
        vals = np.linalg.eigvalsh(S[np.ix_(r.support, r.support)])
        assert r.explained_variance == pytest.approx(vals[-1], rel=1e-10)
