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
* :func:`gpower_l0` -- the single-unit l0 generalized power method of
  Journee, Nesterov, Richtarik & Sepulchre (JMLR 2010) on a factor ``A`` with
  ``A'A = Sigma``; its penalty ``gamma`` is bisected for ``k`` nonzeros.
* :func:`sklearn_sparse_pca` -- scikit-learn's ``SparsePCA`` with one
  component, its ``alpha`` bisected for ``k`` nonzeros; the variance is
  given both as returned and refitted on its support (which has fewer than
  ``k`` features if no ``alpha`` tried gave ``k`` or more).

Every baseline returns the leading eigenvector on its support (``refit``):
the best loadings for the support it chose, so that the comparison is one
of supports.  The first four fields of every result are those of
:class:`Baseline`.

:data:`KSPARSE_CASES`, :func:`ksparse_problem` and :func:`run_method` define
the comparison at equal k that ``ratios.py`` (section 7) and
``benchmarks/ksparse.py`` run: spca's ``dspca_cardinality`` and each
baseline on the same problems, variance, time and (when spca's result has a
``variance_upper_bound``) the certified ratio ``variance / bound``.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["KSPARSE_CASES", "KSPARSE_METHODS", "Baseline", "GPowerBaseline",
           "SparsePCABaseline", "factor", "forward_greedy", "gpower_l0", "ksparse_problem",
           "refit", "run_method", "sklearn_sparse_pca", "truncated_power", "variance_bound"]


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


class GPowerBaseline(NamedTuple):
    support: np.ndarray  # sorted, exactly min(k, n) features
    loadings: np.ndarray  # refitted on the support
    variance: float
    iterations: int  # power iterations over all the gamma tried
    gamma: float  # the penalty whose pattern gave the support
    exact: bool  # whether that pattern had exactly k features (else its top k were kept)


class SparsePCABaseline(NamedTuple):
    support: np.ndarray  # the returned support, cut to its k largest |loadings| if longer
    loadings: np.ndarray  # refitted on the support
    variance: float  # of the refitted loadings
    iterations: int  # scikit-learn fits made by the search of alpha
    alpha: float
    nnz: int  # nonzeros of the component as returned
    variance_as_returned: float  # v' Sigma v / v'v of the returned component


def factor(Sigma) -> np.ndarray:
    """A square ``A`` with ``A'A = Sigma``: ``diag(sqrt(w)) V'`` from ``Sigma = V diag(w) V'``.

    Negative eigenvalues from rounding are set to zero.
    """
    S = np.asarray(Sigma, dtype=np.float64)
    w, V = np.linalg.eigh(S)
    return np.sqrt(np.clip(w, 0.0, None))[:, None] * V.T


def _gpower_pattern(A, gamma, z, max_iter, tol):
    """Iterate GPower-l0 from the unit ``z``; return ``(A'z, z, iterations)``.

    The single-unit l0 problem of Journee et al. is
    ``max_{||z|| = 1} sum_i [(a_i'z)^2 - gamma]_+`` over the columns ``a_i``
    of ``A``; its ascent step is ``z <- sum_{i : (a_i'z)^2 > gamma} (a_i'z) a_i``,
    normalised.  The sparse loadings are ``x_i ∝ a_i'z`` on that pattern.
    """
    it = 0
    for it in range(1, max_iter + 1):  # noqa: B007 - the count is returned
        t = A.T @ z
        on = t * t > gamma
        if not on.any():
            return t, z, it
        z_new = A[:, on] @ t[on]
        nz = np.linalg.norm(z_new)
        if nz == 0:
            return t, z, it
        z_new /= nz
        done = np.linalg.norm(z_new - z) < tol
        z = z_new
        if done:
            break
    return A.T @ z, z, it


def gpower_l0(Sigma, k: int, *, A=None, max_iter: int = 1000, tol: float = 1e-10,
              max_bisections: int = 60) -> GPowerBaseline:
    """GPower with an l0 penalty, single unit (Journee et al., JMLR 2010), at ``k`` nonzeros.

    Parameters
    ----------
    Sigma : array-like of shape (n, n)
        Covariance; the variance is measured on it.
    k : int
        Number of nonzero loadings.
    A : array-like of shape (p, n), optional
        Data matrix with ``A'A = Sigma`` (e.g. centred samples scaled by
        ``1/sqrt(m)``); default :func:`factor` of ``Sigma``.
    max_iter, tol :
        Cap and stopping tolerance (change of ``z``) of each power run.
    max_bisections : int, default=60
        Cap on the bisection of ``gamma``.

    Notes
    -----
    ``gamma`` runs over ``[0, max_i ||a_i||^2)`` (all features at 0, none at
    the top) and is bisected on the cardinality of the converged pattern;
    every run starts, as the authors suggest, from the normalised column of
    largest norm.  If no ``gamma`` gives exactly ``k`` features (the
    cardinality can jump), the pattern with the fewest features above ``k``
    is cut to its ``k`` largest ``|a_i'z|``.  The loadings are then refitted
    on the support (the authors' post-processing).
    """
    S, k = _check(Sigma, k)
    n = S.shape[0]
    if A is None:  # the column norms are Sigma's diagonal (exactly, not rounded)
        A, norms2 = factor(S), np.diag(S).copy()
    else:
        A = np.asarray(A, dtype=np.float64)
        if A.ndim != 2 or A.shape[1] != n:
            raise ValueError(f"A must have {n} columns, got shape {A.shape}")
        norms2 = np.einsum("ij,ij->j", A, A)
    i0 = int(np.argmax(norms2))
    if norms2[i0] == 0:
        raise ValueError("Sigma is zero: no feature has positive variance")
    z0 = A[:, i0] / np.sqrt(norms2[i0])
    total = 0

    def run(gamma):
        nonlocal total
        t, _, it = _gpower_pattern(A, gamma, z0, max_iter, tol)
        total += it
        return t, int(np.count_nonzero(t * t > gamma))

    lo, hi = 0.0, float(norms2[i0])  # cardinality > k at lo (or lo = 0), < k at hi
    t_lo, c_lo = run(lo)
    best = (lo, t_lo, c_lo)
    if c_lo > k:
        for _ in range(max_bisections):
            mid = 0.5 * (lo + hi)
            t, c = run(mid)
            if c == k:
                best = (mid, t, c)
                break
            if c > k:
                lo, best = mid, (mid, t, c)
            else:
                hi = mid
            if hi - lo <= 1e-14 * norms2[i0]:
                break
    gamma, t, c = best
    support = np.sort(np.argsort(-np.abs(t), kind="stable")[:k])
    x, var = refit(S, support)
    return GPowerBaseline(support, x, var, total, float(gamma), c == k)


def sklearn_sparse_pca(Sigma, k: int, *, X=None, max_fits: int = 40,
                       random_state: int = 0) -> SparsePCABaseline:
    """scikit-learn's ``SparsePCA(n_components=1)`` with ``alpha`` searched for ``k`` nonzeros.

    Parameters
    ----------
    Sigma : array-like of shape (n, n)
        Covariance of ``X``; the variances are measured on it.
    k : int
        Target number of nonzero loadings.
    X : array-like of shape (m, n), optional
        The data scikit-learn fits. Default: the rows of ``[A; -A] / sqrt(2)``
        with ``A`` = :func:`factor` of ``Sigma`` (centred, and ``X'X = Sigma``),
        for problems given by their covariance only.
    max_fits : int, default=40
        Cap on the fits of the search.
    random_state : int, default=0

    Notes
    -----
    ``alpha`` is doubled from 1 until the component has fewer than ``k``
    nonzeros (or none) and halved until it has more, then bisected on a log
    scale; the fit with exactly ``k`` nonzeros ends the search, else the one
    nearest ``k`` is kept (ties: the larger). Its support, cut to its ``k``
    largest ``|loadings|`` when longer, is refitted.
    """
    from sklearn.decomposition import SparsePCA

    S, k = _check(Sigma, k)
    n = S.shape[0]
    if X is None:
        A = factor(S)
        X = np.vstack([A, -A]) / np.sqrt(2.0)
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2 or X.shape[1] != n:
        raise ValueError(f"X must have {n} columns, got shape {X.shape}")
    fits = 0
    seen: dict[float, np.ndarray] = {}

    def fit(alpha):
        nonlocal fits
        fits += 1
        v = SparsePCA(n_components=1, alpha=alpha, random_state=random_state).fit(X)
        seen[alpha] = v.components_[0].copy()
        return int(np.count_nonzero(seen[alpha]))

    lo = hi = 1.0
    c = fit(1.0)
    while c >= k and c > 0 and fits < max_fits // 2:  # too dense: raise alpha
        lo, hi = hi, 2 * hi
        c = fit(hi)
    if c < k:
        while fits < max_fits // 2:
            lo = lo / 2 if lo < hi else hi / 2
            c = fit(lo)
            if c >= k:
                break
            hi = lo
    # now (normally) count(lo) >= k > count(hi)
    while fits < max_fits and np.count_nonzero(seen[lo]) != k and hi / lo > 1 + 1e-9:
        mid = float(np.sqrt(lo * hi))
        c = fit(mid)
        if c >= k:
            lo = mid
        else:
            hi = mid
    alpha = min(seen, key=lambda a: (abs(np.count_nonzero(seen[a]) - k),
                                     -np.count_nonzero(seen[a])))
    v = seen[alpha]
    nnz = int(np.count_nonzero(v))
    if nnz == 0:
        raise RuntimeError(f"scikit-learn's SparsePCA gave no nonzero loading in {fits} fits")
    as_returned = float(v @ S @ v / (v @ v))
    support = np.sort(np.argsort(-np.abs(v), kind="stable")[:min(k, nnz)])
    x, var = refit(S, support)
    return SparsePCABaseline(support, x, var, fits, float(alpha), nnz, as_returned)


# --- the k-sparse comparison of the benchmarks (ratios.py and benchmarks/ksparse.py) ----------

#: (problem, k) pairs of the comparison at equal k.
KSPARSE_CASES = [("pitprops", 5), ("pitprops", 10), ("nytimes", 5), ("breast_cancer", 5),
                 ("breast_cancer", 10), ("gaussian", 10), ("spiked", 10)]
#: the methods compared, spca's first (the others' certified ratios use its bound).
KSPARSE_METHODS = ["spca", "forward_greedy", "truncated_power", "gpower_l0", "sklearn"]
NYT_WORDS = 300


def ksparse_problem(name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """``(Sigma, X)`` of a comparison problem; ``X`` is the data when there is some.

    * ``pitprops`` -- Jeffers' 13 x 13 correlation matrix (no data);
    * ``nytimes`` -- covariance of the bundled NYT sample's 300 words of
      largest count variance. X is None: scikit-learn's one-component
      objective depends on the centred data only through ``X'X``, so the
      600 x 300 factor data of :func:`sklearn_sparse_pca` is the same
      problem as the 8,447 count rows and much faster to fit;
    * ``breast_cancer`` -- scikit-learn's set standardised, ``Z'Z / m``;
    * ``gaussian`` -- ``make_gaussian_covariance(200)``;
    * ``spiked`` -- ``make_spiked_covariance(200, cardinality=10)`` (seed 0).
    """
    from spca.datasets import (
        load_nytimes_sample,
        load_pitprops,
        make_gaussian_covariance,
        make_spiked_covariance,
    )

    if name == "pitprops":
        return load_pitprops().correlation, None
    if name == "nytimes":
        counts = load_nytimes_sample().counts
        mean = np.asarray(counts.mean(axis=0)).ravel()
        var = np.asarray(counts.multiply(counts).mean(axis=0)).ravel() - mean**2
        words = np.sort(np.argsort(-var, kind="stable")[:NYT_WORDS])
        Xc = counts[:, words].toarray()
        Xc -= Xc.mean(axis=0)
        S = Xc.T @ Xc / Xc.shape[0]
        return 0.5 * (S + S.T), None
    if name == "breast_cancer":
        from sklearn.datasets import load_breast_cancer
        from sklearn.preprocessing import StandardScaler

        X = StandardScaler().fit_transform(load_breast_cancer().data)
    elif name == "gaussian":
        return make_gaussian_covariance(200, random_state=0), None
    elif name == "spiked":
        return make_spiked_covariance(200, cardinality=10, random_state=0)[0], None
    else:
        raise ValueError(f"unknown problem {name!r}")
    Xc = X - X.mean(axis=0)
    S = Xc.T @ Xc / X.shape[0]
    return 0.5 * (S + S.T), X


def variance_bound(res) -> float | None:
    """spca's certified upper bound on the k-sparse optimum, when its result has one."""
    for obj in (res, getattr(res, "result", None)):
        ub = getattr(obj, "variance_upper_bound", None)
        if ub is not None:
            return float(ub)
    return None


def run_method(method: str, Sigma, k: int, X=None, alpha: float | None = None):
    """Run one method of the comparison once; ``(seconds, dict)``.

    The dict has ``variance`` (of the unit loadings, refitted on their
    support for every method), ``cardinality``, ``bound`` (spca's
    ``variance_upper_bound`` or None) and method-specific details. For
    ``"sklearn"`` with ``alpha`` given, one fit at that alpha is made instead
    of the search.
    """
    import time
    import warnings

    import spca

    S = np.asarray(Sigma, dtype=np.float64)
    t0 = time.perf_counter()
    if method == "spca":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", spca.ConvergenceWarning)
            res = spca.dspca_cardinality(S, k)
        seconds = time.perf_counter() - t0
        # the k-sparse component as returned (refitted on its support), and
        # the relaxation's own vector for reference
        x = np.asarray(res.loadings, dtype=np.float64)
        support = np.flatnonzero(x)
        xr = np.asarray(res.relaxation_loadings, dtype=np.float64)
        return seconds, {"variance": float(x @ S @ x / (x @ x)),
                         "variance_relaxation": float(xr @ S @ xr / (xr @ xr)),
                         "cardinality": int(support.size),
                         "bound": variance_bound(res), "lam": float(res.lam),
                         "exact": bool(res.exact), "origin": res.origin}
    if method == "sklearn" and alpha is not None:
        from sklearn.decomposition import SparsePCA

        data = X
        if data is None:
            A = factor(S)
            data = np.vstack([A, -A]) / np.sqrt(2.0)
        t0 = time.perf_counter()
        v = SparsePCA(n_components=1, alpha=alpha, random_state=0).fit(data).components_[0]
        seconds = time.perf_counter() - t0
        return seconds, {"variance": float(v @ S @ v / (v @ v)),
                         "cardinality": int(np.count_nonzero(v)), "bound": None}
    fn = {"forward_greedy": forward_greedy, "truncated_power": truncated_power,
          "gpower_l0": gpower_l0, "sklearn": sklearn_sparse_pca}[method]
    kwargs = {"X": X} if method == "sklearn" else {}
    res = fn(S, k, **kwargs)
    seconds = time.perf_counter() - t0
    out = {"variance": res.variance, "cardinality": int(res.support.size), "bound": None,
           "iterations": res.iterations}
    if method == "gpower_l0":
        out.update(gamma=res.gamma, exact=res.exact)
    if method == "sklearn":
        out.update(alpha=res.alpha, nnz=res.nnz, variance_as_returned=res.variance_as_returned)
    return seconds, out
