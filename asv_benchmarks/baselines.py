"""k-sparse baselines that spca is compared against (benchmarks and tests only).

These are *not* part of the package: they are the methods a user could run
instead, kept here so that the ratio report, the asv suite and the tests
measure spca against the same implementations.  Each takes a covariance
``Sigma`` (n x n, symmetric PSD) and a cardinality ``k`` and returns a
:class:`Baseline`: a support of exactly ``min(k, n)`` features, the unit
loadings (the leading eigenvector of ``Sigma`` restricted to that support)
and the variance they explain, ``x' Sigma x``.

* :func:`forward_greedy` -- grow the support one feature at a time, each
  time adding the feature that maximises the largest eigenvalue of the
  grown block (the "full" greedy of d'Aspremont, Bach & El Ghaoui 2008).
* :func:`truncated_power` -- the truncated power method of Yuan & Zhang
  (JMLR 2013): power steps ``x <- Sigma x`` keeping the ``k`` largest
  entries in magnitude.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["Baseline", "forward_greedy", "refit", "truncated_power"]


class Baseline(NamedTuple):
    support: np.ndarray  # sorted feature indices, exactly min(k, n) of them
    loadings: np.ndarray  # (n,), unit norm, zero off the support
    variance: float  # loadings' Sigma loadings
    iterations: int  # greedy steps or power iterations


def _check(Sigma, k: int) -> tuple[np.ndarray, int]:
    S = np.asarray(Sigma, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1]:
        raise ValueError(f"Sigma must be a square matrix, got shape {S.shape}")
    if int(k) != k or k < 1:
        raise ValueError(f"k must be a positive integer, got {k!r}")
    return S, min(int(k), S.shape[0])


def refit(Sigma: np.ndarray, support) -> tuple[np.ndarray, float]:
    """Unit leading eigenvector of ``Sigma`` on ``support`` (zero elsewhere) and its variance."""
    S = np.asarray(Sigma, dtype=np.float64)
    idx = np.sort(np.asarray(support, dtype=np.intp))
    w, V = np.linalg.eigh(S[np.ix_(idx, idx)])
    x = np.zeros(S.shape[0])
    v = V[:, -1]
    x[idx] = v if v[np.argmax(np.abs(v))] > 0 else -v
    return x, float(w[-1])


def forward_greedy(Sigma, k: int) -> Baseline:
    """Forward greedy selection: add the feature that most raises the top eigenvalue."""
    S, k = _check(Sigma, k)
    n = S.shape[0]
    chosen = [int(np.argmax(np.diag(S)))]
    free = np.ones(n, dtype=bool)
    free[chosen[0]] = False
    for _ in range(k - 1):
        best, best_val = -1, -np.inf
        base = np.array(chosen)
        for j in np.flatnonzero(free):
            idx = np.append(base, j)
            val = np.linalg.eigvalsh(S[np.ix_(idx, idx)])[-1]
            if val > best_val:
                best, best_val = int(j), val
        chosen.append(best)
        free[best] = False
    x, var = refit(S, chosen)
    return Baseline(np.sort(np.array(chosen, dtype=np.intp)), x, var, k)


def truncated_power(Sigma, k: int, *, x0=None, max_iter: int = 1000,
                    tol: float = 1e-10) -> Baseline:
    """Truncated power method (Yuan & Zhang 2013).

    Starts from ``x0`` or, by default, from the unit vector of the feature of
    largest variance (the initialisation the authors recommend for sparse
    problems); the returned loadings are refitted on the final support.
    """
    S, k = _check(Sigma, k)
    n = S.shape[0]
    if x0 is None:
        x = np.zeros(n)
        x[int(np.argmax(np.diag(S)))] = 1.0
    else:
        x = np.asarray(x0, dtype=np.float64).copy()
        x /= np.linalg.norm(x)
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        y = S @ x
        keep = np.argpartition(-np.abs(y), k - 1)[:k]
        z = np.zeros(n)
        z[keep] = y[keep]
        nz = np.linalg.norm(z)
        if nz == 0:
            break
        z /= nz
        done = np.linalg.norm(z - x) < tol
        x = z
        if done:
            break
    support = np.sort(np.argpartition(-np.abs(x), k - 1)[:k])
    xr, var = refit(S, support)
    return Baseline(support, xr, var, it)
