"""Covariance operators and the explained variance of sparse components.

Two things live here.

* Internal *covariance operators*: the cardinality search, the deflation loop
  and :class:`spca.SparsePCA` only ever need the diagonal of a covariance
  matrix (for safe feature elimination), dense blocks over the features that
  survive it, and products ``Sigma @ x`` with sparse loadings (for deflation
  and explained variance).  An operator provides exactly that, either from a
  covariance matrix (dense or scipy.sparse) or from a data matrix (dense or
  scipy.sparse, never densified, never centred in place), so that a large
  ``n_features x n_features`` covariance is never formed.
* :func:`explained_variance`: the variance explained by non-orthogonal
  components, per component and cumulative.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property, partial
from typing import Any, Literal

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp
import scipy.sparse.linalg as spla
from numpy.typing import ArrayLike, NDArray

from . import _bca_fast
from ._validation import (
    MAX_SCALE,
    MIN_SCALE,
    SYM_RTOL,
    _abs_max,
    _as_real_dense,
    check_covariance_shape,
    check_scale,
    dense_block,
)

__all__ = ["ExplainedVariance", "explained_variance"]

# Above this many features the leading eigenvalues of a covariance operator
# are computed by Lanczos iterations (ARPACK) instead of a dense eigensolver.
DENSE_EIG_MAX = 600
# Loadings whose Gram-Schmidt residual is below this (relative) norm count as
# linearly dependent on the earlier ones and add no variance.
DEPENDENCE_RTOL = 1e-10


def offdiag_rowmax(A: NDArray[np.float64]) -> NDArray[np.float64]:
    """``max_{j != i} |A_ij|`` for each row ``i`` of the square ``A`` (0 for n = 1)."""
    if A.dtype == np.float64 and A.flags.c_contiguous:
        out = np.empty(A.shape[0])
        _bca_fast.offdiag_rowmax(A, out)  # compiled: one read, no temporary
        return out
    a = np.abs(A)
    np.fill_diagonal(a, 0.0)
    return a.max(axis=1) if a.shape[0] else np.zeros(0)


def _is_range(idx: NDArray[np.intp]) -> bool:
    """Whether ``idx`` is ``0, 1, ..., idx.size - 1``."""
    return bool(idx.size == 0 or (idx[0] == 0 and idx[-1] == idx.size - 1
                                  and np.array_equal(idx, np.arange(idx.size))))


class _Covariance:
    """Interface of the internal covariance operators (see the module docstring)."""

    n: int
    diag: NDArray[np.float64]
    # True once the whole operator is known to be positive semidefinite.
    psd_checked: bool = False
    # True when the caller hands over its dense view: a removal deflation may
    # zero rows of it in place and write them back after the components
    # (spca.text.sparse_topics, see _deflation._DeflatedCovariance.restore).
    owned: bool = False

    def block(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:  # pragma: no cover
        raise NotImplementedError

    def dense_view(self) -> NDArray[np.float64] | None:
        """An ``n x n`` array (not a copy, not to be modified) equal to the
        operator on the rows and columns of positive variance, or ``None``
        when there is none at hand."""
        return None

    def offdiag_rowmax(self) -> NDArray[np.float64]:
        """``max_{j != i} |A_ij|`` for each row ``i`` of :meth:`dense_view`
        (computed once)."""
        cached = getattr(self, "_rowmax", None)
        if cached is None:
            view = self.dense_view()
            if view is None:
                raise ValueError("this covariance operator has no dense view")
            cached = self._rowmax = offdiag_rowmax(view)
        return cached


    def matvec(self, x: NDArray[np.float64]) -> NDArray[np.float64]:  # pragma: no cover
        raise NotImplementedError

    def quadratic(self, x: NDArray[np.float64]) -> float:
        """``x' Sigma x`` (an operator formed from data may take it without
        ``Sigma x``)."""
        return float(x @ self.matvec(x))

    def matmat(self, V: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Sigma @ V`` for an ``(n, q)`` matrix, one column at a time."""
        V = np.asarray(V, dtype=np.float64)
        if V.ndim == 1:
            return self.matvec(V)
        out = np.empty((self.n, V.shape[1]))
        for j in range(V.shape[1]):
            out[:, j] = self.matvec(V[:, j])
        return out

    @property
    def total_variance(self) -> float:
        """``Tr Sigma``."""
        return float(self.diag.sum())

    def top_eigenvalues(self, q: int) -> NDArray[np.float64]:
        """The ``q`` largest eigenvalues of ``Sigma``, descending (clipped at 0)."""
        q = min(int(q), self.n)
        if q <= 0:
            return np.zeros(0)
        if self.n <= DENSE_EIG_MAX or q >= self.n - 1:
            full = self.block(np.arange(self.n, dtype=np.intp))
            vals = sla.eigvalsh(full, subset_by_index=[self.n - q, self.n - 1])
        else:
            op = spla.LinearOperator((self.n, self.n), matvec=self.matvec, dtype=np.float64)
            # (relative accuracy 1e-10: ratios to PCA's variance need no more)
            vals = spla.eigsh(op, k=q, which="LA", return_eigenvectors=False,
                              v0=np.ones(self.n) / np.sqrt(self.n), tol=1e-10)
        return np.maximum(np.sort(vals)[::-1], 0.0)


class _MatrixCovariance(_Covariance):
    """Operator over a covariance matrix given explicitly (dense or scipy.sparse).

    The matrix is validated (finite, symmetric, non-negative diagonal); a
    dense one is copied (symmetrised), a sparse one only if it has to be
    converted to float64.
    """

    @classmethod
    def formed(cls, S: NDArray[np.float64], name: str = "Sigma",
               rowmax: NDArray[np.float64] | None = None) -> _MatrixCovariance:
        """Wrap a dense covariance that this package formed, without checks.

        For the output of :func:`spca.text.candidate_covariance`: a float64,
        exactly symmetric array that is positive semidefinite by construction
        (``X_c' X_c / D`` for the centred columns ``X_c``), so the ``O(n^2)``
        validation and the ``O(n^3)`` PSD test of the public entry points are
        skipped.  The array is used as is (not copied); a diagonal entry that
        rounding made negative reads as 0.  ``rowmax``, when the caller has
        it, is :meth:`offdiag_rowmax` of ``S`` (kept, not recomputed).
        """
        self = cls.__new__(cls)
        self.name = name
        self.n = int(S.shape[0])
        self.diag = np.maximum(np.diag(S), 0.0)
        check_scale(self.diag, name)
        self.S = S
        self.psd_checked = True
        if rowmax is not None:
            self._rowmax = rowmax
        return self

    def __init__(self, Sigma: Any, name: str = "Sigma") -> None:
        S, diag = check_covariance_shape(Sigma, name)
        check_scale(diag, name)
        self.name = name
        self.n = int(diag.size)
        self.diag = diag
        if sp.issparse(S):
            S = sp.csr_array(S, dtype=np.float64)
            if S.nnz and not np.all(np.isfinite(S.data)):
                raise ValueError(f"{name} must be finite, got NaN or inf entries")
            scale = float(np.abs(S.data).max()) if S.nnz else 0.0
            asym = abs(S - S.T)
            worst = float(asym.max()) if asym.nnz else 0.0
            if worst > SYM_RTOL * max(scale, np.finfo(float).tiny):
                raise ValueError(
                    f"{name} must be symmetric, but |{name} - {name}'| reaches {worst!r}"
                )
            self.S = S
        else:
            # dense_block validates finiteness and symmetry and symmetrises.
            self.S = dense_block(np.asarray(S), np.arange(self.n, dtype=np.intp), name)

    def dense_view(self) -> NDArray[np.float64] | None:
        return None if sp.issparse(self.S) else self.S

    def block(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        if sp.issparse(self.S):
            return dense_block(self.S, idx, self.name)
        if getattr(idx, "size", -1) == self.n and idx.dtype.kind in "iu" and _is_range(idx):
            return self.S.copy()  # (the same copy as S[ix_(idx, idx)], no fancy indexing)
        return np.ascontiguousarray(self.S[np.ix_(idx, idx)])

    def matvec(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float64).ravel()
        if sp.issparse(self.S):
            return np.asarray(self.S @ x, dtype=np.float64)
        nz = np.flatnonzero(x)
        if nz.size < self.n // 2:
            return self.S[:, nz] @ x[nz]
        return self.S @ x


class _DataCovariance(_Covariance):
    """Operator over ``Sigma = Xs' Xs / (n_samples - ddof)`` for a data matrix ``X``.

    ``Xs = (X - mean) / scale`` column-wise (``mean = 0`` without centring,
    ``scale = 1`` without scaling; a constant column keeps ``scale = 1``).  ``X``
    may be dense or scipy.sparse; it is never densified, centred or scaled in
    place.  Blocks are ``X_S' X_S`` products over the requested columns,
    centred afterwards.
    """

    def __init__(self, X: Any, *, center: bool = True, scale: bool = False,
                 ddof: int = 1, abs_max: float | None = None,
                 moments: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
                 ) -> None:
        m, n = X.shape
        self.n = int(n)
        self.n_samples = int(m)
        self.denom = float(m - ddof)
        self.sparse = sp.issparse(X)
        # Means and sums of squares in units of the largest |X_ij| (a power
        # of two g, exact): squares of data near the ends of the float range
        # neither overflow nor underflow before the scale check below.
        if self.sparse:
            Xc = sp.csc_array(X, dtype=np.float64)
            self.X = Xc
            g = _unit(float(np.abs(Xc.data).max()) if Xc.nnz else 0.0)
            counts = np.diff(Xc.indptr)
            col = np.repeat(np.arange(n), counts)
            data = Xc.data * g
            mean = np.bincount(col, weights=data, minlength=n) / m if center else np.zeros(n)
            dev = data - mean[col]
            ss = np.bincount(col, weights=dev * dev, minlength=n) + (m - counts) * mean**2
        else:
            self.X = np.asarray(X, dtype=np.float64)
            if moments is not None:
                # (the caller's _column_moments(X, 1.0, center), finite and
                # in range: see spca._estimator._unit_moments)
                g = 1.0
                mean, ss = moments
            else:
                # (abs_max: max |X_ij| when the caller has it, from its check)
                g = _unit(_abs_max(self.X) if abs_max is None else abs_max)
                mean, ss = _column_moments(self.X, g, center)
        var_g = np.maximum(ss / self.denom, 0.0)
        _check_data_scale(var_g, g)
        var = var_g / g / g
        mean = mean / g
        self.mean = mean
        if scale:
            sd = np.sqrt(var)
            self.scale = np.where(sd > 0, sd, 1.0)
            self.diag = np.where(sd > 0, 1.0, 0.0)
        else:
            self.scale = np.ones(n)
            self.diag = var
        self.raw_variance = var

    def block(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        idx = np.asarray(idx, dtype=np.intp)
        mu = self.mean[idx]
        if self.sparse:
            Xs = self.X[:, idx]
            G = np.asarray((Xs.T @ Xs).toarray(), dtype=np.float64)
            G -= self.n_samples * np.outer(mu, mu)
        else:
            Xs = self.X[:, idx] - mu
            G = Xs.T @ Xs
        return np.ascontiguousarray(self.finish_gram(G, idx))

    def finish_gram(self, G: NDArray[np.float64], idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """The covariance of features ``idx`` from ``G``, the products of
        their centred columns (overwritten): divided by ``denom`` and the
        scales, symmetrised, the variances on the diagonal."""
        G /= self.denom
        s = self.scale[idx]
        G /= np.outer(s, s)
        G = 0.5 * (G + G.T)
        # The diagonal is the (more accurately computed) variance.
        G[np.diag_indices(idx.size)] = self.diag[idx]
        return G

    def centred_columns(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """The columns ``idx`` of a dense ``X - mean`` as a new array (not
        scaled; Fortran order)."""
        return np.asfortranarray(self.X[:, idx] - self.mean[idx])

    def cross(self, rows: NDArray[np.intp], cols: NDArray[np.intp]) -> NDArray[np.float64]:
        """``Sigma[rows][:, cols]`` as products over the data, ``Xs_rows' Xs_cols``,
        centred and scaled entry by entry as :meth:`block` does (not
        symmetrised, and without :meth:`block`'s variances on a diagonal):
        the rows of new features when a formed block grows (a sparse
        product's entries are the ones a product over other columns gives,
        bit for bit)."""
        if self.sparse:
            R = np.asarray((self.X[:, rows].T @ self.X[:, cols]).toarray(), dtype=np.float64)
            R -= self.n_samples * np.outer(self.mean[rows], self.mean[cols])
        else:
            Xr = self.X[:, rows] - self.mean[rows]
            # (one array for both sides when they are the same columns: the
            # product block() makes, exactly symmetric)
            Xc = Xr if np.array_equal(rows, cols) else self.X[:, cols] - self.mean[cols]
            R = Xr.T @ Xc
        R /= self.denom
        R /= np.outer(self.scale[rows], self.scale[cols])
        return R

    def scores(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        """``Xs @ x`` (length ``n_samples``), touching only the columns where ``x != 0``."""
        x = np.asarray(x, dtype=np.float64).ravel()
        nz = np.flatnonzero(x)
        y = x[nz] / self.scale[nz]
        if self.sparse and 2 * nz.size > self.n:
            # (no copy of the columns of a sparse X when most are used: the
            # skipped columns add exact zeros to the same sums)
            y_all = np.zeros(self.n)
            y_all[nz] = y
            t = np.asarray(self.X @ y_all, dtype=np.float64).ravel()
        else:
            t = np.asarray(self.X[:, nz] @ y, dtype=np.float64).ravel()
        return t - float(self.mean[nz] @ y)

    def matvec(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        t = self.scores(x)
        out = np.asarray(self.X.T @ t, dtype=np.float64).ravel() - self.mean * t.sum()
        return out / self.denom / self.scale


def _column_moments(X: NDArray[np.float64], g: float,
                    center: bool) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The means of the columns of ``X g`` (0 without ``center``) and their
    sums of squared deviations, ``((X g - mean) ** 2).sum(0)``: the same
    numbers as that expression.  For ``X`` in Fortran order, whose columns
    numpy reduces one at a time (pairwise, along the column), by the
    compiled :func:`spca._bca_fast.row_moments` (numpy's pairwise order, no
    scaled copy: each column read from memory once and from cache once; the
    NYT counts, 8,447 x 500, 4.7 -> 2.1 ms); otherwise as written (numpy's
    order of the sums over rows of a C-ordered array depends on its shape:
    a 50 x 33 array gave other last bits in column blocks)."""
    m, n = X.shape
    if X.flags.f_contiguous and X.dtype == np.float64 and m > 0:
        mean = np.empty(n)
        ss = np.empty(n)
        _bca_fast.row_moments(X.T, g, center, mean, ss)
        return mean, ss
    Xg = X * g
    mean = Xg.mean(axis=0) if center else np.zeros(n)
    Xg -= mean
    np.square(Xg, out=Xg)
    return mean, Xg.sum(axis=0)


def _unit(amax: float) -> float:
    """A power of two ``g`` with ``g * amax`` in ``[0.5, 1)`` (1 if ``amax`` is 0)."""
    return math.ldexp(1.0, -math.frexp(amax)[1]) if amax > 0 else 1.0


def _check_data_scale(var_g: NDArray[np.float64], g: float) -> None:
    """Refuse data whose largest column variance ``max(var_g) / g^2`` is outside
    ``[MIN_SCALE, MAX_SCALE]`` (the solvers square variances), before it is
    formed (it may overflow)."""
    top_g = float(var_g.max()) if var_g.size else 0.0
    if not top_g > 0:
        return
    log10 = math.log10(top_g) - 2.0 * math.log10(g)
    if log10 > math.log10(MAX_SCALE) or log10 < math.log10(MIN_SCALE):
        top = top_g / g / g
        shown = repr(top) if 0 < top < math.inf else f"about 1e{log10:+.0f}"
        raise ValueError(
            f"X's largest column variance {shown} is outside "
            f"[{MIN_SCALE:g}, {MAX_SCALE:g}]: multiply X by a power of ten or two to "
            "bring its variances near 1 (the components do not change; a lam given "
            "scales with the square of that factor)"
        )


def _check_components(components: ArrayLike, n: int) -> NDArray[np.float64]:
    V = _as_real_dense(components, "components")
    if V.ndim == 1:
        V = V[None, :]
    if V.ndim != 2 or V.shape[1] != n:
        raise ValueError(
            f"components must have shape (n_components, {n}), got {np.shape(components)}"
        )
    V = np.array(V, dtype=np.float64)
    if not np.all(np.isfinite(V)):
        raise ValueError("components must be finite, got NaN or inf entries")
    return V


@dataclass(frozen=True, repr=False)
class ExplainedVariance:
    """Variance explained by a sequence of (possibly non-orthogonal) components.

    Attributes
    ----------
    method : str
        ``"additional"`` or ``"adjusted"`` (see :func:`explained_variance`).
    variance : ndarray of shape (n_components,)
        Variance explained by each component beyond the earlier ones.
    cumulative : ndarray of shape (n_components,)
        ``cumsum(variance)``.
    total_variance : float
        ``Tr Sigma``.
    ratio : ndarray of shape (n_components,)
        ``variance / total_variance``.
    cumulative_ratio : ndarray of shape (n_components,)
        ``cumulative / total_variance``.
    pca_variance : ndarray of shape (n_components,)
        The largest eigenvalues of ``Sigma`` (ordinary PCA's explained
        variance); computed on first access.
    pca_ratio : ndarray of shape (n_components,)
        ``cumulative / cumsum(pca_variance)``: the fraction of what ordinary
        PCA explains with the same number of components (at most 1 for the
        ``"additional"`` method, by Ky Fan's maximum principle); computed on
        first access.
    """

    method: str
    variance: NDArray[np.float64]
    cumulative: NDArray[np.float64]
    total_variance: float
    ratio: NDArray[np.float64]
    cumulative_ratio: NDArray[np.float64]
    # The q largest eigenvalues of Sigma, on demand: an eigensolver run that
    # callers reading only the sparse components' variance never pay for.
    _top_eigenvalues: Callable[[], NDArray[np.float64]] = field(repr=False, compare=False)

    def __getstate__(self) -> dict[str, Any]:
        # Pickled with the eigenvalues themselves, not the operator.
        state = dict(self.__dict__)
        state["_top_eigenvalues"] = _Given(self.pca_variance)
        return state

    @cached_property
    def pca_variance(self) -> NDArray[np.float64]:
        """The largest eigenvalues of ``Sigma`` (one per component)."""
        q = self.variance.size
        top = np.asarray(self._top_eigenvalues(), dtype=np.float64)
        pca = np.zeros(q)
        pca[: top.size] = top[:q]
        return pca

    @cached_property
    def pca_ratio(self) -> NDArray[np.float64]:
        """``cumulative / cumsum(pca_variance)`` (0 where that sum is 0)."""
        pca_cum = np.cumsum(self.pca_variance)
        return np.where(pca_cum > 0, self.cumulative / np.where(pca_cum > 0, pca_cum, 1.0),
                        0.0)

    def __repr__(self) -> str:
        def fmt(a: np.ndarray) -> str:
            return "[" + ", ".join(f"{v:.4g}" for v in a) + "]"

        return (
            f"ExplainedVariance(method={self.method!r}, variance={fmt(self.variance)}, "
            f"cumulative_ratio={fmt(self.cumulative_ratio)}, "
            f"pca_ratio={fmt(self.pca_ratio)}, total_variance={self.total_variance:.6g})"
        )


class _Given:
    """A callable returning a fixed array (picklable, unlike a closure)."""

    def __init__(self, value: NDArray[np.float64]) -> None:
        self.value = value

    def __call__(self) -> NDArray[np.float64]:
        return self.value


def _explained(cov: _Covariance, V: NDArray[np.float64], method: str,
               pca_variance: NDArray[np.float64] | None = None,
               lazy: bool = False) -> ExplainedVariance:
    """Explained variance of the rows of ``V`` under the operator ``cov``.

    ``lazy``: leave the largest eigenvalues of ``cov`` (``pca_variance``) to
    the first access, which then reads ``cov``; only for an operator the
    package formed itself (nothing a caller can modify in between).
    """
    if method not in ("additional", "adjusted"):
        raise ValueError(f"method must be 'additional' or 'adjusted', got {method!r}")
    q = V.shape[0]
    norms = np.linalg.norm(V, axis=1)
    V = V / np.where(norms > 0, norms, 1.0)[:, None]
    var = np.zeros(q)
    if method == "additional":
        # Gram-Schmidt in the Sigma-geometry: with V' = Q R (thin QR),
        # q_t' Sigma q_t = e_t' R^-T (V Sigma V') R^-1 e_t for independent rows.
        Q, R = np.linalg.qr(V.T)
        ok = np.abs(np.diag(R)) > DEPENDENCE_RTOL
        for t in range(q):
            if not ok[t]:
                continue
            var[t] = cov.quadratic(Q[:, t])
    else:
        SV = cov.matmat(V.T)  # (n, q)
        G = V @ SV
        G = 0.5 * (G + G.T)
        for t in range(q):
            g = G[:t, t]
            resid = G[t, t] - (g @ np.linalg.pinv(G[:t, :t], hermitian=True) @ g if t else 0.0)
            var[t] = resid
    var = np.maximum(var, 0.0)
    cum = np.cumsum(var)
    total = cov.total_variance
    if pca_variance is None and not lazy:
        pca_variance = cov.top_eigenvalues(q)
    top = partial(cov.top_eigenvalues, q) if pca_variance is None else _Given(pca_variance)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = var / total if total > 0 else np.zeros(q)
        cum_ratio = cum / total if total > 0 else np.zeros(q)
    return ExplainedVariance(method=method, variance=var, cumulative=cum,
                             total_variance=total, ratio=ratio, cumulative_ratio=cum_ratio,
                             _top_eigenvalues=top)


def explained_variance(
    Sigma: ArrayLike,
    components: ArrayLike,
    *,
    method: Literal["additional", "adjusted"] = "additional",
) -> ExplainedVariance:
    r"""Variance explained by sparse, possibly non-orthogonal, components.

    Sparse loadings ``v_1, ..., v_q`` are in general neither orthogonal nor
    uncorrelated, so ``sum_t v_t' Sigma v_t`` double-counts shared variance.
    Two corrected definitions are available.

    ``"additional"`` (default; Mackey 2008, "additional explained variance";
    the same as Shen & Huang's 2008 cumulative percentage of explained
    variance): the variance of the data projected onto the span of the first
    ``t`` loadings,

    .. code-block:: text

        cumulative_t = Tr(Q_t' Sigma Q_t),   Q_t orthonormal basis of span(v_1..v_t)
        variance_t   = cumulative_t - cumulative_{t-1} = q_t' Sigma q_t

    where ``q_t`` is the ``t``-th column of ``Q`` in the QR factorisation
    ``[v_1 ... v_q] = Q R`` (Gram-Schmidt of the loadings).  A loading in the
    span of the earlier ones adds 0.  For orthonormal loadings this is
    ``v_t' Sigma v_t``; the cumulative value never exceeds the sum of the ``t``
    largest eigenvalues (what ordinary PCA explains), so ``pca_ratio <= 1``.

    ``"adjusted"`` (Zou, Hastie & Tibshirani 2006, "adjusted variance"): with
    the scores ``T = X V'`` factored as ``T = Q R``, ``variance_t = R_tt^2``
    (divided by the covariance's normalisation), i.e. the variance of score
    ``t`` left after regressing it on the earlier scores. Computed here from
    ``G = V Sigma V'`` as the Schur complement ``G_tt - g' G_<t^+ g``.

    Parameters
    ----------
    Sigma : array-like or scipy.sparse matrix of shape (n_features, n_features)
        Symmetric positive semidefinite covariance matrix (not modified).
    components : array-like of shape (n_components, n_features)
        The loadings, one per row, in order; rows are scaled to unit norm
        first (a zero row explains nothing).
    method : {"additional", "adjusted"}, default="additional"
        Which definition to use (see above).

    Returns
    -------
    ev : ExplainedVariance
        Per-component and cumulative variance, ratios to ``Tr Sigma`` and to
        ordinary PCA's variance with the same number of components.

    Raises
    ------
    ValueError
        If ``Sigma`` is not square, symmetric and finite with a non-negative
        diagonal, if ``components`` has the wrong shape or is not finite, or
        for an unknown ``method``.

    Notes
    -----
    Both definitions depend on the order of the components. ``"additional"``
    is a property of the subspace the loadings span (the variance that
    :meth:`spca.SparsePCA.inverse_transform` reconstructs); ``"adjusted"``
    measures the scores and is never larger than ``"additional"`` for the
    first component and equal to it there.

    References
    ----------
    L. Mackey, "Deflation Methods for Sparse PCA", NIPS 2008.
    H. Shen and J. Z. Huang, "Sparse principal component analysis via
    regularized low rank matrix approximation", J. Multivariate Anal. 2008.
    H. Zou, T. Hastie and R. Tibshirani, "Sparse Principal Component
    Analysis", J. Comput. Graph. Statist. 15(2), 2006.

    Examples
    --------
    >>> import numpy as np
    >>> from spca import explained_variance
    >>> Sigma = np.diag([3.0, 2.0, 1.0])
    >>> ev = explained_variance(Sigma, [[1.0, 0, 0], [1.0, 1.0, 0]])
    >>> ev.variance.tolist(), ev.cumulative_ratio.tolist()
    ([3.0, 2.0], [0.5, 0.8333333333333334])
    >>> explained_variance(Sigma, [[1.0, 0, 0], [1.0, 1.0, 0]], method="adjusted").variance
    array([3., 1.])
    """
    cov = _MatrixCovariance(Sigma)
    V = _check_components(components, cov.n)
    return _explained(cov, V, method)
