"""DSPCA by block coordinate ascent (Zhang & El Ghaoui 2011, Algorithm 1).

This is the algorithm layer: it validates, eliminates features (Theorem 1),
scales, allocates, runs sweeps of the compiled column updates
(``spca._bca_fast``), lowers the barrier parameter, stops on a certified
duality gap and builds the result.  See ``spca/_certificate.py`` for how the
bounds are obtained.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike, NDArray

from . import _bca_fast
from ._admm import admm_dual
from ._certificate import (
    LANCZOS_MIN,
    MAX_REFINE_SUPPORT,
    QUICK_POWER_STEPS,
    Certificate,
    barrier_matrix,
    certify,
    lambda_max_large,
    leading_eigenvector,
    metzler_bound,
    polish,
    quick_certificate,
    rank_one_dual_matrix,
    relative_gap,
    shift_bound,
    soft_thresholded,
    with_margin,
)
from ._interior import (
    INTERIOR_FALLBACK,
    INTERIOR_MAX,
    INTERIOR_SWEEPS,
    convergence_advice,
    finish_block,
)
from ._limits import (
    STATUS_OPTIMAL,
    STATUS_TIME_LIMIT,
    STATUS_WORK_LIMIT,
    TimeLimit,
    check_time_limit,
    stopwatch,
)
from ._proximal import proximal_dual
from ._screening import safe_feature_elimination
from ._validation import (
    MIN_BETA,
    check_bool,
    check_covariance_shape,
    check_int,
    check_lam,
    check_positive,
    check_psd,
    check_scale,
    check_start,
    check_tol,
    dense_block,
)

__all__ = ["DSPCAResult", "dspca_bca", "ConvergenceWarning", "EmptyProblemWarning"]


class ConvergenceWarning(UserWarning):
    """The solver stopped before its certified gap reached ``tol``."""


class EmptyProblemWarning(UserWarning):
    """Every feature was eliminated: the result is the empty component."""


@dataclass(frozen=True, repr=False)
class DSPCAResult:
    """Solution of the DSPCA relaxation with its certificate.

    All matrices and vectors are in the caller's feature order and units.
    ``objective <= phi <= upper_bound`` holds for the problem that was solved
    (the reduced one when ``eliminate=True``), converged or not.

    Attributes
    ----------
    Z : ndarray of shape (n_features, n_features)
        The returned primal point: PSD, trace one (zero matrix for an empty
        problem), zero on eliminated features.  Built on access from
        ``Z_reduced`` and ``kept``.
    X : ndarray of shape (n_features, n_features)
        The barrier iterate, for warm starts (pass the result as ``X0``).
    objective : float
        ``Tr(Sigma Z) - lam * ||Z||_1`` of the returned ``Z``.
    upper_bound : float
        ``lambda_max(Sigma + U)`` for a ``U`` with ``|U_ij| <= lam``, or a
        bound above it (Gershgorin's, or its Collatz-Wielandt refinement)
        when the caller's ``time_limit`` ended the solve.
    gap : float
        ``(upper_bound - objective) / upper_bound``.
    converged : bool
        ``gap <= tol``.
    status : {"optimal", "time_limit", "work_limit"}
        Why the solve ended: ``"optimal"`` when ``gap <= tol``,
        ``"time_limit"`` when the caller's ``time_limit`` ended it,
        ``"work_limit"`` when it used up its sweeps (``max_sweeps``, or the
        polish's share of them) first.  The bounds are valid whatever the
        status.
    loadings : ndarray of shape (n_features,)
        Unit-norm leading eigenvector of ``Z``, zero outside ``support``, with
        its largest-magnitude entry positive.
    support : ndarray of int
        Indices of the nonzero entries of ``loadings`` (the rule is in
        :doc:`/user_guide/algorithm`).
    explained_variance : float
        ``loadings' Sigma loadings``.
    kept : ndarray of int
        Features that survived elimination (all features if
        ``eliminate=False``), ascending.
    eliminated : ndarray of int
        Features removed by Theorem 1.
    n_blocks, n_blocks_solved : int
        Number of connected components of the graph ``|Sigma_ij| > lam`` on the
        features solved over, and how many of them had to be solved (see
        :doc:`/user_guide/elimination`).
    """

    Z_reduced: NDArray[np.float64]
    X_reduced: NDArray[np.float64]
    objective: float
    upper_bound: float
    gap: float
    converged: bool
    tol: float
    lam: float
    beta: float
    loadings: NDArray[np.float64]
    support: NDArray[np.intp]
    explained_variance: float
    kept: NDArray[np.intp]
    n_features: int
    eliminate: bool
    n_sweeps: int
    n_qp_passes: int
    primal: str
    dual: str
    timings: dict[str, float]
    history: tuple[tuple[int, float, float, float], ...]
    _dual_columns: NDArray[np.float64] | None = field(default=None, compare=False)
    n_blocks: int = 1
    n_blocks_solved: int = 1
    status: str | None = None

    def __post_init__(self) -> None:
        if self.status is None:
            status = STATUS_OPTIMAL if self.converged else STATUS_WORK_LIMIT
            object.__setattr__(self, "status", status)

    @property
    def reduced_size(self) -> int:
        """Number of features the solver worked on."""
        return int(self.kept.size)

    @property
    def eliminated(self) -> NDArray[np.intp]:
        """Features removed by the safe elimination test."""
        mask = np.ones(self.n_features, dtype=bool)
        mask[self.kept] = False
        return np.flatnonzero(mask).astype(np.intp)

    def _embed(self, A: NDArray[np.float64]) -> NDArray[np.float64]:
        out = np.zeros((self.n_features, self.n_features))
        out[np.ix_(self.kept, self.kept)] = A
        return out

    @property
    def Z(self) -> NDArray[np.float64]:
        """The primal solution in the caller's feature order."""
        return self._embed(self.Z_reduced)

    @property
    def X(self) -> NDArray[np.float64]:
        """The barrier iterate in the caller's feature order (for warm starts)."""
        return self._embed(self.X_reduced)

    def __repr__(self) -> str:
        status = "converged" if self.converged else "NOT converged"
        if self.support.size <= 12:
            support = str(self.support.tolist())
        else:
            support = f"<{self.support.size} features>"
        # n_sweeps counts the iterations of dspca_first_order
        steps = "iterations" if self.primal == "first-order" else "sweeps"
        return (
            f"DSPCAResult({status}, objective={self.objective:.6g}, "
            f"upper_bound={self.upper_bound:.6g}, gap={self.gap:.2e} (tol={self.tol:g}), "
            f"lam={self.lam:g}, support={support}, "
            f"explained_variance={self.explained_variance:.6g}, "
            f"reduced_size={self.reduced_size}/{self.n_features}, {steps}={self.n_sweeps}, "
            f"time={self.timings.get('total', 0.0):.3g}s, status={self.status})"
        )


# Constants of the stages, each with the measurement that chose it; the
# algorithm and the measurements are in docs/user_guide/algorithm.rst.

# First beta = BETA_START * phi0^2 / n (loose first stage; lowered tenfold).
BETA_START = 1e-3
# Exact box-QP finish up to 128 active coordinates (coordinate descent above).
MAX_ACTIVE = 128


# One BLAS thread at every size (n = 2,000: 150 column updates 7.5 s, 20.5 s on two).
_controller: Any = None


# Depth of the _blas_threads contexts open in this process: only the
# outermost sets the limit (threadpoolctl's limit costs about 0.1 ms, and the
# cardinality searches of spca.text.sparse_topics make some 40 solves).
_blas_depth = 0
_blas_lock = threading.Lock()


def _threadpool_controller(user_api: str = "blas") -> Any:
    """The process's threadpoolctl controller, made once and shared by the
    solver's BLAS limit (:func:`_blas_threads`) and spca.text's one-thread
    OpenMP round (a controller costs about 0.85 ms of CPU to make); a new
    one, not kept, when the shared one was made before a library of
    ``user_api`` (not BLAS, which numpy loads) was loaded."""
    global _controller
    with _blas_lock:
        if _controller is None:
            from threadpoolctl import ThreadpoolController

            _controller = ThreadpoolController()
        if user_api == "blas" or _controller.select(user_api=user_api).lib_controllers:
            return _controller
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()


@contextlib.contextmanager
def _blas_threads(m: int) -> Iterator[None]:
    """Context limiting BLAS to one thread while the solver runs (threadpoolctl).

    ``m`` (the problem size) is unused: the limit applies at every size (see
    docs/user_guide/algorithm.rst, "Threads").  Nested contexts (a caller
    that holds the limit over many solves) reuse the outermost one."""
    global _blas_depth
    controller = _threadpool_controller()
    with _blas_lock:
        outer = _blas_depth == 0
        _blas_depth += 1
    try:
        if outer:
            with controller.limit(limits=1, user_api="blas"):
                yield
        else:
            yield
    finally:
        with _blas_lock:
            _blas_depth -= 1


def _default_beta(phi: float, n: int, tol: float) -> float:
    """Smallest barrier parameter the continuation goes down to.

    For the exact barrier optimum, the barrier dual bound exceeds the primal
    value by at most ``n * beta / Tr X`` (with ``Tr X`` close to ``phi``); half of
    ``tol`` of that margin gives ``beta = tol * phi^2 / (2 n)`` (the paper's
    ``beta = eps / n`` for the squared objective ``phi^2 / 2``).
    """
    return 0.5 * tol * phi * phi / n


def diagonal_matrix(d: np.ndarray) -> np.ndarray:
    """``np.diag(d)`` for a vector ``d``, written through a strided view of a
    zeroed array (4-9 times faster than ``np.diag`` at 800-1000 features)."""
    m = d.shape[0]
    out = np.zeros((m, m))
    out.reshape(-1)[:: m + 1] = d
    return out


def _inverse(X: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Inverse of the symmetric positive definite X, C-contiguous.

    ``out`` (an m x m C-contiguous float64 array, e.g. the one of the
    previous sweep) receives it; a new array by default.  The values are
    those of ``dpotrf`` / ``dpotri`` on the upper triangle, mirrored (see
    :func:`spca._bca_fast.spd_inverse`), whatever ``out`` held before.
    """
    if out is None:
        out = np.empty(X.shape)
    info = _bca_fast.spd_inverse(X, out)
    if info != 0:  # pragma: no cover - the updates keep X positive definite
        raise np.linalg.LinAlgError(f"barrier iterate lost definiteness (potrf info={info})")
    return out


# New warm-start features start at 0.1 x the cold diagonal (fewer sweeps than 1e-3 or 1).
NEW_DIAG = 0.1


def _start_diagonal(X0: Any, kept: np.ndarray, scale: float, phi0: float) -> np.ndarray:
    """The diagonal of the iterate :func:`_start` would build (``X0`` already valid)."""
    m = kept.size
    if X0 is None:
        return np.full(m, phi0 / m)
    if isinstance(X0, DSPCAResult):
        d = np.zeros(X0.n_features)
        d[X0.kept] = np.diag(X0.X_reduced)
    else:
        d = np.diag(np.asarray(X0, dtype=np.float64))
    d = d[kept] / scale
    d[d == 0] = NEW_DIAG * phi0 / m
    return d


def _soft_threshold(S: np.ndarray, lam: float) -> np.ndarray:
    """``sign(S) * max(|S| - lam, 0)`` with diagonal ``S_ii - lam``, C-ordered,
    as ``S - clip(S, -lam, lam)``: the same values (``-(|s| - lam)`` is
    ``s + lam`` exactly; a zero may lose its sign) in two sweeps without
    temporaries (``np.sign`` is slow: at 800 features 0.3 ms against 4 ms)."""
    M = np.clip(S, -lam, lam, order="C")
    np.subtract(S, M, out=M)
    np.fill_diagonal(M, np.diag(S) - lam)
    return M


def _start(S: np.ndarray, lam: float, phi0: float, X0: Any, kept: np.ndarray,
           scale: float, checked: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Initial barrier iterate and dual columns (normalised units).

    ``checked``: ``X0`` comes from an earlier solve of this package (a
    principal block of a positive definite iterate), so it is not validated.
    """
    m = S.shape[0]
    if X0 is None:
        return np.eye(m) * (phi0 / m), _soft_threshold(S, lam)
    if isinstance(X0, DSPCAResult):
        full = X0.X
        if X0._dual_columns is not None and np.array_equal(X0.kept, kept):
            M = X0._dual_columns.copy()
        else:
            M = _soft_threshold(S, lam)
    else:
        M = _soft_threshold(S, lam)
        full = np.asarray(X0, dtype=np.float64)
    if not checked:
        n = full.shape[0] if full.ndim == 2 else -1
        if full.ndim != 2 or full.shape[0] != full.shape[1]:
            raise ValueError(f"X0 must be a square matrix, got shape {np.shape(full)}")
        if not np.all(np.isfinite(full)):
            raise ValueError("X0 must be finite, got NaN or inf entries")
        if kept.size and kept.max() >= n:
            raise ValueError(f"X0 has {n} features but Sigma has more (feature {kept.max()})")
    X = full[np.ix_(kept, kept)] / scale
    X = 0.5 * (X + X.T)
    # Features new to the iterate (e.g. eliminated at the previous lam, so
    # their row of X0 is zero) get a small diagonal entry.
    new = ~X.any(axis=1)
    X[new, new] = NEW_DIAG * phi0 / m
    if not checked:
        try:
            sla.cholesky(X, lower=True)
        except sla.LinAlgError:
            raise ValueError(
                "X0 restricted to the features solved over is not positive definite"
            ) from None
    return np.ascontiguousarray(X), np.ascontiguousarray(M)


class _Deadline:
    """The caller's time limit (seconds, a :class:`~spca._limits.TimeLimit`
    or ``None``), remembering once it has passed (so that the result can say
    the limit ended the solve).  Without a limit the clock is never read."""

    __slots__ = ("limit", "hit")

    def __init__(self, limit: TimeLimit | float | None = None) -> None:
        if limit is None:
            limit = TimeLimit(None, start=0.0)  # no limit: no clock reading at all
        self.limit = TimeLimit.coerce(limit)
        self.hit = False

    def expired(self) -> bool:
        if not self.hit and self.limit.expired():
            self.hit = True
        return self.hit


@dataclass(frozen=True)
class _SolveOptions:
    """The solver's options, validated once by the entry points and passed
    down the stages (block split, working sets, sweeps, polish).

    ``polish``: a solve whose sweeps stall from ``POLISH_MIN_SWEEPS`` on
    switches to the polish's iterations (see :func:`_sweeps`); ``purge``:
    the sweeps continue from a working-set iterate (see ``PURGE_CAP``);
    ``scale``: the largest variance, by which the solver's units were
    divided (for the bounds it prints and records); ``deadline``: the
    caller's time limit, the one clock a decision may read.
    """

    tol: float = 1e-6
    max_sweeps: int = 500
    max_qp_passes: int = 5
    qp_tol: float = 1e-3
    qp_finish: bool = True
    beta: float | None = None
    working_set: bool | None = None
    refine: bool = True
    give_up: bool = False
    settle: bool = False
    polish: bool = False
    purge: bool = False
    verbose: bool = False
    scale: float = 1.0
    deadline: _Deadline = field(default_factory=_Deadline, compare=False)

    @property
    def out_of_time(self) -> bool:
        """Whether the caller's time limit has passed (no clock without one)."""
        return self.deadline.expired()


def dspca_bca(
    Sigma: ArrayLike,
    lam: float,
    beta: float | None = None,
    *,
    tol: float = 1e-6,
    max_sweeps: int = 500,
    eliminate: bool = True,
    X0: ArrayLike | DSPCAResult | None = None,
    max_qp_passes: int = 5,
    qp_tol: float = 1e-3,
    qp_finish: bool = True,
    working_set: bool | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
) -> DSPCAResult:
    r"""Sparse PCA by the DSPCA relaxation, solved by block coordinate ascent.

    Solves

    .. code-block:: text

        phi = max  Tr(Sigma Z) - lam * sum_ij |Z_ij|   over Z PSD, Tr Z = 1
            = min  lambda_max(Sigma + U)                over U symmetric, |U_ij| <= lam

    through the log-barrier problem of Zhang & El Ghaoui (2011)

    .. code-block:: text

        max  Tr(Sigma X) - lam ||X||_1 - (Tr X)^2 / 2 + beta log det X ,  Z = X / Tr X

    updating one row and column of ``X`` at a time (Algorithm 1), and stops
    when a certified relative duality gap is below ``tol``.

    Parameters
    ----------
    Sigma : array-like or scipy.sparse matrix of shape (n_features, n_features)
        Symmetric positive semidefinite covariance matrix. A sparse matrix is
        screened by its diagonal first and only the surviving block is made
        dense. Integer and float32 input is converted to float64 (all
        computation is in float64); the caller's array is not modified.
    lam : float
        Sparsity penalty, ``lam >= 0``.
    beta : float, optional
        Barrier parameter. If given, it is used throughout (the paper's
        setting). By default the solver starts at ``1e-3 * phi0^2 / n``, with
        ``phi0 = max_i Sigma_ii - lam`` and ``n`` the reduced size, and lowers
        it tenfold whenever the barrier problem is solved to its own accuracy
        and the gap is not yet certified, down to ``tol * phi0^2 / (2 n)``.
        Either way scaling ``Sigma`` and ``lam`` by ``c`` scales beta by
        ``c^2`` and gives the same ``Z``.  At least ``1e-20`` times the
        squared largest variance.
    tol : float, default=1e-6
        Target relative duality gap ``(upper_bound - objective) / upper_bound``,
        in ``[1e-12, 1)``.
    max_sweeps : int, default=500
        Maximum number of sweeps over all columns.  It also bounds the
        polish, whose work is counted in sweeps (see the user guide).
    eliminate : bool, default=True
        Apply Theorem 1 first and solve the relaxation on the features with
        ``Sigma_ii > lam`` only (the paper's method). With ``False`` the
        relaxation is solved on all features (see Notes).
    X0 : array-like of shape (n_features, n_features) or DSPCAResult, optional
        Warm start: a positive definite barrier iterate, typically
        ``result.X`` or the result itself (which also reuses its dual columns)
        from a nearby ``lam``.  An array must be real, symmetric, positive
        semidefinite and of the shape of ``Sigma``.  Features whose row of ``X0`` is zero (e.g.
        eliminated at the earlier ``lam``) start at a tenth of the
        cold start's diagonal.
    max_qp_passes : int, default=5
        Coordinate-descent passes per box QP and column update.
    qp_tol : float, default=1e-3
        A QP stops early after a pass in which no coordinate moved by more than
        ``qp_tol * lam``.
    qp_finish : bool, default=True
        After one coordinate-descent pass, solve each box QP exactly by an
        active-set method that reads ``Y^-1`` off an inverse of ``X`` kept
        current by rank-one updates (for active sets of up to 128
        coordinates; larger ones fall back to coordinate descent). With
        ``False`` the QP is solved by coordinate descent alone, as in the
        paper; its dual variables are then too inexact for a tight barrier
        bound and the certificate relies on the rank-one construction.
    working_set : bool or None, default=None
        Solve a connected block by working sets (see the user guide): ``None``
        does so for blocks of at least 400 features, ``True`` for every block
        of two or more, ``False`` never. The certificate is the same either
        way.
    time_limit : float, optional
        Seconds after which the solve stops with the best bounds so far
        (``status == "time_limit"``; its work is planned to 80% of them,
        the rest kept for what follows the last check and for a busy
        machine), checked inside every sweep (between
        chunks of columns), between the working sets and inside the polish
        iterations.  The iterate where the limit strikes gets bounds of
        ``O(n^2)`` flops, no eigensolve of the whole problem: Gershgorin's
        bound (refined by a few power steps) on two dual-feasible
        ``Sigma + U`` and the objective of the iterate and of rank-one
        vectors read off it, kept with the best of the earlier checks; so a
        limit below the first certificate gives a valid but loose gap.  The
        input checks (one Cholesky factorisation) are made however short the
        limit.  ``None`` (the default): no limit, and the result does not
        depend on the machine's speed or load.
    verbose : bool, default=False
        Print the bounds after every sweep (and every working-set round).

    Returns
    -------
    result : DSPCAResult
        The primal ``Z``, its ``objective``, the certified ``upper_bound``
        and ``gap``, ``status`` (``"optimal"``, ``"time_limit"`` or
        ``"work_limit"``), the ``loadings`` and their ``support``, the
        features ``kept`` by elimination, and ``X`` for warm starts; see
        :class:`DSPCAResult`.

    Raises
    ------
    ValueError
        If ``Sigma`` is not square, not symmetric, holds NaN or inf, has a
        negative diagonal entry or is not positive semidefinite on the features
        solved over, or has its largest variance outside ``[1e-290, 1e150]``
        (rescale ``Sigma`` and ``lam`` together); if ``lam < 0``, ``beta`` is
        below ``1e-20`` times the squared largest variance, ``tol`` is outside
        ``[1e-12, 1)``, ``time_limit`` is not a number of seconds ``> 0``, or
        ``X0`` is not positive semidefinite (or not positive definite on the
        features solved over).
    TypeError
        If an argument has the wrong type (e.g. a string or complex matrix,
        or a bool option that is not ``True`` or ``False``).

    Warns
    -----
    ConvergenceWarning
        When the solve ends with ``gap > tol``: ``max_sweeps`` was reached or
        the polish of stalled sweeps ended it (``status == "work_limit"``; the
        message says whether more sweeps would help, and about how many), or
        ``time_limit`` ended it (``status == "time_limit"``; the message says
        so).  The bounds hold either way.
    EmptyProblemWarning
        When no feature has ``Sigma_ii > lam``: the result has an empty support,
        ``Z = 0`` and objective 0 (the value of the penalised cardinality
        problem for the empty pattern).  With ``eliminate=False`` it is the
        exact optimum of the relaxation instead, ``Z = e_i e_i'`` at the
        largest variance, of value ``Sigma_ii - lam <= 0``.

    Notes
    -----
    The same input gives the same result on a quiet or a loaded machine
    (with the same BLAS; the solver runs BLAS on one thread): every decision
    inside the solver counts work -- sweeps and the iterations of the polish
    -- and only ``time_limit`` reads a clock.  To steer a solve: ``tol`` and
    ``max_sweeps`` bound the accuracy and the work, ``time_limit`` the time,
    ``X0`` warm-starts from a nearby ``lam``, and ``eliminate`` and
    ``working_set`` choose how the problem is reduced.  Blocks of at most 60
    features that the sweeps do not certify are finished by a primal-dual
    interior-point method (``primal == "interior point"``).  With
    ``eliminate=True`` all bounds refer to the reduced problem (Theorem 1
    is exact for the cardinality problem, not for the relaxation).  How the
    sweeps, the stopping rule, the certificate, the polish, the working sets
    and the support rule work is described in :doc:`/user_guide/algorithm`.

    References
    ----------
    Y. Zhang and L. El Ghaoui, "Large-Scale Sparse Principal Component Analysis
    with Application to Text Data", NIPS 2011.
    A. d'Aspremont, F. Bach and L. El Ghaoui, "Optimal Solutions for Sparse
    Principal Component Analysis", JMLR 9, 2008.

    Examples
    --------
    >>> import numpy as np
    >>> import spca
    >>> rng = np.random.default_rng(0)
    >>> F = rng.standard_normal((100, 20))
    >>> Sigma = F.T @ F / 100
    >>> res = spca.dspca_bca(Sigma, lam=0.3)
    >>> bool(res.converged), res.gap <= 1e-6
    (True, True)
    """
    t_start = stopwatch()
    lam = check_lam(lam)
    seconds = check_time_limit(time_limit)
    if beta is not None:
        beta = check_positive(beta, "beta")
    if working_set is not None and not isinstance(working_set, bool | np.bool_):
        raise TypeError(f"working_set must be True, False or None, got {working_set!r}")
    opts = _SolveOptions(
        tol=check_tol(tol), max_sweeps=check_int(max_sweeps, "max_sweeps"),
        max_qp_passes=check_int(max_qp_passes, "max_qp_passes"),
        qp_tol=check_positive(qp_tol, "qp_tol"), qp_finish=check_bool(qp_finish, "qp_finish"),
        beta=beta, working_set=None if working_set is None else bool(working_set),
        polish=True, verbose=check_bool(verbose, "verbose"),
        deadline=_Deadline(None if seconds is None else TimeLimit.caller(seconds)))
    tol = opts.tol
    S_in, n, kept = _screen(Sigma, lam, eliminate)
    t_elim = stopwatch()
    if X0 is not None:
        check_start(X0, n)
    if kept.size == 0:
        return _empty_result(n, lam, tol, bool(eliminate), t_start, S_in)
    if beta is not None:
        top = float(np.max(S_in.diagonal()))
        if beta < MIN_BETA * top * top:
            raise ValueError(
                f"beta must be >= {MIN_BETA:g} x (largest variance)^2 = "
                f"{MIN_BETA * top * top:.3g} (smaller barrier parameters lose the iterate's "
                f"definiteness in double precision), got {beta!r}"
            )

    with _blas_threads(kept.size):
        return _solve(S_in, kept, n, lam, X0, opts, eliminate=bool(eliminate),
                      started=(t_start, t_elim))


def _dspca_bca_checked(B: np.ndarray, lam: float, *, tol: float, max_sweeps: int,
                      X0: Any, max_qp_passes: int, qp_tol: float, qp_finish: bool,
                      verbose: bool = False,
                      working_set: bool | None = None, refine: bool = True,
                      give_up: bool = False, settle: bool = False,
                      time_limit: TimeLimit | float | None = None) -> DSPCAResult:
    """:func:`dspca_bca` on a block that its caller has already validated.

    For the inner solves of the cardinality search: ``B`` must be a
    symmetric, finite, positive semidefinite, C-contiguous float64 principal
    block of a validated covariance with every diagonal entry ``> lam``
    (so Theorem 1 keeps every feature), and ``X0`` ``None`` or an iterate of
    an earlier solve.  Skips the ``O(n^2)`` checks and the ``O(n^3)`` PSD
    test that :func:`dspca_bca` runs on every call.  ``refine=False`` skips
    the support refinement (for a solve whose caller needs the support, not
    a tight gap: its bounds are valid either way).  ``give_up=True`` stops
    the sweeps early once the gap's recent rate of decrease shows that
    ``tol`` cannot be reached within ``max_sweeps`` (see ``GIVE_UP_MIN``);
    the result is then reported not converged, as it would have been.
    ``settle=True``: when the working sets leave the whole block at most one
    sweep, the best round's certificate is returned instead of that sweep
    (see :func:`_out_of_sweeps`; for a solve whose caller needs its support's
    side of ``k`` or its cut, valid at any gap).
    ``time_limit``: seconds, or a :class:`~spca._limits.TimeLimit` shared
    with the caller's other solves.
    """
    t_start = stopwatch()
    n = B.shape[0]
    kept = np.arange(n, dtype=np.intp)
    opts = _SolveOptions(tol=tol, max_sweeps=max_sweeps, max_qp_passes=max_qp_passes,
                         qp_tol=qp_tol, qp_finish=qp_finish, working_set=working_set,
                         refine=refine, give_up=give_up, settle=settle,
                         polish=refine and not give_up,
                         verbose=verbose, deadline=_Deadline(time_limit))
    with _blas_threads(n):
        return _solve(B, kept, n, lam, X0, opts, eliminate=True, started=(t_start, t_start),
                      checked=True)


def _screen(Sigma: Any, lam: float, eliminate: Any) -> tuple[Any, int, np.ndarray]:
    """Validate ``Sigma`` and apply Theorem 1; return (Sigma, n_features, kept).

    Shared by the solvers. With ``eliminate=False`` every feature is kept
    unless none has a variance above ``lam``. An empty ``kept`` comes with an
    :class:`EmptyProblemWarning` (attributed to the solver's caller).
    """
    eliminate = check_bool(eliminate, "eliminate")
    S_in, diag = check_covariance_shape(Sigma)
    check_scale(diag)
    n = diag.size
    if eliminate:
        kept = safe_feature_elimination(diag, lam)
    else:
        kept = np.arange(n, dtype=np.intp) if diag.max() > lam else np.empty(0, np.intp)
    if kept.size == 0:
        what = ("the solution is the empty component" if eliminate else
                "the solution is the single feature of largest variance, of value "
                "variance - lam <= 0")
        warnings.warn(
            f"every feature has variance <= lam = {lam!r} (largest variance "
            f"{float(diag.max())!r}): {what}",
            EmptyProblemWarning,
            stacklevel=3,
        )
    return S_in, n, kept


def _solve(S_in: Any, kept: np.ndarray, n: int, lam: float, X0: Any, opts: _SolveOptions, *,
           eliminate: bool, started: tuple[float, float], checked: bool = False
           ) -> DSPCAResult:
    """dspca_bca after validation and elimination (kept is not empty).

    ``started``: the stopwatch readings at the call and after elimination
    (for the result's timings only).  ``checked``: ``S_in`` is already the
    symmetric, finite, PSD float64 block over ``kept`` and ``X0`` an
    iterate of this package (see :func:`_dspca_bca_checked`).
    """
    t_start, t_elim = started
    tol = opts.tol
    if checked:
        B = S_in
    else:
        B = dense_block(S_in, kept)
        check_psd(B, kept)
    # Work in units where the largest variance is 1; Z does not change and
    # objective values scale back by `scale`.
    scale = float(B.diagonal().max())
    S = np.ascontiguousarray(B / scale)
    lam_n = lam / scale
    phi0 = 1.0 - lam_n  # = max_i S_ii - lam_n, a lower bound on phi
    blocks = _blocks(S, lam_n)
    n_blocks = len(blocks)
    m_all = S.shape[0]
    kept_all = kept
    cheap = (_cheap_bounds(S, lam_n, blocks, opts.deadline) if n_blocks > 1 or m_all == 1
             else [])
    R = _relevant(S, lam_n, blocks, cheap) if n_blocks > 1 else None
    if R is not None:
        # Only the blocks in R can reach phi (the others are bounded by the
        # value of the best single feature): solve over them alone, without
        # forming any m x m array but the result's.
        S = np.ascontiguousarray(S[np.ix_(R, R)])
        kept = kept[R]
        position = np.full(m_all, -1, dtype=np.intp)
        position[R] = np.arange(R.size)
        inside = [position[b[0]] >= 0 for b in blocks]
        cheap = [c for c, keep in zip(cheap, inside, strict=True) if keep]
        blocks = [position[b] for b, keep in zip(blocks, inside, strict=True) if keep]
    X, M = _start(S, lam_n, phi0, X0, kept, scale, checked)
    t_setup = stopwatch()
    history: list[tuple[int, float, float, float]] = []
    opts = dataclasses.replace(opts, scale=scale)
    if len(blocks) == 1 and blocks[0].size > 1:
        sweep, cert, n_passes, n_exact, t_cert, beta_k = _solve_block(
            S, lam_n, X, M, history, opts)
        n_solved = 1
    else:
        sweep, cert, n_passes, n_exact, t_cert, beta_k, n_solved = _solve_blocks(
            S, lam_n, X, M, blocks, cheap, history, opts)
    t_end = stopwatch()
    # The reported bracket holds in floating point; the margin is applied
    # before the status is decided, so that no result says converged=False
    # without a warning.
    cert = with_margin(cert, S, lam_n)
    if cert.gap <= tol:
        status = STATUS_OPTIMAL
    elif opts.deadline.hit:
        status = STATUS_TIME_LIMIT
        warnings.warn(
            f"dspca_bca was stopped by its time limit (time_limit="
            f"{opts.deadline.limit.seconds:g} s) after {sweep} sweeps with relative gap "
            f"{cert.gap:.3e} > tol = {tol:g}; the bounds are valid; increase time_limit "
            f"or tol", ConvergenceWarning, stacklevel=3)
    else:
        status = STATUS_WORK_LIMIT
        warnings.warn(
            f"dspca_bca stopped after {sweep} sweeps with relative gap {cert.gap:.3e} "
            f"> tol = {tol:g}; " + convergence_advice(
                gap=cert.gap, tol=tol, sweeps=sweep, max_sweeps=opts.max_sweeps, history=history,
                largest_block=max(b.size for b in blocks), polish_from=POLISH_MIN_SWEEPS),
            ConvergenceWarning,
            stacklevel=3,
        )
    res = _build_result(
        cert=cert, S=S, scale=scale, X=X, M=M, kept=kept, n=n, lam=lam, tol=tol,
        beta=beta_k * scale**2, eliminate=eliminate, sweeps=sweep,
        passes=n_passes, history=history, status=status,
        timings={
            "elimination": t_elim - t_start,
            "setup": t_setup - t_elim,
            "sweeps": t_end - t_setup - t_cert,
            "n_exact_qp": float(n_exact),
            "certificate": t_cert,
            "total": t_end - t_start,
        },
        n_blocks=n_blocks,
        n_blocks_solved=n_solved,
    )
    if R is None:
        return res
    # Back to every feature that survived elimination: Z is zero outside R
    # and X diagonal there (as for the blocks left unsolved by
    # _solve_blocks), so that X stays positive definite for warm starts.
    Zf = np.zeros((m_all, m_all))
    Zf[np.ix_(R, R)] = res.Z_reduced
    Xf = diagonal_matrix(_start_diagonal(X0, kept_all, scale, phi0) * scale)
    Xf[np.ix_(R, R)] = res.X_reduced
    return dataclasses.replace(res, Z_reduced=Zf, X_reduced=Xf, kept=kept_all,
                               _dual_columns=None)


# Restrict a split problem to its relevant blocks when that drops >= 25% of features.
RESTRICT_FRACTION = 0.25


# Power steps of the O(size^2) bound of _cheap_bounds once the caller's limit
# has passed (each is a product with the block; the bound holds after any).
CHEAP_LATE_STEPS = 2


def _cheap_bounds(S: np.ndarray, lam: float, blocks: list[np.ndarray],
                  deadline: _Deadline | None = None) -> list[float]:
    """Upper bound of each block's value: ``lambda_max(S_cc - clip(S_cc, -lam, lam))``
    with diagonal ``S_ii - lam`` (exact, ``S_jj - lam``, for a single feature).

    Under the caller's time limit (``deadline``) every block first gets the
    ``O(size^2)`` :func:`~spca._certificate.metzler_bound` of that matrix;
    the blocks, largest bound first, then get the Lanczos bound while the
    limit has not passed (each one an eigensolve-sized verification).
    """
    if deadline is None or not deadline.limit.limited:
        return [float(S[b[0], b[0]]) - lam if b.size == 1
                else _block_bound(S[np.ix_(b, b)], lam) for b in blocks]
    out = []
    for b in blocks:
        if b.size == 1:
            out.append(float(S[b[0], b[0]]) - lam)
            continue
        Sb = S.take(b, axis=0).take(b, axis=1)  # (S[ix_(b, b)], about 3 times faster)
        off = np.abs(Sb)
        off -= lam
        np.maximum(off, 0.0, out=off)
        np.fill_diagonal(off, 0.0)
        # (past the limit: two power steps, not QUICK_POWER_STEPS)
        steps = CHEAP_LATE_STEPS if deadline.expired() else QUICK_POWER_STEPS
        out.append(metzler_bound(np.diag(Sb) - lam, off, steps))
    for i in np.argsort(out, kind="stable")[::-1]:
        if blocks[i].size == 1 or deadline.expired():
            continue
        out[i] = min(out[i], _block_bound(S[np.ix_(blocks[i], blocks[i])], lam))
    return out


def _block_bound(Sb: np.ndarray, lam: float) -> float:
    """``lambda_max(Sb - clip(Sb, -lam, lam))`` with diagonal ``diag(Sb) - lam``,
    bounded from above: the cheap bound of one block (Lanczos verified by a
    shifted Cholesky factorisation for large blocks, see
    :func:`spca._certificate.lambda_max_large`)."""
    base = soft_thresholded(Sb, lam)
    return lambda_max_large(base, target=np.inf)[0]


def _relevant(S: np.ndarray, lam: float, blocks: list[np.ndarray],
              cheap: list[float]) -> np.ndarray | None:
    """Features of the blocks whose cheap bound exceeds the best single feature.

    ``phi = max_c phi_c`` over the blocks ``c`` (see :func:`_blocks`) and
    ``phi_c <= cheap[c]`` (:func:`_cheap_bounds`); a single feature ``i``
    has ``phi = S_ii - lam`` exactly.  So only the feature of largest
    variance and the blocks whose bound exceeds its value can hold the
    solution.  Returns the sorted features of those blocks, or ``None`` when
    they are not much fewer than all.
    """
    m = S.shape[0]
    d = np.diag(S)
    best = int(np.argmax(d))
    floor = float(d[best]) - lam
    keep = [np.array([best], dtype=np.intp)]
    keep += [b for b, c in zip(blocks, cheap, strict=True)
             if b.size > 1 and (c > floor or best in b)]
    R = np.unique(np.concatenate(keep))
    if R.size > (1.0 - RESTRICT_FRACTION) * m:
        return None
    return R


def _blocks(S: np.ndarray, lam: float) -> list[np.ndarray]:
    """Connected components of the graph with an edge where ``|S_ij| > lam``.

    With ``U_ij = -S_ij`` across components (feasible, as ``|S_ij| <= lam``
    there), ``S + U`` is block diagonal, so the dual, and with it the
    relaxation, splits: ``phi = max_c phi(S_cc)``.
    """
    m = S.shape[0]
    labels = np.empty(m, dtype=np.intp)
    n_comp = _bca_fast.threshold_components(np.ascontiguousarray(S),
                                             np.arange(m, dtype=np.intp), lam, labels,
                                             np.empty(m))
    if n_comp == m:
        return [np.array([i], dtype=np.intp) for i in range(m)]
    if n_comp == 1:
        return [np.arange(m, dtype=np.intp)]
    order = np.argsort(labels, kind="stable")
    cuts = np.flatnonzero(np.diff(labels[order])) + 1
    return [b.astype(np.intp) for b in np.split(order, cuts)]


def _solve_block(S, lam_n, X, M, history, opts: _SolveOptions):
    """BCA with beta continuation on one (connected) problem, in place on X and M.

    ``opts.polish``: a solve whose sweeps stall from ``POLISH_MIN_SWEEPS``
    on switches to the polish's iterations (see :func:`_sweeps`); the
    working set's own solves never do."""
    m = S.shape[0]
    if opts.working_set or (opts.working_set is None and m >= WS_MIN):
        out = _solve_working_set(S, lam_n, X, M, history, opts)
        if out[0] is not None:
            return out
        # The working set did not certify: the whole block, warm-started from
        # the W iterate or from the start (see _solve_working_set). From the W
        # iterate the exact box-QP finish does not pay: on correlation
        # matrices of 64 samples with 100-200 nonzeros the same sweeps then
        # took 3.6 s instead of 5.6-6.2 s (n = 500) and 3.4 s instead of 6.0-6.2
        # s (deflated, n = 1,000), while from the start it saves sweeps.
        _, used, p, e, tc, warm = out
        if opts.out_of_time:
            # the caller's time limit ended the working sets: the whole block
            # is certified once from the iterate reached (one sweep)
            rest = dataclasses.replace(opts, max_sweeps=1, working_set=False, polish=False)
        else:
            rest = dataclasses.replace(
                opts, max_sweeps=max(opts.max_sweeps - used, 1),
                qp_finish=opts.qp_finish and not warm, working_set=False, purge=warm)
        sweep, cert, n_passes, n_exact, t_cert, beta_k = _solve_block(
            S, lam_n, X, M, history, rest)
        return sweep + used, cert, n_passes + p, n_exact + e, t_cert + tc, beta_k
    phi0 = float(np.diag(S).max()) - lam_n  # a lower bound on phi
    if opts.beta is None:
        beta_min = _default_beta(phi0, m, opts.tol)
        beta_k = max(BETA_START * phi0 * phi0 / m, beta_min)
    else:
        beta_min = beta_k = opts.beta / opts.scale**2
    # A small block the sweeps do not certify is finished by the interior-point
    # method (spca/_interior.py), not for a solve that needs no tight gap
    # (refine=False, see _dspca_bca_checked); up to INTERIOR_FALLBACK features
    # when the polish (its turn comes by sweep POLISH_MIN_SWEEPS) leaves the
    # block uncertified.
    finish = opts.beta is None and opts.refine and opts.max_sweeps > INTERIOR_SWEEPS
    small = finish and m <= INTERIOR_MAX
    finish = small or (finish and opts.polish and m <= INTERIOR_FALLBACK
                       and opts.max_sweeps >= POLISH_MIN_SWEEPS)
    sweep_opts = (dataclasses.replace(opts, max_sweeps=INTERIOR_SWEEPS, refine=False)
                  if small else opts)
    out = _sweeps(S, X, M, lam_n, history, sweep_opts, beta_k=beta_k, beta_min=beta_min)
    if finish and out[1].gap > opts.tol and not opts.out_of_time:
        out = finish_block(S, lam_n, X, M, out, tol=opts.tol, history=history,
                           scale=opts.scale, verbose=opts.verbose)
    return out


# Working sets (_solve_working_set); see docs/user_guide/algorithm.rst.
# Blocks of >= 400 features by default (below, whole-block sweeps are as fast).
WS_MIN = 400
# First W of 64 features: all supports of ~50 nonzeros rank in the first 58.
WS_START = 64
# W grows by half its size, at least 16 features a round.
WS_GROW = 16
# Hand over to the whole block once W would pass 3/4 of it.
WS_MAX_FRACTION = 0.75
# Lanczos accuracy of the first ranking (only the order of large entries matters).
WS_START_TOL = 1e-3
# Rank by the eigenvector when 90% of it lies on W (95-100% at ~50 nonzeros).
WS_START_MASS = 0.9
# Gap of the first W solves (then a tenth of the block's gap, down to tol / 2).
WS_LOOSE = 1e-3
# A W solve stalls after 100 sweeps (correlation n = 1,000: W = 216 at gap 1.7e-3).
WS_MAX_W_SWEEPS = 100
# A stalled W misses features when the block's gap is 10x its own (0.1 vs 1.7e-3).
WS_MISSING = 10.0
# Stalled W solves cost at most 20 whole-block sweeps of flops (Gaussian n = 500).
WS_STALL_WORK = 20.0


def _start_order(soft: np.ndarray, size: int) -> np.ndarray:
    """The features in the order they are taken into the first working set.

    ``soft`` is ``S - clip(S, -lam, lam)`` with diagonal ``S_ii - lam``: the
    matrix ``Sigma + U`` of the dual point that cancels every entry up to
    ``lam``. Its leading eigenvector (a loose Lanczos run started from the
    row masses ``sum_j |soft_ij|``) points at the features where that dual
    is most violated, which an optimal support needs. When at least
    ``WS_START_MASS`` of the vector's squared norm lies on its ``size``
    largest entries, the features are ranked by the moduli of its entries;
    otherwise (or when Lanczos fails, or the block is small) by row mass.

    Measured on correlation matrices of 64 samples and on deflated
    covariances: at about 50 nonzeros (n = 500 to 5,000) 95-100% of the
    squared norm lies on 64 features, and every feature of the optimal
    support ranks in the first 58 by the vector (up to 146-411 by row mass;
    correlation n = 500 at 50 nonzeros 0.185 -> 0.093 s). At 20% of n
    nonzeros 57-84% does, and a first W taken from the vector cuts through
    the support: correlation n = 1,000 at 200 nonzeros took 80 s against
    17 s from the row masses.
    """
    mass = np.abs(soft).sum(axis=1)
    by_mass = np.argsort(-mass, kind="stable")
    if soft.shape[0] < LANCZOS_MIN or not np.any(mass):
        return by_mass
    from scipy.sparse.linalg import ArpackError, eigsh

    try:
        _, V = eigsh(soft, k=1, which="LA", v0=mass, tol=WS_START_TOL,
                     ncv=min(soft.shape[0], 20), maxiter=200)
    except ArpackError:
        return by_mass
    v2 = V[:, 0] ** 2
    order = np.argsort(-v2, kind="stable")
    if v2[order[:size]].sum() < WS_START_MASS * v2.sum():
        return by_mass
    return order


def _solve_working_set(S, lam_n, X, M, history, opts: _SolveOptions):
    """BCA on a working set W of features, certified on the whole block.

    Solves the relaxation on ``S_WW`` (warm-started, to ``tol / 2``), then
    builds a dual-feasible ``Sigma + U`` for the whole block: the barrier dual
    of the ``W`` solve on ``W x W``, ``S - clip(S, -lam, lam)`` (diagonal
    ``S_ii - lam``) elsewhere, and, around the rank-one primal ``x`` of the
    ``W`` solve, the construction of :func:`spca._certificate.rank_one_dual`
    (cross rows projected so that ``x`` is an eigenvector). Its largest
    eigenvalue comes from Lanczos; once it is within ``tol`` of the primal
    value it is verified by a Cholesky factorisation of a shifted matrix
    (:func:`spca._certificate.shift_bound`), so the reported bound is
    rigorous. Otherwise the features carrying most of the Lanczos vector
    outside ``W`` (those whose constraints the dual violates the most) join
    ``W`` and the solve is repeated, warm-started.

    ``X`` and ``M`` are updated in place: ``X`` is the ``W`` iterate on ``W x W``
    and diagonal elsewhere (positive definite, for warm starts). Returns the
    tuple of :func:`_sweeps`, or ``(None, sweeps, passes, exact QPs,
    certificate seconds, warm)`` (with ``X`` and ``M`` holding the warm start
    reached, ``warm`` true) when ``W`` outgrows ``WS_MAX_FRACTION`` of the
    block or the sweeps run out, and ``X`` restored when a ``W`` solve does not reach its
    gap within ``WS_MAX_W_SWEEPS`` sweeps and the whole block's gap does not
    say that ``W`` misses features (see ``WS_MISSING``), when the stalled
    solves have used ``WS_STALL_WORK``, or when ``W`` outgrows the block
    after a stalled solve (``warm`` false): the caller then solves the whole
    block. A sweep over ``W`` counts as ``|W| / m`` sweeps (the number of
    columns it updates).  The caller's time limit ends the rounds (``warm``
    true).
    """
    if opts.out_of_time:
        # (the caller's limit has passed: no ranking eigensolve, no W solve;
        # the caller bounds the block from its start)
        return None, 0, 0, 0, 0.0, True
    tol, max_sweeps, scale = opts.tol, opts.max_sweeps, opts.scale
    m = S.shape[0]
    soft = soft_thresholded(S, lam_n)
    # Features ranked by the leading eigenvector of the soft-thresholded
    # matrix when it is concentrated, else by row mass (see _start_order).
    W = _start_order(soft, WS_START)[:WS_START]
    xd = np.diag(X)
    if np.ptp(xd) > 0:  # a warm start: add its heaviest features
        W = np.union1d(W, np.argsort(-xd, kind="stable")[:WS_START])
    W = np.sort(W)
    X_start = X.copy()
    # X is kept block diagonal: the W iterate on W x W, diagonal elsewhere.
    # A warm start's entries outside W x W are dropped (its principal block
    # on W is kept): next to a W iterate they need not leave X positive
    # definite. (On the NYT sample's covariance, the cardinality path at
    # k = 9-15 returned such an X, minimum eigenvalue -1.5e-4, from a
    # 401-word block, and a later solve warm-started from it failed.)
    inside = np.zeros(m)
    inside[W] = 1.0
    _purge_off_support(X, inside, math.inf)
    sweeps = passes = exact = 0
    t_cert = 0.0
    beta_k = 0.0
    v0 = None
    cert_w = None
    tol_w = max(0.5 * tol, WS_LOOSE)
    cols = 0  # column updates so far; sweeps are counted as cols / m
    stall_work = 0.0  # W sweeps from the first stall on, in whole-block sweeps of flops
    # restart: the whole block is to start from the caller's start; so it
    # is after a stalled W solve, whose iterate is no better a start
    stalled = restart = False
    # (opts.settle: the round of least Lanczos value, in case the whole
    # block would get one sweep, see _out_of_sweeps)
    best: _Round | None = None
    while W.size <= WS_MAX_FRACTION * m:
        budget = min(WS_MAX_W_SWEEPS, (max_sweeps * m - cols) // W.size)
        if budget < 1:
            break
        if stall_work > 0.0:
            # after a stall, W solves get what is left of WS_STALL_WORK
            budget = min(budget, int((WS_STALL_WORK - stall_work) / (W.size / m) ** 3))
            if budget < 1:
                restart = True
                break
        ix = np.ix_(W, W)
        SW = np.ascontiguousarray(S[ix])
        XW = np.ascontiguousarray(X[ix])
        MW = np.ascontiguousarray(M[ix])
        hist: list[tuple[int, float, float, float]] = []
        # (without the support refinement: the W solve needs a rank-one
        # primal and its own loose gap, and on Gaussian n = 700 at half the
        # largest off-diagonal entry the refinements of the first two W
        # took 1.8 s of a 3 s solve for global bounds 0.29-0.47 above
        # their values; the whole block keeps it)
        w_opts = dataclasses.replace(opts, tol=tol_w, max_sweeps=budget, verbose=False,
                                     working_set=False, refine=False, give_up=False,
                                     polish=False, purge=False)
        try:
            sw, cert_w, p, e, tc, beta_k = _solve_block(SW, lam_n, XW, MW, hist, w_opts)
        except np.linalg.LinAlgError:
            # the W iterate lost definiteness to rounding (seen on a loose,
            # 5-sweep certificate probe of a 700-word NYT-sample block): the
            # whole block is solved instead, from the caller's start
            restart = True
            break
        cols += sw * W.size
        sweeps = -(-cols // m)
        passes, exact, t_cert = passes + p, exact + e, t_cert + tc
        X[ix] = XW
        M[ix] = MW
        if opts.out_of_time:
            break  # the caller's time limit: the whole block is certified from here
        stalled = cert_w.gap > tol_w
        if stalled or stall_work > 0.0:
            stall_work += sw * (W.size / m) ** 3
        t1 = stopwatch()
        # the rank-one primal of the W solve (polished from Z if it has none)
        if cert_w.x is not None:
            xw, lower = cert_w.x, cert_w.lower
        else:
            xw, lower = polish(SW, lam_n, leading_eigenvector(cert_w.Z))
        D, x = _round_dual(S, soft, lam_n, W, SW, MW, xw)
        # Lanczos; verified only when it may certify within tol
        target = lower + 0.999 * tol * abs(lower) if lower > 0 else None
        upper, y, rigorous = lambda_max_large(D, v0=x if v0 is None else v0, target=target)
        del D
        if opts.settle and (best is None or upper < best[0]):
            best = _Round(upper, rigorous, y, W, MW.copy(), xw, lower, cert_w)
        v0 = y
        t_cert += stopwatch() - t1
        best_lower = max(lower, cert_w.lower)
        history.append((sweeps, beta_k * scale**2, best_lower * scale, upper * scale))
        if opts.verbose:
            print(f"working set {W.size:5d}/{m}  sweeps={sweeps:4d}"
                  f"  lower={best_lower * scale:.10g}"
                  f"  upper{'' if rigorous else '~'}={upper * scale:.10g}"
                  f"  W gap={cert_w.gap:.2e}")
        if stalled and relative_gap(best_lower, upper) <= WS_MISSING * cert_w.gap:
            # W itself is hard (an optimum of high rank, or fixed beta), and
            # not because it misses features that the whole block's dual
            # asks for: the whole block is solved instead, from the caller's
            # start (from the W iterate, the Gaussian n = 500, lam = 0.25 max
            # offdiag case was at gap 0.16 after 30 sweeps instead of 0.03)
            break
        if rigorous and not stalled and relative_gap(best_lower, upper) <= tol:
            Z = np.zeros((m, m))
            if lower >= cert_w.lower:
                Z[np.ix_(W, W)] = np.outer(xw, xw)
                primal, xfull = "rank-one polish", x
            else:
                Z[ix] = cert_w.Z
                primal, xfull = cert_w.primal, None
            cert = Certificate(lower=best_lower, upper=upper, Z=Z, x=xfull, primal=primal,
                               dual="working set", barrier_lower=cert_w.barrier_lower,
                               barrier_upper=cert_w.barrier_upper)
            return sweeps, cert, passes, exact, t_cert, beta_k
        if tol_w > 0.5 * tol and relative_gap(cert_w.upper, upper) <= 0.5 * tol:
            # the dual outside W is good enough: solve W more accurately
            tol_w = max(0.5 * tol, 0.1 * relative_gap(best_lower, upper))
            continue
        tol_w = max(0.5 * tol, min(tol_w, 0.1 * relative_gap(best_lower, upper)))
        out = np.ones(m, dtype=bool)
        out[W] = False
        cand = np.flatnonzero(out)
        if cand.size == 0:
            break
        k = max(WS_GROW, W.size // 2)
        grow = cand[np.argsort(-np.abs(y[cand]), kind="stable")[:k]]
        W = np.union1d(W, grow)
    if best is not None and max_sweeps - sweeps <= 1:
        t1 = stopwatch()
        cert = _out_of_sweeps(S, soft, lam_n, best)
        t_cert += stopwatch() - t1
        if cert is not None:
            return sweeps, cert, passes, exact, t_cert, beta_k
    restart = restart or stalled
    if restart:
        X[...] = X_start
    return None, sweeps, passes, exact, t_cert, cols > 0 and not restart


def _round_dual(S, soft, lam_n, W, SW, MW, xw):
    """The dual of a working-set round over the whole block: the barrier dual
    of the ``W`` solve (``SW = S[W, W]``, its columns ``MW``) on ``W x W``,
    the soft-thresholded ``soft`` elsewhere, projected around the rank-one
    primal ``x`` (``xw`` on ``W``, zero elsewhere); returns ``(D, x)``."""
    x = np.zeros(S.shape[0])
    x[W] = xw
    D = soft.copy()
    D[np.ix_(W, W)] = barrier_matrix(SW, lam_n, MW)
    return rank_one_dual_matrix(S, lam_n, x, D, copy=False), x


class _Round(NamedTuple):
    """A working-set round kept for :func:`_out_of_sweeps`."""

    upper: float  # the Lanczos value of its dual over the whole block
    rigorous: bool  # whether ``upper`` is verified
    y: np.ndarray  # its Lanczos vector
    W: np.ndarray  # the working set
    MW: np.ndarray  # the W solve's dual columns
    xw: np.ndarray  # its rank-one primal over W
    lower: float  # the value of xw
    cert_w: Certificate  # the W solve's certificate


def _out_of_sweeps(S, soft, lam_n, best: _Round) -> Certificate | None:
    """The certificate of a working-set round, for a solve whose whole block
    would get at most one sweep and whose caller settles for it
    (``settle``: the cardinality search's bracketing solves need the side of
    ``k`` their support falls on, its probes their cut, valid at any gap);
    ``None`` when the round's Lanczos value cannot be verified.

    The round's dual over the whole block is formed again (as in
    :func:`_solve_working_set`: the barrier dual ``MW`` of the ``W`` solve
    on ``W x W``, soft thresholding elsewhere, projected around the rank-one
    primal ``xw`` of value ``lower``, see :class:`_Round`).  Without this the whole block
    gets its one sweep, from the ``W`` iterate or from the start: on NCI60's
    2,000 genes at lam = 0.5395 (1,681 features, rounds over 101-339
    features whose dual came within 1.1e-6 of the primal) that sweep took
    9 s of CPU, about 20 eigvalsh of the whole matrix, and ended at gap
    0.83.  Verified as :meth:`spca._path._Solver.dual_probe` verifies its
    cut: a Cholesky factorisation at the Ritz value plus its residual norm
    (``None`` if it fails: the caller then makes that sweep).
    """
    upper, W, xw, lower, cert_w = best.upper, best.W, best.xw, best.lower, best.cert_w
    m = S.shape[0]
    ix = np.ix_(W, W)
    D, x = _round_dual(S, soft, lam_n, W, np.ascontiguousarray(S[ix]), best.MW, xw)
    if not best.rigorous:
        resid = float(np.linalg.norm(D @ best.y - upper * best.y))
        upper = shift_bound(D, upper + resid + 1e-12 * (abs(upper) + 1.0))
        if upper is None:
            return None
    del D
    Z = np.zeros((m, m))
    if lower >= cert_w.lower:
        Z[ix] = np.outer(xw, xw)
        primal, xfull = "rank-one polish", x
    else:
        Z[ix] = cert_w.Z
        primal, xfull = cert_w.primal, None
    return Certificate(lower=max(lower, cert_w.lower), upper=upper, Z=Z, x=xfull,
                       primal=primal, dual="working set", barrier_lower=cert_w.barrier_lower,
                       barrier_upper=cert_w.barrier_upper)


def _solve_blocks(S, lam_n, X, M, blocks, cheap, history, opts: _SolveOptions):
    """Solve a problem whose thresholded graph has several components.

    Components are taken by decreasing cheap upper bound ``cheap`` (see
    :func:`_cheap_bounds`); one whose bound
    does not exceed the best value found is not solved. A single feature has
    the exact value ``S_jj - lam``. ``X`` and ``M`` become block diagonal
    (cross entries of ``S + U`` are zero), which keeps ``X`` positive definite
    for warm starts.
    """
    m = S.shape[0]
    base = soft_thresholded(S, lam_n)
    order = np.argsort(cheap)[::-1]
    Xd = diagonal_matrix(X.diagonal())  # blocks left unsolved keep their diagonal
    Md = base.copy()
    best: tuple[np.ndarray, Certificate] | None = None
    upper = -np.inf
    sweeps = passes = exact = solved = 0
    t_cert = 0.0
    beta_k = 0.0
    if opts.out_of_time:
        # The caller's limit passed before any block was solved: every block
        # keeps its cheap bound and the answer is the feature of largest
        # value S_jj - lam (exact, a lower bound on phi), without copying a
        # block (tissue's 500 genes at the 90% quantile lam: blocks of 471
        # and 28 features, 0.34 s of copies in ten calls on a loaded machine).
        j = int(np.argmax(np.diag(S)))
        v = float(S[j, j] - lam_n)
        Z = np.zeros((m, m))
        Z[j, j] = 1.0
        x = np.zeros(m)
        x[j] = 1.0
        X[...] = Xd
        M[...] = Md
        cert = Certificate(lower=v, upper=max(max(cheap), v), Z=Z, x=x,
                           primal="rank-one polish", dual="soft-threshold bound",
                           barrier_lower=v, barrier_upper=max(max(cheap), v))
        return 0, cert, 0, 0, 0.0, 0.0, 0
    for i in order:
        b = blocks[i]
        ix = np.ix_(b, b)
        if best is not None and (cheap[i] <= best[1].lower or opts.out_of_time):
            # blocks come by decreasing bound: none of the rest needs solving
            # (or the caller's time limit has passed: their bound stands)
            upper = max(upper, cheap[i])
            break
        solved += 1
        if b.size == 1:
            v = float(S[b[0], b[0]] - lam_n)
            one = np.ones((1, 1))
            cert = Certificate(lower=v, upper=v, Z=one, x=np.ones(1), primal="rank-one polish",
                               dual="rank-one", barrier_lower=v, barrier_upper=v)
            Xd[ix] = X[ix]
        else:
            Xb = np.ascontiguousarray(X[ix])
            Mb = np.ascontiguousarray(M[ix])
            hist: list[tuple[int, float, float, float]] = []
            sw, cert, p, e, tc, bk = _solve_block(S[ix], lam_n, Xb, Mb, hist, opts)
            sweeps, passes, exact, t_cert = sweeps + sw, passes + p, exact + e, t_cert + tc
            Xd[ix] = Xb
            Md[ix] = Mb
            if best is None or cert.lower > best[1].lower:
                history[:] = hist
                beta_k = bk
        upper = max(upper, cert.upper)
        if best is None or cert.lower > best[1].lower:
            best = (b, cert)
    assert best is not None
    b, cb = best
    Z = np.zeros((m, m))
    Z[np.ix_(b, b)] = cb.Z
    x = None
    if cb.x is not None:
        x = np.zeros(m)
        x[b] = cb.x
    X[...] = Xd
    M[...] = Md
    cert = Certificate(lower=cb.lower, upper=max(upper, cb.upper), Z=Z, x=x, primal=cb.primal,
                       dual=cb.dual, barrier_lower=cb.barrier_lower,
                       barrier_upper=cb.barrier_upper)
    return max(sweeps, 1), cert, passes, exact, t_cert, beta_k, solved


def _sweeps(S, X, M, lam_n, history, opts: _SolveOptions, *, beta_k: float,
            beta_min: float):
    """The sweep loop of dspca_bca from the barrier parameter ``beta_k``
    (lowered down to ``beta_min``); returns (sweeps, certificate, passes,
    exact QPs, certificate seconds, final beta).  ``opts.refine=False``: no
    support refinement.  ``opts.polish``: see the polish in the loop.  The
    caller's time limit is checked after every sweep and, inside a sweep,
    after every ``SWEEP_CHUNK_WORK / m^2`` columns (:func:`_sweep_chunks`):
    once it has passed, the iterate reached (positive definite after any
    column) gets the ``O(m^2)`` bounds of
    :func:`~spca._certificate.quick_certificate`, kept with the best of the
    earlier checks, and the loop ends."""
    m = S.shape[0]
    limited = opts.deadline.limit.limited
    tol, max_sweeps, scale, verbose = opts.tol, opts.max_sweeps, opts.scale, opts.verbose
    work = _bca_fast.Workspace(m, MAX_ACTIVE)
    max_rounds = 50 if opts.qp_finish else 0
    no_inverse = np.empty((0, 0))
    # (X^-1 of each sweep written over the last one's: one m x m array per
    # solve, not five temporaries per sweep)
    inverse = np.empty((m, m)) if opts.qp_finish else no_inverse
    trace = float(np.trace(X))
    cert: Certificate | None = None
    n_passes = n_exact = n_checks = 0
    next_refine, refine_wait = 0, 1  # see the refinement back-off below
    next_check = 1
    sweep = 0
    t_cert = 0.0
    gaps: list[float] = []
    checks: list[tuple[int, float]] = []  # (sweep, gap) of every check, for give_up
    last_support = None  # rank-one support of the last check, for purge
    refine_work = 0.0  # of the support refinements, in sweep equivalents
    for sweep in range(1, max_sweeps + 1):
        if limited and opts.deadline.hit:
            # (the limit has passed in an earlier stage: no column update;
            # otherwise the first chunk of columns runs before the first
            # reading of the clock, one reading per sweep as before)
            sweep -= 1
            break
        H = _inverse(X, inverse) if opts.qp_finish else no_inverse
        if limited:
            # (the limit's last reading: the sweep's time below is measured
            # between two checks, with no reading of its own)
            t_sweep = opts.deadline.limit.last
            trace, passes, exact = _sweep_chunks(S, X, H, M, work, lam_n=lam_n, beta_k=beta_k,
                                                 trace=trace, opts=opts, max_rounds=max_rounds)
        else:
            trace, passes, exact = _bca_fast.bca_sweep(
                S, X, H, M, lam_n, beta_k, trace, work, max_passes=opts.max_qp_passes,
                qp_tol=opts.qp_tol, max_rounds=max_rounds)
        n_passes += passes
        n_exact += exact
        trace = float(np.trace(X))  # drop the rounding accumulated over the sweep
        if limited and opts.out_of_time:
            break  # (the quick bounds below, not a certificate of dense eigensolves)
        t1 = stopwatch()
        # Certify on a geometric schedule (sweeps 1-6, 8, 10, 12, 15, 19, 24,
        # ...: about 10 certificates per decade) and at the last sweep. A
        # certificate costs about as much as a sweep at n = 1,000 and twice as
        # much at n = 60.
        if sweep < next_check and sweep < max_sweeps:
            continue
        limit = opts.deadline.limit
        if limited and limit.deadline - limit.last < CERT_SWEEPS * (limit.last - t_sweep):
            # (a certificate of dense eigensolves would end past the limit:
            # the quick bounds below instead, and the limit ended the solve)
            opts.deadline.hit = True
            break
        next_check = max(sweep + 1, round(1.25 * sweep))
        new = certify(S, lam_n, X, M, tol=tol)
        # The barrier problem of this beta is solved to its own accuracy (its
        # dual gap is about n * beta / Tr X): try the support refinement, which
        # also certifies optima of rank > 1, before lowering beta. Also when
        # the gap has not halved over the last 5 checks, since the barrier gap
        # may hover above its expected size for a long time.
        stage_done = new.barrier_gap <= 4.0 * m * beta_k / trace
        n_checks += 1
        before = _combine(cert, new).gap
        stalled = len(gaps) >= 5 and before > 0.5 * gaps[-5]
        if (opts.refine and before > tol and (stage_done or stalled)
                and n_checks >= next_refine and sweep >= REFINE_MIN_SWEEPS
                and not (limited and opts.deadline.limit.remaining() < REFINE_MIN_LEFT)):
            # While beta can still be lowered, only supports of at most half
            # the block are refined: refining (about) the whole block solves
            # the problem again by a slower method, and the sweeps at the next
            # beta usually certify sooner (a 16-feature refinement cost
            # 150-300 ms on the log1p NYT-sample topics, two more sweeps 2-5 ms).
            final = stalled or beta_k <= beta_min
            evaluations: list[tuple[int, int]] = []
            new = certify(S, lam_n, X, M, refine=True, tol=tol,
                          max_refine=MAX_REFINE_SUPPORT if final else m // 2,
                          evaluations=evaluations,
                          limit=opts.deadline.limit if limited else None)
            refine_work += sum(REFINE_EVAL_WORK * n_eval * k / m for k, n_eval in evaluations)
            gaps.clear()
            # A refinement that does not halve the gap waits twice as many
            # checks as the last one before the next try: an optimum of rank
            # above one whose support the refinement cannot certify would
            # otherwise be refined at every check where the barrier stage is
            # solved (on standardised digits, with a check after every sweep,
            # 55 refinements were 1.1 s of a 2 s, 500-sweep solve; with the
            # geometric schedule the stall rule alone leaves 2 there).
            if _combine(cert, new).gap > 0.5 * before:
                refine_wait *= 2
            else:
                refine_wait = 1
            next_refine = n_checks + refine_wait
        # Bounds of every iterate are valid: keep the best of each side.
        cert = _combine(cert, new)
        if opts.purge and PURGE_CAP is not None and cert.gap > tol:
            # The whole block continues from a W iterate: once two checks in
            # a row find the same rank-one support at their own iterates (not
            # the best bound's x, which may be older), the rows of X outside
            # it are cut back (see PURGE_CAP).
            support = None if new.x is None else np.flatnonzero(new.x)
            if (support is not None and last_support is not None
                    and np.array_equal(support, last_support)):
                trace = _purge_off_support(X, new.x, PURGE_CAP)
            last_support = support
        gaps.append(cert.gap)
        t_cert += stopwatch() - t1
        history.append((sweep, beta_k * scale**2, cert.lower * scale, cert.upper * scale))
        if verbose:
            print(
                f"sweep {sweep:4d}  beta={beta_k * scale**2:.2e}  lower={cert.lower * scale:.10g}"
                f"  upper={cert.upper * scale:.10g}  gap={cert.gap:.2e}"
                f"  ({cert.primal} / {cert.dual})"
            )
        if cert.gap <= tol:
            break
        checks.append((sweep, cert.gap))
        hopeless = _hopeless(checks, tol, max_sweeps)
        if opts.give_up and hopeless:
            break
        if opts.polish and sweep >= POLISH_MIN_SWEEPS and (hopeless or sweep == max_sweeps):
            # The sweeps will not reach tol within max_sweeps: usually an
            # optimum of rank above one, where the barrier dual (and often
            # the primal) settles far from phi. Proximal point and
            # alternating direction iterations take turns (_polish) while
            # their rate would reach tol sooner than the sweeps', for at most
            # three times the work done so far plus the work of the
            # remaining sweeps (half the work done, at the last sweep), all
            # counted in sweep equivalents. The solve ends when they certify
            # or use up that work; if they lose the race, the sweeps go on
            # without them.
            done = sweep + CHECK_WORK * n_checks + refine_work
            per_sweep = done / sweep
            horizon = (POLISH_SHARE * done if sweep == max_sweeps
                       else POLISH_HORIZON * done + per_sweep * (max_sweeps - sweep))
            cert, seconds, lost = _polish(
                S, lam_n, X, M, cert, opts, budget=min(POLISH_SHARE * done, horizon),
                horizon=horizon, rate=(_sweep_rate(checks) or 0.0) / per_sweep)
            t_cert += seconds
            history.append((sweep, beta_k * scale**2, cert.lower * scale, cert.upper * scale))
            if not lost or opts.out_of_time:
                break
            opts = dataclasses.replace(opts, polish=False)
        # Lower beta once the barrier problem is solved to within its own
        # accuracy: the barrier-dual gap is then about n * beta / Tr X.
        if beta_k > beta_min and stage_done:
            beta_k = max(beta_k / 10.0, beta_min)
    if opts.deadline.hit and (cert is None or cert.gap > tol):
        # The caller's time limit ended the sweeps: bounds of the iterate
        # reached in O(m^2), kept with the best of the earlier checks.
        t1 = stopwatch()
        # (before any sweep M is still its start: no barrier bound, see there)
        cert = _combine(cert, quick_certificate(S, lam_n, X, M, barrier=sweep > 0))
        t_cert += stopwatch() - t1
        history.append((sweep, beta_k * scale**2, cert.lower * scale, cert.upper * scale))
        if verbose:
            print(f"sweep {sweep:4d}  time limit: lower={cert.lower * scale:.10g}"
                  f"  upper={cert.upper * scale:.10g}  gap={cert.gap:.2e}"
                  f"  ({cert.primal} / {cert.dual})")
    assert cert is not None
    return sweep, cert, n_passes, n_exact, t_cert, beta_k


# Under a time limit a certificate (eigensolves of the block) is made only
# when the time left holds this many times the last sweep's: on
# tissue_gene_expression's 500 genes at t = 10 eigvalsh the one sweep that
# fitted took 0.7-0.85 t and the certificate after it 0.3 t more (the call
# ended at 1.2-1.3 t); a certificate costs about a sweep at n = 1,000 and
# twice one at n = 60.
CERT_SWEEPS = 1.0


# Under a time limit a sweep checks the clock after each chunk of columns of
# about this many flops' worth of column updates (m^2 each): 32 columns at
# m = 500 (about 10 ms of a 180 ms sweep on one thread), 1 column from
# m ~ 2,800 on.
SWEEP_CHUNK_WORK = 32 * 500 * 500


def _sweep_chunks(S, X, H, M, work, *, lam_n: float, beta_k: float, trace: float,
                  opts: _SolveOptions, max_rounds: int) -> tuple[float, int, int]:
    """One sweep (see ``_bca_fast.bca_sweep``) in chunks of columns, stopping
    between two chunks once the caller's time limit has passed.  The chunks
    pass ``trace`` on, so a sweep that runs to its end makes the same
    arithmetic as one call of the kernel."""
    m = S.shape[0]
    chunk = max(1, SWEEP_CHUNK_WORK // (m * m))
    passes = exact = 0
    for start in range(0, m, chunk):
        if start > 0 and opts.out_of_time:
            break
        trace, p, e = _bca_fast.bca_sweep(
            S, X, H, M, lam_n, beta_k, trace, work, max_passes=opts.max_qp_passes,
            qp_tol=opts.qp_tol, max_rounds=max_rounds, start=start, stop=min(start + chunk, m))
        passes += p
        exact += e
    return trace, passes, exact


def _sweep_rate(checks: list[tuple[int, float]]) -> float | None:
    """Decrease of ``log(gap)`` per sweep over the second half of the sweeps
    of ``checks`` (``(sweep, gap)``, in order), 0 without progress; ``None``
    when no earlier check falls in the second half or the gap is 0."""
    sweep, gap = checks[-1]
    s1, g1 = next(c for c in checks if c[0] >= sweep // 2)
    if s1 >= sweep or not gap > 0:
        return None
    return max(math.log(g1 / gap), 0.0) / (sweep - s1)


# Cut off-support rows of a W hand-over to 1% of the top diagonal (n = 500: 36 -> 14 sweeps).
PURGE_CAP: float | None = 1e-2


def _purge_off_support(X: np.ndarray, x: np.ndarray, cap: float) -> float:
    """Zero the rows and columns of ``X`` outside the support of ``x`` (in
    place), keep their diagonal at most ``cap`` times the largest diagonal
    entry (``inf``: unchanged), and return the new trace."""
    off = np.flatnonzero(x == 0)
    diag = np.diag(X).copy()
    X[off, :] = 0.0
    X[:, off] = 0.0
    X[off, off] = np.minimum(diag[off], cap * diag.max())
    return float(np.trace(X))


def _improve(cert: Certificate, out: tuple, label: str) -> Certificate:
    """``cert`` with the bounds of a polish run ``out`` where they are better."""
    upper, _, value, Z, _ = out
    if upper < cert.upper:
        cert = dataclasses.replace(cert, upper=upper, dual=label)
    if Z is not None and value > cert.lower:
        cert = dataclasses.replace(cert, lower=value, Z=Z, x=None, primal=label)
    return cert


# Under a time limit, no support refinement starts with less than this many
# seconds left: its first use in a process imports scipy.optimize (135-210
# ms measured here), which no check of the limit can cut short, and one
# refinement of a 12-34 feature support took 0.2-0.6 s (L-BFGS-B, which
# now stops at the limit, see spca._certificate.refine_on_support).  The
# NYT sample's binary topics at time_limit=0.3 took 0.87-0.99 s, 0.9 s of
# it in three refinements that did not check the limit.
REFINE_MIN_LEFT = 0.25
# ... and none before this sweep: a solve that the sweeps certify soon needs
# none (the binary covariance of 70 NYT-sample words at lam = 0.1593, in
# units of its largest variance: three refinements at sweep 6 took 1.1 s and
# certified gap 3e-8; without them the sweeps certified 1.2e-13 at sweep 12,
# in 15 ms), while the optima of rank above one that the refinement is for
# keep the sweeps' gap above tol for hundreds of sweeps.
REFINE_MIN_SWEEPS = 25

# The polish's constants (see _polish and docs/user_guide/algorithm.rst).
# Budgets count work in sweep equivalents (the cost model of spca/_proximal.py
# and spca/_admm.py), never seconds.
# Polish only from sweep 50 on: lower caps are probes (the search's brackets).
POLISH_MIN_SWEEPS = 50
# First slice: half the sweeps' work so far (the time-based rule it replaces).
POLISH_SHARE = 0.5
# Drop a method 10x behind and slower (3 lost the correlation matrix at 0.05 x).
POLISH_BEHIND = 10.0
# Horizon 3x the sweeps' work (at 2, Gaussian n = 500 at 0.25 x failed 1 of 3).
POLISH_HORIZON = 3.0
# Extend once when tol is within a quarter horizon (Gaussian n = 80 at 0.25 x).
POLISH_EXTEND = 0.25
# A certificate check costs about one sweep (measured 0.4-3.5 over m = 60-500).
CHECK_WORK = 1.0
# A support refinement's evaluation on k features: 0.25 k / m sweeps (k = 14-29, m = 80).
REFINE_EVAL_WORK = 0.25


@dataclass
class _PolishRun:
    """One method of the polish: its state, its own bounds and its work."""

    label: str
    method: Any
    own: Certificate
    budget: float
    state: Any = None
    spent: float = 0.0
    rate: float = 0.0


def _polish(S, lam_n, X, M, cert, opts: _SolveOptions, *, budget: float, horizon: float,
            rate: float):
    """Proximal point and alternating direction iterations once the sweeps stall.

    The proximal point iterations (``spca/_proximal.py``) and the alternating
    direction ones (``spca/_admm.py``) take turns from the iterate
    ``(X, M)``, each resumed where it stopped, in slices of ``budget``
    sweep equivalents of work that double after every turn.  A method drops
    out when the rate of its last slice (decrease of ``log(gap)`` per unit of
    work, ``gap`` from its own bounds) would not reach ``tol`` sooner than
    the sweeps' ``rate`` (per unit of work) from where the sweeps left it,
    or, after a turn of both, when its own gap is ``POLISH_BEHIND`` times the
    other's and its last slice was the slower.  The polish stops after
    ``horizon`` units of work, not counting the work of methods that dropped
    out, unless the fastest method's last rate says ``tol`` is at most
    ``POLISH_EXTEND * horizon`` away: then, once, that method goes on alone
    for twice that work.  The caller's time limit ends it at once.
    Each method's bounds are valid on their own, so the certificate takes
    the best lower and the best upper bound of all slices.  Returns it, the
    seconds spent (a measurement for the timings), and whether both methods
    dropped out (the sweeps should then go on without them).
    """
    tol = opts.tol
    t0 = stopwatch()
    Z0 = X / float(np.trace(X))
    U0 = barrier_matrix(S, lam_n, M) - S
    # work the sweeps would need from here at their rate
    sweeps_work = math.log(cert.gap / tol) / rate if rate > 0 else math.inf
    # Neither method wins everywhere, and which one will is not known from
    # the first slices: taking turns certifies the cases listed in
    # docs/user_guide/algorithm.rst, where either alone fails on some.
    runs = [_PolishRun("proximal point", proximal_dual, cert, budget),
            _PolishRun("alternating directions", admm_dual, cert, budget)]
    spent = 0.0
    dropped = 0.0  # work of the methods that dropped out: not held against the horizon
    extended = False
    while runs:
        for run in list(runs):
            done = 0.0 if run.state is None else run.state.work
            try:
                out = run.method(S, lam_n, Z0, U0, work=run.budget, lower=cert.lower,
                                 tol=tol, state=run.state, time_limit=opts.deadline)
            except np.linalg.LinAlgError:
                # an eigensolver that did not converge: not this method (its
                # slice is charged in full, to the methods that dropped out)
                spent += run.budget
                dropped += run.spent + run.budget
                runs.remove(run)
                continue
            dw = out[4].work - done
            spent += dw
            run.spent += dw
            run.state = out[4]
            before = run.own.gap
            run.own = _improve(run.own, out, run.label)
            cert = _improve(cert, out, run.label)
            if opts.verbose:
                print(f"{run.label} (work {dw:.3g} sweeps, own gap {run.own.gap:.2e}):  "
                      f"lower={cert.lower * opts.scale:.10g}  "
                      f"upper={cert.upper * opts.scale:.10g}  "
                      f"gap={cert.gap:.2e}  ({cert.primal} / {cert.dual})")
            if cert.gap <= tol or extended or opts.out_of_time:
                # certified, the one extension is over, or the caller's
                # time limit has passed
                return cert, stopwatch() - t0, False
            own = run.own.gap
            run.rate = math.log(before / own) / dw if own < before and dw > 0 else 0.0
            if run.rate <= 0.0 or math.log(own / tol) / run.rate > sweeps_work:
                runs.remove(run)  # it loses the race to the sweeps
                dropped += run.spent
            elif spent - dropped >= horizon:
                # Out of work. Once, when the fastest method's rate says tol
                # is at most POLISH_EXTEND of the horizon away, it goes on
                # alone for twice that work
                lead = max(runs, key=lambda r: r.rate)
                need = math.log(cert.gap / tol) / lead.rate
                if need > POLISH_EXTEND * horizon:
                    return cert, stopwatch() - t0, False
                extended = True
                dropped += sum(r.spent for r in runs if r is not lead)
                runs = [lead]
                lead.budget = 2.0 * need
                horizon = spent - dropped + lead.budget
                break
            else:
                run.budget = min(2.0 * run.budget, horizon - (spent - dropped))
        # after a turn of each: a method whose own gap is POLISH_BEHIND
        # times the best one's, and whose last slice was slower, drops out
        if len(runs) > 1:
            lead = min(runs, key=lambda run: run.own.gap)
            for run in list(runs):
                if run.own.gap >= POLISH_BEHIND * lead.own.gap and run.rate <= lead.rate:
                    runs.remove(run)
                    dropped += run.spent
    return cert, stopwatch() - t0, True


# give_up extrapolates the gap's rate from sweep 50 on (as the polish starts).
GIVE_UP_MIN = 50


def _hopeless(checks: list[tuple[int, float]], tol: float, max_sweeps: int) -> bool:
    """Whether the gaps ``checks`` (``(sweep, gap)``, in order) extrapolate, at
    their rate over the second half of the sweeps, to no gap within ``tol`` by
    sweep ``max_sweeps``."""
    sweep, gap = checks[-1]
    if sweep < GIVE_UP_MIN or sweep >= max_sweeps:
        return False
    rate = _sweep_rate(checks)
    if rate is None:
        return False
    if rate == 0.0:
        return True  # no progress over half of the sweeps
    return sweep + math.log(gap / tol) / rate > max_sweeps


def _combine(old: Certificate | None, new: Certificate) -> Certificate:
    """The better lower bound (with its Z) and the better upper bound of two."""
    if old is None:
        return new
    low = new if new.lower >= old.lower else old
    up = new if new.upper <= old.upper else old
    return Certificate(lower=low.lower, upper=up.upper, Z=low.Z, x=low.x, primal=low.primal,
                       dual=up.dual, barrier_lower=new.barrier_lower,
                       barrier_upper=new.barrier_upper)


def _build_result(*, cert: Certificate, S: np.ndarray, scale: float, X: np.ndarray,
                  M: np.ndarray, kept: np.ndarray, n: int, lam: float, tol: float,
                  beta: float, eliminate: bool, sweeps: int, passes: int,
                  history: list, timings: dict, n_blocks: int = 1,
                  n_blocks_solved: int = 1, status: str | None = None) -> DSPCAResult:
    if cert.x is not None:
        x_red = cert.x
    else:
        v = leading_eigenvector(cert.Z)
        x_red = np.where(np.abs(v) >= 1e-3 * np.abs(v).max(), v, 0.0)
        x_red /= np.linalg.norm(x_red)
    if x_red[np.argmax(np.abs(x_red))] < 0:
        x_red = -x_red
    loadings = np.zeros(n)
    loadings[kept] = x_red
    support = np.flatnonzero(loadings).astype(np.intp)
    ev = float(x_red @ S @ x_red) * scale
    return DSPCAResult(
        Z_reduced=cert.Z,
        X_reduced=X * scale,
        objective=cert.lower * scale,
        upper_bound=cert.upper * scale,
        gap=cert.gap,
        converged=cert.gap <= tol,
        tol=tol,
        lam=lam,
        beta=beta,
        loadings=loadings,
        support=support,
        explained_variance=ev,
        kept=kept,
        n_features=n,
        eliminate=eliminate,
        n_sweeps=sweeps,
        n_qp_passes=passes,
        primal=cert.primal,
        dual=cert.dual,
        timings=timings,
        history=tuple(history),
        # (both callers pass their own M and use it no more: no copy; a
        # warm start copies it before updating, see _start)
        _dual_columns=M,
        n_blocks=n_blocks,
        n_blocks_solved=n_blocks_solved,
        status=status,
    )


def _empty_result(n: int, lam: float, tol: float, eliminate: bool,
                  t_start: float, Sigma: Any = None) -> DSPCAResult:
    """The result when every variance is ``<= lam``: the empty component (with
    elimination), else the exact optimum over all features.

    Without elimination ``Z`` must be feasible (``Tr Z = 1``): for any such
    ``Z``, ``Tr(Sigma Z) - lam ||Z||_1 <= max_i Sigma_ii - lam`` (as
    ``|Sigma_ij| <= sqrt(Sigma_ii Sigma_jj) <= lam``), and ``Z = e_i e_i'`` at
    the largest variance attains it: objective = upper bound, gap 0.
    """
    total = stopwatch() - t_start
    if not eliminate and Sigma is not None:
        diag = np.asarray(Sigma.diagonal(), dtype=np.float64)
        i = int(np.argmax(diag))
        value = float(diag[i]) - lam
        Z = np.zeros((n, n))
        Z[i, i] = 1.0
        loadings = np.zeros(n)
        loadings[i] = 1.0
        return DSPCAResult(
            Z_reduced=Z, X_reduced=diagonal_matrix(np.full(n, 1.0 / n)), objective=value,
            upper_bound=value, gap=0.0, converged=True, tol=tol, lam=lam, beta=0.0,
            loadings=loadings, support=np.array([i], dtype=np.intp),
            explained_variance=float(diag[i]), kept=np.arange(n, dtype=np.intp),
            n_features=n, eliminate=False, n_sweeps=0, n_qp_passes=0, primal="exact",
            dual="exact", timings={"total": total}, history=(),
        )
    return DSPCAResult(
        Z_reduced=np.zeros((0, 0)),
        X_reduced=np.zeros((0, 0)),
        objective=0.0,
        upper_bound=0.0,
        gap=0.0,
        converged=True,
        tol=tol,
        lam=lam,
        beta=0.0,
        loadings=np.zeros(n),
        support=np.empty(0, np.intp),
        explained_variance=0.0,
        kept=np.empty(0, np.intp),
        n_features=n,
        eliminate=eliminate,
        n_sweeps=0,
        n_qp_passes=0,
        primal="empty",
        dual="empty",
        timings={"total": total},
        history=(),
    )

