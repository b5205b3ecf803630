"""Several sparse components by deflation.

After a component with unit loadings ``x`` is found, the covariance is
*deflated* so that the next DSPCA problem looks for something else.  Three
methods (Mackey, NIPS 2008, Sections 2-3):

``"schur"`` (default)
    Schur complement deflation ``Sigma - Sigma x x' Sigma / (x' Sigma x)``:
    the covariance of the data conditioned on the score ``x' a``.  Stays PSD,
    annihilates ``x`` and every earlier loading (``Sigma_t x_s = 0`` for all
    ``s <= t``), and every later component is uncorrelated with the earlier
    scores.
``"projection"``
    Orthogonalized projection deflation ``(I - x x') Sigma (I - x x')``:
    stays PSD and annihilates ``x`` (the latest loading only, unless the
    loadings are orthogonal).
``"removal"``
    Drop the features in the support of ``x`` (their rows and columns become
    zero): the components have disjoint supports, e.g. disjoint word lists
    as in the tables of Zhang & El Ghaoui (2011).

The deflated matrices are never formed: they are kept as the original
covariance operator plus a low-rank correction (``"schur"``: one rank-one
term per component; ``"projection"``: one symmetric rank-two term) or a
feature mask (``"removal"``), so only the blocks the next search needs are
computed.
"""

from __future__ import annotations

import math
import time
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, replace
from functools import partial
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _ksparse
from ._bca import ConvergenceWarning, DSPCAResult, EmptyProblemWarning, _empty_result
from ._certificate import bound_margin, k_sparse_row_bound
from ._limits import STATUS_INTERRUPTED, STATUS_TIME_LIMIT, TimeLimit, check_time_limit
from ._path import (
    _STOP_REASONS,
    CardinalityResult,
    _after,
    _certified,
    _check_psd_once,
    _next_limit,
    _search,
    _share,
    _Solver,
    _solver_options,
    _warn_unfinished,
    dspca_cardinality,
)
from ._validation import (
    _as_real_dense,
    check_bool,
    check_int,
    check_lam,
    check_positive,
    check_tol,
    symmetric_mean,
)
from ._variance import ExplainedVariance, _Covariance, _explained, _MatrixCovariance
from .cardinality._prove import DEFAULT_TIME_LIMIT, check_proof_options, prove

__all__ = [
    "DEFLATIONS",
    "DeflationWarning",
    "SparseComponent",
    "SparseComponents",
    "deflate",
    "sparse_components",
]

DEFLATIONS = ("schur", "projection", "removal")

# Deflated variances below this fraction of the feature's own original
# variance are rounding error (e.g. on the support of a Schur-deflated
# component) and are set to zero, so that such features are eliminated at
# every lam >= 0.  Per feature, so that it does not depend on the features'
# scales (relative to the largest variance, a feature 1e-10 times smaller than
# another was dropped before any deflation).
VARIANCE_RTOL = 1e-10

Deflation = Literal["schur", "projection", "removal"]


class DeflationWarning(UserWarning):
    """Fewer components than requested: the deflated covariance cannot deliver more."""


def _check_deflation(deflation: Any) -> str:
    if deflation not in DEFLATIONS:
        raise ValueError(
            f"deflation must be one of {', '.join(map(repr, DEFLATIONS))}, got {deflation!r}"
        )
    return str(deflation)


def deflate(Sigma: ArrayLike, x: ArrayLike, method: Deflation = "schur") -> NDArray[np.float64]:
    r"""Deflate a covariance matrix by one component.

    .. code-block:: text

        "schur":       Sigma - Sigma x x' Sigma / (x' Sigma x)
        "projection":  (I - x x') Sigma (I - x x')          (x scaled to unit norm)
        "removal":     Sigma with the rows and columns of support(x) set to 0

    Parameters
    ----------
    Sigma : array-like of shape (n_features, n_features)
        Symmetric positive semidefinite matrix (not modified).
    x : array-like of shape (n_features,)
        The component's loadings (nonzero).
    method : {"schur", "projection", "removal"}, default="schur"
        The deflation (see the module docstring of ``spca._deflation``).

    Returns
    -------
    deflated : ndarray of shape (n_features, n_features)
        A new symmetric matrix (exactly symmetrised, negative rounding on the
        diagonal set to 0).

    Raises
    ------
    ValueError
        For a non-square, non-symmetric or non-finite ``Sigma``, a zero or
        wrongly shaped ``x``, an unknown method, or (``"schur"``) when
        ``x' Sigma x = 0``.

    Notes
    -----
    Schur complement deflation keeps ``Sigma`` PSD and gives ``deflated @ y =
    0`` for every ``y`` with ``Sigma y`` parallel to ``Sigma x``, in particular
    for ``x`` and for every loading annihilated before (Mackey 2008, Prop. 3.1).
    Projection deflation keeps PSD-ness and annihilates ``x``.

    References
    ----------
    L. Mackey, "Deflation Methods for Sparse PCA", NIPS 2008.

    Examples
    --------
    >>> import numpy as np
    >>> from spca import deflate
    >>> S = np.array([[2.0, 1.0], [1.0, 2.0]])
    >>> deflate(S, [1.0, 0.0]) @ [1.0, 0.0]
    array([0., 0.])
    """
    method = _check_deflation(method)
    cov = _MatrixCovariance(Sigma)
    S = cov.S.toarray() if hasattr(cov.S, "toarray") else cov.S.copy()
    x = _as_real_dense(x, "x").astype(np.float64).ravel()
    if x.shape != (cov.n,):
        raise ValueError(f"x must have shape ({cov.n},), got {np.shape(x)}")
    if not np.all(np.isfinite(x)) or not np.any(x):
        raise ValueError("x must be finite and nonzero")
    if method == "removal":
        S[x != 0, :] = 0.0
        S[:, x != 0] = 0.0
        return S
    if method == "projection":
        x = x / np.linalg.norm(x)
        P = np.eye(cov.n) - np.outer(x, x)
        out = P @ S @ P
    else:
        a = S @ x
        c = float(x @ a)
        if not c > 0:
            raise ValueError(f"Schur deflation needs x' Sigma x > 0, got {c!r}")
        out = S - np.outer(a, a) / c
    out = 0.5 * (out + out.T)
    # A PSD matrix has a non-negative diagonal; remove negative rounding so that
    # the result can be deflated again.
    np.fill_diagonal(out, np.maximum(np.diag(out), 0.0))
    return out


class _DeflatedCovariance(_Covariance):
    """``mask * (Sigma_0 + L C L')``: a covariance operator after deflation."""

    def __init__(self, base: _Covariance) -> None:
        self.base = base
        self.n = base.n
        self.L = np.zeros((self.n, 0))
        self.C = np.zeros((0, 0))
        self.active = np.ones(self.n, dtype=bool)
        self.floor = VARIANCE_RTOL * base.diag  # per feature: scale-invariant
        # Every deflation of a PSD matrix is PSD (up to rounding).
        self.psd_checked = base.psd_checked
        # (see _Solver.outside: deflation never raises the variance of a
        # feature outside the support)
        self.outside_variance = float(getattr(base, "outside_variance", 0.0))
        # Removal from a dense base: one copy of the base's array, whose rows
        # and columns of removed features are zeroed in place at each
        # deflation (made at the first one; see dense_view).  A base whose
        # array the caller hands over (``owned``, see spca.text.sparse_topics)
        # is zeroed in place instead, its rows kept here (removed features x
        # n, a few per component) and written back by restore(): no copy of
        # the whole array (8 MiB at 1,024 candidate words).
        self._removed_view: NDArray[np.float64] | None = None
        self._in_place = bool(getattr(base, "owned", False))
        self._saved: list[tuple[NDArray[np.intp], NDArray[np.float64]]] = []
        self._update_diag()

    def _update_diag(self) -> None:
        d = self.base.diag + np.einsum("ij,jk,ik->i", self.L, self.C, self.L)
        # (rounding below 0 that the floor lifts to 0: see raised)
        self.raised = np.where(self.active, np.maximum(-d, 0.0), 0.0)
        d = np.where(self.active & (d > self.floor), d, 0.0)
        self.diag = d

    def dense_view(self) -> NDArray[np.float64] | None:
        # Removal only zeroes rows and columns, whose variance becomes 0;
        # after one, the view is the copy with those rows and columns zeroed
        # (its zero rows let a solver's pool keep the whole view, see
        # inactive_rows_zero).
        if self.L.shape[1]:
            return None
        if self._removed_view is not None:
            return self._removed_view
        return self.base.dense_view()

    def restore(self) -> None:
        """Write back the rows and columns of an ``owned`` base zeroed by the
        removals (latest first: each saved row holds the original entries of
        the features removed after it); the operator then reads the base
        through its mask, as without a view."""
        view = self._removed_view
        if view is None or not self._saved:
            return
        for idx, rows in reversed(self._saved):
            view[idx, :] = rows
            view[:, idx] = rows.T
        self._saved.clear()
        self._removed_view = None

    @property
    def inactive_rows_zero(self) -> bool:
        """Whether :meth:`dense_view` is zero on the rows and columns of
        removed features (a removal deflation of a dense base)."""
        return self._removed_view is not None

    def offdiag_rowmax(self) -> NDArray[np.float64]:
        if self.L.shape[1] == 0:
            return self.base.offdiag_rowmax()  # an upper bound: shared with the base
        return super().offdiag_rowmax()

    def block(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        idx = np.asarray(idx, dtype=np.intp)
        B = self.base.block(idx)
        if self.L.shape[1]:
            Li = self.L[idx]
            B = B + Li @ self.C @ Li.T
        off = ~self.active[idx]
        if off.any():
            B[off, :] = 0.0
            B[:, off] = 0.0
        B = symmetric_mean(B)  # (0.5 * (B + B.T), tile by tile)
        B[np.diag_indices(idx.size)] = self.diag[idx]
        return B

    def matvec(self, x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.where(self.active, np.asarray(x, dtype=np.float64).ravel(), 0.0)
        y = self.base.matvec(x)
        if self.L.shape[1]:
            y = y + self.L @ (self.C @ (self.L.T @ x))
        return np.where(self.active, y, 0.0)

    def deflate(self, x: NDArray[np.float64], method: str) -> float:
        """Deflate by the unit loadings ``x`` in place; returns ``x' Sigma x``."""
        a = self.matvec(x)
        c = float(x @ a)
        if method == "removal":
            new = np.flatnonzero(self.active & (x != 0))
            self.active &= x == 0
            view = self.base.dense_view() if self.L.shape[1] == 0 else None
            if view is not None:
                if self._removed_view is None:
                    if (self._in_place and view.dtype == np.float64
                            and view.flags.c_contiguous and view.flags.writeable):
                        self._removed_view = view
                    else:
                        self._removed_view = np.array(view, dtype=np.float64, order="C")
                if self._removed_view is view:
                    self._saved.append((new, view[new].copy()))
                # (the features removed before are zero already)
                self._removed_view[new, :] = 0.0
                self._removed_view[:, new] = 0.0
        elif method == "schur":
            r = self.L.shape[1]
            self.L = np.column_stack([self.L, a / np.sqrt(c)])
            C = np.zeros((r + 1, r + 1))
            C[:r, :r] = self.C
            C[r, r] = -1.0
            self.C = C
        else:  # projection: Sigma - x a' - a x' + c x x'
            r = self.L.shape[1]
            self.L = np.column_stack([self.L, x, a])
            C = np.zeros((r + 2, r + 2))
            C[:r, :r] = self.C
            C[r:, r:] = [[c, -1.0], [-1.0, 0.0]]
            self.C = C
        self._update_diag()
        return c


@dataclass(frozen=True, repr=False)
class SparseComponent:
    """One sparse component found by :func:`sparse_components`.

    Attributes
    ----------
    index : int
        Position of the component (0-based).
    lam : float
        The penalty of its DSPCA solve.
    loadings : ndarray of shape (n_features,)
        Unit-norm loadings, zero outside ``support``: with ``refit=True``
        (default) the leading eigenvector of the deflated covariance on the
        support, otherwise the solver's loadings.
    support : ndarray of int
        The selected features, exactly the nonzero entries of ``loadings``:
        with a target cardinality ``k`` (and ``refit=True``) ``k`` of them
        (fewer only when the best variance found needs fewer nonzeros, see
        :attr:`CardinalityResult.support`; ``origin`` says how they were
        found), at a given ``lam`` the support DSPCA selected.
    objective, upper_bound, gap : float
        DSPCA objective, certified upper bound and relative gap of the solve
        at ``lam``, for the (deflated) covariance the component was solved on.
    converged : bool
        ``gap <= tol`` for the solve at ``lam``. With a target cardinality
        and ``refit=True`` that solve only proposes a support: the
        component's support, loadings and ``variance_upper_bound`` do not
        need it converged (the bound is certified at any gap), and ``False``
        raises no warning (``search.message`` says it). Where the component
        is the relaxation's own answer (a given ``lam``, or ``refit=False``)
        ``False`` comes with a :class:`~spca.ConvergenceWarning`.
    variance : float
        ``x' Sigma_t x`` on the deflated covariance ``Sigma_t`` it was solved on.
    result : DSPCAResult
        The solve (caller's feature order, deflated covariance).
    search : CardinalityResult or None
        The cardinality search, when a cardinality was requested.
    variance_upper_bound : float
        Certified upper bound on ``max x' Sigma_t x`` over unit ``x`` with at
        most ``k`` nonzeros (``k`` the target cardinality, else, and with
        ``refit=False`` when the relaxation's support does not have ``k``
        features, the size of the support), for the *deflated* ``Sigma_t``:
        how much variance any ``k``-sparse component could add at this
        step, given the earlier components. It is not a bound on the
        components jointly. It includes a rounding margin and is never
        below ``variance``, so ``certified_ratio <= 1``.
    origin : str
        How the support was obtained (:attr:`CardinalityResult.origin`;
        ``"relaxation"`` at a given ``lam``).
    """

    index: int
    lam: float
    loadings: NDArray[np.float64]
    support: NDArray[np.intp]
    objective: float
    upper_bound: float
    gap: float
    converged: bool
    variance: float
    result: DSPCAResult
    search: CardinalityResult | None
    variance_upper_bound: float = math.nan
    origin: str = "relaxation"

    @property
    def cardinality(self) -> int:
        """Number of selected features."""
        return int(self.support.size)

    @property
    def certified_ratio(self) -> float:
        """``variance / variance_upper_bound``: at least this fraction of the
        best variance a component of ``Sigma_t`` with as many nonzeros can
        have (at most 1)."""
        if not self.variance_upper_bound > 0:
            return math.nan
        return self.variance / self.variance_upper_bound

    @property
    def relaxation_loadings(self) -> NDArray[np.float64]:
        """The DSPCA solver's own loadings at ``lam`` (``result.loadings``)."""
        return self.result.loadings

    def __repr__(self) -> str:
        sup = (str(self.support.tolist()) if self.support.size <= 12
               else f"<{self.support.size} features>")
        return (
            f"SparseComponent({self.index}, lam={self.lam:.8g}, support={sup}, "
            f"origin={self.origin!r}, objective={self.objective:.6g}, gap={self.gap:.2e}, "
            f"variance={self.variance:.6g}, certified_ratio={self.certified_ratio:.4f})"
        )


@dataclass(frozen=True, repr=False)
class SparseComponents:
    """Result of :func:`sparse_components`.

    Attributes
    ----------
    components : tuple of SparseComponent
        The components found, in order (possibly fewer than requested).
    deflation : str
        The deflation method.
    n_requested : int
        The number of components asked for.
    explained : ExplainedVariance
        Explained variance of the components on the *original* covariance
        (Mackey's additional explained variance, see
        :func:`spca._variance.explained_variance`).
    message : str
        Why fewer components than requested were returned ("" otherwise).
    seconds : float
        Total wall time.
    n_features : int
        Number of features.
    """

    components: tuple[SparseComponent, ...]
    deflation: str
    n_requested: int
    explained: ExplainedVariance
    message: str
    seconds: float
    n_features: int

    @property
    def status(self) -> str | None:
        """``"interrupted"`` or ``"time_limit"`` if either ended the search of a
        component (its ``search.status``), else ``None``."""
        found = {c.search.status for c in self.components if c.search is not None}
        for status in (STATUS_INTERRUPTED, STATUS_TIME_LIMIT):
            if status in found:
                return status
        return None

    @property
    def n_components(self) -> int:
        """Number of components found."""
        return len(self.components)

    @property
    def loadings(self) -> NDArray[np.float64]:
        """``(n_components, n_features)`` matrix of loadings (rows)."""
        if not self.components:
            return np.zeros((0, self.n_features))
        return np.vstack([c.loadings for c in self.components])

    @property
    def lambdas(self) -> NDArray[np.float64]:
        """Penalty of each component."""
        return np.array([c.lam for c in self.components])

    @property
    def supports(self) -> list[NDArray[np.intp]]:
        """Support of each component."""
        return [c.support for c in self.components]

    def __repr__(self) -> str:
        lines = [f"SparseComponents({self.n_components}/{self.n_requested} components, "
                 f"deflation={self.deflation!r}, time={self.seconds:.3g}s)"]
        for c, v, r in zip(self.components, self.explained.variance,
                           self.explained.cumulative_ratio, strict=True):
            lines.append(f"  {c!r}  explained={v:.4g} (cumulative ratio {r:.4f})")
        if self.message:
            lines.append(f"  stopped early: {self.message}")
        return "\n".join(lines)


def _per_component(value: Any, n: int, name: str, check: Any) -> list[Any] | None:
    if value is None:
        return None
    if isinstance(value, Sequence | np.ndarray) and not isinstance(value, str):
        vals = list(value)
        if len(vals) != n:
            raise ValueError(
                f"{name} must be a scalar or have one entry per component ({n}), "
                f"got {len(vals)} entries"
            )
        return [check(v) for v in vals]
    return [check(value)] * n


def _components(cov: _Covariance, n_components: int, *, cardinality: list[int] | None,
                lam: list[float] | None, deflation: str, tol: float, search_tol: float,
                max_solves: int, lam_rtol: float, max_sweeps: int, options: dict[str, Any],
                verbose: bool, warn_short: bool = True,
                pca_variance: NDArray[np.float64] | None = None,
                refit: bool = True, lazy_pca: bool = False,
                limit: TimeLimit | None = None,
                proof: float | None = None) -> SparseComponents:
    """The deflation loop over a covariance operator (``lazy_pca``: see
    :func:`spca._variance._explained`; ``limit``: the caller's time limit,
    shared by every component; ``proof``: the ``optimality_gap`` of each
    component's branch and bound, which runs within ``limit``, or within
    ``DEFAULT_TIME_LIMIT`` seconds per component when there is no limit)."""
    t0 = time.perf_counter()
    limit = TimeLimit(None) if limit is None else limit
    interrupted = False
    if cardinality is not None:
        _check_psd_once(cov)
    # Under a time limit, each search keeps time for the answers of the later
    # ones (past the limit, a component's answer costs a deflation, the
    # deflated covariance's block and the candidate pool: O(n^2) passes).
    # Before a deflation has been timed, the set-up of the call so far (the
    # checks of the matrix, O(n^2) passes and a Cholesky factorisation)
    # stands for it.
    setup = limit.elapsed() if limit.limited else 0.0
    if limit.limited and pca_variance is None and not lazy_pca:
        # (under a time limit the summary's eigensolve comes first, within
        # the limit: the searches share what it leaves, and the call does
        # not end with an eigensolve after the limit; Lanczos, about a tenth
        # of the dense subset eigensolve at 500 features)
        pca_variance = _top_eigenvalues_lanczos(cov, n_components)
    work = _DeflatedCovariance(cov)
    comps: list[SparseComponent] = []
    message = ""
    # components that are the relaxation's own answer (its support and
    # loadings): for them an unconverged solve is warned about
    unconverged: list[int] = []
    # the solves of the previous component's search (only the last one's:
    # they hold an iterate each; the probes of the NYT topics start as well
    # from them as from all the earlier ones)
    inherited: list[Any] = []
    # the previous component's k and bound, which hold for the next deflated
    # covariance too (see _carried_bound)
    previous: tuple[int, float] | None = None
    for t in range(n_components):
        d = work.diag
        npos = int(np.count_nonzero(d > 0))
        search = None
        quick = None
        if npos == 0:
            message = (f"after {t} component(s) the {deflation} deflated covariance has no "
                       f"variance left")
            break
        if verbose:
            print(f"component {t}: {npos} features with variance left")
        if cardinality is not None:
            k = cardinality[t]
            if npos < k:
                message = (f"component {t} needs cardinality={k} but after {deflation} "
                           f"deflation only {npos} feature(s) have variance left")
                break
            # (the time left but a reserve for each later component, which
            # needs time for its answer too: see _share)
            part = _share(_next_limit(limit, interrupted), n_components - t)
            # (past the limit, the answer without a search; a projection
            # deflation's later components keep the search's Gershgorin
            # bound of the deflated block, see _carried_bound)
            quick = (_late_answer(work, k, tol, _carried_bound(work, k, previous))
                     if refit and (previous is not None or not work.L.shape[1])
                     and part.expired() else None)
        if cardinality is not None and quick is not None:
            # (past the limit: the search's answer without its n x n block)
            search, interrupted = _after(quick, interrupted)
            inherited = []
            res = search.result
            bound, origin = search.variance_upper_bound, search.origin
            support, x = search.support, search.loadings
        elif cardinality is not None:
            solver = _Solver(work, max_sweeps=max_sweeps, options=options, verbose=verbose)
            if deflation == "removal":
                # (the earlier components' solves start this one's
                # certificate probes: see _Solver.inherited)
                solver.inherited = inherited
            search = _search(work, k, tol=tol, search_tol=search_tol, max_solves=max_solves,
                             lam_rtol=lam_rtol, max_sweeps=max_sweeps, options=options,
                             verbose=verbose, budgeted=refit, limit=part, solver=solver,
                             reserve=(n_components - t - 1) * setup, descent=True)
            search, interrupted = _after(search, interrupted)
            inherited = solver._solved
            if (proof is not None and not interrupted
                    and search.status not in (STATUS_TIME_LIMIT, STATUS_INTERRUPTED)):
                # branch and bound hook (spca.cardinality)
                search = prove(search, work, proof,
                               part if limit.limited else TimeLimit(DEFAULT_TIME_LIMIT),
                               verbose, search=dspca_cardinality)
                interrupted = search.status == STATUS_INTERRUPTED
            res = search.result
            bound, origin = search.variance_upper_bound, search.origin
            if refit:
                support, x = search.support, search.loadings
            else:
                support, x, origin = res.support, res.loadings, "relaxation"
                if support.size != k:
                    warnings.warn(
                        f"refit=False keeps the relaxation's own support: component {t} has "
                        f"{support.size} nonzero loadings, not cardinality={k} "
                        f"({search.message})", UserWarning, stacklevel=3,
                    )
                    # Like with like: the bound of the support's own size, from
                    # the search's solves (a bound on k-sparse vectors says
                    # nothing about this one).
                    bound = _sparse_bound(work, support.size, search.trials)
                unconverged.append(t)
        else:
            assert lam is not None
            lam_t = lam[t]
            if npos == 0 or d.max() <= lam_t:
                message = (f"lam={lam_t!r} eliminates every feature of component {t}: the "
                           f"largest {'deflated ' if t else ''}variance is {float(d.max())!r}")
                if t == 0:
                    raise ValueError(message + "; choose a smaller lam")
                break
            solver = _Solver(work, max_sweeps=max_sweeps, options=options, verbose=verbose)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", EmptyProblemWarning)
                res = solver.full(solver.solve(lam_t, tol))
            x, support, origin = res.loadings, res.support, "relaxation"
            if support.size == 0:
                message = f"component {t} is empty at lam={res.lam!r}"
                break
            if refit and support.size > 1:
                x = _refit(work, support)
            unconverged.append(t)  # the support is the relaxation's at lam
            # One cut of the k-sparse certificate (k = the support's size),
            # valid for the whole problem at a lam above any left-out variance.
            bound = _sparse_bound(work, support.size, [res])
        c = work.deflate(x, deflation) if t + 1 < n_components else float(x @ work.matvec(x))
        # (the variance computed may exceed its exact value by rounding; so may
        # not the bound: a certified ratio is at most 1)
        bound = max(bound, c)
        if not c > float(x * x @ work.floor):  # the floor of x's own features
            message = (f"component {t} explains no variance of the deflated covariance "
                       f"(x' Sigma x = {float(c)!r})")
            break
        comps.append(SparseComponent(
            index=t, lam=float(res.lam), loadings=x, support=support,
            objective=float(res.objective), upper_bound=float(res.upper_bound),
            gap=float(res.gap), converged=bool(res.converged), variance=c, result=res,
            search=search, variance_upper_bound=float(bound), origin=origin,
        ))
        previous = ((k, float(bound)) if cardinality is not None
                    and deflation in ("schur", "removal") else None)
    # (an owned base gets its removed rows back before the summary reads it;
    # an exception above leaves them zeroed: only a caller that then drops
    # the array sets owned)
    work.restore()
    late = [c for c in comps if c.index in unconverged and not c.converged]
    if late:
        warnings.warn(
            "the DSPCA solve of component(s) "
            + ", ".join(f"{c.index} (gap {c.gap:.1e})" for c in late)
            + f" stopped short of tol={tol:g}: the component is the relaxation's own "
            "answer, which is certified only up to that gap; increase max_sweeps",
            ConvergenceWarning, stacklevel=3,
        )
    _warn_unfinished([(f"component {c.index}", c.search) for c in comps
                      if c.search is not None], proof, stacklevel=4)
    if message and warn_short:
        warnings.warn(
            f"only {len(comps)} of n_components={n_components} sparse components could be "
            f"computed: {message}", DeflationWarning, stacklevel=3,
        )
    V = np.vstack([c.loadings for c in comps]) if comps else np.zeros((0, cov.n))
    if pca_variance is not None:
        pca_variance = pca_variance[:V.shape[0]]
    explained = _explained(cov, V, "additional", pca_variance=pca_variance, lazy=lazy_pca)
    if limit.limited and lazy_pca and pca_variance is None and cov.dense_view() is not None:
        # (left to the first access under a limit: then by Lanczos, about a
        # tenth of the dense subset eigensolve at 500 features)
        explained = replace(explained, _top_eigenvalues=partial(
            _top_eigenvalues_lanczos, cov, V.shape[0]))
    return SparseComponents(components=tuple(comps), deflation=deflation,
                            n_requested=n_components, explained=explained, message=message,
                            seconds=time.perf_counter() - t0, n_features=cov.n)


def _carried_bound(work: _DeflatedCovariance, k: int,
                   previous: tuple[int, float] | None) -> float:
    """A bound on ``x' Sigma_t x`` over unit ``x`` with at most ``k`` nonzeros
    from the previous component's (``previous``: its ``k`` and certified
    bound, for ``Sigma_{t-1}``), or ``inf``.

    A Schur complement deflation subtracts ``a a' / c`` (``c > 0``) from the
    operator before it, whatever the rounding of ``a``: ``Sigma_t <=
    Sigma_{t-1}`` in the PSD order, and the largest eigenvalue of every
    principal block can only go down.  A removal zeroes rows and columns: the
    blocks of ``Sigma_t`` are blocks of ``Sigma_{t-1}`` or have zero rows.
    Either way a bound on ``k_{t-1}``-sparse vectors of ``Sigma_{t-1}`` holds
    for ``Sigma_t`` when ``k <= k_{t-1}``.  The operators differ from those
    exact updates on the diagonal only: a deflated variance below its floor
    reads as 0 (lowering it by at most the floor) and one that rounding made
    negative reads as 0 (raising it by ``raised``); their ``k`` largest sums
    are added, and a rounding margin for the low-rank term.  (Projection
    deflation gets no carried bound: ``(I - x x') Sigma (I - x x')`` is not
    below ``Sigma``.)
    """
    if previous is None or k > previous[0] or not math.isfinite(previous[1]):
        return math.inf
    shift = _ksparse.diagonal_bound(work.floor + work.raised, k)
    return bound_margin(previous[1] + shift, k * (work.L.shape[1] + 1))


def _top_pair(B: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """:func:`spca._ksparse.spread_top` of ``B`` from its two largest
    eigenpairs only when the largest eigenvalue is simple (50 x 50: 0.08
    against 0.19 ms, one thread), else from every eigenpair as it does."""
    from scipy.linalg import eigh

    m = B.shape[0]
    if m < 3:
        return _ksparse.spread_top(B)
    w, V = eigh(B, subset_by_index=[m - 2, m - 1])
    top = float(w[-1])
    if w[0] >= top - _ksparse.DEGENERATE_RTOL * max(abs(top), np.finfo(float).tiny):
        return _ksparse.spread_top(B)
    return _ksparse.spread_in(B, V[:, -1:])


def _late_answer(work: _DeflatedCovariance, k: int, tol: float,
                 carried: float) -> CardinalityResult | None:
    """The answer of a component whose search would start past the caller's
    time limit, with ``O(n k)`` work and no ``n x n`` block: the support
    that :func:`spca._path._search` makes there (one forward greedy step, the
    feature ``i`` of largest deflated variance, completed by the ``k - 1``
    features of largest ``|Sigma_t[i, j]|``, ties to the larger variance:
    one row of ``Sigma_t``, from the base and the low-rank term), its
    ``k x k`` block's leading eigenvector, and the bound of
    :func:`_carried_bound` or of the ``k`` largest deflated variances
    (features outside the operator at ``outside_variance``), whichever is
    smaller.  ``None`` when the block's leading eigenvector has fewer than
    ``k`` nonzeros (the search's equal-variance swaps are then left to it).
    """
    t_start = time.perf_counter()
    d = work.diag
    pos = np.flatnonzero(d > 0)
    i = int(pos[np.argmax(d[pos])])  # (the first of equal variances)
    e = np.zeros(work.n)
    e[i] = 1.0
    row = work.matvec(e)  # (Sigma_t[i, :], O(n) on a dense base)
    others = pos[pos != i]
    order = np.lexsort((-d[others], -np.abs(row[others])))
    S = np.sort(np.concatenate([[i], others[order[:k - 1]]])).astype(np.intp)
    variance, v = _top_pair(work.block(S))
    if np.count_nonzero(v) < k:
        return None
    loadings = np.zeros(work.n)
    loadings[S] = v
    bound = min(_ksparse.diagonal_bound(d, k, work.outside_variance), carried)
    view = work.dense_view() if work.outside_variance == 0 else None
    if view is not None and not math.isfinite(carried) and not work.L.shape[1]:
        # (the first component: Gershgorin's bound from the rows that can
        # reach it, as the search makes it; the view's diagonal is at least
        # the operator's, whose floors only lower it)
        bound = min(bound, k_sparse_row_bound(view, k, work.offdiag_rowmax()))
    bound = _certified(bound, k, variance)
    message = (f"no DSPCA solve: {_STOP_REASONS[STATUS_TIME_LIMIT]}: the best answer and "
               f"bound so far (the limit had passed when it would start); support: greedy, "
               f"certified ratio {variance / bound if bound > 0 else math.nan:.4f}")
    seed = _empty_result(work.n, float(d.max()), tol, True, t_start)
    return CardinalityResult(
        result=seed, k=k, relaxation_exact=False, message=message, trials=(),
        bracket=(math.nan, float(np.partition(d, d.size - k)[d.size - k])),
        seconds=time.perf_counter() - t_start, support=S, loadings=loadings,
        explained_variance=variance, origin="greedy", variance_upper_bound=bound,
        bound_lam=math.nan, status=STATUS_TIME_LIMIT,
    )


def _sparse_bound(work: _Covariance, m: int, solves: Any) -> float:
    """Certified bound on ``x' Sigma_t x`` over unit ``x`` with at most ``m``
    nonzeros: the ``m`` largest variances, and ``U + lam m`` of every solve
    (a trial or a result: ``lam`` and ``upper_bound``) at a ``lam`` above any
    variance left out of the operator; with its rounding margin."""
    floor = work.outside_variance
    bound = _ksparse.diagonal_bound(work.diag, m, floor)
    for r in solves:
        if r.lam >= floor and math.isfinite(r.upper_bound):
            bound = min(bound, r.upper_bound + r.lam * m)
    return bound_margin(bound, m)


def _refit(cov: _Covariance, support: NDArray[np.intp]) -> NDArray[np.float64]:
    """Unit loadings of largest variance on ``support``: the leading eigenvector
    of ``Sigma[support][:, support]``, largest-magnitude entry positive."""
    _, vecs = np.linalg.eigh(cov.block(support))
    v = vecs[:, -1]
    if v[np.argmax(np.abs(v))] < 0:
        v = -v
    x = np.zeros(cov.n)
    x[support] = v
    return x


def _check_sparsity(cardinality: Any, lam: Any, n_components: int,
                    n_features: int) -> tuple[list[int] | None, list[float] | None]:
    if (cardinality is None) == (lam is None):
        raise ValueError(
            f"give exactly one of cardinality and lam, got cardinality={cardinality!r} "
            f"and lam={lam!r}"
        )
    cards = _per_component(cardinality, n_components, "cardinality",
                           lambda v: check_int(v, "cardinality"))
    lams = _per_component(lam, n_components, "lam", check_lam)
    if cards is not None and max(cards) > n_features:
        raise ValueError(
            f"cardinality must be <= n_features = {n_features}, got {max(cards)}"
        )
    return cards, lams


def sparse_components(
    Sigma: ArrayLike,
    n_components: int,
    *,
    cardinality: int | Sequence[int] | None = None,
    lam: float | Sequence[float] | None = None,
    deflation: Deflation = "schur",
    tol: float = 1e-6,
    search_tol: float | None = None,
    max_solves: int = 40,
    lam_rtol: float = 1e-4,
    max_sweeps: int = 500,
    max_qp_passes: int = 5,
    qp_tol: float = 1e-3,
    qp_finish: bool = True,
    refit: bool = True,
    optimality_gap: float | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
) -> SparseComponents:
    r"""Several sparse principal components of a covariance matrix, by deflation.

    Component ``t`` solves the DSPCA relaxation

    .. code-block:: text

        max  Tr(Sigma_t Z) - lam_t * sum_ij |Z_ij|   over Z PSD, Tr Z = 1

    with :func:`spca.dspca_bca` on the deflated covariance ``Sigma_t``
    (``Sigma_0 = Sigma``), either at a given ``lam_t`` or at the ``lam_t``
    found by :func:`dspca_cardinality` for a target cardinality; then
    ``Sigma_{t+1}`` is ``Sigma_t`` deflated by the component's loadings.

    Parameters
    ----------
    Sigma : array-like or scipy.sparse matrix of shape (n_features, n_features)
        Symmetric positive semidefinite covariance matrix (not modified).
    n_components : int
        Number of components wanted (``>= 1``).
    cardinality : int or sequence of int, optional
        Target number of nonzero loadings, for all components or one per
        component. Exactly one of ``cardinality`` and ``lam`` must be given.
    lam : float or sequence of float, optional
        Penalty, for all components or one per component.
    deflation : {"schur", "projection", "removal"}, default="schur"
        ``"schur"``: Schur complement ``Sigma - Sigma x x' Sigma / (x' Sigma x)``
        (Mackey 2008; keeps PSD and annihilates all earlier loadings).
        ``"projection"``: ``(I - x x') Sigma (I - x x')``. ``"removal"``: drop
        the features of the support (disjoint supports).
    tol, search_tol, max_solves, lam_rtol :
        As for :func:`dspca_cardinality` (``tol`` also for fixed ``lam``).
    max_sweeps, max_qp_passes, qp_tol, qp_finish :
        Passed to :func:`spca.dspca_bca`.
    refit : bool, default=True
        Loadings of largest variance on the support: the leading eigenvector
        of ``Sigma_t`` restricted to it (Moghaddam et al.'s "variational
        renormalisation"). With a ``cardinality`` the support is the one of
        ``k`` features that :func:`dspca_cardinality` returns (the
        relaxation's, or built from it and improved by swaps; fewer only
        when the best variance found needs fewer nonzeros). With
        ``False`` the component is the relaxation's own answer at ``lam``:
        its support and the solver's loadings
        (:attr:`DSPCAResult.loadings`, which the ``l1`` penalty shrinks
        towards equal magnitudes), with a warning when that support does not
        have ``k`` features.
    optimality_gap : float, optional
        With a ``cardinality``: prove each component optimal for its deflated
        covariance, as :func:`dspca_cardinality` does (branch and bound to
        this relative gap, within ``time_limit``, or 60 s per component
        without one); ``component.search.status`` says how each ended.
    time_limit : float, optional
        Seconds for all the components (with a ``cardinality``), counted
        from the call and planned to 80% of them (see
        :func:`dspca_cardinality`): each component's search gets the time left but 10%
        of it for each later component (at least an equal share; what it
        leaves unused goes to the later ones) and returns
        by then with its best answer and bound so far (see
        :func:`dspca_cardinality`), each but the last ending early by the
        time the call's checks of the matrix took, once per later
        component (a reserve: a later component's answer past the limit
        costs far less); once the limit has passed, each remaining
        component gets the answer without a search, in ``O(n k)``
        operations and no ``n x n`` block: the feature of largest deflated
        variance and the ``k - 1`` features most coupled to it (one row
        of the deflated covariance), the leading eigenvector of their
        ``k x k`` block, and the smallest of the bounds that need no
        solve: the sum of the ``k`` largest deflated variances,
        Gershgorin's bound for the first component, and for ``"schur"``
        and ``"removal"`` the previous component's bound (both deflations
        only lower every ``k x k`` block's largest eigenvalue; for a
        ``k`` up to the previous one's).  A ``"projection"`` deflation's
        later components keep the search's answer past the limit, with
        Gershgorin's bound of the deflated block (``O(n^2)`` each).  Under
        a limit, the PCA
        variances of :attr:`SparseComponents.explained` of a dense matrix
        are computed on first access (by Lanczos), not by the call.
        ``status`` (of each component's ``search`` and of the result) says
        ``"time_limit"``, or ``"interrupted"`` after Ctrl-C.
    verbose : bool, default=False
        Print the progress of each search.

    Returns
    -------
    result : SparseComponents
        ``components`` (each with its own ``lam``, ``support``, ``loadings``,
        ``objective``, certified ``gap``), ``loadings`` (rows), ``lambdas``
        and ``explained`` (explained variance on the original ``Sigma``).

    Raises
    ------
    ValueError
        If both or neither of ``cardinality`` and ``lam`` are given, if a
        cardinality is outside ``[1, n_features]``, if ``lam`` eliminates every
        feature for the first component, for an unknown ``deflation`` and for
        invalid ``Sigma`` (as :func:`spca.dspca_bca`).

    Warns
    -----
    DeflationWarning
        When fewer than ``n_components`` components can be computed (no
        variance left, fewer features left than the cardinality, or every
        feature eliminated at ``lam``); the components found so far are
        returned, never NaN.
    UserWarning
        With ``refit=False``, when the relaxation's own support does not have
        the requested cardinality; the component's bound and ratio then refer
        to that support's size.
    ConvergenceWarning
        When a component is the relaxation's own answer (a given ``lam``, or
        ``refit=False``) and its solve stopped short of ``tol``. With a
        cardinality and ``refit=True`` an unconverged solve raises no
        warning: the support is built and certified without relying on it
        (its component says ``converged=False`` and the search's ``message``
        says why).

    Notes
    -----
    The objective, bound and gap of component ``t`` refer to the deflated
    ``Sigma_t``, and so does its ``variance_upper_bound``: it bounds the
    variance of the best ``k``-sparse component of ``Sigma_t``, i.e. of the
    best next component given the earlier ones (each step is certified,
    not the set of components jointly). The deflated matrices are not formed:
    they are represented as ``Sigma`` plus a low-rank term (or a feature mask
    for ``"removal"``), and only the blocks needed by the solves are
    computed. Deflated variances below ``1e-10`` times their own original
    variance are treated as 0.

    Examples
    --------
    >>> import numpy as np
    >>> from spca import sparse_components
    >>> rng = np.random.default_rng(0)
    >>> F = rng.standard_normal((300, 12))
    >>> F[:, 0:3] += 3 * rng.standard_normal((300, 1))
    >>> F[:, 6:9] += 2 * rng.standard_normal((300, 1))
    >>> res = sparse_components(F.T @ F / 300, 2, cardinality=3)
    >>> [c.support.tolist() for c in res.components]
    [[0, 1, 2], [6, 7, 8]]
    """
    n_components = check_int(n_components, "n_components")
    deflation = _check_deflation(deflation)
    tol = check_tol(tol)
    search_tol = tol if search_tol is None else max(check_tol(search_tol), tol)
    max_solves = check_int(max_solves, "max_solves")
    lam_rtol = check_positive(lam_rtol, "lam_rtol")
    max_sweeps = check_int(max_sweeps, "max_sweeps")
    options = _solver_options(max_qp_passes, qp_tol, qp_finish)
    verbose = check_bool(verbose, "verbose")
    limit = TimeLimit.caller(check_time_limit(time_limit))
    if not isinstance(refit, bool | np.bool_):
        raise TypeError(f"refit must be True or False, got {refit!r}")
    proof = _proof_options(optimality_gap, time_limit, cardinality)
    # An operator the package formed itself is taken as is (see
    # _MatrixCovariance.formed), and its PCA eigenvalues are left to the
    # first access of explained.pca_variance (the text pipeline never reads
    # them).
    internal = isinstance(Sigma, _MatrixCovariance)
    cov = Sigma if internal else _MatrixCovariance(Sigma)
    cards, lams = _check_sparsity(cardinality, lam, n_components, cov.n)
    # (so is a dense matrix's copy under a time limit: the call returns
    # without that eigensolve)
    lazy = internal or (limit.limited and cov.dense_view() is not None)
    return _components(cov, n_components, cardinality=cards, lam=lams, deflation=deflation,
                       refit=bool(refit),
                       tol=tol, search_tol=search_tol, max_solves=max_solves,
                       lam_rtol=lam_rtol, max_sweeps=max_sweeps, options=options,
                       verbose=verbose, lazy_pca=lazy, limit=limit, proof=proof)


def _proof_options(optimality_gap: Any, time_limit: Any, cardinality: Any) -> float | None:
    """The ``optimality_gap`` of the branch and bound, or ``None``."""
    gap, _ = check_proof_options(optimality_gap, time_limit)
    if gap is not None and cardinality is None:
        raise ValueError(
            f"optimality_gap={optimality_gap!r} asks for a proof of the best k features, "
            f"which needs a cardinality (not lam)")
    return gap


def _top_eigenvalues_lanczos(cov: Any, q: int) -> NDArray[np.float64]:
    """The ``q`` largest eigenvalues of ``cov`` (descending, clipped at 0) by
    Lanczos on its products, for a call under a time limit: on the 500
    genes of ``tissue_gene_expression`` (one thread) 1.6 ms against 12-15 ms
    for ``cov.top_eigenvalues``' dense subset eigensolve, on NCI60's 2,000
    genes 50 ms against 0.5-0.9 s, the values equal to 1e-15 relative there
    (ARPACK's tolerance is 1e-10).  Without a limit the dense values stay
    (bit-identical results); the dense path also when ``q >= n - 1`` or
    Lanczos fails.
    """
    from scipy.sparse.linalg import ArpackError, LinearOperator, eigsh

    n = cov.n
    q = min(int(q), n)
    if q <= 0 or q >= n - 1:
        return cov.top_eigenvalues(q)
    # (a dense matrix held by the operator is multiplied directly: no
    # operator call per product; for SparsePCA.fit, the covariance the PSD
    # check formed instead of two products with X per step: the NYT counts,
    # 8,447 x 500, 0.19 s of CPU -> a few ms)
    view = cov.dense_view() if hasattr(cov, "dense_view") else None
    if view is None and hasattr(cov, "whole_block"):
        view = cov.whole_block()
    op = view if view is not None else LinearOperator((n, n), matvec=cov.matvec,
                                                      dtype=np.float64)
    try:
        vals = eigsh(op, k=q, which="LA", return_eigenvectors=False,
                     v0=np.ones(n) / np.sqrt(n), tol=1e-10)
    except ArpackError:
        return cov.top_eigenvalues(q)
    return np.maximum(np.sort(vals)[::-1], 0.0)
