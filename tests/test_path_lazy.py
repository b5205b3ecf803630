"""Soft-thresholded cuts estimated by Lanczos and verified only where they
give the bound (issue 27, spca._path.LAZY_SOFT and _verify_cuts).  Checked
against dense eigensolves of the soft-thresholded matrix, and by counting the
Cholesky verifications, never by the clock."""

import math

import numpy as np
import pytest

import spca
from spca import _certificate, _ksparse, _path


def gaussian_correlation(n_samples: int, n: int, seed: int) -> np.ndarray:
    X = np.random.default_rng(seed).standard_normal((n_samples, n))
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    return X.T @ X


def soft_value(S: np.ndarray, lam: float) -> float:
    """lambda_max of the soft-thresholded S (dense reference)."""
    T = S - np.clip(S, -lam, lam)
    np.fill_diagonal(T, np.diag(S) - lam)
    return float(np.linalg.eigvalsh(T)[-1])


class _Holder:
    """The two dicts of a _Solver that _verify_cuts uses."""

    def __init__(self) -> None:
        self.unverified: dict = {}
        self.verified: dict = {}


@pytest.mark.parametrize("k", [5, 40])
def test_verify_cuts_makes_the_least_cut_a_bound(k):
    n = 450  # (one block of Lanczos size at the lams below)
    S = gaussian_correlation(40, n, seed=3)
    top = float(np.abs(S - np.eye(n)).max())
    holder = _Holder()
    cuts = []
    for frac in (0.45, 0.5, 0.6):
        lam = frac * top
        cut, v, _, verified = _path._soft_cut_eval(S, lam, k, verify=False)
        exact = soft_value(S, lam)
        # an estimate: from below (up to the Weyl margin), not verified
        assert not verified
        assert cut.upper_bound <= exact + 1e-9 * abs(exact) + n * 1e-15
        holder.unverified[cut] = (S, v)
        cuts.append(cut)
    calls = []
    real = _certificate.shift_bound

    def counted(D, t):
        calls.append(D.shape[0])
        return real(D, t)

    mp = pytest.MonkeyPatch()
    mp.setattr(_certificate, "shift_bound", counted)
    try:
        out = _path._verify_cuts(holder, cuts, k)
    finally:
        mp.undo()
    bound, lam = _ksparse.bound_from_cuts(out, k)
    # the least cut is verified: at or above the dense value at its lam
    assert lam in [c.lam for c in cuts]
    assert bound - lam * k >= soft_value(S, lam)
    # every cut left an estimate lies above it
    for c in out:
        assert c in holder.verified.values() or c.upper_bound + c.lam * k >= bound
    # only the cuts that were (or became) the least were verified
    assert 1 <= len(holder.verified) <= len(cuts)
    assert len(calls) == len(holder.verified)
    # a second call verifies nothing more and gives the same bound
    again = _path._verify_cuts(holder, cuts, k)
    assert _ksparse.bound_from_cuts(again, k) == (bound, lam)


@pytest.mark.parametrize("k", [10, 60])
def test_lazy_soft_cuts_give_the_same_answer_and_bound(monkeypatch, k):
    """A default search over 450 features with the lazy soft cuts and with
    every cut verified as made: the same support and variance, a bound
    within the Lanczos residual (1e-8 relative), and fewer Cholesky
    verifications."""
    S = gaussian_correlation(40, 450, seed=5)
    runs = {}
    for lazy in (True, False):
        monkeypatch.setattr(_path, "LAZY_SOFT", lazy)
        calls = []
        real = _certificate.shift_bound

        def counted(D, t, _calls=calls, _real=real):
            _calls.append(D.shape[0])
            return _real(D, t)

        monkeypatch.setattr(_certificate, "shift_bound", counted)
        res = spca.dspca_cardinality(S, k)
        monkeypatch.setattr(_certificate, "shift_bound", real)
        runs[lazy] = (res, len(calls))
    (lazy, n_lazy), (eager, n_eager) = runs[True], runs[False]
    assert np.array_equal(lazy.support, eager.support)
    assert lazy.explained_variance == eager.explained_variance
    assert math.isclose(lazy.variance_upper_bound, eager.variance_upper_bound, rel_tol=1e-8)
    assert lazy.variance_upper_bound >= lazy.explained_variance
    assert n_lazy < n_eager


def test_a_time_limit_verifies_every_soft_cut(monkeypatch):
    """Under a time limit the soft cuts are verified as they are made (a
    verification left for the end would come after the limit)."""
    S = gaussian_correlation(40, 450, seed=5)
    seen = []
    real = _path._soft_cuts

    def spy(*args, **kw):
        seen.append(kw.get("pending"))
        return real(*args, **kw)

    monkeypatch.setattr(_path, "_soft_cuts", spy)
    spca.dspca_cardinality(S, 10, time_limit=60.0)
    assert seen == [None]
    seen.clear()
    spca.dspca_cardinality(S, 10)
    assert len(seen) == 1 and isinstance(seen[0], dict)
