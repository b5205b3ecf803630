"""``SparsePCA``: DSPCA sparse components as a scikit-learn transformer.

scikit-learn is an optional dependency of ``spca``: it is needed for this
module only.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import ArrayLike, NDArray

try:
    from sklearn.base import BaseEstimator, ClassNamePrefixFeaturesOutMixin, TransformerMixin
    from sklearn.utils.validation import check_array, check_is_fitted, validate_data
except ImportError as exc:  # pragma: no cover - exercised only without scikit-learn
    raise ImportError(
        "spca.SparsePCA needs scikit-learn (pip install scikit-learn); the solver "
        "functions (spca.dspca_bca, spca.dspca_cardinality, ...) do not"
    ) from exc

from ._deflation import (
    DEFLATIONS,
    SparseComponents,
    _components,
    _per_component,
    _proof_options,
    _top_eigenvalues_lanczos,
)
from ._limits import TimeLimit, check_time_limit
from ._path import _solver_options
from ._validation import _abs_max, _as_real_dense, check_int, check_lam, check_tol
from ._variance import _column_moments, _Covariance, _DataCovariance, _MatrixCovariance

__all__ = ["SparsePCA"]

# Cardinality used when neither ``cardinality`` nor ``lam`` is given.
DEFAULT_CARDINALITY = 10

# Most features whose covariance block _BlockCache keeps (a 4,096 x 4,096
# float64 block is 128 MiB); a larger union of requests is formed, not kept.
CACHE_MAX_FEATURES = 4096

# Under a time limit, ``fit`` forms the covariance of the features of largest
# variance only, in blocks (see _LeadingBlock): at least LEAD_PER_NONZERO
# features per nonzero loading of all the components (the answers without a
# search need the features most coupled to their first ones; the rule of
# spca.text.sparse_topics past a limit), then LEAD_BLOCK more at a time while
# the next block is predicted to end within LEAD_SHARE of the limit (the
# searches get the rest).
LEAD_PER_NONZERO = 2
LEAD_BLOCK = 64
LEAD_SHARE = 0.5


# Under a time limit, ``fit`` takes the column moments of a dense ``X`` in
# units of 1 (no read for the largest |X_ij| first) when their largest
# variance is in [UNIT_MIN, UNIT_MAX]: then no square overflowed (a sum of
# squares would be inf) and the scale check passes as it would in units of
# that entry (a power of two: the same numbers, but where squares fall
# below the normal range).  Outside, or with a non-finite moment (NaN or
# inf in X), the checked way: the largest entry, scikit-learn's error.
UNIT_MIN = 1e-200
UNIT_MAX = 1e100


def _unit_moments(X: NDArray[np.float64], center: bool
                  ) -> tuple[NDArray[np.float64], NDArray[np.float64]] | None:
    """The means and sums of squared deviations of the columns of ``X``
    (:func:`spca._variance._column_moments` in units of 1), or ``None``
    when they are not all finite or their largest variance is outside
    ``[UNIT_MIN, UNIT_MAX]`` (the caller then takes the checked way)."""
    m = X.shape[0]
    if m < 2 or not X.size:
        return None
    with np.errstate(all="ignore"):  # (a non-finite X or square: refused below)
        mean, ss = _column_moments(X, 1.0, center)
    top = float(ss.max()) / (m - 1)
    if not (np.isfinite(mean).all() and np.isfinite(ss).all()
            and UNIT_MIN <= top <= UNIT_MAX):
        return None
    return mean, ss


class _BlockCache(_DataCovariance):
    """:class:`~spca._variance._DataCovariance` that forms each covariance
    entry once.

    The search of every component asks for the block of the features
    surviving at each ``lam`` it tries, and every component's search starts
    afresh; each request was a product over the data (on the NYT sample's
    3,012 words, 56 sparse products made 1.2 s of a 1.5 s fit).  The block
    of the union of the features asked for so far is kept, and a request
    inside it is sliced out of it.

    The slices are the numbers a fresh product would give, bit for bit: for
    sparse ``X`` every entry ``sum_s x_si x_sj`` is summed over the samples
    in the same order whatever other columns are in the product, and the
    centring and scaling are entrywise.  A dense product (BLAS) may round an
    entry differently in a different block, so for dense ``X`` only a request
    for exactly the features kept is served from the cache (the whole
    covariance, asked for by the PSD check and by each component's search up
    to ``PSD_ONCE_MAX`` features).  ``formed`` counts the products made.
    """

    def __init__(self, X: Any, *, center: bool = True, scale: bool = False,
                 abs_max: float | None = None,
                 moments: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None
                 ) -> None:
        super().__init__(X, center=center, scale=scale, abs_max=abs_max, moments=moments)
        self._kept_idx: NDArray[np.intp] = np.empty(0, np.intp)
        self._kept = np.zeros((0, 0))
        self.formed = 0

    def block(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        idx = np.asarray(idx, dtype=np.intp)
        kept = self._kept_idx
        if np.array_equal(idx, kept):
            return self._kept.copy()
        if self.sparse:
            pos = np.searchsorted(kept, idx)
            if kept.size and np.array_equal(kept[np.minimum(pos, kept.size - 1)], idx):
                # (the same copy as self._kept[np.ix_(pos, pos)])
                return self._kept.take(pos, axis=0).take(pos, axis=1)
            want = np.union1d(kept, idx).astype(np.intp)
        else:
            want = np.arange(self.n, dtype=np.intp)
            if not np.array_equal(idx, want):
                want = idx[:0]  # (not kept: see above)
        self.formed += 1
        if want.size == 0 or want.size > CACHE_MAX_FEATURES:
            return super().block(idx)
        if kept.size:
            self._kept = self._extend(want)
        else:
            self._kept = super().block(want)
        self._kept_idx = want
        return self.block(idx)

    def whole_block(self) -> NDArray[np.float64] | None:
        """The covariance of every feature if it has been formed (the PSD
        check forms it up to ``PSD_ONCE_MAX`` features), else ``None``; not a
        copy, not to be modified."""
        return self._kept if self._kept_idx.size == self.n else None

    def _extend(self, want: NDArray[np.intp]) -> NDArray[np.float64]:
        """The block over ``want`` (sorted, a superset of the features kept),
        forming only the rows of the new features
        (:meth:`_DataCovariance.cross`; :meth:`_DataCovariance.block`'s
        sparse product is exactly symmetric, so its symmetrisation changes
        nothing)."""
        kept = self._kept_idx
        at_old = np.searchsorted(want, kept)
        new_mask = np.ones(want.size, dtype=bool)
        new_mask[at_old] = False
        at_new = np.flatnonzero(new_mask)
        new = want[at_new]
        R = self.cross(new, want)
        G = np.empty((want.size, want.size))
        G[np.ix_(at_old, at_old)] = self._kept
        G[at_new, :] = R
        G[:, at_new] = R.T
        G[np.diag_indices(want.size)] = self.diag[want]
        return G


class _LeadingBlock(_Covariance):
    """The covariance of the features of largest variance, formed from data
    block by block under a caller's time limit (``fit``).

    Features are added in decreasing variance order, LEAD_BLOCK at a time,
    checking the limit between blocks; the operator has all ``n`` features,
    those not formed with variance 0 (never selected) and
    ``outside_variance`` the largest of their true variances.  As in
    :func:`spca.text.sparse_topics`, the searches' bounds then hold for every
    feature: the diagonal bound counts ``outside_variance`` for the features
    left out, only solves at ``lam >= outside_variance`` (where Theorem 1
    eliminates those features) are cuts, and Gershgorin's and the
    eigenvalue bounds of the formed block are not used (see
    :func:`spca._path._ksparse_support`).  Deflation keeps this sound: the
    loadings are zero outside the formed features, so on them the deflated
    covariance is the deflation of their block, and a feature left out keeps
    a deflated variance at most its own (Schur: ``Sigma_jj - (Sigma x)_j^2 /
    c``; projection and removal: unchanged), which ``outside_variance``
    still bounds (see ``_DeflatedCovariance.outside_variance``).
    ``total_variance`` and the PCA eigenvalues are those of the whole data.
    """

    def __init__(self, data: _DataCovariance, need: int, limit: TimeLimit) -> None:
        self.data = data
        self.n = data.n
        order = np.argsort(-data.diag, kind="stable")
        positive = int(np.count_nonzero(data.diag > 0))
        order = order[:positive]
        self.formed_blocks = 0
        F = order[:0].astype(np.intp)
        C: NDArray[np.float64] | None = np.zeros((0, 0))
        rate = 0.0  # seconds per (new column x formed column) of the last block
        if not data.sparse and need < positive and limit.remaining() < limit.elapsed():
            # Less time left than the pass over X took (the block of `need`
            # features costs about as much: 8,447 x 60 of the NYT counts 2.1
            # against 2.2 ms of CPU): no search will run, and the answers
            # without one read a row and a k x k block per component, formed
            # from the data when asked for (see block and matvec; dense X:
            # the centred columns of a sparse X would be dense)
            F = order[:need].astype(np.intp)
            C = None
            # (their centred columns, once: what each product of them reads)
            self._centred = data.centred_columns(F)
        while C is not None and F.size < positive:
            if F.size >= need:
                take = min(LEAD_BLOCK, positive - F.size)
                predicted = rate * take * (F.size + take)
                if limit.elapsed() + predicted > LEAD_SHARE * limit.budget:
                    break
            else:
                take = min(need, positive) - F.size
            new = order[F.size:F.size + take].astype(np.intp)
            t0 = limit.elapsed()
            C = self._extend(C, F, new)
            F = np.concatenate([F, new])
            self.formed_blocks += 1
            rate = (limit.elapsed() - t0) / max(float(take) * float(F.size), 1.0)
        self.features = F
        self.C = C
        self.where = np.full(self.n, -1, dtype=np.intp)
        self.where[F] = np.arange(F.size, dtype=np.intp)
        self.diag = np.zeros(self.n)
        self.diag[F] = data.diag[F]
        self.outside_variance = float(data.diag[order[F.size]]) if F.size < positive else 0.0
        # (a Gram matrix of the centred columns, formed here from the
        # validated X: PSD up to a rounding of about n_samples * eps times
        # its largest entry, far inside the PSD check's 1e-8 n; not checked
        # again, as spca.text's candidate covariance)
        self.psd_checked = True

    @property
    def lazy(self) -> bool:
        """Whether the block is formed on request only (a limit that the pass
        over X used up)."""
        return self.C is None

    def _extend(self, C: NDArray[np.float64], F: NDArray[np.intp],
                new: NDArray[np.intp]) -> NDArray[np.float64]:
        """``C`` (the block of ``F``) grown by the rows and columns of
        ``new``: their products with the columns of ``F`` and ``new``
        (:meth:`_DataCovariance.cross`), the corner symmetrised and its
        diagonal the variances, as :meth:`_DataCovariance.block` makes them."""
        data = self.data
        R = data.cross(new, np.concatenate([F, new]))
        m, p = F.size, new.size
        G = np.empty((m + p, m + p))
        G[:m, :m] = C
        G[m:, :] = R
        G[:m, m:] = R[:, :m].T
        corner = G[m:, m:]
        G[m:, m:] = 0.5 * (corner + corner.T)
        G[np.arange(m, m + p), np.arange(m, m + p)] = data.diag[new]
        return G

    @property
    def complete(self) -> bool:
        """Whether every feature of positive variance is formed."""
        return self.outside_variance == 0.0

    def _formed(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """The covariance of the formed features ``idx`` (from the data when
        lazy: their products, the diagonal the variances, as _extend)."""
        pos = self.where[idx]
        if self.C is not None:
            return self.C[np.ix_(pos, pos)]
        Xr = self._centred[:, pos]
        return self.data.finish_gram(Xr.T @ Xr, idx)

    def block(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        idx = np.asarray(idx, dtype=np.intp)
        inside = np.flatnonzero(self.where[idx] >= 0)
        if inside.size == idx.size:
            return np.ascontiguousarray(self._formed(idx))
        B = np.zeros((idx.size, idx.size))
        B[np.ix_(inside, inside)] = self._formed(idx[inside])
        return B

    def matvec(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.asarray(x, dtype=np.float64).ravel()
        y = np.zeros(self.n)
        F = self.features
        if self.C is not None:
            y[F] = self.C @ x[F]
            return y
        # (lazy: Xs_F' (Xs_F x_F) / denom from the centred columns, O(n_samples
        # |F|), the formed block's numbers up to rounding)
        data = self.data
        xs = x[F] / data.scale[F]
        nz = np.flatnonzero(xs)
        if nz.size:
            t = self._centred[:, nz] @ xs[nz]
            y[F] = (self._centred.T @ t) / data.denom / data.scale[F]
        return y

    def quadratic(self, x: NDArray[np.float64]) -> float:
        """``x' Sigma x``; lazy: ``|Xs_F x_F|^2 / denom`` from the centred
        columns where ``x`` is nonzero (no product with all of them)."""
        if self.C is not None:
            return super().quadratic(x)
        x = np.asarray(x, dtype=np.float64).ravel()
        F = self.features
        data = self.data
        xs = x[F] / data.scale[F]
        nz = np.flatnonzero(xs)
        t = self._centred[:, nz] @ xs[nz]
        return float(t @ t) / data.denom

    @property
    def total_variance(self) -> float:
        """``Tr Sigma`` over every feature (the ones not formed too)."""
        return self.data.total_variance

    def top_eigenvalues(self, q: int) -> NDArray[np.float64]:
        """The largest eigenvalues of the whole data's covariance (of the
        formed block by Lanczos when it holds every feature)."""
        if self.complete and self.C is not None:
            vals = _top_eigenvalues_lanczos(_MatrixCovariance.formed(self.C), q)
            out = np.zeros(min(int(q), self.n))
            out[:vals.size] = vals[:out.size]
            return out
        return self.data.top_eigenvalues(q)


class SparsePCA(ClassNamePrefixFeaturesOutMixin, TransformerMixin, BaseEstimator):
    r"""Sparse principal components by DSPCA and deflation (Zhang & El Ghaoui 2011).

    Component ``t`` maximises the DSPCA relaxation

    .. code-block:: text

        max  Tr(Sigma_t Z) - lam_t * sum_ij |Z_ij|   over Z PSD, Tr Z = 1

    on the covariance ``Sigma_t`` deflated by the earlier components
    (``Sigma_0`` the covariance of the centred, optionally scaled data), solved
    by block coordinate ascent with safe feature elimination
    (:func:`spca.dspca_bca`). ``lam_t`` is either given or searched for a
    target number of nonzero loadings (:func:`spca.dspca_cardinality`).

    Parameters
    ----------
    n_components : int, optional
        Number of components. Default: as many as deflation delivers, at most
        ``min(n_samples, n_features)`` (or the length of a ``cardinality`` /
        ``lam`` sequence). Fewer are returned, with a
        :class:`~spca.DeflationWarning` if ``n_components`` was given, when the
        deflated covariance cannot deliver more.
    cardinality : int or sequence of int, optional
        Target number of nonzero loadings per component (one value for all, or
        one per component). If neither ``cardinality`` nor ``lam`` is given,
        ``cardinality = min(10, number of non-constant features)``.
    lam : float or sequence of float, optional
        The DSPCA penalty, in the units of the covariance (of the scaled data
        if ``scale=True``). Mutually exclusive with ``cardinality``.
    deflation : {"schur", "projection", "removal"}, default="schur"
        Schur complement (Mackey 2008: keeps the covariance PSD and all
        earlier loadings annihilated), orthogonalized projection, or removal
        of the features already used (disjoint supports).
    refit : bool, default=True
        Loadings of largest variance on each selected support, with
        ``cardinality`` features (fewer only when the best variance found
        needs fewer nonzeros; see :func:`spca.sparse_components`);
        ``False`` keeps the relaxation's own support and loadings.
    center : bool, default=True
        Subtract the column means (implicitly: sparse ``X`` is never densified).
    scale : bool, default=False
        Divide each column by its standard deviation (the covariance becomes
        the correlation matrix; constant columns keep scale 1).
    tol : float, default=1e-6
        Relative duality gap of every DSPCA solve.
    max_sweeps : int, default=500
        Sweep cap of every DSPCA solve.
    max_solves : int, default=40
        Cap on the solves of each cardinality search.
    optimality_gap : float, optional
        Prove each component's support optimal (for its deflated covariance)
        to this relative gap by branch and bound (see
        :func:`spca.dspca_cardinality`), within ``time_limit``, or 60 s per
        component without one; ``result_.components[t].search.status`` says
        how each search ended. Not with ``lam``.
    time_limit : float, optional
        Seconds for the whole fit, counted from the call of :meth:`fit` or
        :meth:`fit_covariance` and planned to 80% of them (see
        :func:`spca.sparse_components`, which shares them among the
        components): the fit returns by then with the
        best components and bounds so far, and ``status_`` says
        ``"time_limit"`` (or ``"interrupted"`` after Ctrl-C).  What every
        answer needs is done however short the limit: checking the input
        (from data ``X``: one pass for its column variances), the
        covariance of the features the answers need and, per component,
        the answer without a search (a forward greedy selection cut short
        by the limit and completed to ``cardinality`` features; a
        component that starts past the limit costs one row and one
        ``cardinality x cardinality`` block of its deflated covariance, see
        :func:`spca.sparse_components`).  From
        data, with a ``cardinality``, :meth:`fit` forms the covariance of
        the features of largest variance only: ``2 x`` the components'
        nonzeros at least, then 64 more at a time while the next block is
        predicted to end within half the planned time (when the pass over
        ``X`` has used up the limit, no block is formed: the rows and
        blocks the answers read come from the centred columns of those
        features); the features left out
        are never selected, and every bound still holds for all features
        (it counts their largest variance, and uses only the solves at a
        ``lam`` above it, where safe elimination removes them); that
        block, a Gram matrix of the validated ``X``, is not checked for
        positive semidefiniteness again.  The PCA
        variances the fit reports (``pca_explained_variance_``,
        ``pca_variance_ratio_``) are computed on their first access, after
        the fit (by Lanczos for a matrix, about a tenth of an ``eigvalsh``
        at 500 features, equal to ARPACK's tolerance, 1e-10 relative; from
        data, of the whole covariance).
    verbose : bool, default=False
        Print the progress of the searches.

    Attributes
    ----------
    components_ : ndarray of shape (n_components, n_features)
        Unit-norm sparse loadings, one component per row.
    n_components_ : int
        Number of components found.
    lambdas_ : ndarray of shape (n_components,)
        Penalty of each component.
    cardinalities_ : ndarray of int of shape (n_components,)
        Number of nonzero loadings of each component (the requested
        ``cardinality`` with ``refit=True``, unless the best variance found
        needs fewer nonzeros: a degenerate leading eigenvalue, see
        :attr:`spca.CardinalityResult.support`).
    variance_upper_bounds_ : ndarray of shape (n_components,)
        Certified upper bound on the variance of the best component with the
        same number of nonzeros, for the covariance deflated by the earlier
        components (see :attr:`spca.SparseComponent.variance_upper_bound`).
    certified_ratios_ : ndarray of shape (n_components,)
        Each component's variance on its deflated covariance over that bound:
        it reaches at least this fraction of the best possible (at most 1:
        the bound carries a rounding margin; with ``refit=False`` and a
        support of another size than ``cardinality``, the bound is for that
        size).
    explained_variance_ : ndarray of shape (n_components,)
        Additional explained variance (Mackey 2008): the variance of the
        (centred, scaled) data projected on the span of the first ``t``
        loadings, minus that of the first ``t - 1``; see
        :func:`spca.explained_variance`. It adds up to the variance of
        ``inverse_transform(transform(X))``.
    explained_variance_ratio_ : ndarray of shape (n_components,)
        ``explained_variance_ / total_variance_``.
    pca_explained_variance_ : ndarray of shape (n_components,)
        The largest eigenvalues of the covariance (ordinary PCA); under a
        ``time_limit`` computed on first access.
    pca_variance_ratio_ : ndarray of shape (n_components,)
        ``cumsum(explained_variance_) / cumsum(pca_explained_variance_)``,
        at most 1; under a ``time_limit`` computed on first access.
    total_variance_ : float
        Trace of the covariance.
    mean_ : ndarray of shape (n_features,)
        Column means subtracted by ``transform`` (zeros if ``center=False``).
    scale_ : ndarray of shape (n_features,)
        Column scales divided by ``transform`` (ones if ``scale=False``).
    status_ : str or None
        ``"time_limit"`` or ``"interrupted"`` if either ended a search
        (the components are then the best found so far), else ``None``.
    result_ : SparseComponents
        Every component's solve: ``lam``, support, objective, certified gap,
        cardinality search (lams tried, sweeps, time).
    n_features_in_ : int
        Number of features seen during ``fit``.
    feature_names_in_ : ndarray of str of shape (n_features,)
        Names of the features seen during ``fit``, if ``X`` had string column
        names.

    Notes
    -----
    *Covariance.* ``fit`` uses ``Sigma = Xs' Xs / (n_samples - 1)`` with
    ``Xs = (X - mean_) / scale_``. Only the variances of all features are
    computed up front; the covariance is formed only over the features that
    survive safe feature elimination (``Sigma_ii > lam``) at the smallest
    ``lam`` a search tries, from sparse products for sparse ``X``.  Each
    entry is formed once for all the components' searches (for sparse ``X``
    the block of every feature asked for so far is kept, up to 4,096
    features, and grown by the rows of new ones; for dense ``X`` the whole
    covariance, when the searches ask for it). Under a ``time_limit`` only
    the covariance of the features of largest variance that the limit
    leaves time for is formed (see ``time_limit``).
    :meth:`fit_covariance` takes a precomputed covariance instead.

    *Convergence.* With a ``cardinality`` and ``refit=True`` (the default),
    each component's DSPCA solve only proposes a support: the component's
    support, loadings, bound and certified ratio do not need it converged
    (every bound is certified at any gap), so a solve that stopped short of
    ``tol`` (``result_.components[t].converged`` False, common on
    standardised data whose optimum has rank above one) raises no warning;
    its search's ``message`` says so. With ``refit=False`` or a given
    ``lam`` the component is the relaxation's own answer, and an
    unconverged solve gives a :class:`~spca.ConvergenceWarning`.

    *Transform.* ``transform(X) = ((X - mean_) / scale_) @ components_.T``
    (the scores). The components are not orthogonal in general, so
    ``inverse_transform`` maps scores back to the orthogonal projection of the
    (centred, scaled) data onto the span of the loadings, which is the
    best reconstruction from that span.

    References
    ----------
    Y. Zhang and L. El Ghaoui, "Large-Scale Sparse Principal Component Analysis
    with Application to Text Data", NIPS 2011.
    L. Mackey, "Deflation Methods for Sparse PCA", NIPS 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from spca import SparsePCA
    >>> rng = np.random.default_rng(0)
    >>> X = rng.standard_normal((200, 10))
    >>> X[:, :3] += 3 * rng.standard_normal((200, 1))
    >>> est = SparsePCA(n_components=1, cardinality=3).fit(X)
    >>> np.flatnonzero(est.components_[0]).tolist()
    [0, 1, 2]
    >>> est.transform(X).shape
    (200, 1)
    """

    def __init__(
        self,
        n_components: int | None = None,
        *,
        cardinality: int | Sequence[int] | None = None,
        lam: float | Sequence[float] | None = None,
        deflation: str = "schur",
        refit: bool = True,
        center: bool = True,
        scale: bool = False,
        tol: float = 1e-6,
        max_sweeps: int = 500,
        max_solves: int = 40,
        optimality_gap: float | None = None,
        time_limit: float | None = None,
        verbose: bool = False,
    ) -> None:
        self.n_components = n_components
        self.cardinality = cardinality
        self.lam = lam
        self.deflation = deflation
        self.refit = refit
        self.center = center
        self.scale = scale
        self.tol = tol
        self.max_sweeps = max_sweeps
        self.max_solves = max_solves
        self.optimality_gap = optimality_gap
        self.time_limit = time_limit
        self.verbose = verbose

    # -- fitting -------------------------------------------------------------------

    def _check_params(self) -> None:
        for name in ("refit", "center", "scale", "verbose"):
            if not isinstance(getattr(self, name), bool | np.bool_):
                raise TypeError(f"{name} must be True or False, got {getattr(self, name)!r}")
        if self.deflation not in DEFLATIONS:
            raise ValueError(
                f"deflation must be one of {', '.join(map(repr, DEFLATIONS))}, "
                f"got {self.deflation!r}"
            )
        if self.cardinality is not None and self.lam is not None:
            raise ValueError(
                f"give at most one of cardinality and lam, got cardinality="
                f"{self.cardinality!r} and lam={self.lam!r}"
            )
        if self.n_components is not None:
            check_int(self.n_components, "n_components")
        check_tol(self.tol)
        check_int(self.max_sweeps, "max_sweeps")
        check_int(self.max_solves, "max_solves")
        _proof_options(self.optimality_gap, self.time_limit,
                       None if self.lam is not None else 1)
        check_time_limit(self.time_limit)

    def _n_requested(self, limit: int) -> tuple[int, bool]:
        """Number of components to compute and whether it was asked for explicitly."""
        if self.n_components is not None:
            return int(self.n_components), True
        for value in (self.cardinality, self.lam):
            if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str):
                return len(value), True
        return max(int(limit), 1), False

    def _fit_operator(self, cov: _Covariance, limit: int,
                      deadline: TimeLimit | None = None, lead: bool = False) -> SparsePCA:
        """Fit on the operator ``cov`` (``lead``: data whose covariance may be
        formed over the features of largest variance only, under a limit)."""
        n_components, explicit = self._n_requested(limit)
        n_features = cov.n
        npos = int(np.count_nonzero(cov.diag > 0))
        if npos == 0:
            raise ValueError("every feature has zero variance: there is nothing to explain")
        cards = _per_component(self.cardinality, n_components, "cardinality",
                               lambda v: check_int(v, "cardinality"))
        lams = _per_component(self.lam, n_components, "lam", check_lam)
        if cards is None and lams is None:
            cards = [min(DEFAULT_CARDINALITY, npos)] * n_components
        if cards is not None:
            if max(cards) > n_features:
                raise ValueError(
                    f"cardinality must be <= n_features = {n_features}, got {max(cards)}"
                )
            if cards[0] > npos:
                raise ValueError(
                    f"cardinality={cards[0]} but only {npos} feature(s) have positive "
                    f"variance (constant features cannot enter a component)"
                )
        tol = check_tol(self.tol)
        deadline = (TimeLimit.caller(check_time_limit(self.time_limit)) if deadline is None
                    else deadline)
        proof = _proof_options(self.optimality_gap, self.time_limit, cards)
        lazy = False
        if deadline.limited:
            # (under a limit the PCA variances of the summary are left to the
            # first access of pca_explained_variance_: the fit returns
            # without that eigensolve; for a matrix the package formed, as
            # sparse_components does)
            lazy = lead or cov.dense_view() is not None
            if lead and cards is not None and proof is None:
                cov = _LeadingBlock(cov, max(max(cards), LEAD_PER_NONZERO * sum(cards)),
                                    deadline)
        result = _components(
            cov, n_components, cardinality=cards, lam=lams, deflation=self.deflation,
            tol=tol, search_tol=tol, max_solves=check_int(self.max_solves, "max_solves"),
            lam_rtol=1e-4, max_sweeps=check_int(self.max_sweeps, "max_sweeps"),
            options=_solver_options(5, 1e-3, True), verbose=self.verbose,
            warn_short=explicit, refit=self.refit, proof=proof, limit=deadline,
            lazy_pca=lazy,
        )
        if result.n_components == 0:
            raise ValueError(f"no sparse component could be computed: {result.message}")
        self._set_fitted(result)
        return self

    def _set_fitted(self, result: SparseComponents) -> None:
        ev = result.explained
        self.result_ = result
        self.status_ = result.status
        self.components_ = result.loadings
        self.n_components_ = result.n_components
        self.lambdas_ = result.lambdas
        self.cardinalities_ = np.array([c.cardinality for c in result.components], dtype=int)
        self.variance_upper_bounds_ = np.array(
            [c.variance_upper_bound for c in result.components], dtype=np.float64)
        self.certified_ratios_ = np.array([c.certified_ratio for c in result.components],
                                          dtype=np.float64)
        self.explained_variance_ = ev.variance
        self.explained_variance_ratio_ = ev.ratio
        self.total_variance_ = ev.total_variance

    @property
    def pca_explained_variance_(self) -> NDArray[np.float64]:
        """The largest eigenvalues of the covariance (ordinary PCA); under a
        ``time_limit`` computed on first access, after the fit."""
        return self.result_.explained.pca_variance

    @property
    def pca_variance_ratio_(self) -> NDArray[np.float64]:
        """``cumsum(explained_variance_) / cumsum(pca_explained_variance_)``
        (at most 1); under a ``time_limit`` computed on first access."""
        return self.result_.explained.pca_ratio

    def fit(self, X: ArrayLike, y: Any = None) -> SparsePCA:
        """Fit sparse components to the data ``X``.

        Parameters
        ----------
        X : {array-like, scipy.sparse matrix} of shape (n_samples, n_features)
            Data, ``n_samples >= 2``, finite. Sparse input stays sparse.
        y : None
            Ignored.

        Returns
        -------
        self : SparsePCA
            The fitted estimator.

        Raises
        ------
        ValueError
            For NaN or inf in ``X``, fewer than 2 samples, every feature
            constant, a largest column variance outside ``[1e-290, 1e150]``
            (checked before any square is formed), invalid parameters, a
            cardinality larger than the number of non-constant features, or a
            ``lam`` that eliminates every feature.

        Warns
        -----
        UserWarning
            When some features are constant (they can never be selected).
        DeflationWarning
            When fewer than the requested ``n_components`` can be computed.
        ConvergenceWarning
            When a component is the relaxation's own answer (``refit=False``
            or a given ``lam``) and its solve stopped short of ``tol`` (see
            Notes of the class).
        """
        self._check_params()
        # (the time limit counts from here: forming the covariance too)
        deadline = TimeLimit.caller(check_time_limit(self.time_limit))
        checks = dict(accept_sparse=("csr", "csc"), dtype=np.float64, ensure_min_samples=2)
        dense = not sp.issparse(X)
        # (dense X: its finiteness from the pass for its largest entry, which
        # the column variances need anyway -- a NaN or an inf makes that
        # entry non-finite -- and then scikit-learn's own error; one read of
        # X fewer: the NYT counts, 8,447 x 500, 1.5 ms; under a limit from
        # the column moments, see below)
        Xv = validate_data(self, X, reset=True, ensure_all_finite=not dense, **checks)
        # (under a limit, dense X: the column moments first, in units of 1,
        # and no read for the largest entry when they are finite and in
        # range; see _unit_moments)
        moments = _unit_moments(Xv, self.center) if dense and deadline.limited else None
        amax = _abs_max(Xv) if dense and moments is None else None
        if amax is not None and not math.isfinite(amax):
            validate_data(self, X, reset=True, **checks)  # (raises)
        X = Xv
        cov = _BlockCache(X, center=self.center, scale=self.scale, abs_max=amax,
                          moments=moments)
        constant = np.flatnonzero(cov.raw_variance <= 0)
        if constant.size == X.shape[1]:
            raise ValueError(
                f"every feature of X is constant (zero variance over the {X.shape[0]} "
                f"samples): there is nothing to explain"
            )
        if constant.size:
            names = getattr(self, "feature_names_in_", None)
            shown = (names[constant] if names is not None else constant)[:10].tolist()
            warnings.warn(
                f"{constant.size} feature(s) of X are constant (zero variance) and cannot "
                f"enter any component: {shown}{' ...' if constant.size > 10 else ''}",
                UserWarning, stacklevel=2,
            )
        self.mean_ = cov.mean.copy()
        self.scale_ = cov.scale.copy()
        return self._fit_operator(cov, min(X.shape), deadline, lead=True)

    def fit_covariance(self, covariance: ArrayLike, mean: ArrayLike | None = None) -> SparsePCA:
        """Fit sparse components to a precomputed covariance matrix.

        Parameters
        ----------
        covariance : {array-like, scipy.sparse matrix} of shape (n_features, n_features)
            Symmetric positive semidefinite covariance (not modified). With
            ``scale=True`` it is turned into the correlation matrix
            ``Sigma_ij / sqrt(Sigma_ii Sigma_jj)``.
        mean : array-like of shape (n_features,), optional
            The mean ``transform`` subtracts (default zeros). ``center`` is
            ignored here.

        Returns
        -------
        self : SparsePCA
            The fitted estimator; ``fit_covariance(np.cov(X.T), X.mean(0))``
            gives the same components as ``fit(X)``.

        Raises
        ------
        ValueError
            For a covariance that is not square, symmetric, finite and PSD on
            the features solved over, a ``mean`` of the wrong shape, or the
            same parameter errors as :meth:`fit`.
        """
        self._check_params()
        deadline = TimeLimit.caller(check_time_limit(self.time_limit))
        base = _MatrixCovariance(covariance, "covariance")
        n = base.n
        sd = np.sqrt(base.diag)
        scale = np.where(sd > 0, sd, 1.0) if self.scale else np.ones(n)
        if self.scale:
            if sp.issparse(base.S):
                D = sp.diags_array(1.0 / scale)
                cov: _Covariance = _MatrixCovariance(D @ base.S @ D, "covariance")
            else:
                cov = _MatrixCovariance(base.S / np.outer(scale, scale), "covariance")
        else:
            cov = base
        if mean is None:
            mu = np.zeros(n)
        else:
            mu = np.array(_as_real_dense(mean, "mean"), dtype=np.float64).ravel()
            if mu.shape != (n,) or not np.all(np.isfinite(mu)):
                raise ValueError(f"mean must be a finite vector of shape ({n},), "
                                 f"got shape {np.shape(mean)}")
        for attr in ("feature_names_in_",):
            if hasattr(self, attr):
                delattr(self, attr)
        self.n_features_in_ = n
        self.mean_ = mu
        self.scale_ = scale
        return self._fit_operator(cov, n, deadline)

    # -- transforming --------------------------------------------------------------

    @property
    def _n_features_out(self) -> int:
        return int(self.components_.shape[0])

    def transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """Scores of ``X`` on the sparse components.

        Parameters
        ----------
        X : {array-like, scipy.sparse matrix} of shape (n_samples, n_features)
            Data with the features seen in ``fit`` (sparse input stays sparse).

        Returns
        -------
        scores : ndarray of shape (n_samples, n_components)
            ``((X - mean_) / scale_) @ components_.T``.
        """
        check_is_fitted(self, "components_")
        X = validate_data(self, X, accept_sparse=("csr", "csc"), dtype=np.float64,
                          reset=False)
        W = self.components_ / self.scale_
        return np.asarray(X @ W.T, dtype=np.float64) - self.mean_ @ W.T

    def inverse_transform(self, X: ArrayLike) -> NDArray[np.float64]:
        """Map scores back to the feature space.

        Parameters
        ----------
        X : array-like of shape (n_samples, n_components)
            Scores, as returned by :meth:`transform`.

        Returns
        -------
        X_original : ndarray of shape (n_samples, n_features)
            ``mean_ + scale_ * (projection on the span of the loadings)``:
            for ``T = transform(A)`` this is the orthogonal projection of the
            centred, scaled rows of ``A`` onto the span of ``components_``,
            unscaled and uncentred.
        """
        check_is_fitted(self, "components_")
        T = check_array(X, dtype=np.float64)
        V = self.components_
        if T.shape[1] != V.shape[0]:
            raise ValueError(
                f"X has {T.shape[1]} columns but the estimator has {V.shape[0]} components"
            )
        coef = np.linalg.pinv(V @ V.T, hermitian=True) @ V
        return (T @ coef) * self.scale_ + self.mean_

    def __sklearn_tags__(self):
        tags = super().__sklearn_tags__()
        tags.input_tags.sparse = True
        return tags
