"""The penalty that gives a target number of nonzero loadings.

:func:`dspca_cardinality` searches ``lam`` for a DSPCA solution with exactly
``k`` nonzero loadings, using what the problem gives for free:

* Theorem 1 brackets the search: for ``lam >= v_(k)`` (the ``k``-th largest
  variance) fewer than ``k`` features survive elimination, so the cardinality
  is below ``k`` without solving anything;
* the cardinality grows (not always monotonically) as ``lam`` decreases, so a
  bracket ``[lo, hi]`` with ``card(lo) > k > card(hi)`` is found by lowering
  ``lam`` (at most doubling the surviving set per step) and then narrowed
  by safeguarded interpolation in ``log(lam)``;
* every solve is warm-started from the solution at the nearest ``lam`` tried
  so far (or starts cold when most of its features are new to it);
* a problem that splits into blocks (``|Sigma_ij| <= lam`` between them) is
  solved over the blocks that can hold the solution only, at a cost in their
  size: a covariance given as a dense matrix is sliced, never copied; a
  sparse or deflated one is formed once (up to ``PSD_ONCE_MAX`` features) or
  only over the features surviving at the lowest ``lam`` tried.
"""

from __future__ import annotations

import dataclasses
import math
import time
import warnings
from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _bca, _bca_fast, _ksparse
from ._bca import (
    RESTRICT_FRACTION,
    ConvergenceWarning,
    DSPCAResult,
    EmptyProblemWarning,
    _block_bound,
    _dspca_bca_checked,
)
from ._certificate import (
    LANCZOS_MIN,
    barrier_matrix,
    bound_margin,
    bracket_margin,
    k_sparse_row_bound,
    lambda_max_large,
    lambda_max_upper,
    polish,
    rank_one_dual_matrix,
    relative_gap,
    shift_bound,
    soft_thresholded,
)
from ._limits import (
    STATUS_INTERRUPTED,
    STATUS_OPTIMAL,
    STATUS_TIME_LIMIT,
    TimeLimit,
    check_time_limit,
)
from ._validation import check_bool, check_int, check_positive, check_psd, check_tol
from ._variance import _Covariance, _MatrixCovariance, offdiag_rowmax
from .cardinality._prove import PROOF_AIM, check_proof_options, prove

__all__ = ["CardinalityPath", "CardinalityResult", "LamTrial", "cardinality_path",
           "dspca_cardinality"]

# When lowering lam to find a bracket, jump to lam = 0 (ordinary PCA) once lam
# falls below this fraction of the k-th largest variance.
ZERO_FRACTION = 1e-3


class LamTrial(NamedTuple):
    """One solve of the cardinality search.

    The first four fields are ``(lam, cardinality, sweeps, seconds)``; then
    the solve's relative ``gap``, the number of features it worked on
    (``reduced_size``), its ``tol``, its certified ``upper_bound``, the
    ``l1_norm`` of its ``Z`` and its ``role``.
    """

    lam: float
    cardinality: int
    sweeps: int
    seconds: float
    gap: float
    reduced_size: int
    tol: float
    #: certified upper bound of the DSPCA problem at ``lam`` (a cut of the
    #: k-sparse certificate)
    upper_bound: float = math.nan
    #: ``sum_ij |Z_ij|`` of the solve (``k`` minus it is the cut's slope)
    l1_norm: float = math.nan
    #: ``"search"`` (finding k nonzeros) or ``"bound"`` (tightening the certificate)
    role: str = "search"


@dataclass(frozen=True, repr=False)
class CardinalityResult:
    """Result of :func:`dspca_cardinality`: a component with exactly ``k`` nonzeros.

    Attributes
    ----------
    support : ndarray of int
        The selected features, ascending: exactly the nonzero entries of
        ``loadings``. There are ``k`` of them unless the best variance found
        is only reached with fewer nonzeros (a degenerate leading eigenvalue,
        e.g. ``dspca_cardinality(np.diag([2., 1.]), 2)`` has support ``[0]``:
        no unit vector with two nonzeros reaches variance 2); ``exact`` and
        ``message`` say so.
    loadings : ndarray of shape (n_features,)
        Unit-norm loadings of largest variance on the ``k`` features chosen:
        a leading eigenvector of that block of ``Sigma``, largest-magnitude
        entry positive, zero elsewhere. When the leading eigenvalue of the
        block is degenerate, the vector of its eigenspace with the most
        nonzeros (a generic combination of an eigenbasis), and among
        equal-variance blocks one whose vector has ``k`` nonzeros where the
        local search finds one.
    explained_variance : float
        ``loadings' Sigma loadings``, the largest eigenvalue of that block.
    origin : str
        How ``support`` was obtained: ``"relaxation"`` (the DSPCA support at
        ``lam``), ``"grown from m"`` / ``"pruned from m"`` (the relaxation's
        path jumps over ``k``: the support of ``m`` nonzeros next to ``k``
        was completed greedily / pruned), ``"greedy"`` (forward greedy
        selection did better than both), ``"truncated power"`` or, in
        :func:`cardinality_path`, ``"from k=m"`` (the support found for
        another ``k = m``, grown or pruned); ``"+s swaps"`` when a local
        search then exchanged features ``s`` times.
    variance_upper_bound : float
        Certified upper bound on ``max x' Sigma x`` over unit ``x`` with at
        most ``k`` nonzeros (see Notes of :func:`dspca_cardinality`),
        rounding included: never below ``explained_variance``.
    bound_lam : float
        The ``lam`` whose cut gives ``variance_upper_bound`` (``nan`` when a
        bound that needs no solve is smaller).
    status : str or None
        ``"time_limit"`` when the caller's ``time_limit`` ended the search or
        its proof, ``"interrupted"`` when Ctrl-C did (the answer and bound are
        then the best so far, both valid); with ``optimality_gap``,
        ``"optimal"`` when the relative gap ``1 - certified_ratio`` is at most
        ``optimality_gap``; ``None`` when the search ran its course without a
        proof asked for.
    n_nodes : int
        Nodes of the branch and bound (``0`` without ``optimality_gap``).
    result : DSPCAResult
        The DSPCA solve at :attr:`lam` (caller's feature order): the one with
        exactly ``k`` nonzeros if the relaxation has it, else the solve of
        nearest cardinality (on ties the sparser, then the latest); the
        empty component at ``lam`` = the largest variance when the search
        made no solve (the answer met the bounds that need none, or the
        time limit came first).
    k : int
        The requested number of nonzero loadings.
    relaxation_exact : bool
        Whether ``result`` itself has exactly ``k`` nonzero loadings.
    message : str
        How the search ended and how the support was obtained.
    trials : tuple of LamTrial
        Every solve, in order (``role`` ``"search"`` or ``"bound"``).
    bracket : tuple of float
        ``(lo, hi)``: the last interval known to hold the relaxation's
        crossing of ``k``, with cardinality ``> k`` at ``lo`` and ``< k`` at
        ``hi`` (``hi`` may be the Theorem 1 bound ``v_(k)``, which needs no
        solve; ``lo`` is ``nan`` if no solve gave more than ``k`` nonzeros).
    seconds : float
        Wall time of the whole search.
    """

    result: DSPCAResult
    k: int
    relaxation_exact: bool
    message: str
    trials: tuple[LamTrial, ...]
    bracket: tuple[float, float]
    seconds: float
    support: NDArray[np.intp]
    loadings: NDArray[np.float64]
    explained_variance: float
    origin: str
    variance_upper_bound: float
    bound_lam: float
    # -- the branch and bound (spca.cardinality), when optimality_gap is given --
    status: str | None = None
    n_nodes: int = 0

    @property
    def lam(self) -> float:
        """The penalty of ``result``."""
        return self.result.lam

    @property
    def cardinality(self) -> int:
        """Number of selected features: nonzero loadings (``k`` when ``exact``)."""
        return int(self.support.size)

    @property
    def exact(self) -> bool:
        """Whether ``support`` has exactly ``k`` features: always, unless the best
        variance found is reached with fewer nonzero loadings only (a
        degenerate leading eigenvalue, see ``support``)."""
        return self.cardinality == self.k

    @property
    def certified_ratio(self) -> float:
        """``explained_variance / variance_upper_bound``: at least this fraction
        of the best ``k``-sparse variance is reached (at most 1)."""
        if not self.variance_upper_bound > 0:
            return math.nan
        return self.explained_variance / self.variance_upper_bound

    @property
    def relaxation_loadings(self) -> NDArray[np.float64]:
        """The DSPCA relaxation's own loadings at ``lam`` (``result.loadings``):
        the leading eigenvector of its ``Z``, shrunk by the ``l1`` penalty."""
        return self.result.loadings

    @property
    def relaxation_support(self) -> NDArray[np.intp]:
        """The DSPCA relaxation's support at ``lam`` (``result.support``)."""
        return self.result.support

    @property
    def objective(self) -> float:
        """DSPCA objective of ``result``."""
        return self.result.objective

    @property
    def upper_bound(self) -> float:
        """Certified upper bound of the DSPCA problem at ``lam`` (``result``)."""
        return self.result.upper_bound

    @property
    def gap(self) -> float:
        """Certified relative duality gap of ``result``."""
        return self.result.gap

    @property
    def converged(self) -> bool:
        """Whether ``result`` reached its tolerance."""
        return self.result.converged

    @property
    def n_solves(self) -> int:
        """Number of DSPCA solves (search and bound)."""
        return len(self.trials)

    @property
    def n_sweeps(self) -> int:
        """Total number of sweeps over all solves."""
        return int(sum(t.sweeps for t in self.trials))

    def __repr__(self) -> str:
        return (
            f"CardinalityResult(k={self.k}, support={_fmt_support(self.support)}, "
            f"origin={self.origin!r}, explained_variance={self.explained_variance:.6g}, "
            f"variance_upper_bound={self.variance_upper_bound:.6g}, "
            f"certified_ratio={self.certified_ratio:.4f}, lam={self.lam:.8g}, "
            f"relaxation_exact={self.relaxation_exact}, gap={self.gap:.2e}, "
            f"solves={self.n_solves}, sweeps={self.n_sweeps}, time={self.seconds:.3g}s"
            + ("" if self.status is None else f", status={self.status!r}")
            + (f", nodes={self.n_nodes}" if self.n_nodes else "") + ")"
        )


def _fmt_support(support: NDArray[np.intp]) -> str:
    if support.size <= 12:
        return str(support.tolist())
    return f"<{support.size} features>"


def _lift(res: DSPCAResult, W: NDArray[np.intp], n: int) -> DSPCAResult:
    """A result on the block ``Sigma[W][:, W]`` re-expressed over all ``n`` features."""
    loadings = np.zeros(n)
    loadings[W] = res.loadings
    # (dataclasses.replace without its __init__ and __post_init__, which
    # only fills a missing status: a new instance with a copy of the fields)
    out = object.__new__(type(res))
    fields = out.__dict__
    fields.update(res.__dict__)
    fields["kept"] = W[res.kept].astype(np.intp)
    fields["n_features"] = n
    fields["loadings"] = loadings
    fields["support"] = W[res.support].astype(np.intp)
    return out


def _single_feature(B: NDArray[np.float64], lam: float, tol: float,
                    X0: Any) -> DSPCAResult | None:
    """The solve of :func:`spca._bca._dspca_bca_checked` over one feature
    (``B`` is ``[[b]]``, ``b > lam``), without the block machinery: the
    same result, field for field (``tests/test_topics_solves.py`` compares
    them), or ``None`` when that solve would not be converged at ``tol``
    (its warning path is the solver's).

    Over one feature ``Z = [[1]]`` is the only feasible point, so ``phi =
    b - lam`` exactly, and the dual ``U = [[-lam]]`` attains it; in the
    solver's units (``b`` scaled to 1) the certificate is the one its
    single-feature blocks get, with the same rounding margin
    (:func:`spca._certificate.bracket_margin` of ``Z = x x'``, ``x = [1]``);
    the iterate is the warm start as the solver forms it
    (:func:`spca._bca._start`) and the dual columns the soft-thresholded
    block (``[[s - lam]]``).  Each is computed here in scalars, in the order
    of operations of those functions.  Of the cardinality searches'
    bracketing solves above the crossing, most are such (the NYT sample's
    five topics: 24 of 36 solves, 60 -> 25 us each in this form).
    """
    t0 = time.perf_counter()
    scale = float(B[0, 0])
    s = float(B[0, 0] / scale)
    lam_n = lam / scale
    phi0 = 1.0 - lam_n
    # the iterate of _bca._start (one feature, kept = [0], checked)
    if X0 is None:
        x = phi0 / 1  # (phi0 / m, m = 1 feature)
    else:
        if isinstance(X0, DSPCAResult):
            # (X0.X[0, 0] without embedding X0's iterate in a full matrix)
            at = (X0.kept == 0).nonzero()[0]
            x = float(X0.X_reduced[at[0], at[0]]) if at.size else 0.0
        else:
            x = float(np.asarray(X0, dtype=np.float64)[0, 0])
        x = x / scale
        x = 0.5 * (x + x)
        if x == 0.0:  # (a feature new to the iterate: NEW_DIAG phi0 / m)
            x = _bca.NEW_DIAG * phi0 / 1
    v = s - lam_n
    # with_margin(Certificate(lower=v, upper=v, Z=[[1]], x=[1]), S, lam_n):
    # bracket_margin's dual and primal margins over one feature
    lam_abs = abs(lam_n)
    mag = max(s, 0.0) + lam_abs
    size = abs(s) + lam_abs * 1.0 ** 2
    gamma = 3 * _EPS / max(1.0 - 3 * _EPS, 0.5)
    dual, primal = 2.0 * _EPS * 1 * mag, 2.0 * gamma * size
    upper = float(max(v + dual, v + primal))
    gap = relative_gap(v, upper)
    if not gap <= tol:
        return None
    total = time.perf_counter() - t0
    return DSPCAResult(
        Z_reduced=np.ones((1, 1)), X_reduced=np.full((1, 1), x * scale),
        objective=v * scale, upper_bound=upper * scale, gap=gap, converged=True, tol=tol,
        lam=lam, beta=0.0, loadings=np.ones(1), support=np.zeros(1, dtype=np.intp),
        explained_variance=s * scale, kept=np.zeros(1, dtype=np.intp), n_features=1,
        eliminate=True, n_sweeps=1, n_qp_passes=0, primal="rank-one polish", dual="rank-one",
        timings={"elimination": 0.0, "setup": total, "sweeps": 0.0, "n_exact_qp": 0.0,
                 "certificate": 0.0, "total": total},
        history=(), _dual_columns=np.full((1, 1), s - lam_n), n_blocks=1, n_blocks_solved=1,
        status=STATUS_OPTIMAL)


_EPS = float(np.finfo(np.float64).eps)


def _matched(a: NDArray[np.intp], b: NDArray[np.intp]) -> tuple[NDArray[np.intp],
                                                                   NDArray[np.intp]]:
    """Positions in ``a`` and in ``b`` of their common values, by increasing
    value: ``np.intersect1d(a, b, assume_unique=True, return_indices=True)[1:]``
    for arrays of distinct values.  Increasing arrays (the solver's feature
    lists) are matched by one binary search (a few microseconds instead of
    intersect1d's sort of both)."""
    if (a.size < 2 or bool((a[1:] > a[:-1]).all())) and (
            b.size < 2 or bool((b[1:] > b[:-1]).all())):
        if a.size == 0 or b.size == 0:
            empty = np.empty(0, dtype=np.intp)
            return empty, empty.copy()
        pos = np.searchsorted(b, a)
        hit = b[np.minimum(pos, b.size - 1)] == a
        hit &= pos < b.size
        i_a = hit.nonzero()[0]
        return i_a, pos[i_a].astype(np.intp, copy=False)
    _, i_a, i_b = np.intersect1d(a, b, assume_unique=True, return_indices=True)
    return i_a, i_b


class _Solved(NamedTuple):
    """A solve kept for warm starts: its iterate ``X`` over the features ``G``
    (a subset of the surviving ``W``) and the diagonal over all of ``W``."""

    lam: float
    W: NDArray[np.intp]
    G: NDArray[np.intp]
    X: NDArray[np.float64]
    diag: NDArray[np.float64]
    result: DSPCAResult


# Bracketing solves and certificate probes whose working sets use up their
# sweeps return the working sets' certificate (see spca._bca._out_of_sweeps)
# instead of one sweep over the whole block.
SETTLE = True

# A warm start needs this fraction of the features solved over to have been
# solved over before (else the solve starts cold).
WARM_OVERLAP = 0.3


def _expand(X: NDArray[np.float64], i_prev: NDArray[np.intp], i_new: NDArray[np.intp],
            m: int) -> NDArray[np.float64]:
    """The ``m x m`` matrix with ``X[i_prev][:, i_prev]`` at rows and columns
    ``i_new`` (increasing) and zeros elsewhere.  When ``i_new`` is every
    row, by row and column takes (600-800 features: 0.3-0.6 ms against
    2-5.8 ms CPU for the ``np.ix_`` read and write); else by ``np.ix_``
    (takes into a zero-padded copy measured 3.5 times slower there)."""
    if i_new.size == m:
        return X.take(i_prev, axis=0).take(i_prev, axis=1)
    out = np.zeros((m, m))
    out[np.ix_(i_new, i_new)] = X[np.ix_(i_prev, i_prev)]
    return out


class _Solver:
    """Warm-started DSPCA solves over a covariance operator at varying ``lam``.

    Slices every block out of one dense array: the covariance's own (a dense
    matrix, or the base of a removal deflation), the whole operator formed
    once (up to ``PSD_ONCE_MAX`` features), or, for a larger operator, the
    block of the features surviving at the lowest ``lam`` solved so far.
    With the largest off-diagonal entry of each row, the edges
    ``|Sigma_ij| > lam`` of the block structure of any ``lam`` (see
    :func:`spca._bca._blocks`) are found among the few rows that have one.
    A problem that splits is solved over its relevant blocks alone (the
    blocks whose bound exceeds the best single feature, see
    :func:`spca._bca._relevant`), at a cost in the size of those blocks, not
    of all surviving features; :meth:`full` re-expresses such a result over
    every surviving feature, as :func:`spca.dspca_bca` returns it.
    """

    def __init__(self, cov: _Covariance, *, max_sweeps: int, options: dict[str, Any],
                 verbose: bool) -> None:
        self.cov = cov
        self.d = cov.diag
        self.max_sweeps = max_sweeps
        self.options = options
        self.verbose = verbose
        self._lam_block = math.inf
        self._lam_checked = math.inf
        self._idx: NDArray[np.intp] = np.empty(0, np.intp)
        self._block = np.zeros((0, 0))
        self._rowmax = np.zeros(cov.n)
        self._solved: list[_Solved] = []
        # Solves of an earlier search over a covariance with the same
        # features (the previous component of a removal deflation, which
        # leaves every entry of the other features unchanged): warm starts of
        # the certificate probes only, never cuts (see _warm_start)
        self.inherited: list[_Solved] = []
        # id(result) -> (result, W, diagonal over W, number of blocks) of the
        # results solved over their relevant features only
        self._restricted: dict[int, tuple[DSPCAResult, NDArray[np.intp], NDArray[np.float64],
                                          int]] = {}
        self.trials: list[LamTrial] = []
        # (lam, loadings over every feature) of each solve: the start of a
        # dual probe (see dual_probe)
        self.loadings: list[tuple[float, NDArray[np.float64]]] = []
        # Cuts that need no solve (the largest eigenvalue, soft-thresholded
        # eigensolves): like the solves' cuts, valid for every k
        self.free_cuts: list[_ksparse.Cut] = []
        # ... of which these place probes (a soft-thresholded cut's slope is
        # not phi's)
        self.guide_cuts: list[_ksparse.Cut] = []
        # Soft-thresholded cuts estimated without their verification (see
        # LAZY_SOFT): cut -> (the block it was computed on, its eigenvector);
        # and the verified cut of each one verified so far
        self.unverified: dict[_ksparse.Cut, tuple[NDArray[np.float64],
                                                  NDArray[np.float64]]] = {}
        self.verified: dict[_ksparse.Cut, _ksparse.Cut] = {}
        # Modelled work of the solves made (see solve_work), and the seconds
        # per unit of it that a caller's time limit measured (None before the
        # first timed solve).
        self.work = 0.0
        self._rate: float | None = None
        self._rate_of_solves = False  # _rate measured on solves (else on eigensolves)
        self._rate_size = 0  # features of the solve _rate was measured on
        self._eig_rate: float | None = None  # the rate measured on eigensolves
        self._plan: tuple[float, NDArray[np.intp], NDArray[np.intp] | None, int] | None = None
        # (cached block, pool, its dense block) of the last pool formed
        self._pool: tuple[NDArray[np.float64], NDArray[np.intp],
                          NDArray[np.float64]] | None = None
        # (the moves over the last pool's block: see _ksparse_support)
        self._moves: _ksparse._Pool | None = None
        # Features of the full problem that the operator leaves out have
        # variance at most this (see spca.text.sparse_topics): a solve at a
        # lower lam is a bound of the block only.
        self.outside = float(getattr(cov, "outside_variance", 0.0))
        # searches made with this solver, and (block, row sums of its sorted
        # off-diagonal magnitudes) for the later ones past a time limit (see
        # _gershgorin_sorted)
        self.n_searches = 0
        self._gershgorin: tuple[NDArray[np.float64], NDArray[np.float64]] | None = None

    def _ensure_block(self, lam: float, W: NDArray[np.intp]) -> None:
        if not self.cov.psd_checked and lam < self._lam_checked:
            # Every later block is a principal block of this one.
            check_psd(self.cov.block(W), W)
            self._lam_checked = lam
        if lam >= self._lam_block and self._idx.size:
            return
        n = self.cov.n
        view = self.cov.dense_view()
        if view is not None:
            rowmax = self.cov.offdiag_rowmax()
        elif n <= PSD_ONCE_MAX:
            view = self.cov.block(np.arange(n, dtype=np.intp))
            rowmax = offdiag_rowmax(view)
        if view is not None:
            # The whole matrix serves every lam.
            self._idx, self._lam_block = np.arange(n, dtype=np.intp), -1.0
            self._block = _c_order(view)
            self._rowmax = rowmax
            return
        # A large operator: the block of the features surviving at this lam,
        # out of which the blocks of every higher lam are sliced.
        self._idx, self._block, self._lam_block = W, self.cov.block(W), lam
        self._rowmax = np.zeros(n)
        self._rowmax[W] = offdiag_rowmax(self._block)

    def _sub(self, idx: NDArray[np.intp]) -> NDArray[np.float64]:
        """Dense block over ``idx`` (sorted, inside the cached block)."""
        if idx.size == self._block.shape[0]:
            return self._block
        pos = np.searchsorted(self._idx, idx)
        # (the same copy as self._block[np.ix_(pos, pos)], entry by entry:
        # blocks of 10 / 50 / 120 of the NYT sample's 1,024 candidate words
        # in 1.2 / 11 / 32 us, against 10.5 / 64 / 126 us by two takes)
        out = np.empty((pos.size, pos.size))
        _bca_fast.principal_block(self._block, pos, out)
        return out

    def _relevant(self, lam: float, W: NDArray[np.intp]) -> tuple[NDArray[np.intp] | None, int]:
        """The features that can hold the solution at ``lam`` and the number of
        blocks; ``None`` when they are not much fewer than ``W``.

        Same rule as :func:`spca._bca._relevant`: the feature of largest
        variance, and every block of two or more features whose bound
        ``lambda_max(S_cc - clip(S_cc, -lam, lam))`` (diagonal ``S_ii - lam``)
        exceeds that feature's value ``max_i S_ii - lam``.  Blocks are first
        screened by the row sums of that matrix (Gershgorin), which bound its
        largest eigenvalue too.  Only the rows with an off-diagonal entry
        above ``lam`` are scanned for the edges ``|S_ij| > lam``.
        """
        m = W.size
        d = self.d
        A = W[self._rowmax[W] > lam]
        if A.size == 0:
            # No edge at this lam: every feature is a block of its own, and
            # the relevant one is the first of largest variance (the answer
            # of the general rule below, without its labelling: 5 us instead
            # of 40; 19 of the 43 checks of the NYT topics' searches).
            if 1 > (1.0 - RESTRICT_FRACTION) * m:
                return None, m
            return W[int(np.argmax(d[W])):][:1], m
        # The graph among A (every other feature of W is a block of its own).
        lab_a = np.empty(A.size, dtype=np.intp)
        excess = np.empty(A.size)
        n_a = _bca_fast.threshold_components(self._block, np.searchsorted(self._idx, A),
                                             lam, lab_a, excess)
        if n_a == 1 and A.size == m:
            return None, 1
        n_comp = n_a + m - A.size
        # Only A's blocks can have two or more features: everything below
        # works over A (a few dozen rows) and the feature of largest
        # variance, not over all of W (up to 900 of the NYT topics' words).
        best = int(np.argmax(d[W]))
        floor = float(d[W[best]]) - lam
        at = int(np.searchsorted(A, W[best]))
        best_in_a = at < A.size and A[at] == W[best]
        # (each row's Gershgorin bound, d_i - lam plus its off-diagonal
        # excess, and each block's largest)
        rows = d[A] - lam
        rows += excess
        size = np.bincount(lab_a, minlength=n_a)
        gersh = np.full(n_a, -np.inf)
        np.maximum.at(gersh, lab_a, rows)
        keep = np.zeros(n_a, dtype=bool)
        if best_in_a:
            keep[lab_a[at]] = True
        # (a relative margin keeps a block whose bound ties with floor)
        for c in np.flatnonzero((size > 1) & (gersh > floor - 1e-12 * abs(floor)) & ~keep):
            keep[c] = _block_bound(self._sub(A[lab_a == c]), lam) > floor
        R = A[keep[lab_a]]
        if not best_in_a:
            at = int(np.searchsorted(R, W[best]))
            R = np.concatenate((R[:at], W[best:best + 1], R[at:]))
        if R.size > (1.0 - RESTRICT_FRACTION) * m:
            return None, n_comp
        return R, n_comp

    def _warm_start(self, lam: float, W: NDArray[np.intp], G: NDArray[np.intp],
                    inherited: bool = False) -> tuple[Any, NDArray[np.float64]]:
        """Warm start over ``G`` (a subset of ``W``) from the solve at the nearest
        ``lam``, and the diagonal over ``W`` that the features outside ``G``
        keep (as in :func:`spca._bca._solve` for a restricted problem).
        ``inherited``: the solves of :attr:`inherited` are candidates too (an
        own solve wins a tie); their iterate is restricted to ``G``, never
        passed as a result (its dual columns belong to another covariance)."""
        scale = float(self.d[W].max())
        pool = self._solved + self.inherited if inherited else self._solved
        if not pool:
            return None, np.full(W.size, (scale - lam) / W.size)

        def distance(item: _Solved) -> float:
            other = item.lam
            if lam > 0 and other > 0:
                return abs(math.log(lam / other))
            return math.inf if lam != other else 0.0

        prev = min(pool, key=distance)
        own = any(prev is item for item in self._solved)
        # The diagonal the previous iterate had over W (zero for new features).
        diag = np.zeros(W.size)
        i_prev, i_new = _matched(prev.W, W)
        diag[i_new] = prev.diag[i_prev]
        diag[diag == 0] = _bca.NEW_DIAG * (scale - lam) / W.size
        if prev.G.size == 0:
            return None, diag
        if own and np.array_equal(prev.G, G):
            return prev.result, diag
        i_prev, i_new = _matched(prev.G, G)
        if i_new.size < WARM_OVERLAP * G.size:
            # Mostly new features: the previous iterate is concentrated on
            # others, and a cold start is the better guess.
            return None, np.full(W.size, (scale - lam) / W.size)
        X0 = _expand(prev.X, i_prev, i_new, G.size)
        inside = np.zeros(G.size, dtype=bool)
        inside[i_new] = True
        outside = np.flatnonzero(~inside)
        if outside.size:
            # Features of G outside the previous G keep the previous diagonal.
            pos = np.searchsorted(prev.W, G[outside])
            ok = (pos < prev.W.size) & (prev.W[np.minimum(pos, prev.W.size - 1)] == G[outside])
            X0[outside[ok], outside[ok]] = prev.diag[pos[ok]]
        return X0, diag

    def plan(self, lam: float) -> tuple[NDArray[np.intp], NDArray[np.intp] | None, int]:
        """The features surviving at ``lam``, the relevant ones (``None``: all)
        and the number of blocks (kept for the solve at the same ``lam``)."""
        if self._plan is not None and self._plan[0] == lam:
            return self._plan[1], self._plan[2], self._plan[3]
        W = np.flatnonzero(self.d > lam).astype(np.intp)
        self._ensure_block(lam, W)
        R, n_blocks = self._relevant(lam, W)
        self._plan = (lam, W, R, n_blocks)
        return W, R, n_blocks

    def size_at(self, lam: float) -> int:
        """Number of features the solve at ``lam`` works on."""
        W, R, _ = self.plan(lam)
        return int(W.size if R is None else R.size)

    def probe_floor(self, floor: float) -> float:
        """The lowest ``lam`` (at least ``floor``) a bound probe may solve at.

        A large operator is formed only over the features surviving at the
        lowest lam solved: a probe below it forms the block of its own
        survivors, at most PROBE_GROWTH times as many (the search's own step,
        see phases).  (Probes kept above that lam left SparsePCA on the NYT
        sample's 3,012 words without a probe: the bound's minimum lies below
        the search's last lam; spca.text's 1,024-word operator, formed whole,
        had them.)
        """
        if not 0 <= self._lam_block < math.inf:
            return floor
        m = PROBE_GROWTH * self._idx.size
        ds = np.sort(self.d)[::-1]
        return max(floor, float(ds[m]) if m < ds.size else 0.0)

    def sweeps_in_time(self, size: int, limit: TimeLimit) -> int:
        """Sweeps of a solve over ``size`` features that fit in the time left
        (at the rate measured so far; one before any)."""
        left = LIMIT_SAFETY * limit.remaining()
        if left <= 0:
            return 0
        if self._rate is None:
            return 1  # (the first timed solve measures the rate)
        per = self._rate * float(size) ** 3
        if not self._rate_of_solves:
            # a rate measured on eigensolves only: a solve costs more per unit
            # of modelled work than they do (FIRST_SOLVE_FACTOR)
            per *= FIRST_SOLVE_FACTOR
        if not per > 0:
            return self.max_sweeps  # (a clock that did not move: no rate to plan by)
        sweeps = int(max((left / per - SOLVE_BASE) / SWEEP_COST, 0.0))
        if (sweeps < 1 and self._rate_of_solves and size > RATE_REACH * self._rate_size
                and self._eig_rate is not None
                and left >= self._eig_rate * FIRST_SOLVE_FACTOR * float(size) ** 3
                * (SOLVE_BASE + SWEEP_COST)):
            # A rate measured on a much smaller solve, whose fixed cost
            # dominates, overestimates this one (a 60-feature Gaussian
            # covariance, k = 20, time_limit=10: solves over 1 and 2 features
            # planned 0 sweeps over 60 and ended the search at 0.06 s): one
            # sweep, which the solve's own check of the limit ends, if the
            # rate of the eigensolves says it fits.
            sweeps = 1
        return sweeps

    def solve(self, lam: float, tol: float, max_sweeps: int | None = None,
              role: str = "search", give_up: bool = False,
              limit: TimeLimit | None = None, refine: bool | None = None) -> DSPCAResult:
        """Solve at ``lam``; returns the result over all features and records a trial.

        ``max_sweeps`` caps this solve below the solver's own limit; ``role``
        is recorded in the trial; ``give_up`` stops a solve that cannot reach
        ``tol`` within its sweeps early (see :func:`spca._bca._hopeless`);
        with a time ``limit``, the sweeps are capped to fit the time left at
        the rate of the solves timed so far (:class:`_Stop` if none fits).  The
        result may be over the relevant features only; pass it to :meth:`full`
        for the form of :func:`spca.dspca_bca`.
        """
        budget = self.max_sweeps if max_sweeps is None else min(max_sweeps, self.max_sweeps)
        t0 = time.perf_counter()
        W, R, n_blocks = self.plan(lam)
        self._plan = None
        G = W if R is None else R
        if limit is not None and limit.limited:
            budget = min(budget, self.sweeps_in_time(G.size, limit))
            if budget < 1:
                raise _Stop(STATUS_TIME_LIMIT)
            started = limit.elapsed()
        X0, diag = self._warm_start(lam, W, G, inherited=role == "bound")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            # A bracketing solve (capped in sweeps) only decides the side of k
            # its support falls on: no support refinement, which on optima of
            # rank > 1 costs seconds per solve (its bounds stay valid cuts).
            # (refine: True or False overrides)
            bracketing = role == "search" and max_sweeps is not None
            if refine is not None:
                bracketing = not refine
            limited = limit is not None and limit.limited
            # (one relevant feature: the solve's answer in closed form)
            res = (_single_feature(self._sub(G), lam, tol, X0)
                   if G.size == 1 and not limited else None)
            if res is None:
                # (the caller's limit also ends the solve itself, between sweeps)
                # (a bracketing solve or a probe whose sweeps run out in its
                # working sets settles for their certificate: see
                # spca._bca._out_of_sweeps)
                res = _dspca_bca_checked(self._sub(G), lam, tol=tol, max_sweeps=budget,
                                         X0=X0, refine=not bracketing, give_up=give_up,
                                         settle=SETTLE and (bracketing or role == "bound"),
                                         time_limit=limit if limited else None,
                                         **self.options)
        out = _lift(res, G, self.cov.n)
        if R is not None:
            pos = np.searchsorted(W, R)
            diag[pos] = np.diag(res.X_reduced)
            self._restricted[id(out)] = (out, W, diag, n_blocks)
        else:
            diag = np.diag(res.X_reduced).copy()
        self._solved.append(_Solved(lam, W, G[res.kept], res.X_reduced, diag, res))
        work = solve_work(G.size, res.n_sweeps)
        self.work += work
        if limit is not None and limit.limited and work > 0 and G.size >= RATE_MIN_SIZE:
            self._rate = (limit.elapsed() - started) / work
            self._rate_of_solves = True
            self._rate_size = int(G.size)
        trial = LamTrial(lam=float(lam), cardinality=int(out.support.size),
                         sweeps=int(res.n_sweeps), seconds=time.perf_counter() - t0,
                         gap=float(res.gap), reduced_size=int(W.size), tol=tol,
                         upper_bound=float(res.upper_bound),
                         l1_norm=float(np.abs(res.Z_reduced).sum()), role=role)
        self.trials.append(trial)
        self.loadings.append((float(lam), out.loadings))
        if self.verbose:
            print(f"  lam={trial.lam:.10g}  cardinality={trial.cardinality:4d}  "
                  f"reduced={trial.reduced_size:5d}  sweeps={trial.sweeps:3d}  "
                  f"gap={trial.gap:.1e}  {trial.seconds:.3f}s")
        return out

    def dual_probe(self, lam: float, left: float) -> float | None:
        """A cut at ``lam`` without a solve, recorded as a trial (``sweeps=0``,
        role ``"bound"``, when it reaches DUAL_PROBE_GAP).  Returns the work
        spent (see DUAL_PROBE_WORK), accepted or not (a rejected attempt
        records no trial), or ``None`` when nothing was tried: no loadings
        yet, fewer than two features, or more work than ``left``.

        From the loadings ``y`` of the solve nearest in ``lam`` (over the
        features the solve at ``lam`` would work on, ``G``): a rank-one
        primal ``x`` polished from ``y`` (:func:`spca._certificate.polish`:
        its value ``x' S x - lam ||x||_1^2`` bounds ``phi(lam)`` from below),
        the box-feasible ``S + U`` built around it
        (:func:`spca._certificate.rank_one_dual_matrix`, soft-thresholded
        elsewhere) and the leading eigenvector of that matrix (Lanczos), from
        which the next ``x`` is polished.  At a rank-one optimum this
        alternation closes the gap in two to four rounds (the real wide sets
        at k = 50, 100: the probe solve's bound to 1e-6 relative or better).
        A round whose eigenvector lies mostly off the support of ``x`` (less
        than CLUSTER_MASS of it on the support), or from which no better
        ``x`` is polished, finds a cluster there instead: another group of
        strongly coupled features, whose soft-thresholded block keeps the
        largest eigenvalue above ``phi``.  The rank-one primal polished from
        the eigenvector over the features outside ``x`` and the earlier
        clusters gets its own rank-one dual in the matrix the next rounds
        build around ``x``; a cluster worth more than ``x`` becomes ``x``.
        (The NYT sample's fourth topic at lam = 0.0653: the rank-one dual of
        the optimal ``x`` alone was 2.3% above ``phi``, held up by a
        competing topic's words; with their cluster dual the gap closed to
        2e-13 in four rounds, 3 ms, where the probe solve took 10 ms.)  It
        gives up after DUAL_PROBE_ITERS rounds, or once a round's gap is
        above DUAL_PROBE_FAR (first round) or is not below DUAL_PROBE_SHRINK
        times the last (an optimum of higher rank: NCI60's 2,000 genes at
        k = 50, gap 0.37 after the first round, 1.8 after the second; the
        support can take two rounds to settle: tissue_gene_expression at
        k = 100, gaps 3.8e-3, 2.6e-3, 1.6e-5, 1e-9).  An accepted cut's bound is
        verified (a Cholesky factorisation, see
        :func:`spca._certificate.lambda_max_large`) and carries the rounding
        margin of a box-feasible matrix formed in floating point; its slope
        is ``k - ||x||_1^2``.  (The bound is over ``G``, the features the
        solve would work on: the others are eliminated or in blocks bounded
        by the best single feature, see :meth:`full`.)
        """
        if not self.loadings or not lam > 0:
            return None
        W, R, _ = self.plan(lam)
        G = W if R is None else R
        m = G.size
        unit = float(max(m, 1)) ** 3
        if m < 2 or (DUAL_PROBE_ITERS + 1) * DUAL_PROBE_WORK * unit > left:
            return None
        near = min(self.loadings, key=lambda item: abs(math.log(lam / item[0]))
                   if item[0] > 0 else math.inf)
        y = near[1][G]
        if not np.any(y):
            return None
        t0 = time.perf_counter()
        B = self._sub(G)
        memo: dict = {}
        gap_before = math.inf
        rounds = 0
        accepted = None
        x, lower = polish(B, lam, y, memo=memo)
        # Off the support of x, S + U is soft-thresholded, except on the
        # supports of the cluster duals made so far (``taken``, see below).
        base: NDArray[np.float64] | None = None
        taken = np.zeros(m, dtype=bool)
        for rounds in range(1, DUAL_PROBE_ITERS + 1):
            D = rank_one_dual_matrix(B, lam, x, base=base)
            estimate, y, rigorous = lambda_max_large(D, v0=x, target=None)
            gap = relative_gap(lower, estimate)
            if gap <= DUAL_PROBE_GAP:
                accepted = (x, lower, D, y, estimate, rigorous)
                break
            if (rounds == 1 and gap > DUAL_PROBE_FAR) or gap > DUAL_PROBE_SHRINK * gap_before:
                break
            gap_before = gap
            S = x.nonzero()[0]
            if float(y[S] @ y[S]) >= CLUSTER_MASS:
                # the eigenvector lies on the support: a better x from it
                x_new, lower_new = polish(B, lam, y, memo=memo)
                if lower_new > lower:
                    x, lower = x_new, lower_new
                    continue
            # The eigenvalue is held up off the support, by a cluster of
            # features that soft thresholding leaves strongly coupled: the
            # rank-one primal polished from the eigenvector there (over the
            # features neither in x nor in an earlier cluster) gets a
            # rank-one dual of its own in ``base``, which brings that
            # cluster's part of the spectrum down to about its value; a
            # cluster worth more than x becomes x.
            free = ~taken
            free[S] = False
            off = free.nonzero()[0]
            if off.size == 0 or not np.any(y[off]):
                break
            block = np.empty((off.size, off.size))
            _bca_fast.principal_block(B, off, block)
            x_c, value = polish(block, lam, y[off])
            x_full = np.zeros(m)
            x_full[off] = x_c
            if value > lower:
                x, lower = x_full, value
                continue
            base = rank_one_dual_matrix(B, lam, x_full, base=base, copy=False)
            taken[off[x_c.nonzero()[0]]] = True
        work = rounds * DUAL_PROBE_WORK * unit
        if accepted is None:
            return work
        x, lower, D, y, upper, rigorous = accepted
        if not rigorous:
            # Verified as lambda_max_large verifies a Ritz pair (theta, y): a
            # Cholesky factorisation at theta plus the residual norm (the
            # dense eigensolver's bound if it fails), without a second Lanczos
            # run.  (A block below LANCZOS_MIN got the dense bound already.)
            resid = float(np.linalg.norm(D @ y - upper * y))
            verified = shift_bound(D, upper + resid + 1e-12 * (abs(upper) + 1.0))
            upper = lambda_max_upper(D) if verified is None else verified
        upper += bracket_margin(B, lam, np.zeros((0, 0)), x)[0]
        l1 = float(np.abs(x).sum()) ** 2
        trial = LamTrial(lam=float(lam), cardinality=int(np.count_nonzero(x)), sweeps=0,
                         seconds=time.perf_counter() - t0,
                         gap=relative_gap(lower, upper), reduced_size=int(W.size),
                         tol=DUAL_PROBE_GAP, upper_bound=float(upper), l1_norm=l1,
                         role="bound")
        self.trials.append(trial)
        if self.verbose:
            print(f"  lam={trial.lam:.10g}  cardinality={trial.cardinality:4d}  "
                  f"reduced={trial.reduced_size:5d}  dual probe ({rounds} rounds)  "
                  f"gap={trial.gap:.1e}  {trial.seconds:.3f}s")
        return work + DUAL_PROBE_WORK * unit

    def kink_probe(self, lam: float, k: int, inside: NDArray[np.intp],
                   left: float) -> float | None:
        """A cut at ``lam`` (a jump's kink) from a dual solved over few features,
        recorded as a trial (``sweeps=0``, role ``"bound"``) when it is below
        every cut at ``lam`` so far.  Returns the work spent, or ``None`` when
        nothing was tried (fewer than two features in ``inside``, or the first
        round does not fit in ``left``).

        Any ``Sigma + U`` with ``|U_ij| <= lam`` bounds ``phi(lam)`` by its
        largest eigenvalue.  The relaxation is solved over a working set
        ``I`` of features, at first ``inside`` (the two sides' supports):
        ``Sigma + U`` is the restricted solve's barrier dual on ``I x I``
        (:func:`spca._certificate.barrier_matrix`; soft-thresholded when the
        restricted problem splits into blocks), soft-thresholded elsewhere,
        and built around the restricted solve's rank-one primal ``x`` as
        :func:`spca._certificate.rank_one_dual_matrix` does (the rows outside
        the support of ``x`` projected, in their box, to be orthogonal to it).
        One Lanczos run gives its largest eigenvalue and eigenvector ``y``; the
        round ends the probe when that value is within KINK_ACCEPT of the
        restricted solve's bound, relative to the cut ``U + lam k`` (the
        restricted dual then nearly holds for every feature), else the
        KINK_ADD features outside ``I`` of largest ``|y_j|`` (the rows that
        hold the eigenvalue up) join ``I`` and the restricted solve is
        repeated, warm-started, for at most KINK_ROUNDS rounds.
        Work: each restricted solve's :func:`solve_work`, and DUAL_PROBE_WORK
        eigvalsh of the features solved over per Lanczos run; a round that
        does not fit in ``left`` is not made.  The lowest Lanczos value is
        verified as in :meth:`dual_probe` (a Cholesky factorisation) and
        carries the same rounding margin; its slope is ``k - ||x||_1^2``.
        """
        # (over every feature surviving at lam: no search for its relevant
        # blocks, whose bounds cost eigensolves)
        G = W = np.flatnonzero(self.d > lam).astype(np.intp)
        self._ensure_block(lam, W)
        m = G.size
        pos = np.searchsorted(G, inside)
        pos = np.unique(pos[(pos < m) & (G[np.minimum(pos, m - 1)] == inside)])
        unit = float(max(m, 1)) ** 3
        if pos.size < 2 or solve_work(pos.size, KINK_SWEEPS) + 2 * DUAL_PROBE_WORK * unit > left:
            return None
        t0 = time.perf_counter()
        B = self._sub(G)
        work = 0.0
        best: tuple[float, NDArray[np.float64], NDArray[np.float64], NDArray[np.float64]] | None
        best = None
        X0: NDArray[np.float64] | None = None
        if self._solved:
            # The first round starts from the nearest solve's iterate over I
            # (a principal block of a positive definite matrix), when that
            # solve covered I: NCI60's 2,000 genes, k = 50, 1 sweep instead
            # of 5 cold (0.015 s against 0.13 s).
            prev = min(self._solved, key=lambda item: abs(math.log(lam / item.lam))
                       if item.lam > 0 else math.inf)
            at = np.minimum(np.searchsorted(prev.G, G[pos]), prev.G.size - 1)
            if prev.G.size and np.array_equal(prev.G[at], G[pos]):
                X0 = prev.X[np.ix_(at, at)]
        rounds = 0
        for rounds in range(1, KINK_ROUNDS + 1):
            cost = solve_work(pos.size, KINK_SWEEPS) + DUAL_PROBE_WORK * unit
            if rounds > 1 and work + cost + DUAL_PROBE_WORK * unit > left:
                break
            BI = B.take(pos, axis=0).take(pos, axis=1)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", ConvergenceWarning)
                res = _dspca_bca_checked(BI, lam, tol=KINK_TOL, max_sweeps=KINK_SWEEPS, X0=X0,
                                         refine=False, **self.options)
            work += solve_work(pos.size, res.n_sweeps)
            if res.support.size == 0:
                break
            # (formed afresh each round, one compiled pass: at most two m x m
            # matrices are held, this round's and the best so far)
            D = soft_thresholded(B, lam)
            if res._dual_columns is not None:
                # D[I, I] = the restricted solve's barrier dual (in its units;
                # a restricted problem that splits into blocks keeps none:
                # soft thresholding there)
                scale = float(BI.diagonal().max())
                D[np.ix_(pos, pos)] = barrier_matrix(BI / scale, lam / scale,
                                                     res._dual_columns) * scale
            x = np.zeros(m)
            x[pos] = res.loadings
            D = rank_one_dual_matrix(B, lam, x, base=D, copy=False)
            estimate, y, _ = lambda_max_large(D, v0=x, target=None)
            work += DUAL_PROBE_WORK * unit
            if best is None or estimate < best[0]:
                best = (estimate, D, y, x)
            if estimate - res.upper_bound <= KINK_ACCEPT * (res.upper_bound + lam * k):
                break
            # the rows outside I that hold the eigenvalue up join I
            out = np.setdiff1d(np.arange(m), pos, assume_unique=True)
            add = out[np.argsort(-np.abs(y[out]), kind="stable")[:KINK_ADD]]
            new = np.union1d(pos, add)
            # warm start: the restricted iterate, a small diagonal for the new rows
            X0 = np.diag(np.full(new.size, _bca.NEW_DIAG * np.trace(res.X_reduced) / new.size))
            at = np.searchsorted(new, pos)
            X0[np.ix_(at, at)] = res.X_reduced
            pos = new
        if best is None:
            return work
        estimate, D, y, x = best
        # Verified as in dual_probe: a Cholesky factorisation at the Ritz
        # value plus its residual norm (the dense bound if it fails).
        if m >= LANCZOS_MIN:
            resid = float(np.linalg.norm(D @ y - estimate * y))
            verified = shift_bound(D, estimate + resid + 1e-12 * (abs(estimate) + 1.0))
            upper = lambda_max_upper(D) if verified is None else verified
        else:
            upper = estimate  # (lambda_max_large's dense bound: rigorous)
        upper += bracket_margin(B, lam, np.zeros((0, 0)), x)[0]
        work += DUAL_PROBE_WORK * unit
        if any(t.lam == lam and t.upper_bound <= upper for t in self.trials):
            return work
        lower = float(x @ B @ x) - lam * float(np.abs(x).sum()) ** 2
        trial = LamTrial(lam=float(lam), cardinality=int(np.count_nonzero(x)), sweeps=0,
                         seconds=time.perf_counter() - t0, gap=relative_gap(lower, upper),
                         reduced_size=int(W.size), tol=KINK_TOL, upper_bound=float(upper),
                         l1_norm=float(np.abs(x).sum()) ** 2, role="bound")
        self.trials.append(trial)
        if self.verbose:
            print(f"  lam={trial.lam:.10g}  cardinality={trial.cardinality:4d}  "
                  f"reduced={trial.reduced_size:5d}  kink probe ({rounds} rounds)  "
                  f"gap={trial.gap:.1e}  {trial.seconds:.3f}s")
        return work

    def full(self, res: DSPCAResult) -> DSPCAResult:
        """``res`` over every feature surviving elimination at its ``lam``.

        A result solved over its relevant features gets ``Z`` zero and ``X``
        diagonal elsewhere (the upper bound holds for the whole problem: the
        other blocks are bounded by the best single feature's value).
        """
        entry = self._restricted.get(id(res))
        if entry is None or entry[0] is not res:
            return res
        _, W, diag, n_blocks = entry
        fields = {f.name: getattr(res, f.name) for f in dataclasses.fields(res)}
        fields.update(Z_reduced=_LATER, X_reduced=_LATER, kept=W, _dual_columns=None,
                      n_blocks=n_blocks)
        out = _Lifted(**fields)
        # (formed on first access: see _Lifted)
        out.__dict__["_parts"] = (res.Z_reduced, res.X_reduced,
                                  np.searchsorted(W, res.kept), diag)
        return out


# The value of a _Lifted field formed on first access.
_LATER = object()


class _Formed:
    """``Z_reduced`` or ``X_reduced`` of a :class:`_Lifted` result: a data
    descriptor (it takes precedence over the instance's dictionary, and the
    frozen dataclass's ``__init__`` sets fields through it), formed from the
    restricted solve's blocks on first access and kept."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        if self.name not in obj.__dict__:
            obj._form()
        return obj.__dict__[self.name]

    def __set__(self, obj: Any, value: Any) -> None:
        if value is not _LATER:
            obj.__dict__[self.name] = value


class _Lifted(DSPCAResult):
    """A result of :meth:`_Solver.full`: the solve over the relevant features
    re-expressed over every feature surviving elimination, whose ``W x W``
    matrices (``Z`` zero and ``X`` diagonal outside the relevant block) are
    formed when first read.  A cardinality search returns its seed solve in
    this form, and most callers (the searches of ``sparse_components`` and
    ``spca.text.sparse_topics``) never read them: forming them took 5 ms of
    CPU in a ``sparse_topics`` call on the NYT sample (five components over
    up to 890 words, two fresh ``W x W`` arrays each)."""

    Z_reduced = _Formed()
    X_reduced = _Formed()

    def _form(self) -> None:
        Zr, Xr, pos, diag = self.__dict__.pop("_parts")
        m = diag.size
        ix = np.ix_(pos, pos)
        Z = np.zeros((m, m))
        Z[ix] = Zr
        X = _bca.diagonal_matrix(diag)
        X[ix] = Xr
        self.__dict__["Z_reduced"] = Z
        self.__dict__["X_reduced"] = X


class _Stop(Exception):  # noqa: N818 - a signal, not an error
    """Ends a search early: ``status`` says why (the caller's time limit or
    Ctrl-C); the best answer so far is returned."""

    def __init__(self, status: str) -> None:
        super().__init__(status)
        self.status = status


# The work of a solve over m features with s sweeps is modelled as
# m^3 (SOLVE_BASE + SWEEP_COST s), in the unit of one eigvalsh of m features
# (measured with one BLAS thread on the tissue_gene_expression correlation,
# n = 500: a solve over every feature that converges in one sweep costs 6 to
# 11 eigvalsh of the whole matrix; one that stalls costs more per sweep, and
# the budget counts the sweeps it made).
SOLVE_BASE = 2.0
SWEEP_COST = 4.0


# A rate measured on a solve over m features is trusted for solves over at
# most this many times m features (see _Solver.sweeps_in_time).
RATE_REACH = 2

# Under a time limit, a solve is planned to end within this fraction of the
# time left (the work model is rough: a one-sweep solve over all 500 features
# of tissue_gene_expression took up to twice its modelled time).
LIMIT_SAFETY = 0.5
# Before any solve is timed, the rate comes from the soft-thresholded
# eigensolves, and a solve costs this many times its modelled work at that
# rate (the first solve over the 500 words of largest variance of the NYT
# sample, working sets and certificate included: 0.25 s, about 35 eigvalsh,
# against 6-10 modelled).
FIRST_SOLVE_FACTOR = 4.0
# Only solves over at least this many features set the rate: a smaller one is
# all overhead (a one-feature solve of 0.7 ms set a rate that planned a
# 96-feature solve at 100 s and ended a 60 s search after 0.2 s).
RATE_MIN_SIZE = 32


def solve_work(size: int, sweeps: int) -> float:
    """Modelled work of a solve (see SOLVE_BASE), in flop-like units ``m^3``."""
    return float(size) ** 3 * (SOLVE_BASE + SWEEP_COST * sweeps)


# A certificate probe over a large block can end in sweeps over the whole
# block (when its working sets do not certify, see spca._bca._solve_block),
# and such a sweep costs more eigvalsh of the block as the block grows
# (one BLAS thread, NCI60 correlation at lam = 0.55 max |Sigma_ij|, cold
# start, whole block, tol 1e-3: a sweep took 11 eigvalsh of the block at 500
# features, 16 at 1,000, 14 as a one-sweep solve and 32 per further sweep at
# 2,000; the model above says 4).  Above SWEEP_SCALE_FROM features the
# probes are planned and charged with a sweep cost that grows as
# (m / SWEEP_SCALE_FROM)^SWEEP_SCALE_POWER (below, the model of the sets it
# was calibrated on, up to 1,071 features, is kept: their probes and
# certificates are unchanged).  NCI60's 5,000 genes at k = 50: a probe
# planned with 3 sweeps of the old model (14 eigvalsh) ended its working
# sets stalled at 640 features and ran a whole-block sweep over 4,944 for
# more than 15 eigvalsh (stopped); now no probe fits there (one solve, 5.2
# eigvalsh in all, certified ratio 0.9539).  (A probe whose working sets use
# all of its sweeps still gets one whole-block sweep, see
# spca._bca._solve_block: it is charged, and can pass the plan by that one
# sweep; at 2,000 features the one-sweep probes certified within their
# working sets, 1.8-2.4 s against 9 modelled eigvalsh.)
SWEEP_SCALE_FROM = 1100
SWEEP_SCALE_POWER = 1.0


def sweep_cost(size: int) -> float:
    """Modelled work of a whole-block sweep of a certificate probe over ``size``
    features, per ``size^3`` (SWEEP_COST up to SWEEP_SCALE_FROM features)."""
    return SWEEP_COST * max(1.0, size / SWEEP_SCALE_FROM) ** SWEEP_SCALE_POWER


def probe_sweeps(size: int, left: float) -> int:
    """Sweeps of a certificate probe over ``size`` features that fit in the
    work ``left`` (planned with :func:`sweep_cost`; 0 if none fits)."""
    m3 = float(max(size, 1)) ** 3
    return int(max((left / m3 - SOLVE_BASE) / sweep_cost(size), 0.0))


def first_lam(soft: list[_ksparse.Cut], k: int, size: int, left: float) -> float:
    """Where the search's first solve goes: the soft-thresholded cut ``soft``
    of least ``U + lam k``, unless its solve over ``size`` features holds no
    whole-block sweep in the work ``left`` (planned with :func:`sweep_cost`,
    see :func:`probe_sweeps`); then the largest ``lam`` whose cut is within
    FIRST_SLACK of the least (see FIRST_SLACK)."""
    best = min(soft, key=lambda c: c.upper_bound + c.lam * k)
    if size <= SWEEP_SCALE_FROM or probe_sweeps(size, left) >= 1:
        return best.lam
    level = (best.upper_bound + best.lam * k) * (1.0 + FIRST_SLACK)
    return max(c.lam for c in soft if c.upper_bound + c.lam * k <= level)


def _c_order(S: NDArray[np.float64]) -> NDArray[np.float64]:
    """The symmetric ``S`` as a C-ordered array: itself, its transpose (for
    Fortran order, no copy) or a copy."""
    if S.flags.c_contiguous:
        return S
    if S.flags.f_contiguous:
        return S.T
    return np.ascontiguousarray(S)


# Covariances up to this size are checked for positive semidefiniteness once
# (one Cholesky factorisation) rather than block by block as the search
# widens them.
PSD_ONCE_MAX = 2048


def _check_psd_once(cov: _Covariance) -> None:
    """Check a small covariance operator once and mark it (see PSD_ONCE_MAX)."""
    if cov.n <= PSD_ONCE_MAX and not cov.psd_checked:
        idx = np.arange(cov.n, dtype=np.intp)
        check_psd(cov.block(idx), idx)
        cov.psd_checked = True


# Sweep limit of the solves that only bracket the target cardinality.
SEARCH_SWEEPS = 20
# The search's first solve goes to the soft-thresholded cut of least bound;
# at that lam the relaxation can sit in a cardinality jump, where its optimum
# is not rank one, the working sets stall and a whole-block sweep follows
# (NCI60's 5,000 genes, k = 100: lam = 0.548, 3 sweeps, 591 s, gap 0.87,
# no lower bound).  When the work left holds no such sweep in the probes'
# model (sweep_cost), the first solve goes to the largest lam whose soft cut
# is within this fraction of the least (see first_lam).  NCI60's 5,000
# genes, one BLAS thread, loaded machine: at k = 100 the cut at 0.5733 is
# 0.25% above the least (0.5483); its solve converged in 2 sweeps, 10.7 s,
# and the search took 2.2x eigvalsh (certified ratio 0.9476, was 0.9410
# after 21.6x).  At k = 50 the cut at 0.5995 is 0.74% above the least
# (0.5733): with a 1% slack its solve ran for minutes (stopped), so the
# slack stays below that.
FIRST_SLACK = 0.005
# ... and is solved to this relative gap (its cut and its tangent place the
# certificate's probes, whose own gap is BOUND_TOL; with k nonzeros it is
# confirmed at tol, as a search_tol solve): its working sets stop at the
# round that certifies this gap instead of going on to tol.
FIRST_TOL = 1e-3
# ... over at most this many features (the features surviving at the least
# soft cut).  Above, the first solve goes to the search's tolerance: at
# NCI60's 5,000 genes, k = 50, the loose solve stopped after one sweep of
# two, and the work it left paid for a phase-1 solve at 0.9 lam inside the
# jump that ran whole-block sweeps for over 8 minutes (stopped); solved to
# the search's tolerance, the search ends after that one solve at 1.5x
# eigvalsh (CPU, one BLAS thread), certified ratio 0.9539 as before FIRST_TOL.
FIRST_TOL_MAX = 2048

# Smallest ratio between consecutive lams of the downward phase of the search.
STEP_MIN = 0.7
# ... and once the last solve has at least k / 2 nonzeros (a solve past the
# crossing, where the support is large, costs the most; measured on the NYT
# sample's topics and random Gaussian and spiked searches).
STEP_MIN_NEAR = 0.8
# A jump: once the bracket is narrower than JUMP_RTOL (relative) and this many
# bisections in a row have left the cardinalities at both of its ends
# unchanged, the relaxation's path is taken to jump over k there, and the
# k-support is built from the bracketing supports (each further bisection of
# a jump costs a solve at the crossing, the hardest place to solve).
JUMP_STALL = 3
JUMP_RTOL = 1e-2
# A jump recognised from the path's shape, at any width: JUMP_SOLVES
# bisections in a row each left the cardinality on its side of k, closing
# less than half of that side's distance to k, while both ends of the
# bracket are at least JUMP_FRACTION k (and JUMP_MIN) away from k (a path
# that approaches k gradually, as the k = 10 searches of the real wide sets
# do, closes more per bisection; the issue's gene-expression search bisected
# a jump from 26 to 84-86 nonzeros at k = 50 seven times).
JUMP_SOLVES = 2
JUMP_FRACTION = 0.25
JUMP_MIN = 4  # (a jump of a few features is cheap to bisect, and its ends are answers)
# Across a jump of the first solve (fewer than k nonzeros where the soft cut
# of least bound is, and no soft cut to interpolate the l1 to k; a search
# from the top steps to that soft lam, at most 0.9 times lam), the next
# solve goes to the geometric middle of that lam and the largest soft lam
# whose l1 exceeds k, at most JUMP_STEP times lam: the near side of the jump,
# where the bound's minimum is, up to JUMP_STEP_MAX features (at NCI60's
# 5,000 genes, k = 50, the one-sweep solve there ran for minutes; the step
# of at most 0.9 is left to the answer's budget, see ANSWER_WORK).  NCI60's
# 2,000 genes, k = 50: 0.5483 between 0.5733 and 0.5244, 102 nonzeros in one
# sweep, its cut 1.6% below the first's; the step of at most 0.9 went to
# 0.516, 148 nonzeros, a cut 2% above it, and the probe then placed inside
# the jump at 0.5467 gave the bound, 33.436: the certified ratio went from
# 0.9713 to 0.9725 with one solve fewer (see JUMP_PROBES for the kink).
JUMP_STEP = 0.97


# A first solve below k whose l1 is less than this fraction of the
# soft-thresholded l1 at its lam is taken to sit above a jump: the soft cuts'
# shape (see _soft_probe, which scales the soft l1 by that ratio, 0.83-0.97
# on the real wide sets' gradual paths) does not place the crossing, and the
# next solve steps across it (see JUMP_STEP).  NCI60's 2,000 genes at k = 40:
# 19 nonzeros at 0.5733, l1 17.3 against a soft l1 of 72.5 (0.24); the soft
# probe's step went to 0.4652 (200 nonzeros, 2.5 s of CPU), far below the
# jump at about 0.553.
SOFT_JUMP = 0.5


def _soft_jump(cut: _ksparse.Cut, soft: list[_ksparse.Cut]) -> bool:
    """Whether the solve ``cut`` has an l1 below SOFT_JUMP times the
    soft-thresholded cut's at the same lam (``False`` without one)."""
    at = [c for c in soft if c.lam == cut.lam and c.l1 > 0]
    return bool(at) and math.isfinite(cut.l1) and cut.l1 < SOFT_JUMP * at[0].l1


def _card_at(trials: list[LamTrial], lam: float, default: int) -> int:
    """Cardinality of the latest solve at ``lam`` (``default`` if none)."""
    for t in reversed(trials):
        if t.lam == lam:
            return t.cardinality
    return default


def _predict(trials: list[LamTrial], target: float) -> float | None:
    """``lam`` where the log-log secant through the last two solves reaches ``target``."""
    pts = [(t.lam, t.cardinality) for t in trials if t.lam > 0 and t.cardinality > 0]
    if len(pts) < 2:
        return None
    (l1, c1), (l2, c2) = pts[-2], pts[-1]
    if l1 == l2 or c1 == c2:
        return None
    slope = (math.log(c2) - math.log(c1)) / (math.log(l2) - math.log(l1))
    if slope >= 0:
        return None
    return math.exp(math.log(l2) + (math.log(target) - math.log(c2)) / slope)


def _bound_gain(trials: list[LamTrial], k: int, lam: float, best: float,
                floor: float) -> float:
    """How much a solve at ``lam`` could lower the bound ``best``, by the
    tangents of the solves made: ``g(lam) = phi(lam) + lam k`` is convex
    with subgradient ``k - sum |Z*_ij|``, and ``phi(lam_t)`` is at least the
    solve's objective, so ``g(lam)`` is above every tangent line through
    ``(lam_t, objective_t + lam_t k)``.  (Tangents of unconverged solves are
    approximate: this only decides where the work goes, never a bound.)"""
    low = -math.inf
    for t in trials:
        if t.lam < floor or not (math.isfinite(t.upper_bound) and math.isfinite(t.l1_norm)):
            continue
        value = t.upper_bound - (t.gap * abs(t.upper_bound) if math.isfinite(t.gap) else 0.0)
        low = max(low, value + t.lam * k + (k - t.l1_norm) * (lam - t.lam))
    return best - low


def _search(cov: _Covariance, k: int, *, tol: float, search_tol: float, max_solves: int,
            lam_rtol: float, max_sweeps: int, options: dict[str, Any],
            verbose: bool, solver: _Solver | None = None,
            limit: TimeLimit | None = None, budgeted: bool = True,
            refine: bool = True,
            late_start: _Pick | None = None,
            neighbours: tuple[tuple[str, NDArray[np.intp]], ...] = (),
            reserve: float = 0.0, starts: _Starts | None = None,
            descent: bool = False, fine: bool = True) -> CardinalityResult:
    """Cardinality search over a covariance operator (see :func:`dspca_cardinality`).

    A ``solver`` shared between searches (:func:`cardinality_path`) carries
    its warm starts and its solves, which are cuts of every ``k``'s bound.
    ``limit`` is the caller's time limit (shared by every search of a call);
    ``budgeted=False`` lifts the work budget and always searches (for a
    caller who wants the relaxation's own answer); ``refine=False`` skips the
    support refinement of the solve that confirms a ``k``-support (for a
    caller whose branch and bound proves the answer).  ``late_start`` (a
    smaller support of a path) is the first start of the answer when
    ``limit`` has already passed: greedy steps from it are the answer then.
    ``neighbours`` are further starts of the answer (``(origin, support)``:
    the supports that :func:`cardinality_path` found for other ``k``);
    ``starts`` how many cluster starts the answer gets and which get swaps
    (:data:`STARTS`, or :data:`PATH_STARTS` with neighbours);
    ``descent`` adds the cut of :func:`_descent_cut` at DESCENT_SHIFT times
    the best soft-thresholded cut's ``lam`` (over at most DESCENT_MAX
    features), and then makes no probe that the search's solves say cannot
    lower the bound (see :func:`_certify`).  Under a limit, the search ends
    ``reserve`` seconds before it (time kept for later searches that share
    it, see :func:`spca._deflation._components`).  ``fine`` allows the
    certificate's probes down to FINE_RTOL where the relaxation is small
    (not for a path's searches, whose shared solves and own probes, see
    :func:`_probe_path`, place them).
    """
    t_start = time.perf_counter()
    limit = TimeLimit(None) if limit is None else limit.before(reserve)
    d = cov.diag
    ds = np.sort(d)[::-1]
    npos = int(np.count_nonzero(d > 0))
    if npos < k:
        raise ValueError(
            f"k={k} nonzero loadings requested but only {npos} feature(s) have positive "
            f"variance; a feature with zero variance is never selected"
        )
    if solver is None:
        solver = _Solver(cov, max_sweeps=max_sweeps, options=options, verbose=verbose)
    first = len(solver.trials)
    solver.n_searches += 1
    results: list[DSPCAResult] = []
    cur_tol = search_tol
    # Theorem 1: at lam >= v_(k) at most k - 1 features survive.
    hi = float(ds[k - 1])
    lo = math.nan
    found: DSPCAResult | None = None
    reason = ""
    status: str | None = None
    crossed = 0  # steps across a jump (see JUMP_STEP)
    # The answer first, without a solve: forward greedy selection and the
    # truncated power method, improved by swaps; and the bounds that need no
    # solve.  The relaxation then improves the bound and, where it can, the
    # answer, within SEARCH_WORK (and BOUND_EIGS) eigvalsh of work.
    if not solver._idx.size:
        solver._ensure_block(hi, np.flatnonzero(d > hi).astype(np.intp))
    soft: list[_ksparse.Cut] = []
    timing: list[tuple[float, float]] = []  # (under a limit: see _descent_cut)
    vectors: tuple[NDArray[np.float64], ...] = ()
    P, B_pool = _pool_block(solver, k, []) if solver.outside == 0 else (d[:0], None)
    if (solver.outside == 0 and int(np.count_nonzero(d[P] > 0)) == npos
            and not limit.expired()):
        # Soft-thresholded eigensolves: cuts that need no DSPCA solve, near the
        # lam that minimises the bound, and their eigenvector as a start.
        started = limit.elapsed() if limit.limited else 0.0
        pending: dict[_ksparse.Cut, NDArray[np.float64]] | None = (
            {} if LAZY_SOFT and not limit.limited else None)
        soft, v = _soft_cuts(B_pool, k, limit=limit, pending=pending, timing=timing)
        for cut, vec in (pending or {}).items():
            solver.unverified[cut] = (B_pool, vec)
        vectors = (v,)
        if limit.limited and solver._rate is None:
            # Under a time limit, the seconds per unit of work (one eigensolve
            # of m features is m^3) measured here place the first solve.
            size = max(float(P.size), 1.0)
            solver._rate = (limit.elapsed() - started) / (max(len(soft), 1) * size**3)
            solver._eig_rate = solver._rate
    started = limit.elapsed() if limit.limited else 0.0
    prior = late_start if late_start is not None and limit.expired() else None
    # (the late start is the neighbour below: it is not grown twice)
    early = _ksparse_support(solver, k, [], None, vectors=vectors, limit=limit, prior=prior,
                             extra=neighbours if prior is None else (), starts=starts)
    # (under a time limit: how long a k-sparse pick takes, see below)
    pick_seconds = limit.elapsed() - started if limit.limited else 0.0
    free, extra = _free_bounds(solver, k, early.covers, limit)
    guide = list(extra)  # (the cuts whose slopes place the probes: not the soft ones)
    solver.guide_cuts += guide
    extra += soft
    if descent and soft and B_pool is not None and B_pool.shape[0] <= DESCENT_MAX:
        at = DESCENT_SHIFT * min(soft, key=lambda c: c.upper_bound + c.lam * k).lam
        extra.append(_descent_cut(B_pool, at, limit=limit, eig_seconds=_eig_seconds(
            timing, B_pool.shape[0])))
    solver.free_cuts += extra
    work0 = solver.work
    budget = max(SEARCH_WORK * float(npos) ** 3, WORK_FLOOR) if budgeted else math.inf

    def sweeps_left(lam: float, cap: int) -> int:
        """Sweeps the search's work budget allows a solve at lam (at most cap)."""
        if not budgeted:
            return cap
        size = max(solver.size_at(lam), 1)
        left = budget - (solver.work - work0)
        return min(cap, int(max((left / float(size) ** 3 - SOLVE_BASE) / SWEEP_COST, 0.0)))

    answer_budget = max(ANSWER_WORK * float(npos) ** 3, WORK_FLOOR) if budgeted else math.inf
    answer_work = 0.0

    def run(lam: float, gated: bool = True, loose: float = 0.0) -> DSPCAResult | None:
        """Solve at lam; update the bracket; return the result if it is exact.

        A ``gated`` solve that cannot lower the bound (see :func:`_bound_gain`)
        serves the answer only: those get ANSWER_WORK eigvalsh in all.  The
        solve's gap is at most ``max(cur_tol, loose)`` (a looser one is
        confirmed at ``tol`` when it has k nonzeros, as a search_tol one)."""
        nonlocal lo, hi, cur_tol, answer_work
        # A bracketing solve only needs the side of k its support falls on:
        # it gets SEARCH_SWEEPS sweeps (past the crossing, where the support
        # is large, a solve can need hundreds), fewer if the work budget says so.
        cap = sweeps_left(lam, SEARCH_SWEEPS)
        if cap < 1:
            raise _Stop("work")
        for_answer = False
        if gated and budgeted:
            best = min([free] + [c.upper_bound + c.lam * k for c in extra]
                       + [t.upper_bound + t.lam * k for t in solver.trials
                          if t.lam >= solver.outside and math.isfinite(t.upper_bound)])
            for_answer = _bound_gain(solver.trials, k, lam, best,
                                     solver.outside) <= BOUND_RTOL * best
            if for_answer and answer_work + solve_work(solver.size_at(lam), 1) > answer_budget:
                raise _Stop("answer")
        work_before = solver.work
        solve_tol = max(cur_tol, loose)
        res = solver.solve(lam, solve_tol, cap, limit=limit)
        if for_answer:
            answer_work += solver.work - work_before
        results.append(res)
        card = res.support.size
        if card == k and (solve_tol > tol or not res.converged):
            # Confirm at the requested accuracy and sweep limit before
            # accepting (warm-started from the solve just made). A confirming
            # solve whose gap cannot reach tol within the sweeps stops early:
            # it would not be accepted, and the k-support does not need it
            # (standardised digits, component 8: 1.1 s of 500 sweeps that
            # ended at gap 4.9e-4).  Without work left for it the search
            # ends (the answer without a solve stands).
            cap = sweeps_left(lam, max_sweeps)
            if cap < 1:
                raise _Stop("work")
            cur_tol = tol
            res = solver.solve(lam, tol, cap, give_up=True, limit=limit, refine=refine)
            results.append(res)
            card = res.support.size
        if card == k:
            return res
        if card > k:
            lo = lam
        elif lam < hi:
            hi = lam
        return None

    def phases() -> None:
        nonlocal found, reason, lo, hi, crossed
        # Phase 0: the first solve where the soft-thresholded cuts put the
        # minimum of the bound (the relaxation there usually has more than k
        # nonzeros: a bracket and the cut that matters in one solve); a
        # small problem (see WORK_FLOOR) is searched from the top down.
        started_low = False  # (Phase 0 solved, at fewer than k nonzeros)
        if PHASE0 and soft and WORK_FLOOR < budget < math.inf:
            size = solver.size_at(min(soft, key=lambda c: c.upper_bound + c.lam * k).lam)
            lam0 = first_lam(soft, k, size, budget - (solver.work - work0))
            if lam0 < hi:
                found = run(lam0, gated=False,
                            loose=FIRST_TOL if size <= FIRST_TOL_MAX else 0.0)
                if found is not None:
                    return
                started_low = math.isnan(lo)
        # Phase 1: lower lam until some solve gives more than k nonzeros.
        lam = hi
        if k == npos and math.isnan(lo):
            # Every feature with positive variance is wanted: try ordinary PCA first.
            lam = 0.0
            found = run(lam)
        while found is None and math.isnan(lo):
            if len(solver.trials) - first >= max_solves:
                reason = f"max_solves={max_solves} reached before a bracket was found"
                break
            if lam == 0.0:
                best = max(t.cardinality for t in solver.trials[first:])
                reason = (
                    f"at most {best} nonzero loadings are reachable: at lam=0 (ordinary PCA "
                    f"of the features with positive variance) the loadings have "
                    f"{solver.trials[-1].cardinality} nonzeros, fewer than k={k}"
                )
                break
            m = int(np.count_nonzero(d > lam))
            # At most twice the surviving features and at most a factor STEP_MIN
            # (STEP_MIN_NEAR once half of k is reached) on lam per step (the cost
            # of a solve grows quickly with the reduced size, and a solve far past
            # the crossing is a poor warm start); within that,
            # halve lam or follow the log-log secant through the last two solves
            # towards k + 1 nonzeros.
            last = solver.trials[-1].cardinality if len(solver.trials) > first else 0
            step = STEP_MIN_NEAR if 2 * last >= k else STEP_MIN
            floor_lam = max(float(ds[2 * m]) if 2 * m < d.size else 0.0, step * lam)
            pred = _predict(solver.trials[first:], k + 1)
            across = False
            if pred is None and soft:
                # One solve so far: where its l1 reaches k by the shape of the
                # soft-thresholded cuts (see _soft_probe; sum |Z_ij| <= the
                # cardinality, so the cardinality there is at least k).
                made = [_ksparse.Cut(t.lam, t.upper_bound, t.l1_norm)
                        for t in solver.trials[first:]]
                pred = (None if started_low and _soft_jump(made[-1], soft)
                        else _soft_probe(made, soft, k, 0.0, lam))
                if pred is None:
                    # (out of their range, e.g. across a jump: the geometric
                    # middle of lam and the largest lam below whose
                    # soft-thresholded l1 exceeds k, see JUMP_STEP)
                    below = [c.lam for c in soft if c.lam < lam and c.l1 > k]
                    if below and started_low and solver.size_at(lam) <= JUMP_STEP_MAX:
                        pred, across = math.sqrt(lam * max(below)), True
                    elif below:
                        pred = max(below)
            cand = 0.5 * lam if pred is None else pred
            nxt = min(max(cand, floor_lam), (JUMP_STEP if across else 0.9) * lam)
            if nxt < ZERO_FRACTION * ds[k - 1]:
                nxt = 0.0
            lam = nxt
            crossed += across
            found = run(lam)

        # Phase 2: safeguarded interpolation in log(lam) (halving while lo = 0).
        ends: list[tuple[int, int]] = []  # cardinalities at (lo, hi) before each bisection
        stalls = 0  # bisections in a row that closed less than half the distance to k
        while found is None and not math.isnan(lo):
            if lo > 0 and hi / lo - 1.0 <= lam_rtol:
                break
            if lo > 0:
                ends.append((_card_at(solver.trials[first:], lo, k + 1),
                             _card_at(solver.trials[first:], hi, k - 1)))
                if (hi / lo - 1.0 <= JUMP_RTOL and len(ends) > JUMP_STALL
                        and len(set(ends[-JUMP_STALL - 1:])) == 1):
                    break
            if lo == 0 and hi <= lam_rtol * ds[k - 1]:
                break
            if len(solver.trials) - first >= max_solves:
                reason = f"max_solves={max_solves} reached with the bracket [{lo:.10g}, {hi:.10g}]"
                break
            c_lo = _card_at(solver.trials[first:], lo, k + 1)
            c_hi = _card_at(solver.trials[first:], hi, min(k - 1, int(np.count_nonzero(d > hi))))
            if lo > 0:
                # Interpolate the cardinality linearly in log(lam), safeguarded to the
                # middle of the bracket (so the log-width shrinks by 0.75 at least).
                frac = (c_lo - k) / max(c_lo - c_hi, 1)
                frac = min(max(frac, 0.25), 0.75)
                mid = math.exp(math.log(lo) + frac * (math.log(hi) - math.log(lo)))
            else:
                mid = 0.5 * hi
            found = run(mid)
            if found is None and lo > 0:
                # A jump, from the path's shape: the solve stayed on one side of
                # k and closed less than half of that side's distance to k,
                # while both ends are at least JUMP_FRACTION k from it.
                c = solver.trials[-1].cardinality
                before = c_lo - k if c > k else k - c_hi
                ends_far = min((c if c > k else c_lo) - k,
                               k - (c if c < k else c_hi)) >= max(JUMP_FRACTION * k, JUMP_MIN)
                stalls = stalls + 1 if abs(c - k) > 0.5 * before and ends_far else 0
                if stalls >= JUMP_SOLVES:
                    c_lo = _card_at(solver.trials[first:], lo, k + 1)
                    c_hi = _card_at(solver.trials[first:], hi, k - 1)
                    reason = (
                        f"no lam gives exactly k={k} nonzero loadings that the search can find: "
                        f"the relaxation's cardinality jumps from {c_lo} at lam={lo:.10g} to "
                        f"{c_hi} at lam={hi:.10g} ({JUMP_SOLVES} bisections in a row closed less "
                        f"than half of the distance to k)")
                    break


    # (a small problem is searched all the same: see WORK_FLOOR)
    cuts0 = [free] + [c.upper_bound + c.lam * k for c in extra]
    certified = (WORK_FLOOR < budget < math.inf
                 and early.variance >= min(cuts0) * (1.0 - CERTIFIED_RTOL))
    try:
        if certified:
            raise _Stop("certified")
        if limit.expired():
            raise _Stop(STATUS_TIME_LIMIT)  # (no solve fits: none is planned)
        phases()
    except _Stop as stop:
        if stop.status in (STATUS_TIME_LIMIT, STATUS_INTERRUPTED):
            status = stop.status
        reason = _STOP_REASONS.get(stop.status, "")
    except KeyboardInterrupt:
        status = STATUS_INTERRUPTED
        reason = _STOP_REASONS[STATUS_INTERRUPTED]
    trials = solver.trials[first:]
    seed: DSPCAResult | None = None
    if found is not None:
        seed = found
        message = (f"lam={found.lam:.10g} gives exactly k={k} nonzero loadings "
                   f"({len(trials)} solves)")
    elif results:
        # The solve of nearest cardinality; on ties the sparser one, then the
        # latest (closest to the crossing).
        order = sorted(range(len(results)),
                       key=lambda i: (abs(results[i].support.size - k),
                                      results[i].support.size > k, -i))
        seed = results[order[0]]
        if not reason:
            card_hi = [t.cardinality for t in trials if t.lam == hi]
            at_hi = (f"{card_hi[-1]}" if card_hi
                     else f"at most {int(np.count_nonzero(d > hi))} (Theorem 1)")
            card_lo = [t.cardinality for t in trials if t.lam == lo]
            reason = (
                f"no lam gives exactly k={k} nonzero loadings: the relaxation's cardinality "
                f"jumps from {card_lo[-1] if card_lo else '?'} at lam={lo:.10g} to {at_hi} "
                f"at lam={hi:.10g} (relative width "
                f"{hi / lo - 1 if lo > 0 else math.inf:.1e}, lam_rtol={lam_rtol:g})"
            )
        message = reason
    else:
        message = f"no DSPCA solve: {reason}"
    if seed is not None and not seed.converged:
        message += (f"; the relaxation's solve at lam={seed.lam:.10g} stopped at relative gap "
                    f"{seed.gap:.1e} > tol={tol:g} (the k-support below does not rely on it)")
    pick = early
    stopped = status is not None
    if results and not stopped and limit.remaining() < 2.0 * pick_seconds:
        # (no time left for a pick from the relaxation's supports, which can
        # take longer than the first: pruning a large support)
        status, stopped = STATUS_TIME_LIMIT, True
    if results and not stopped:
        try:
            # The relaxation's supports as further starts (they win ties).
            other = _ksparse_support(solver, k, results, found, heuristics=False,
                                     prior=early, limit=limit, starts=starts)
            if not early.variance > other.variance * (1 + _ksparse.SWAP_RTOL):
                pick = other
            if limit.expired():
                raise _Stop(STATUS_TIME_LIMIT)  # (the pick may have been cut short)
            bound, bound_lam = _certify(solver, k, pick.covers, first, free, extra, guide,
                                        limit=limit, soft=soft, hopeless=descent,
                                        dual=True, jumps_made=crossed, fine=fine,
                                        capped=True)
        except _Stop as stop:
            status, stopped = stop.status, True
        except KeyboardInterrupt:
            status, stopped = STATUS_INTERRUPTED, True
    if stopped:
        # The best so far: the bound from the solves made, no more work.
        bound, bound_lam = _certify(solver, k, pick.covers, first, free, extra, guide,
                                    limit=limit, probes=False)
        said = _STOP_REASONS[status]
        if said in message:
            # (the stop ended the solves: the message says why once)
            message = message.replace(said, f"{said}: the best answer and bound so far", 1)
        else:
            message += f"; {said}: the best answer and bound so far"
    elif not results:
        bound, bound_lam = _certify(solver, k, pick.covers, first, free, extra, guide,
                                    limit=limit, probes=not certified)
    bound = _certified(bound, k, pick.variance)
    if pick.support.size < k:
        message += (f"; the best variance found is reached with {pick.support.size} nonzero "
                    f"loadings only (a degenerate leading eigenvalue): no vector of that "
                    f"variance with k={k} nonzeros was found")
    message += (f"; support: {pick.origin}, certified ratio "
                f"{pick.variance / bound if bound > 0 else math.nan:.4f}")
    if seed is None:
        # No solve: the empty component at the largest variance (exact).
        seed = _bca._empty_result(cov.n, float(d.max()), tol, True, t_start)
    else:
        seed = solver.full(seed)
    return CardinalityResult(
        result=seed, k=k, relaxation_exact=found is not None, message=message,
        trials=tuple(solver.trials[first:]), bracket=(lo, hi),
        seconds=time.perf_counter() - t_start, support=pick.support,
        loadings=pick.loadings, explained_variance=pick.variance, origin=pick.origin,
        variance_upper_bound=bound, bound_lam=bound_lam, status=status,
    )


# The search stops at once when the answer reaches the bounds that need no
# solve to this relative precision (e.g. k equal features of the largest
# variance).
CERTIFIED_RTOL = 1e-12
# Work of the relaxation's solves of one search, and of the solves that
# tighten its certificate, in units of one eigvalsh of the features of
# positive variance (see SOLVE_BASE).
SEARCH_WORK = 12.0
# ... of which the solves that cannot lower the bound (the tangents of the
# solves made say so, see _bound_gain: a bracketing solve on the far side of
# the bound's minimum) may spend this many: they serve the relaxation's own
# k-support only, which on the real wide sets (tissue_gene_expression,
# pd_speech, permeability_qsar at k = 50, 100) tied with the answer without a
# solve every time, at up to 0.35 s per solve near the crossing.  Solves over
# few features (k ~ 10, high lam) still fit.
ANSWER_WORK = 0.25
# Whether the first solve goes where the soft-thresholded cuts put the bound's
# minimum (else the search starts from the top).
PHASE0 = True
BOUND_EIGS = 16.0
# ... but never less than this (the work of about 160 sweeps over 32
# features, a few milliseconds): a small problem gets the whole search, and
# reports the relaxation's support where it has k nonzeros.
WORK_FLOOR = 32.0**3 * (SOLVE_BASE + SWEEP_COST * 160)

_STOP_REASONS = {
    "work": "the search's work budget (SEARCH_WORK eigvalsh) ran out",
    "answer": ("the next solve could not lower the bound (by BOUND_RTOL) and the work "
               "budget of the solves for the answer only (ANSWER_WORK eigvalsh) ran out"),
    "certified": "the answer reaches the bound that needs no solve",
    STATUS_TIME_LIMIT: "the time limit ended the search",
    STATUS_INTERRUPTED: "interrupted (Ctrl-C)",
}


# -- exactly k: the support and its certificate ------------------------------------

# Forward greedy selection from scratch is tried as one more start up to this k
# (it costs one eigensolve of a growing block per step), and the swap search
# runs up to this support size.
GREEDY_MAX = 64
SWAPS_MAX = 64
# Above GREEDY_MAX, forward greedy selection from nothing is a start of the
# first answer only under a time limit (where its growth is the answer that
# is always completed in time).
GREEDY_ALONE = False
# At most this many solves are added to tighten the certificate, each to this
# relative gap and sweep limit (its upper bound is certified either way);
# none once the tangents promise less than BOUND_RTOL relative improvement,
# or once they have cost more than BOUND_WORK times the search (in sweeps
# times the square of the number of features solved over, a deterministic
# measure of work).
BOUND_WORK = 0.5
BOUND_SOLVES = 4
BOUND_TOL = 1e-3
BOUND_SWEEPS = 5
BOUND_RTOL = 2e-3
# ... and each probe's solve is planned (its sweeps capped, see
# probe_sweeps) to cost at most this many times the work of the solver's
# solves so far (solve_work's model: sweeps times the cube of the features
# solved over; a path's shared solver counts all its searches), or
# WORK_FLOOR where that is more, and is not made when one sweep does not
# fit.  The budget above counts sweeps times the square of all the surviving
# features, which is blind to the blocks a solve works on: on the NYT
# sample's topics, with the cluster duals of _Solver.dual_probe, a probe at
# the candidates' variance floor (a block of 195 features far from rank
# one), planned at 280 times its search's work, took 59 ms for a cut that
# did not lower the bound.  A survey of 35 searches (the NYT sample's topics
# with each transform; tissue, qsar and pd_speech at k = 10, 50, 100;
# NCI60's 2,000 genes at k = 10, 50; digits, breast cancer and wine,
# standardised and raw, k = 5, 10; the NYT top 300 words' covariance and
# correlation, k = 5, 10, 20; one BLAS thread): at 3 and 10 every certified
# ratio was that of 938e7df (before the cluster duals) or higher; at 1,
# four fell by 0.2-1.4%.  Without the WORK_FLOOR, the first searches of a path over the
# 60-feature Gaussian covariance (90 units of work) had a probe of 4.7e6
# cut, and 13 of its 60 certified ratios moved by up to 5e-4.
PROBE_SOLVE_WORK = 10.0
# ... and down to this where the relaxation is small (at most FINE_CARD
# nonzeros near the probe: solves of a few milliseconds).  Tissue gene
# expression (500 genes), k = 10: certified ratio 0.9892257 -> 0.9896157
# (issue 27 was filed at 0.9896116), 6 -> 9 solves at the same time.
FINE_RTOL = 2e-5
FINE_CARD = 32
# ... and the solve of the best cut, when its gap is above this, is solved
# again to it (warm, within the probes' budget).
TIGHT_TOL = 1e-6
# ... when that gap is at most this (a solve that stopped looser, e.g. one
# settled inside a jump where the optimum is not rank one, see SETTLE, does
# not reach TIGHT_TOL in the probes' few sweeps: NCI60's 2,000 genes at
# k = 75, 0.5561, gap 4.2e-2 -> 3.7e-2 in 1.3 s of CPU, about 3 eigvalsh,
# the bound 47.354 -> 47.329; a 400-feature factor correlation at k = 20,
# tests/test_ksparse_wide.py: gap 1.0e-2 -> 2.8e-2, a cut above the bound).
TIGHT_FROM = 1e-2
# Probes inside a jump of the search's cardinalities (see _inside_jump) over
# at least _bca.WS_MIN features.
JUMP_PROBES = 1
# A search that stepped across a jump (see JUMP_STEP) counts that step's
# solve as its probe inside the jump.  The optimum at the jump's kink mixes
# both sides' supports: a rank-one dual probe fails there (its cut 33.48 at
# NCI60's 2,000 genes, k = 50), and solves over every feature stall (a probe
# capped at one sweep ran a whole-block sweep, 14 s; three sweeps warm from
# the near side reached 33.279 at 9.8-13x eigvalsh in all).  The kink gets
# a probe over the two sides' supports instead (see KINK_PROBES).
# Steps across a jump are made over at most this many features (at 5,000 a
# one-sweep solve on the near side ran whole-block sweeps for minutes).
JUMP_STEP_MAX = 2048
# A probe of a large operator (formed over the features surviving at the
# lowest lam solved) may go down to the lam where this many times as many
# features survive.
PROBE_GROWTH = 2
# The largest eigenvalue (the cut at lam = 0) is computed when the whole
# covariance is at hand and has at most this many features of positive
# variance.
EIG_BOUND_MAX = 400


class _Pick(NamedTuple):
    support: NDArray[np.intp]
    loadings: NDArray[np.float64]
    variance: float
    origin: str
    covers: tuple[NDArray[np.float64], bool]  # the pool's block, and whether it is all of Sigma


def _pool_block(solver: _Solver, k: int,
                seeds: list[NDArray[np.intp]]) -> tuple[NDArray[np.intp], NDArray[np.float64]]:
    """The pool of candidate features and their dense block (diagonal exact).

    The pool is the block the search already holds (every feature for a
    covariance up to ``PSD_ONCE_MAX`` features or given densely, else those
    surviving at the lowest ``lam`` solved), restricted to positive variance;
    when that cannot hold ``k`` features or a seed, the ``2k`` features of
    largest variance and the seeds are formed instead.
    """
    cov, d = solver.cov, solver.d
    P = solver._idx[d[solver._idx] > 0]
    if (P.size < solver._idx.size and getattr(cov, "inactive_rows_zero", False)
            and solver._idx.size == cov.n and np.array_equal(np.diag(solver._block), d)):
        # (a removal deflation's view: the removed features' rows are zero,
        # they can add no variance, and the whole view is the pool, no copy)
        P = solver._idx
    inside = all(np.isin(S, P).all() for S in seeds)
    cached = solver._pool
    if (P.size >= k and inside and cached is not None and cached[0] is solver._block
            and np.array_equal(cached[1], P)):
        return cached[1], cached[2]  # (the picks of one search share it)
    if P.size >= k and inside:
        B = solver._sub(P)
        if B is solver._block and np.array_equal(np.diag(B), d[P]):
            return P, B  # read only
        if B is solver._block:
            B = B.copy()
        B[np.diag_indices(P.size)] = d[P]
        solver._pool = (solver._block, P, B)
        return P, B
    else:
        pos = np.flatnonzero(d > 0)
        top = pos[np.argsort(-d[pos], kind="stable")[:max(2 * k, k + 8)]]
        P = np.unique(np.concatenate([top, *seeds, P]).astype(np.intp))
        B = cov.block(P)
    B[np.diag_indices(P.size)] = d[P]
    return P, B


def _ksparse_support(solver: _Solver, k: int, results: list[DSPCAResult],
                     found: DSPCAResult | None, *, heuristics: bool = True,
                     vectors: tuple[NDArray[np.float64], ...] = (),
                     prior: _Pick | None = None, limit: TimeLimit | None = None,
                     extra: tuple[tuple[str, NDArray[np.intp]], ...] = (),
                     against: float = -math.inf, starts: _Starts | None = None) -> _Pick:
    """A support of exactly ``k`` features from the relaxation's solves, improved
    by swaps; forward greedy selection and the truncated power method are
    further starts (see ``_ksparse``) unless ``heuristics`` is False, and so
    is the truncated power method from each of ``vectors`` (over the pool of
    :func:`_pool_block` without seeds); the support of a ``prior`` pick is
    one more start (after the relaxation's), and so is each ``(origin,
    support)`` of ``extra`` (after every other start); a start more than
    SWAP_RACE below the variance ``against`` gets no swaps (``starts``: the
    number of cluster starts and that fraction, :data:`STARTS` by default).

    Once the caller's ``limit`` has passed, no further start is made, no
    swap search goes on (see :meth:`spca._ksparse._Pool.swaps`) and the
    best support completed so far is returned: one start is always
    completed to ``k`` features (one of ``k`` features if there is one, else
    the first: forward greedy selection from nothing when it is the only
    one); a greedy growth stops at the limit (after one step at least) and
    is completed without a search (:meth:`spca._ksparse._Pool.complete`),
    so the first answer costs one greedy step and a few eigensolves of
    ``k`` features however short the limit.
    """
    d = solver.d
    starts_budget = STARTS if starts is None else starts

    def late() -> bool:
        """Whether the caller's limit has passed (never without one)."""
        return limit is not None and limit.expired()

    starts: list[tuple[str, NDArray[np.intp]]] = []
    if found is not None:
        starts.append(("relaxation", found.support))
    else:
        below = [r for r in results if 0 < r.support.size < k]
        above = [r for r in results if r.support.size > k]
        if below:
            r = max(reversed(below), key=lambda r: r.support.size)
            starts.append((f"grown from {r.support.size}", r.support))
        if above:
            r = min(reversed(above), key=lambda r: r.support.size)
            starts.append((f"pruned from {r.support.size}", r.support))
    if prior is not None:
        starts.append((prior.origin.split("+")[0], prior.support))
    P, B_raw = _pool_block(solver, k, [S for _, S in (*starts, *extra)])
    # The moves work in units of the pool's largest variance, scaled by a
    # power of two (exact): the secular equation squares couplings, which
    # underflow (or overflow) at the ends of the accepted range of variances.
    # Every floating-point step commutes with an exact power-of-two scaling
    # inside the normal range, so the same support comes out at every scale;
    # a pool already within UNIT_RANGE of 1 is used as is (no copy).
    f = _unit_scale(B_raw)
    B = B_raw if 1.0 / UNIT_RANGE <= f <= UNIT_RANGE else B_raw * f
    if B is B_raw:
        f = 1.0
    # The picks of one search over the same block share their moves, and so
    # the supports where a swap search ended (the answer's support, a prior
    # start of the pick from the relaxation's supports, is not scanned again).
    if solver._moves is None or solver._moves.B is not B:
        solver._moves = _ksparse._Pool(B)
    pool = solver._moves
    seeds = [(name, np.searchsorted(P, S)) for name, S in starts]
    limited = limit is not None and limit.limited
    if heuristics and (k <= GREEDY_MAX or (not seeds and (limited or GREEDY_ALONE))):
        # (above GREEDY_MAX without a time limit, the truncated power starts
        # below are the first answer; see GREEDY_ALONE)
        seeds.append(("greedy", np.zeros(0, dtype=np.intp)))
    # Every start is completed to k features first; the swap searches then
    # run from the best completed start down (a swap search from a poor
    # start climbs for dozens of swaps to a local optimum, 1.3 s of a 1.7 s
    # search on pd_speech at k = 50): a start whose variance before swaps is
    # more than SWAP_RACE below the best local optimum found so far is kept
    # as it is.  The first start still wins ties (the relaxation's first).
    e = np.zeros(pool.m)
    e[int(np.argmax(np.where(pool.usable, pool.d, -np.inf)))] = 1.0
    done: list[tuple[str, NDArray[np.intp]]] = []
    ready = any(S.size == k for _, S in seeds)
    for name, S in seeds:
        if late() and (done or (ready and S.size != k)):
            continue  # (the first completed start, or one needing no completion)
        done.append((name, _complete_start(pool, S, k, limit if limited else None)))
    # The truncated power method (Yuan & Zhang 2013; cheap: k columns of B
    # per step) from the feature of largest variance is one more start.
    if (heuristics and not late()) or not (done or extra or limited):
        done.append(("truncated power", pool.truncated_power(e, k)))
    if not done and limited:
        # (no start at all: the answer that needs no search)
        done.append(("largest variances", pool.complete(np.zeros(0, dtype=np.intp), k)))
    if heuristics and k > 1 and pool.m > k and not late():
        # From the feature whose k - 1 largest couplings are largest (a tight
        # cluster, e.g. duplicated features, that greedy selection from the
        # largest variance can miss), looked for among the CLUSTER_ROWS rows
        # of largest d_i + (k - 1) max_j |B_ij| (the search's row maxima).
        bound = np.where(pool.usable, pool.d + (k - 1) * f * solver._rowmax[P], -np.inf)
        top = np.argsort(-bound, kind="stable")[:CLUSTER_ROWS]
        n_starts = starts_budget.cluster if solver.outside == 0 else 1
        if n_starts == 1:
            # (one start: the rows by decreasing bound until a bound falls
            # below the best exact score, which no later row can then pass;
            # the same row as scoring all of them, 2-6 rows scored instead of
            # 64 on the NYT sample's 1,024 candidate words: 0.55 -> 0.05 ms of
            # CPU per search)
            picked = _best_cluster_row(B, pool.d, bound, top, k)
        else:
            A = np.abs(B[top])
            A[np.arange(top.size), top] = 0.0
            rows = pool.d[top] + np.partition(A, pool.m - k + 1, axis=1)[:, pool.m - k + 1:].sum(
                axis=1)
            picked = top[np.argsort(-rows, kind="stable")[:n_starts]]
        for i in picked:
            if late():
                break
            g = np.zeros(pool.m)
            g[int(i)] = 1.0
            done.append(("truncated power", pool.truncated_power(g, k)))
    for x0 in vectors:
        if x0.size == pool.m and np.any(x0) and not late():
            done.append(("truncated power", pool.truncated_power(x0, k)))
    for name, S in extra:  # (last: they win no ties)
        if late():
            break  # (under a limit only)
        done.append((name, _complete_start(pool, np.searchsorted(P, S), k,
                                           limit if limited else None)))
    moves = _race(pool, k, done, limit, against * f, starts_budget.race)
    # The first start wins ties (the relaxation's own support first).
    name, best = moves[0]
    for other, mv in moves[1:]:
        if mv.variance > best.variance * (1 + _ksparse.SWAP_RTOL):
            name, best = other, mv
    # A last truncated-power start from the best component so far.
    if not late():
        x = np.zeros(pool.m)
        x[best.support] = _ksparse.top_eig(B[np.ix_(best.support, best.support)])[1]
        S = pool.truncated_power(x, k)
        if (not np.array_equal(S, best.support) and not late()
                and pool.variance(S) >= (1.0 - starts_budget.race) * against * f):
            mv = (pool.swaps(S, limit) if k <= SWAPS_MAX
                  else _ksparse.Moves(S, pool.variance(S), 0))
            if mv.variance > best.variance * (1 + _ksparse.SWAP_RTOL):
                name, best = "truncated power", mv
    origin = name + (f"+{best.swaps} swap{'s' if best.swaps != 1 else ''}" if best.swaps else "")
    # The loadings: a vector of the leading eigenspace on the support with as
    # many nonzeros as it allows (more than the one eigenvector LAPACK
    # returns when the top eigenvalue is degenerate); with fewer than k, an
    # equal-variance support whose vector has k is looked for by swaps. The
    # support reported is the set of nonzero loadings.
    S = best.support
    variance, v = _ksparse.spread_top(B[np.ix_(S, S)])
    if np.count_nonzero(v) < k and k <= SWAPS_MAX:
        T, t_val, t_v = pool.fill(S, variance, limit)
        if np.count_nonzero(t_v) > np.count_nonzero(v):
            S, variance, v = T, t_val, t_v
            origin += "+equal-variance swaps"
    nz = v != 0
    support = P[S[nz]]
    loadings = np.zeros(solver.cov.n)
    loadings[support] = v[nz]
    covers = (int(np.count_nonzero(d[P] > 0)) == int(np.count_nonzero(d > 0))
              and solver.outside == 0)
    return _Pick(support.astype(np.intp), loadings, variance / f, origin, (B_raw, covers))


def _best_cluster_row(B: NDArray[np.float64], d: NDArray[np.float64],
                      bound: NDArray[np.float64], top: NDArray[np.intp],
                      k: int) -> NDArray[np.intp]:
    """The row ``i`` of ``top`` (rows by decreasing ``bound``, an upper bound
    on the score) of largest score ``d_i`` plus its ``k - 1`` largest
    off-diagonal magnitudes, the first on ties, as a 1-element array; each
    row's score is computed as :func:`_ksparse_support` computes it for many
    rows (a partition of the row), and the scan stops once a bound is below
    the best score by more than rounding (a row of equal score comes later
    and loses the tie)."""
    m = B.shape[0]
    best, picked = -np.inf, top[:1]
    for i in top:
        if bound[i] < best - 1e-12 * abs(best):
            break
        a = np.abs(B[i])
        a[i] = 0.0
        score = d[i] + np.partition(a, m - k + 1)[m - k + 1:].sum()
        if score > best:
            best, picked = score, np.array([i])
    return picked


def _complete_start(pool: _ksparse._Pool, S: NDArray[np.intp], k: int,
                    limit: TimeLimit | None) -> NDArray[np.intp]:
    """A start of :func:`_ksparse_support` made ``k`` features: grown greedily
    or pruned; a greedy growth that the caller's ``limit`` cut short is
    completed without a search (:meth:`spca._ksparse._Pool.complete`)."""
    if S.size < k:
        S = pool.grow(S, k, limit)
        return pool.complete(S, k) if S.size < k else S
    return pool.prune(S, k) if S.size > k else S


# Rows scored exactly for the cluster starts of _ksparse_support, and the
# number of starts taken from the best of them (SparsePCA(3, cardinality=5)
# on a standardised 300 x 1000 Gaussian matrix: explained variance 4.8705
# with 1 or 8 starts, 4.9259 with 32; main's search: 4.9086).  An operator
# over candidate features (spca.text) keeps one: with more, the NYT sample's
# first topic becomes the sports one (variance 1.1276 against the business
# topic's 1.0688), no longer the paper's Table 1 order -- a choice left to
# the text pipeline.
CLUSTER_ROWS = 64
CLUSTER_STARTS = 32
# A start whose variance before swaps is more than this fraction below the
# best local optimum found so far gets no swap search of its own (0.05 left
# dspca_cardinality(k=40) of a 60-feature Gaussian covariance at 3.0 s, 2.8 s
# of it in four swap searches; 0.01: 0.9 s, the same variance).
SWAP_RACE = 0.01


class _Starts(NamedTuple):
    """How many cluster starts an answer gets (``cluster``) and how far below
    the best local optimum a start may be and still get swaps (``race``)."""

    cluster: int
    race: float


STARTS = _Starts(CLUSTER_STARTS, SWAP_RACE)
# In cardinality_path, where the supports of the neighbouring k are starts
# too (grown and pruned to k): a 60-feature Gaussian covariance, k = 1..60,
# gave the same supports, variances and bounds with 8 cluster starts and
# 0.003 as with 32 and 0.01, and the starts and swaps took 2.6 s of CPU
# instead of 11.0 s (one BLAS thread).
PATH_STARTS = _Starts(8, 0.003)


def _race(pool: _ksparse._Pool, k: int, starts: list[tuple[str, NDArray[np.intp]]],
          limit: TimeLimit | None = None, against: float = -math.inf,
          race: float = SWAP_RACE) -> list[tuple[str, _ksparse.Moves]]:
    """Swap searches from ``starts`` (``k`` features each), best start first;
    the moves in the order of ``starts`` (see SWAP_RACE, or ``race``; none
    once ``limit`` has passed; each stops when it passes;
    ``against``: a variance already reached, in the pool's units)."""
    # (one eigensolve per distinct start: the truncated-power starts of the
    # real wide sets often end on the same support)
    memo: dict[bytes, float] = {}
    values = []
    for _, S in starts:
        key = np.asarray(S, dtype=np.intp).tobytes()
        if key not in memo:
            memo[key] = pool.variance(S)
        values.append(memo[key])
    out: list[_ksparse.Moves | None] = [None] * len(starts)
    best = against
    seen: dict[bytes, _ksparse.Moves] = {}
    for i in sorted(range(len(starts)), key=lambda i: -values[i]):
        S = starts[i][1]
        key = np.sort(S).tobytes()
        if key in seen:
            out[i] = seen[key]
        elif (k <= SWAPS_MAX and values[i] >= (1.0 - race) * best
              and (limit is None or not limit.expired())):
            out[i] = pool.swaps(S, limit)
        else:
            out[i] = _ksparse.Moves(np.sort(S), values[i], 0)
        seen[key] = out[i]
        best = max(best, out[i].variance)
    return [(name, mv) for (name, _), mv in zip(starts, out, strict=True)]


# A pool whose largest variance is within this factor of 1 is not rescaled
# (squares of its entries stay far from underflow and overflow).
UNIT_RANGE = 2.0**100


def _unit_scale(B: NDArray[np.float64]) -> float:
    """A power of two ``f`` with ``f * max B_ii`` in ``[0.5, 1)`` (1 for an
    empty or zero diagonal)."""
    top = float(np.max(np.diag(B))) if B.shape[0] else 0.0
    if not top > 0:
        return 1.0
    return math.ldexp(1.0, -math.frexp(top)[1])


def _fine_probe(trials: list[LamTrial], cuts: list[_ksparse.Cut], k: int,
                low: float, ceil: float) -> float | None:
    """A probe the tangents promise between FINE_RTOL and BOUND_RTOL for, at
    a ``lam`` where the relaxation is small: the search's solve nearest to
    it (in ``log(lam)``) has at most FINE_CARD nonzeros; else ``None``."""
    lam = _ksparse.next_probe(cuts, k, low, ceil, FINE_RTOL)
    if lam is None or not trials:
        return None
    near = min(trials, key=lambda t: abs(math.log(t.lam / lam)) if t.lam > 0 else math.inf)
    return lam if near.cardinality <= FINE_CARD else None


def _work(trials: list[LamTrial]) -> float:
    return float(sum(t.sweeps * float(t.reduced_size) ** 2 for t in trials))


def _free_bounds(solver: _Solver, k: int, covers: tuple[NDArray[np.float64], bool],
                 limit: TimeLimit | None = None) -> tuple[float, list[_ksparse.Cut]]:
    """The bounds that need no solve: the smallest of them, and the cut at
    ``lam = 0`` (the largest eigenvalue) when it is computed (not once the
    caller's ``limit`` has passed: it costs an eigensolve)."""
    d, floor = solver.d, solver.outside
    B, whole = covers
    extra: list[_ksparse.Cut] = []
    free = _ksparse.diagonal_bound(d, k, floor)
    if whole and solver.n_searches > SORTED_FROM and limit is not None and limit.expired():
        free = min(free, _gershgorin_sorted(solver, B, k))
    elif whole:
        # (under a limit: the same bound up to rounding, from the rows that
        # can reach it only)
        # (the solver's row maxima when B is its block: one pass over B less)
        rowmax = solver._rowmax[solver._idx] if B is solver._block else None
        free = min(free, k_sparse_row_bound(B, k, rowmax) if limit is not None and limit.limited
                   else _ksparse.gershgorin_bound(B, k))
        if B.shape[0] <= EIG_BOUND_MAX and not (limit is not None and limit.expired()):
            # (with LAPACK's rounding margin: a cut must be an upper bound)
            lmax, v = lambda_max_upper(B, vector=True)
            extra.append(_ksparse.Cut(0.0, lmax, float(np.abs(v).sum() ** 2)))
    return free, extra


# Past a time limit, the searches of one solver after this many use
# _gershgorin_sorted (one sort of every row, then each k in O(n)); the first
# ones use k_sparse_row_bound (a few rows' partial sorts: tissue's 500 genes,
# k = 10-100, 0.05-0.06 eigvalsh of CPU each against 0.14 for the sort).
SORTED_FROM = 3


def _gershgorin_sorted(solver: _Solver, B: NDArray[np.float64], k: int) -> float:
    """:func:`spca._ksparse.gershgorin_bound` of ``B`` from its rows'
    off-diagonal magnitudes sorted once per solver and block: for the
    searches of a path past a time limit, one sort for every ``k`` instead
    of a partial sort per ``k`` (the NYT sample's 500 words, k = 1..40: the
    partial sorts took 0.1-0.2 s past a limit of one eigvalsh).  The same
    bound up to the rounding of the sums."""
    m = B.shape[0]
    d = np.diag(B)
    if m == 0:
        return 0.0
    if k <= 1 or m == 1:
        return float(d.max())
    if solver._gershgorin is None or solver._gershgorin[0] is not B:
        A = np.abs(B)
        np.fill_diagonal(A, 0.0)
        A.sort(axis=1)
        solver._gershgorin = (B, np.cumsum(A[:, ::-1], axis=1))
    sums = solver._gershgorin[1]
    return float((d + sums[:, min(k - 1, m - 1) - 1]).max())


# Eigensolves of the soft-thresholded covariance that place the certificate
# (see _soft_cuts): at most SOFT_EVALS, the first at SOFT_START times the
# largest coupling, then down by SOFT_STEP, then bisection to SOFT_RTOL.
SOFT_EVALS = 7
SOFT_START = 0.9
SOFT_STEP = 0.7
SOFT_RTOL = 0.05
# Under a time limit, the next of those eigensolves is made only if the time
# left is at least this many times the last one's (lam goes down: the blocks
# grow; one over the whole pool costs about an eigvalsh).
SOFT_GROWTH = 2.0
# ... and only if its blocks' eigensolves fit in half the time left, their
# time scaled from the last one's as the sum of the cubed block sizes, that
# sum taken as at least SOFT_FLOOR**3 for the last one (an evaluation's own
# O(n^2) passes cost more than the eigensolves of a few small blocks: scaled
# from those alone, the cubes' rate forbade every larger block). With no
# cap, NCI60's 2,000 genes at t = 2 eigvalsh spent 1.85 s in one evaluation
# after the limit.
SOFT_FLOOR = 128


def _soft_cut(B: NDArray[np.float64], lam: float, k: int,
              v0: NDArray[np.float64] | None = None,
              max_cubes: float = math.inf) -> tuple[_ksparse.Cut, NDArray[np.float64],
                                                     float] | None:
    """The cut of ``lam`` that needs no DSPCA solve, and its eigenvector (see
    :func:`_soft_cut_eval`; always verified)."""
    out = _soft_cut_eval(B, lam, k, v0, max_cubes)
    return None if out is None else out[:3]


def _soft_cut_eval(B: NDArray[np.float64], lam: float, k: int,
                   v0: NDArray[np.float64] | None = None, max_cubes: float = math.inf,
                   verify: bool = True) -> tuple[_ksparse.Cut, NDArray[np.float64],
                                                 float, bool] | None:
    """The cut of ``lam`` that needs no DSPCA solve, and its eigenvector.

    ``phi(lam) <= lambda_max(Sigma + U)`` for every symmetric ``U`` with
    ``|U_ij| <= lam``; the soft-thresholded ``T = Sigma + U`` (off-diagonal
    entries shrunk towards 0 by ``lam``, diagonal ``Sigma_ii - lam``) is
    block diagonal over the components of ``|Sigma_ij| > lam``, so its
    largest eigenvalue costs eigensolves of those blocks only.  Its
    derivative in ``lam`` gives the cut's slope ``k - l1`` with
    ``l1 = v' (I + sign(Sigma) on the blocks) v``.  Also returns the sum of
    the cubes of the sizes of the blocks solved (a measure of their
    eigensolves' work); ``None`` (no eigensolve made) when it exceeds
    ``max_cubes`` (a caller's time limit, see :func:`_soft_cuts`).

    A block of at least ``_certificate.LANCZOS_MIN`` features is bounded by
    Lanczos from ``v0`` (a vector over ``B``; default all ones), verified by
    a Cholesky factorisation (see :func:`spca._certificate.lambda_max_large`;
    rigorous, a few 1e-9 above the dense eigensolver's value at most on the
    real wide sets, in a third to two thirds of its time).  With
    ``verify=False`` such a block gets its Lanczos (Ritz) value only, an
    estimate from below without the Cholesky factorisation: the cut is then
    not a bound until :func:`_verify_cuts` verifies it (the fourth value
    returned says whether it is verified).
    """
    m = B.shape[0]
    verified = True
    d = np.diag(B)
    v = np.zeros(m)
    best_i = int(np.argmax(d))
    top, l1 = float(d[best_i]) - lam, 1.0
    v[best_i] = 1.0
    # The components of |B_ij| > lam, in one compiled pass over the upper
    # triangle (numbered in the order of their first features, as SciPy's
    # connected_components; a feature without an edge is a component of its
    # own, whose value d_i - lam is at most top's).
    Bc_all = np.ascontiguousarray(B, dtype=np.float64)
    labels = np.empty(m, dtype=np.intp)
    excess = np.empty(m)
    n_comp = _bca_fast.threshold_components(Bc_all, np.arange(m, dtype=np.intp), lam,
                                            labels, excess)
    sizes = np.bincount(labels, minlength=n_comp)
    cubes = float(np.sum(sizes[sizes > 1] ** 3.0))
    if cubes > max_cubes:
        return None
    win: tuple[NDArray[np.intp], NDArray[np.float64], NDArray[np.float64]] | None = None
    for c in np.flatnonzero(sizes > 1):
        idx = np.flatnonzero(labels == c)
        Bc = Bc_all if idx.size == m else Bc_all[np.ix_(idx, idx)]
        # T = B - clip(B, -lam, lam): B_ij - lam sign(B_ij) where |B_ij| > lam,
        # 0 elsewhere (the same floating-point values as shrinking each entry
        # by lam), diagonal B_ii - lam
        Tc = Bc - np.clip(Bc, -lam, lam)
        np.fill_diagonal(Tc, np.diag(Bc) - lam)
        # (U formed in floating point leaves the box by eps (|S_ij| + lam)
        # at most: a Weyl margin of eps m (max S_ii + lam))
        if idx.size >= LANCZOS_MIN:
            start = np.ones(idx.size) if v0 is None or not np.any(v0[idx]) else v0[idx]
            val, vec, rigorous = lambda_max_large(Tc, v0=start,
                                                  target=math.inf if verify else None)
            verified = verified and rigorous
        else:
            val, vec = lambda_max_upper(Tc, vector=True)
        val += idx.size * np.finfo(float).eps * (float(d.max()) + lam)
        if val > top:
            top = float(val)
            win = (idx, vec, Tc)
    if win is not None:
        idx, vec, Tc = win
        v = np.zeros(m)
        v[idx] = vec
        # l1 = v' M v with M = sign(B_ij) where |B_ij| > lam (where T_ij != 0),
        # 1 on the diagonal: the derivative of the cut in lam
        Mc = np.sign(Tc)
        np.fill_diagonal(Mc, 1.0)
        l1 = float(vec @ (Mc @ vec))
    return _ksparse.Cut(lam, top, l1), v, cubes, verified


# Without a time limit, the soft-thresholded cuts of the search are first
# estimated by Lanczos alone (no Cholesky verification), and only a cut that
# would give the least bound is verified, when the bound is reported (see
# _verify_cuts): the same bound, for one verification instead of one per
# evaluation.  (Under a time limit every cut is verified as it is made.)
# pd_speech (751 features) at k = 100, one BLAS thread, loaded machine: the
# soft cuts took 0.047 s of CPU instead of 0.117 s; tissue_gene_expression
# 0.025 s instead of 0.038 s; the estimates within 5e-10 of the verified
# values on the three smaller real wide sets at k = 10, 50, 100.
LAZY_SOFT = True


def _verify_cuts(solver: _Solver, cuts: list[_ksparse.Cut], k: int) -> list[_ksparse.Cut]:
    """``cuts`` with each estimated soft-thresholded cut replaced by its
    verified one wherever it may give the least ``U + lam k``.

    An estimate is a Ritz value, at most the largest eigenvalue it stands
    for, so its verified cut is at least as high: while the least cut is an
    estimate, it is verified (:func:`_soft_cut`, from its eigenvector) and
    the least is taken again.  Every estimate left is then above a verified
    cut, and so is the cut it stands for: the least cut is a bound.  The
    verified cuts are kept in ``solver.verified`` for every later call."""
    def value(c: _ksparse.Cut) -> float:
        return c.upper_bound + c.lam * k

    out = [solver.verified.get(c, c) for c in cuts]
    while out:
        best = min(out, key=value)
        entry = solver.unverified.pop(best, None)
        if entry is None:
            break
        B, vec = entry
        verified = _soft_cut(B, best.lam, k, vec)
        assert verified is not None  # (no cap)
        solver.verified[best] = verified[0]
        out = [solver.verified.get(c, c) for c in out]
    return out


def _soft_cuts(B: NDArray[np.float64], k: int, evals: int = SOFT_EVALS,
               limit: TimeLimit | None = None,
               pending: dict[_ksparse.Cut, NDArray[np.float64]] | None = None,
               timing: list[tuple[float, float]] | None = None
               ) -> tuple[list[_ksparse.Cut], NDArray[np.float64]]:
    """Cuts of the k-sparse certificate from soft-thresholded eigensolves, and
    the eigenvector of the best one (a start for the k-sparse answer).

    From the top (``lam`` just below the largest coupling, where the blocks
    are small and the eigensolves cheap) ``lam`` goes down by SOFT_STEP until
    a cut's slope says the minimum is above it, then bisects in ``log(lam)``;
    at most ``evals`` eigensolves (one once ``limit`` has passed or leaves
    less than SOFT_GROWTH times the last one's time, or when the blocks of
    the next would take more than half the time left, see SOFT_FLOOR; under
    a limit, ``timing`` gets each one's seconds and cubed block sizes).

    With ``pending`` (a dict) and no time limit, the blocks of Lanczos size
    get their Ritz value only (see :func:`_soft_cut_eval`): each cut so
    estimated is recorded in ``pending`` with its eigenvector, and is a bound
    only once :func:`_verify_cuts` has verified it (see LAZY_SOFT)."""
    m = B.shape[0]
    off = np.abs(B - np.diag(np.diag(B)))
    top_off = float(off.max()) if m > 1 else 0.0
    cuts: list[_ksparse.Cut] = []
    best: tuple[float, NDArray[np.float64]] | None = None
    if not top_off > 0:
        return cuts, np.zeros(m)
    lo, hi = 0.0, top_off
    lam = SOFT_START * top_off
    v: NDArray[np.float64] | None = None
    timed = limit is not None and limit.limited
    last, last_cubes = 0.0, 0.0
    for i in range(evals):
        if i and timed and limit.remaining() < SOFT_GROWTH * last:
            break  # (the next eigensolves, over larger blocks, would pass the limit)
        t0 = limit.elapsed() if timed else 0.0
        cap = math.inf
        if timed and i and last > 0:
            # (the blocks whose eigensolves, scaled from the last one's time
            # as their cubed sizes, fit in half the time left; see SOFT_FLOOR)
            cap = max(last_cubes, SOFT_FLOOR**3) * (0.5 * limit.remaining() / last)
        if pending is not None and not timed:
            lazy = _soft_cut_eval(B, lam, k, v, verify=False)
            assert lazy is not None  # (no cap without a limit)
            cut, v, last_cubes, verified = lazy
            if not verified:
                pending[cut] = v
        else:
            out = _soft_cut(B, lam, k, v, cap)
            if out is None:
                break  # (its eigensolves would not fit in the time left)
            cut, v, last_cubes = out
        last = limit.elapsed() - t0 if timed else 0.0
        if timing is not None and timed:
            timing.append((last, last_cubes))
        cuts.append(cut)
        g = cut.upper_bound + lam * k
        if best is None or g < best[0]:
            best = (g, v)
        if k - cut.l1 > 0:
            hi = lam  # g increases: its minimum is at a lower lam
        else:
            lo = lam
        if limit is not None and limit.expired():
            break
        if lo == 0.0:
            lam = SOFT_STEP * lam
        elif hi / lo - 1.0 <= SOFT_RTOL:
            break
        else:
            lam = math.sqrt(lo * hi)
    assert best is not None
    return cuts, best[1]


# Dual descent from the best soft-thresholded cut (see _descent_cut), for the
# searches of sparse_components and SparsePCA: DESCENT_ITERS accelerated
# projected gradient steps on lambda_max(Sigma + U) smoothed with
# DESCENT_MU times the largest variance over the DESCENT_RANK top
# eigenvalues, the bound evaluated every DESCENT_CHECK steps; only over at
# most DESCENT_MAX features (each step costs about one eigensolve of them).
# SparsePCA(3, cardinality=5) on StandardScaler of a 300 x 1,000 Gaussian
# matrix, first component at the best soft cut's lam (one BLAS thread):
# certified ratio 0.9218 -> 0.944 after 40 steps, 4.4 s of CPU with a
# second eigensolve per step for the bound (prototype).
DESCENT_ITERS = 45
DESCENT_RANK = 24
DESCENT_MU = 0.01
DESCENT_CHECK = 10
DESCENT_MAX = 2048
# ... at this fraction of the best soft cut's lam (the descent lowers
# lambda_max more in a wider box): on the data above, certified ratios
# 0.944/0.935/0.948 at 1.0, 0.953/0.935/0.950 at 0.95, 0.956/0.929/0.946
# at 0.9 (45 steps; measured on that one instance only).
DESCENT_SHIFT = 0.95
# Under a time limit the descent is started only when the time left holds
# this many eigensolves of its block (tissue's 500 genes, one thread: its
# first bound took 0.8 eigvalsh and each step 1.4, all made after the
# limit when it started with less than one left: t = 1 eigvalsh ended at
# 1.04 of the line 1.1 t + eigvalsh).
DESCENT_LIMIT_EIGS = 4.0


def _eig_seconds(timing: list[tuple[float, float]], m: int) -> float:
    """Seconds of one eigensolve of ``m`` features, scaled as the cube of
    the size from the soft-thresholded eigensolves timed under a limit
    (``timing``: their seconds and cubed block sizes; small blocks cost more
    per cube, so this errs long), or 0 without them."""
    seconds = sum(s for s, _ in timing)
    cubes = sum(c for _, c in timing)
    return seconds / cubes * float(m) ** 3 if cubes > 0 else 0.0


def _descent_cut(B: NDArray[np.float64], lam: float, iters: int | None = None,
                 limit: TimeLimit | None = None,
                 eig_seconds: float = 0.0) -> _ksparse.Cut:
    """A cut at ``lam`` from a dual point better than the soft-thresholded one.

    ``phi(lam) <= lambda_max(Sigma + U)`` for every symmetric ``U`` with
    ``|U_ij| <= lam`` (the dual of DSPCA), so every such ``U`` gives the cut
    ``lambda_max(Sigma + U) + lam k`` of the k-sparse bound.  From the
    soft-thresholded ``U`` (see :func:`_soft_cut`), accelerated projected
    gradient steps (FISTA, step ``mu``) on the smoothed
    ``mu log sum_i exp(lambda_i(Sigma + U) / mu)`` over the box lower it;
    the gradient uses the DESCENT_RANK largest eigenpairs only (the bound
    does not depend on it: it is the largest eigenvalue of a feasible ``U``,
    computed with LAPACK's rounding margin and a Weyl margin for forming
    ``Sigma + U``).  Its slope is unknown (``l1`` is ``nan``): it bounds, it
    places no probe.  ``iters`` steps (DESCENT_ITERS by default), none once
    the caller's ``limit`` has passed.  Under a limit nothing is made (the
    cut is ``inf``) unless the time left holds DESCENT_LIMIT_EIGS eigensolves
    of ``B`` (``eig_seconds`` each, predicted by the caller; the first bound
    is one, each step about 1.4), and a step is made only while the time
    left holds two of the first bound's eigensolve as timed.
    """
    timed = limit is not None and limit.limited
    if timed and limit.remaining() < DESCENT_LIMIT_EIGS * eig_seconds:
        return _ksparse.Cut(lam, math.inf, math.nan)
    from scipy.linalg import eigh

    iters = DESCENT_ITERS if iters is None else iters
    m = B.shape[0]
    top = float(np.max(np.diag(B)))
    mu = DESCENT_MU * top
    rank = min(DESCENT_RANK, m)
    U = -np.clip(B, -lam, lam)
    np.fill_diagonal(U, -lam)
    margin = m * np.finfo(float).eps * (top + lam)
    t0 = limit.elapsed() if timed else 0.0
    best = lambda_max_upper(B + U) + margin
    first = limit.elapsed() - t0 if timed else 0.0
    Y, t = U.copy(), 1.0
    for it in range(iters):
        if limit is not None and (limit.expired()
                                  or (timed and limit.remaining() < 2.0 * first)):
            break
        w, V = eigh(B + Y, subset_by_index=[m - rank, m - 1])
        p = np.exp((w - w[-1]) / mu)
        G = (V * (p / p.sum())) @ V.T
        G = 0.5 * (G + G.T)
        nxt = np.clip(Y - mu * G, -lam, lam)  # (a gradient step of 1 / L = mu, projected)
        t_next = 0.5 * (1.0 + math.sqrt(1.0 + 4.0 * t * t))
        Y = nxt + ((t - 1.0) / t_next) * (nxt - U)
        U, t = nxt, t_next
        if (it + 1) % DESCENT_CHECK == 0 or it == iters - 1:
            best = min(best, lambda_max_upper(B + U) + margin)
    return _ksparse.Cut(lam, float(best), math.nan)


def _certify(solver: _Solver, k: int, covers: tuple[NDArray[np.float64], bool],
             first: int, free: float, extra: list[_ksparse.Cut], guide: list[_ksparse.Cut],
             *, limit: TimeLimit | None = None, probes: bool = True,
             soft: list[_ksparse.Cut] | None = None,
             hopeless: bool = False, dual: bool = False,
             jumps_made: int = 0, fine: bool = False,
             capped: bool = False) -> tuple[float, float]:
    """``min`` over the solves at ``lam >= outside`` of ``U(lam) + lam k``, after at
    most BOUND_SOLVES more solves where they lower it (none if not ``probes``;
    their work is capped by BOUND_WORK times the search's and BOUND_EIGS
    eigvalsh, and with ``capped`` each one's by PROBE_SOLVE_WORK times the
    modelled work of the solver's solves so far, or WORK_FLOOR), and the bounds
    ``free`` that need no solve: ``(bound, lam)``
    (``lam`` is ``nan`` for a bound without a solve); ``extra`` are cuts
    without a solve, of which ``guide`` also place the probes (a
    soft-thresholded cut's slope is not that of ``phi``).  The trials from
    ``first`` on are this search's.  Raises :class:`_Stop` when ``limit``
    leaves no time for a probe (the bound so far is then recomputed without
    probes).  While the solves' tangents do not bracket the minimum, the
    soft-thresholded cuts ``soft`` place the probe (see :func:`_soft_probe`).
    With ``hopeless``, no probe is made when every solve of this search has
    a cut more than PROBE_HOPELESS above the bound so far (solves of at most
    BOUND_SWEEPS sweeps that far from the bound will not lower it).  With
    ``dual`` (and no time limit) each probe is first tried without a solve
    (:meth:`_Solver.dual_probe`, see DUAL_PROBES).  ``jumps_made``: the
    search's steps across a jump, each of which stands for the probe inside
    it (see JUMP_STEP).  After the probes, a search whose solves show a
    jump over ``k`` gets one probe at its kink without a solve over every
    feature (:meth:`_Solver.kink_probe`, with ``dual`` and no time limit,
    see KINK_PROBES), within the same eigvalsh budget.  With ``fine``, a
    probe the tangents promise less than BOUND_RTOL for is still made down
    to FINE_RTOL where the relaxation is small (see :func:`_fine_probe`)."""
    d, floor = solver.d, solver.outside
    budget = BOUND_WORK * _work(solver.trials[first:])
    start = len(solver.trials)
    work0 = solver.work
    npos = int(np.count_nonzero(d > 0))
    eig_budget = max(BOUND_EIGS * float(npos) ** 3, WORK_FLOOR)
    excess = 0.0  # the probes' work beyond solve_work's count (see sweep_cost)
    # (each probe solve's work, see PROBE_SOLVE_WORK)
    probe_room = max(PROBE_SOLVE_WORK * work0, WORK_FLOOR) if capped else math.inf

    def cuts() -> list[_ksparse.Cut]:
        return [_ksparse.Cut(t.lam, t.upper_bound, t.l1_norm) for t in solver.trials
                if t.lam >= floor and math.isfinite(t.upper_bound)]

    ceil = float(d.max())
    low = solver.probe_floor(floor)
    jump_probes = jumps_made
    if hopeless and probes and solver.trials[first:]:
        so_far = min([free] + [c.upper_bound + c.lam * k for c in cuts() + extra])
        if all(t.upper_bound + t.lam * k > (1.0 + PROBE_HOPELESS) * so_far
               for t in solver.trials[first:]):
            probes = False
    for _ in range(BOUND_SOLVES if probes else 0):
        if _work(solver.trials[start:]) > budget:
            break
        lam = _ksparse.next_probe(cuts() + guide, k, low, ceil, BOUND_RTOL)
        if lam is None and fine:
            lam = _fine_probe(solver.trials[first:], cuts() + guide, k, low, ceil)
        if lam is not None and soft:
            lam = _soft_probe(cuts(), soft, k, low, ceil) or lam
        if lam is None or lam >= ceil:
            # (at lam >= max Sigma_ii every feature is eliminated: phi = 0 and
            # the cut lam k is no better than the largest variance)
            break
        size = max(solver.size_at(lam), 1)
        in_jump = size >= _bca.WS_MIN and _inside_jump(solver.trials[first:], k, lam)
        if in_jump:
            # Near the kink of a jump the relaxation's optimum is not rank
            # one and a large solve can stall: one probe inside a jump
            # (NCI60's 2,000 genes at k = 50, before JUMP_STEP: the first, at
            # 0.547, lowered the bound by 1.4% in 1 s; the second, at 0.553,
            # stopped at gap 0.27 after 3 sweeps and 12 s), see JUMP_PROBES.
            jump_probes += 1
            if jump_probes > JUMP_PROBES or (dual and not (limit is not None
                                                            and limit.limited)
                                              and _kink_first(solver.trials[first:], k)):
                break
        left = eig_budget - (solver.work - work0) - excess
        if dual and DUAL_PROBES and not (limit is not None and limit.limited):
            # a cut without a solve first (see _Solver.dual_probe); its work,
            # accepted or not, is charged to the later probes' budget, but a
            # rejected one does not shorten the solve at its own lam (a
            # rejected probe can make DUAL_PROBE_ITERS rounds with its
            # cluster duals: the NYT top-300 words' covariance at k = 20 then
            # had a probe of 2 sweeps instead of 3, gap 3.0e-3 instead of
            # 3e-13, certified ratio 0.9087 -> 0.9071)
            made = len(solver.trials)
            spent = solver.dual_probe(lam, left)
            if spent is not None:
                excess += spent
                if len(solver.trials) > made:
                    continue  # (accepted: its cut is a trial)
        cap = min(BOUND_SWEEPS, probe_sweeps(size, min(left, probe_room)))
        if cap < 1:
            break
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyProblemWarning)
            solver.solve(lam, BOUND_TOL, cap, role="bound", limit=limit)
        excess += float(size) ** 3 * (sweep_cost(size) - SWEEP_COST) * solver.trials[-1].sweeps
    if fine and probes and not (limit is not None and limit.limited):
        # (the best cut's solve, if loose, tightened warm: see TIGHT_TOL)
        mine = [t for t in solver.trials[first:]
                if t.lam >= floor and math.isfinite(t.upper_bound)]
        if mine:
            top = min(mine, key=lambda t: t.upper_bound + t.lam * k)
            left = min(eig_budget - (solver.work - work0) - excess, probe_room)
            cap = (min(BOUND_SWEEPS, probe_sweeps(max(solver.size_at(top.lam), 1), left))
                   if TIGHT_TOL < top.gap <= TIGHT_FROM and top.role != "bound" else 0)
            if cap >= 1:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", EmptyProblemWarning)
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    solver.solve(top.lam, TIGHT_TOL, cap, role="bound", limit=limit)
    kink = _kink(solver.trials[first:], k) if probes and KINK_PROBES else None
    if kink is not None and dual and not (limit is not None and limit.limited):
        lam_k, value, near, far = kink
        so_far = min([free] + [c.upper_bound + c.lam * k for c in cuts() + extra])
        if value < (1.0 - BOUND_RTOL) * so_far and low <= lam_k < ceil:
            inside = np.union1d(*[np.flatnonzero(v) for v in
                                  (_loadings_at(solver, near), _loadings_at(solver, far))])
            solver.kink_probe(lam_k, k, inside.astype(np.intp),
                              eig_budget - (solver.work - work0) - excess)
    bound, lam = _ksparse.bound_from_cuts(_verify_cuts(solver, cuts() + extra, k), k)
    if free <= bound:
        return free, math.nan
    return bound, lam


# A search whose solves show a cardinality jump over k (see _kink) and whose
# bound is above the meeting point of the tangents of the jump's two sides by
# more than BOUND_RTOL gets one kink probe there (_Solver.kink_probe), after
# the other probes.  At the kink the relaxation's optimum mixes the two
# sides' supports: a rank-one dual probe fails there and the solves over
# every feature stall (see JUMP_PROBES), while the relaxation restricted to a
# few hundred features solves in a few sweeps.  NCI60's 2,000 genes at
# k = 50 (tangents meeting at 0.55330, 33.268; supports of 19 and 102
# nonzeros, 121 features; one BLAS thread, CPU): the restricted optimum is
# rank one at 0.5531 (100 nonzeros) but of rank two at 0.5533, where the
# restricted solves over 185 or more features ran 50 stalled sweeps (1.4-1.8
# s), so the probe goes KINK_SHIFT of the way from the meeting point to the
# near side's solve (0.55307).  Rows added per round, warm starts: 32 gave
# cuts 33.476, 33.433, 33.303, 33.283 over 121, 153, 185, 217 features (the
# restricted bound 33.280; 1.1 s in all), 48 gave 33.476, 33.326, 33.292 over
# 121, 169, 217 (0.9 s, ended by KINK_ACCEPT), 40 / 56 / 64 33.296 / 33.291
# / 33.291 at more CPU; 96 or more at a time, or cold starts, stalled (50
# sweeps, 1-3 s per round).  Restricted to the 733-992 features with some
# |Sigma_ij| > 0.9-1.0 lam to the two supports instead, the dual stayed at
# 33.42-33.46: the rows that matter are the ones the eigenvector names.  The
# restricted solves' options (2 or 3 QP passes, no QP finish, qp_tol 1e-2)
# and tol 1e-5 were no faster.
KINK_PROBES = True
# A certificate probe solve inside a jump (see JUMP_PROBES) is not made when
# the kink probe will follow and the jump's near-side solve is within this
# fraction (relative) of the kink: its supports already hold the kink's, and
# a solve in the jump, where the optimum is not rank one, ends loose.
# NCI60's 2,000 genes at k = 30 (near side 0.5395, 117 nonzeros, 2.5% below
# the kink; one BLAS thread, CPU, one process): the probe at 0.5526 ended at
# gap 3.6e-2 (1.5 s); without it 10.6 -> 6.8x eigvalsh, certified ratio
# 0.9663 -> 0.9695 (the kink probe from the search's solves).  At k = 40 the
# near side (0.4652, 200 nonzeros) is 16% below, and the probe inside the
# jump (0.5268, 127 nonzeros) gives the kink probe its near side: without
# it 0.9552 -> 0.9452.
KINK_FIRST = 0.05
KINK_SHIFT = 0.05
KINK_ROUNDS = 4
KINK_ADD = 48
KINK_TOL = 1e-6
KINK_SWEEPS = 20
KINK_ACCEPT = 5e-4


def _kink(trials: list[LamTrial], k: int) -> tuple[float, float, float, float] | None:
    """The kink of a cardinality jump over ``k`` among the solves ``trials``:
    ``(lam, value, lam_near, lam_far)``, where ``lam`` is KINK_SHIFT of the
    way from the point where the tangents of the jump's two sides meet towards
    the near side's solve (at ``lam_near``, more than ``k`` nonzeros; the far
    side's at ``lam_far``), and ``value`` the tangents' value at their
    meeting point (a lower estimate of the bound there); ``None`` without
    such a jump (two solves next to each other in ``lam``, at least
    ``max(JUMP_FRACTION k, JUMP_MIN)`` nonzeros on either side of ``k``)."""
    gap = max(JUMP_FRACTION * k, JUMP_MIN)
    solved = sorted((t for t in trials if t.sweeps > 0 and math.isfinite(t.upper_bound)
                     and math.isfinite(t.l1_norm) and math.isfinite(t.gap)),
                    key=lambda t: t.lam)
    for lo, hi in zip(solved, solved[1:], strict=False):
        if lo.lam < hi.lam and lo.cardinality >= k + gap and hi.cardinality <= k - gap:
            a, b = k - lo.l1_norm, k - hi.l1_norm  # (slopes: a < 0 < b at a jump)
            if not a < b:
                return None
            va = lo.upper_bound * (1.0 - lo.gap) + lo.lam * k
            vb = hi.upper_bound * (1.0 - hi.gap) + hi.lam * k
            # va + a (x - lo.lam) = vb + b (x - hi.lam)
            meet = (vb - va + a * lo.lam - b * hi.lam) / (a - b)
            if not lo.lam < meet < hi.lam:
                return None
            lam = meet - KINK_SHIFT * (meet - lo.lam)
            return lam, va + a * (meet - lo.lam), lo.lam, hi.lam
    return None


def _kink_first(trials: list[LamTrial], k: int) -> bool:
    """Whether the kink probe (see :func:`_kink`) is left to close a jump
    over ``k`` without a probe solve inside it: its near side's solve is
    within KINK_FIRST (relative) of the kink."""
    kink = _kink(trials, k) if KINK_PROBES else None
    return kink is not None and kink[0] - kink[2] <= KINK_FIRST * kink[0]


def _loadings_at(solver: _Solver, lam: float) -> NDArray[np.float64]:
    """The loadings of the latest solve at ``lam``."""
    return next(v for at, v in reversed(solver.loadings) if at == lam)


# A certificate probe is first tried without a solve (_Solver.dual_probe,
# not under a time limit): at most DUAL_PROBE_ITERS rounds of polish, rank-one
# dual and Lanczos, each charged DUAL_PROBE_WORK eigvalsh of the features
# solved over (and one more for the verification of an accepted cut); the
# cut is accepted at a relative gap of DUAL_PROBE_GAP (ten times tighter
# than a probe solve's BOUND_TOL).
# In every search, those of sparse_components and SparsePCA (with the dual
# descent) included: there `spca topics --sample nytimes` went from certified
# ratios 0.911/0.949/0.982/0.929/0.957 to 0.911/0.961/0.982/0.929/0.962 with
# the same words and time (one thread, alternate runs: 100-131 ms either
# way), and SparsePCA(3, cardinality=5) on standardised 300 x 1,000 Gaussian
# data kept its ratios 0.953/0.935/0.950 and CPU time (12.4-13.2 s).
DUAL_PROBES = True
DUAL_PROBE_ITERS = 4
DUAL_PROBE_GAP = 1e-4
DUAL_PROBE_FAR = 0.05
DUAL_PROBE_SHRINK = 1.0
DUAL_PROBE_WORK = 1.0
# A round whose eigenvector has at least this much of its mass (squared) on
# the support of x polishes the next x from it; otherwise (or when that x is
# no better) the round makes a cluster dual off the support (see
# _Solver.dual_probe).
CLUSTER_MASS = 0.5


# (see _certify's hopeless): SparsePCA(3, cardinality=5) on the standardised
# 300 x 1,000 Gaussian data: its solves over 1,000 features stop at gaps of
# 0.3-0.6, their cuts 13-68% above the soft-thresholded ones, and so did its
# 5-sweep probes (3-8 s each, none lowering a bound).
PROBE_HOPELESS = 0.1


def _inside_jump(trials: list[LamTrial], k: int, lam: float) -> bool:
    """Whether ``lam`` lies between the nearest solves on either side whose
    cardinalities jump over ``k`` (both at least ``max(JUMP_FRACTION k,
    JUMP_MIN)`` from it, more nonzeros below ``lam`` than above)."""
    gap = max(JUMP_FRACTION * k, JUMP_MIN)
    below = [t for t in trials if t.lam < lam]
    above = [t for t in trials if t.lam > lam]
    if not below or not above:
        return False
    lo = max(below, key=lambda t: t.lam)
    hi = min(above, key=lambda t: t.lam)
    return lo.cardinality >= k + gap and hi.cardinality <= k - gap


def _soft_probe(cuts: list[_ksparse.Cut], soft: list[_ksparse.Cut], k: int,
                low: float, ceil: float) -> float | None:
    """Where the subgradient of ``phi(lam) + lam k`` vanishes by the shape of the
    soft-thresholded cuts, when the solves alone cannot say (``None`` once
    their tangents bracket the minimum, or without a soft cut at the best
    solve's ``lam``).

    ``sum |Z*_ij|`` falls as ``lam`` grows, and so does the soft-thresholded
    ``l1`` of :func:`_soft_cut`, by a similar factor on the real wide sets
    (tissue_gene_expression at k = 50 and 100, pd_speech at k = 100: the two
    differ by 3-17% at the first solve's ``lam``, and the lam this places is
    within 3% of where the solves' subgradient changes sign).  So the soft
    ``l1``, scaled to the best solve's ``l1`` at its ``lam``, is interpolated
    (in log-log) to ``k``; a one-sided extrapolation by
    :func:`spca._ksparse.next_probe` steps 20% blindly instead."""
    pts = [c for c in cuts if math.isfinite(c.upper_bound) and math.isfinite(c.l1)]
    if not pts:
        return None
    best = min(pts, key=lambda c: c.upper_bound + c.lam * k)
    down = k - best.l1 > 0  # the minimum is at a smaller lam
    if any((k - c.l1 < 0) == down and (c.lam < best.lam) == down for c in pts):
        return None  # bracketed: the tangents place the probe
    at = [c for c in soft if c.lam == best.lam and c.l1 > 0]
    if not at or not best.l1 > 0:
        return None
    target = k * at[0].l1 / best.l1  # the soft l1 where phi's would be k
    side = sorted((c for c in soft if (c.lam < best.lam) == down and c.l1 > 0
                   and c.lam > 0), key=lambda c: c.lam, reverse=down)
    prev = at[0]
    for c in side:
        if (c.l1 >= target) == down:
            # log-log interpolation between prev and c
            t = (math.log(target) - math.log(prev.l1)) / (math.log(c.l1) - math.log(prev.l1))
            lam = math.exp(math.log(prev.lam) + t * (math.log(c.lam) - math.log(prev.lam)))
            return lam if low < lam < ceil and lam != best.lam else None
        prev = c
    return None


def _certified(bound: float, k: int, variance: float) -> float:
    """The reported k-sparse bound: ``bound`` with the rounding margin of
    :func:`spca._certificate.bound_margin`, and never below ``variance`` (the
    computed variance of a k-sparse vector, which exceeds the exact one by
    rounding at most), so that a certified ratio is at most 1."""
    return max(bound_margin(bound, k), variance)


def _solver_options(max_qp_passes: Any, qp_tol: Any, qp_finish: Any) -> dict[str, Any]:
    return {
        "max_qp_passes": check_int(max_qp_passes, "max_qp_passes"),
        "qp_tol": check_positive(qp_tol, "qp_tol"),
        "qp_finish": check_bool(qp_finish, "qp_finish"),
    }


def dspca_cardinality(
    Sigma: ArrayLike,
    k: int,
    *,
    tol: float = 1e-6,
    search_tol: float | None = None,
    max_solves: int = 40,
    lam_rtol: float = 1e-4,
    max_sweeps: int = 500,
    max_qp_passes: int = 5,
    qp_tol: float = 1e-3,
    qp_finish: bool = True,
    optimality_gap: float | None = None,
    time_limit: float | None = None,
    verbose: bool = False,
) -> CardinalityResult:
    r"""A sparse component with exactly ``k`` nonzero loadings, and a certificate.

    Looks for the largest variance ``x' Sigma x`` over unit ``x`` with ``k``
    nonzeros (NP-hard) through the DSPCA relaxation

    .. code-block:: text

        phi(lam) = max  Tr(Sigma Z) - lam * sum_ij |Z_ij|   over Z PSD, Tr Z = 1

    solved by :func:`spca.dspca_bca` (with safe feature elimination): it
    searches a penalty ``lam`` whose solution has exactly ``k`` nonzeros,
    builds a support of exactly ``k`` features from what the search saw when
    the relaxation's path jumps over ``k``, improves it by swaps, and
    returns the leading eigenvector of ``Sigma`` on it with a certified upper
    bound on the best ``k``-sparse variance.

    Parameters
    ----------
    Sigma : array-like or scipy.sparse matrix of shape (n_features, n_features)
        Symmetric positive semidefinite covariance matrix (not modified). A
        sparse matrix is screened by its diagonal and only blocks over the
        surviving features are made dense.
    k : int
        Target number of nonzero loadings, ``1 <= k <= n_features``.
    tol : float, default=1e-6
        Relative duality gap of every solve (and of the returned result).
    search_tol : float, optional
        A looser gap for the solves of the search; a ``lam`` found with exactly
        ``k`` nonzeros is then re-solved at ``tol`` and accepted only if the
        cardinality holds. Default: ``tol`` (the support of a loose solve can
        differ from the converged one near a change of cardinality).
    max_solves : int, default=40
        Cap on the number of DSPCA solves.
    lam_rtol : float, default=1e-4
        The search gives up on a relaxation with exactly ``k`` nonzeros when
        the bracket ``[lo, hi]`` (cardinality above ``k`` at ``lo``, below at
        ``hi``) satisfies ``hi / lo - 1 <= lam_rtol``, or once it is narrower
        than 1e-2 (relative) and three bisections in a row have left the
        cardinalities at both ends unchanged, or (at any width) once two
        bisections in a row each closed less than half of the distance to
        ``k`` on their side while both ends are at least ``max(k / 4, 4)``
        nonzeros from ``k``: the relaxation's cardinality jumps over ``k``
        there, and the ``k``-support is built from the bracketing supports.
    max_sweeps, max_qp_passes, qp_tol, qp_finish :
        Passed to :func:`spca.dspca_bca` for every solve.
    optimality_gap : float, optional
        Ask for a proof: from the support found, a branch and bound over
        supports (:mod:`spca.cardinality`) runs until the relative gap
        ``(variance_upper_bound - explained_variance) / variance_upper_bound``
        is at most this (in ``(0, 1)``, e.g. ``1e-4``) or ``time_limit``
        expires; ``status`` says which. Default: no search (the result is
        the heuristic one, with its certificate).
    time_limit : float, optional
        Seconds, counted from the call; the work is planned to 80% of them
        (the rest is kept for what follows the last check of the limit and
        for a busy machine; the proof of ``optimality_gap``, which checks
        the limit at every node, to 95%): the search returns by then (plus
        about one eigensolve of the covariance: the answer without a solve
        comes first) with ``k`` nonzero loadings, the best certified bound so
        far and ``status="time_limit"`` if the limit ended it.  The starts
        of the answer (forward greedy selection, truncated power iterations,
        swaps) check the limit between their steps; the first one is always
        completed to ``k`` features, but a greedy selection stops at the
        limit (after one step) and is completed without a search (the
        features most coupled to those it has), so a limit shorter than one
        forward greedy selection still returns within about one eigensolve
        of the covariance, with ``status="time_limit"``.  With
        ``optimality_gap`` it also ends the branch and bound (default 60 s
        there).  Ctrl-C during the relaxation's solves or the branch and
        bound returns the same best-so-far result with
        ``status="interrupted"``, with or without a limit.
    verbose : bool, default=False
        Print one line per solve (and the branch and bound's log).

    Returns
    -------
    result : CardinalityResult
        ``support`` (``k`` features, the nonzero loadings; fewer only when
        the best variance found is reached with fewer nonzeros, see *Exactly
        k* below), ``loadings`` (a leading eigenvector of ``Sigma`` on it),
        ``explained_variance``, ``origin`` (how the support was obtained),
        ``variance_upper_bound`` and ``certified_ratio``; ``result`` is the relaxation's
        :class:`~spca.DSPCAResult` at ``lam`` (``relaxation_exact`` says
        whether it has ``k`` nonzeros, ``relaxation_loadings`` are its own),
        ``message`` how the search ended; ``trials`` lists
        ``(lam, cardinality, sweeps, seconds, ...)`` of every solve.

    Raises
    ------
    ValueError
        If ``k < 1``, ``k > n_features`` or ``k`` exceeds the number of
        features with positive variance; for invalid ``Sigma`` or options
        (as :func:`spca.dspca_bca`).
    TypeError
        If ``k`` is not an integer.

    Notes
    -----
    *Answer first.* Before any DSPCA solve, forward greedy selection
    (``k <= 64``) and the truncated power method (from the feature of
    largest variance, from the rows with the largest ``k - 1`` couplings and
    from the leading eigenvector of the soft-thresholded covariance),
    improved by swaps, give an answer; eigensolves of the soft-thresholded
    covariance (``Sigma_ij`` shrunk towards 0 by ``lam``, diagonal
    ``Sigma_ii - lam``: ``lambda_max`` bounds ``phi(lam)``) give cuts of the
    certificate without a solve and place the first solve near the minimum
    of the bound.  If the answer meets a bound that needs no solve, the
    search makes none.  The search's solves, and the certificate's, then
    stop at a work budget counted in eigensolves of the covariance
    (``SEARCH_WORK``, ``BOUND_EIGS``; small problems get at least
    ``WORK_FLOOR``), never at a time, so the same input gives the same
    answer; ``message`` says when the budget ended the search.  A
    bracketing solve that cannot lower the bound (by the tangents of the
    solves made: the bound's minimum lies on the other side) serves the
    relaxation's own support only, and such solves get a small share of the
    budget (``ANSWER_WORK``); while the solves' tangents do not bracket the
    bound's minimum, the soft-thresholded cuts place the next probe.

    *Exactly k.* When a solve has ``k`` nonzeros its support is the start
    (``origin="relaxation"``). When the relaxation's cardinality jumps over
    ``k`` (from ``c_hi < k`` to ``c_lo > k`` within ``lam_rtol``, or
    ``max_solves`` ran out), the support of ``c_hi`` nonzeros is grown
    greedily (each time adding the feature that most raises the largest
    eigenvalue) and the support of ``c_lo`` is pruned (each time removing
    the feature that lowers it least); forward greedy selection from
    scratch is a further start for ``k <= 64``. Each start is improved by
    swaps (one feature out, one in, while the largest eigenvalue grows, for
    ``k <= 64``) and the best is returned; ``origin`` says which (e.g.
    ``"grown from 12+1 swap"``). The candidates are the features of the
    block the search formed (every feature of positive variance for
    ``n_features <= 2048``), and a candidate move costs no eigensolve of its
    own (see ``spca._ksparse``). That the relaxation's solve at ``lam``
    stopped short of ``tol`` is said in ``message`` (no warning: the
    returned support, loadings and certificate do not rely on it; the
    bound uses certified upper bounds, valid at any gap). The best
    ``k``-sparse variance can be reached by a vector with fewer than ``k``
    nonzeros only (a degenerate leading eigenvalue, e.g. a diagonal
    ``Sigma``): then a vector of the leading eigenspace with the most
    nonzeros is chosen, equal-variance swaps look for a support whose
    vector has ``k``, and if none is found ``support`` (the nonzero
    loadings), ``cardinality`` and ``exact`` say how many there are, and
    ``message`` why.

    *Rounding.* The bound carries a rounding margin (``4 (k + 1) eps``
    relative, and LAPACK's backward error for the eigenvalue cut), so it
    is above every ``k``-sparse variance computed in floating point as
    well as the exact ones, and never below ``explained_variance``:
    ``certified_ratio <= 1``. The moves work in units of the largest
    variance (a power of two, exact), so the answer does not depend on
    the scale of ``Sigma`` within the accepted range.

    *Certificate.* For every ``lam >= 0`` and unit ``x`` with at most ``k``
    nonzeros, ``x' Sigma x <= phi(lam) + lam k``, since
    ``||x||_1^2 <= card(x)`` for unit ``x`` and ``Z = x x'`` is feasible
    (Theorem 1 elimination is exact for ``phi``). Every solve's certified
    ``upper_bound`` is such a cut; ``variance_upper_bound`` is the smallest,
    after at most a few more solves placed by the subgradient
    ``k - sum |Z*_ij|`` of the convex ``phi(lam) + lam k`` (their work is
    capped at half the search's), and never above the sum of the ``k``
    largest variances or (for ``n_features <= 2048``) the largest row sum of
    the diagonal and ``k - 1`` largest off-diagonal magnitudes. The best
    ``k``-sparse variance lies between ``explained_variance`` and
    ``variance_upper_bound``.

    *Bracket.* By Theorem 1 at most ``#{i : Sigma_ii > lam}`` features
    survive, so ``hi = v_(k)``, the ``k``-th largest variance, has fewer than
    ``k`` nonzeros without a solve. ``lam`` is then lowered until a solve has
    more than ``k`` nonzeros: each step halves it, or follows the log-log
    secant through the last two solves towards ``1.5 k + 1`` nonzeros, but
    never more than doubles the number of surviving features (the cost of a
    solve grows quickly with it) and lowers ``lam`` by at least 10% (3%
    after a first solve below ``k`` where the soft-thresholded cuts put the
    bound's minimum, when they place the crossing no nearer: the geometric
    middle of that ``lam`` and the largest one whose soft-thresholded
    ``l1`` exceeds ``k``, the near side of a jump); below
    ``1e-3 v_(k)`` it jumps to ``lam = 0`` (ordinary PCA; tried first when
    ``k`` is the number of features with positive variance). The bracket is
    then narrowed by interpolating the cardinality linearly in ``log(lam)``,
    safeguarded to the middle half of the bracket (so it shrinks at least as
    fast as a 3:1 bisection). Bracketing solves get at most 20 sweeps; one
    with exactly ``k`` nonzeros is confirmed by a solve to ``tol`` within
    ``max_sweeps``, warm-started, which ends the search if it keeps ``k``
    nonzeros. A confirming solve whose gap, extrapolated at its rate over
    the second half of its sweeps (from sweep 50 on), cannot reach ``tol``
    within ``max_sweeps`` stops there (an optimum of rank above one on
    standardised data typically does); its result is then reported not
    converged, as it would have been after ``max_sweeps``.

    *Non-monotone cardinality.* The cardinality of the DSPCA solution is not
    monotone in ``lam`` in general. The search only relies on the bracket
    (above ``k`` at ``lo``, below at ``hi``), which it keeps, so it always
    ends at a ``lam`` with ``k`` nonzeros or at a jump over ``k`` narrower
    than ``lam_rtol`` (e.g. tied or duplicated features that enter together).
    It localises one crossing of ``k``: a band of ``lam`` with exactly ``k``
    nonzeros elsewhere on the path may be missed.

    *Not exact.* ``result`` is then the solve of nearest cardinality, on
    ties the smaller one.

    *Proof.* With ``optimality_gap``, the support above starts a
    best-bound-first branch and bound (see the user guide's "Proven
    optimal"): ``status == "optimal"`` means that no ``k``-support has a
    variance above ``variance_upper_bound``, within ``optimality_gap`` of
    ``explained_variance``. Ctrl-C during it returns the best so far with
    ``status == "interrupted"``.

    *Cost.* Each solve is warm-started from the solution at the nearest
    ``lam`` solved so far (:func:`spca.dspca_bca` with ``X0=``), and works on
    the features surviving elimination only.

    Examples
    --------
    >>> import numpy as np
    >>> from spca import dspca_cardinality
    >>> rng = np.random.default_rng(0)
    >>> F = rng.standard_normal((200, 30))
    >>> F[:, :6] += 2 * rng.standard_normal((200, 1))
    >>> res = dspca_cardinality(F.T @ F / 200, k=4)
    >>> res.cardinality, res.origin
    (4, 'relaxation')
    >>> bool(res.explained_variance <= res.variance_upper_bound)
    True
    """
    k = check_int(k, "k")
    tol = check_tol(tol)
    search_tol = tol if search_tol is None else check_tol(search_tol)
    if search_tol < tol:
        search_tol = tol
    max_solves = check_int(max_solves, "max_solves")
    lam_rtol = check_positive(lam_rtol, "lam_rtol")
    max_sweeps = check_int(max_sweeps, "max_sweeps")
    options = _solver_options(max_qp_passes, qp_tol, qp_finish)
    verbose = check_bool(verbose, "verbose")
    optimality_gap, seconds = check_proof_options(optimality_gap, time_limit)
    limit = TimeLimit.caller(seconds)
    cov = _MatrixCovariance(Sigma)
    if k > cov.n:
        raise ValueError(f"k must be <= n_features = {cov.n}, got k={k}")
    _check_psd_once(cov)
    res = _search(cov, k, tol=tol, search_tol=search_tol, max_solves=max_solves,
                  lam_rtol=lam_rtol, max_sweeps=max_sweeps, options=options,
                  verbose=verbose, limit=limit,
                  # (a proof does not need the confirming solve's support
                  # refinement: digits' raw covariance, k = 20, 3.3 s instead
                  # of 8.0 s of CPU, the same answer, 2,283 nodes, not 2,281)
                  refine=optimality_gap is None)
    if optimality_gap is not None and res.status not in (STATUS_TIME_LIMIT,
                                                         STATUS_INTERRUPTED):
        # the proof goes on from the answer, within the time left
        # (planned to PROOF_AIM of the limit: nothing but the answer follows)
        res = prove(res, cov, optimality_gap, limit.stretched(PROOF_AIM), verbose,
                    search=dspca_cardinality)
    _warn_unfinished([("the search", res)], optimality_gap, stacklevel=3)
    return res


def _next_limit(limit: TimeLimit, interrupted: bool) -> TimeLimit:
    """The time limit of the next search of a sequence (the cardinalities of a
    path, the components of a deflation): after Ctrl-C, one already passed,
    so that the remaining searches get the answer that needs no solve."""
    return TimeLimit(0.0, start=-math.inf) if interrupted else limit


# Under a time limit, each later search of a sequence (see _share) keeps this
# fraction of the time left for itself. Equal shares (1 / stages) ended the
# first of three components of the NYT sample's 500 words (k = 10,
# time_limit=2) early: the call returned after 0.69 s, status time_limit,
# where the whole search needs about 1.1 s.
SHARE_RESERVE = 0.1


def _share(limit: TimeLimit, stages: int) -> TimeLimit:
    """The part of ``limit`` for the next of ``stages`` searches of a sequence
    (the cardinalities of a path, the components of a deflation): the time
    left but SHARE_RESERVE of it for each later search, and at least an
    equal share, so that each later search still has time for its answer
    (time a search leaves unused goes to the later ones); ``limit`` itself
    for the last search or without a limit (no clock read)."""
    if not limit.limited or stages <= 1:
        return limit
    return limit.child(max(1.0 / stages, 1.0 - SHARE_RESERVE * (stages - 1)))


def _after(res: CardinalityResult, interrupted: bool) -> tuple[CardinalityResult, bool]:
    """``res`` marked interrupted when it or an earlier search of its sequence
    was, and whether the sequence is interrupted from here on."""
    if interrupted or res.status == STATUS_INTERRUPTED:
        return dataclasses.replace(res, status=STATUS_INTERRUPTED), True
    return res, False


def _warn_unfinished(results: list[tuple[str, CardinalityResult]],
                     optimality_gap: float | None, stacklevel: int) -> None:
    """A ConvergenceWarning naming the searches (``(label, result)`` pairs)
    that did not do what was asked: ended by the time limit or Ctrl-C, or not
    proven within ``optimality_gap`` (their ``status`` says so too)."""
    short = [(label, r) for label, r in results
             if r.status in (STATUS_TIME_LIMIT, STATUS_INTERRUPTED)
             or (optimality_gap is not None and r.status != STATUS_OPTIMAL)]
    if not short:
        return
    told = "; ".join(f"{label} (k={r.k}): {r.status}, certified ratio "
                     f"{r.certified_ratio:.4f}" for label, r in short)
    goal = ("" if optimality_gap is None
            else f" (optimality_gap={optimality_gap:g} asked for)")
    warnings.warn(f"not every search finished{goal}: {told}; the answers and bounds are "
                  f"the best found, both valid; a longer time_limit may do better",
                  ConvergenceWarning, stacklevel=stacklevel)


# Probes of each k's bound after the searches of cardinality_path (placed by
# the tangents of every solve of the path), each solved to PATH_TOL within
# PATH_SWEEPS sweeps.  (A 60-feature Gaussian covariance, k = 1..60: without
# them the path certified up to 5.5e-3 less than 9a149b6's searches, which
# made twice as many solves, at 27 of the 60 k; with them at most 4e-4 less,
# at 12 k, for 42 more solves and about 8 s of a 53 s path, one BLAS thread;
# 10 probes did no better.)
PATH_PROBES = 4
PATH_TOL = 1e-6
PATH_RTOL = 1e-5
PATH_SWEEPS = 50
# The probes are placed by the tangents of the solves whose relative gap is
# at most PATH_GUIDE_GAP (and of the best cut): a rough solve's cut lies too
# high for its tangent to say where the minimum is (the 60-feature Gaussian
# path at k = 24: a 5-sweep cut at lam = 0.022, gap 5e-3, made the tangents
# place the minimum at the best cut, lam = 0.031, and no probe was made).
# That path, k = 1..60: certified ratios below 9a149b6's at 5 k instead of
# 9 (at most 2.9e-4 below, at k = 10), for 53 more solves (probes 8.1 s of
# CPU instead of 7.7 s, one BLAS thread); 1e-4 left k = 16 5.2e-4 below,
# 1e-3 k = 12 and 14.
PATH_GUIDE_GAP = 3e-4


def _probe_path(solver: _Solver, k: int, limit: TimeLimit) -> None:
    """At most PATH_PROBES solves for ``k``'s bound: at the ``lam`` of its best
    cut when that solve was rough (its gap above PATH_TOL: a bound and a
    slope both off), else where the tangents of the path's solves (those
    within PATH_GUIDE_GAP, and the best cut) say it may drop by more than
    PATH_RTOL (see :func:`spca._ksparse.next_probe`)."""
    d = solver.d
    low = solver.probe_floor(solver.outside)
    for _ in range(PATH_PROBES):
        trials = [t for t in solver.trials
                  if t.lam >= solver.outside and math.isfinite(t.upper_bound)]
        if not trials:
            return
        best = min(trials, key=lambda t: t.upper_bound + t.lam * k)
        # (re-solved once, with the support refinement, which tightens the
        # dual of a rank-one optimum)
        refine = best.gap > PATH_TOL and not any(t.lam == best.lam and t.tol <= PATH_TOL
                                                 for t in trials)
        if refine:
            lam: float | None = best.lam
        else:
            # (a rough solve's cut lies too high for its tangent to say where
            # the minimum is: it only bounds)
            cuts = [_ksparse.Cut(t.lam, t.upper_bound, t.l1_norm) for t in trials
                    if t is best or t.gap <= PATH_GUIDE_GAP]
            lam = _ksparse.next_probe(cuts + solver.guide_cuts, k, low, float(d.max()),
                                      PATH_RTOL)
        if lam is None or lam >= float(d.max()):
            return
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", EmptyProblemWarning)
            solver.solve(lam, PATH_TOL, PATH_SWEEPS, role="bound", limit=limit,
                         refine=refine)


def _from_after(solver: _Solver, r: CardinalityResult, after: CardinalityResult,
                limit: TimeLimit | None = None) -> CardinalityResult:
    """``r`` with the support of ``after`` (a larger ``k``) pruned to ``r.k`` and
    improved by swaps, if that does better."""
    pick = _ksparse_support(solver, r.k, [], None, heuristics=False,
                            extra=((f"from k={after.k}", after.support),),
                            against=r.explained_variance, limit=limit)
    if not pick.variance > r.explained_variance * (1 + _ksparse.SWAP_RTOL):
        return r
    return dataclasses.replace(
        r, support=pick.support, loadings=pick.loadings, explained_variance=pick.variance,
        origin=pick.origin, variance_upper_bound=max(r.variance_upper_bound, pick.variance))


@dataclass(frozen=True, repr=False)
class CardinalityPath:
    """Result of :func:`cardinality_path`: one k-sparse component per ``k``.

    Attributes
    ----------
    ks : ndarray of int
        The cardinalities, ascending.
    results : tuple of CardinalityResult
        One per ``k`` (its ``trials`` are the solves its own search made).
    n_solves : int
        Number of DSPCA solves for the whole path (shared by all ``k``).
    seconds : float
        Wall time of the whole path.
    """

    ks: NDArray[np.intp]
    results: tuple[CardinalityResult, ...]
    n_solves: int
    seconds: float

    @property
    def status(self) -> str | None:
        """``"interrupted"`` or ``"time_limit"`` if either ended a search of
        the path (see :attr:`CardinalityResult.status`), else ``None``."""
        found = {r.status for r in self.results}
        for status in (STATUS_INTERRUPTED, STATUS_TIME_LIMIT):
            if status in found:
                return status
        return None

    @property
    def supports(self) -> list[NDArray[np.intp]]:
        """Support of each ``k``."""
        return [r.support for r in self.results]

    @property
    def variances(self) -> NDArray[np.float64]:
        """Explained variance of each ``k``-sparse component."""
        return np.array([r.explained_variance for r in self.results])

    @property
    def variance_upper_bounds(self) -> NDArray[np.float64]:
        """Certified upper bound on the best ``k``-sparse variance, per ``k``."""
        return np.array([r.variance_upper_bound for r in self.results])

    @property
    def certified_ratios(self) -> NDArray[np.float64]:
        """``variances / variance_upper_bounds``."""
        return np.array([r.certified_ratio for r in self.results])

    @property
    def lambdas(self) -> NDArray[np.float64]:
        """The relaxation's ``lam`` of each ``k``."""
        return np.array([r.lam for r in self.results])

    def plot(self, ax: Any = None, *, label: str | None = "k-sparse component") -> Any:
        """Variance against ``k``, with a band up to the certified bound.

        The y axis is the variance ``x' Sigma x`` of the unit ``k``-sparse
        component ``x`` found for each ``k`` (not a ratio: in the units of
        ``Sigma``); the best ``k``-sparse variance lies in the band between it
        and the certified bound. Needs matplotlib.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Where to draw (default: a new figure's axes).
        label : str or None, default="k-sparse component"
            Legend label of the variance curve.

        Returns
        -------
        ax : matplotlib.axes.Axes

        Raises
        ------
        ImportError
            If matplotlib is not installed.
        """
        try:
            import matplotlib.pyplot as plt
        except ImportError as exc:
            raise ImportError(
                "CardinalityPath.plot needs matplotlib (pip install matplotlib)"
            ) from exc
        if ax is None:
            _, ax = plt.subplots()
        ks, v, ub = self.ks, self.variances, self.variance_upper_bounds
        ax.fill_between(ks, v, ub, alpha=0.25, step=None,
                        label="up to the certified bound")
        ax.plot(ks, v, marker="o", label=label)
        ax.plot(ks, ub, linestyle="--", linewidth=1, color="0.4")
        ax.set_xlabel("number of nonzero loadings k")
        ax.set_ylabel("variance x' Sigma x of the k-sparse component")
        ax.set_title("Best k-sparse variance found, and its certified upper bound")
        ax.legend()
        return ax

    def __repr__(self) -> str:
        lines = [f"CardinalityPath({self.ks.size} cardinalities, {self.n_solves} solves, "
                 f"time={self.seconds:.3g}s)"]
        for r in self.results:
            lines.append(f"  k={r.k:<4d} variance={r.explained_variance:.6g}  "
                         f"bound={r.variance_upper_bound:.6g}  ratio={r.certified_ratio:.4f}  "
                         f"{r.origin}")
        return "\n".join(lines)


def cardinality_path(
    Sigma: ArrayLike,
    ks: Any,
    *,
    tol: float = 1e-6,
    max_solves: int = 40,
    lam_rtol: float = 1e-4,
    max_sweeps: int = 500,
    time_limit: float | None = None,
    verbose: bool = False,
) -> CardinalityPath:
    """The best variance found and its certified bound for several cardinalities.

    Runs :func:`dspca_cardinality` for every ``k`` of ``ks`` with one solver:
    each search is warm-started from the solves of the others, and every
    solve of any ``k`` (and every cut that needs no solve) is a cut of every
    ``k``'s certificate ``min_lam U(lam) + lam k``.  The support found for
    the ``k`` before is one more start of each search (grown to ``k``); the
    support of the ``k`` after, pruned to ``k`` and improved by swaps,
    replaces an answer it beats (``origin`` ``"from k=m"``).  After the
    searches, up to ``PATH_PROBES`` solves per ``k`` tighten its bound: the
    ``lam`` of its best cut re-solved to ``1e-6`` when that solve was rough,
    then where the tangents of the path's accurate solves say the bound can
    drop.

    Parameters
    ----------
    Sigma : array-like or scipy.sparse matrix of shape (n_features, n_features)
        Symmetric positive semidefinite covariance matrix (not modified).
    ks : int or iterable of int
        Cardinalities, each in ``[1, number of features of positive variance]``
        (duplicates are dropped; computed in ascending order).
    tol, max_solves, lam_rtol, max_sweeps, verbose :
        As for :func:`dspca_cardinality` (``max_solves`` per ``k``).
    time_limit : float, optional
        Seconds for the whole path, counted from the call and planned to 80%
        of them (see :func:`dspca_cardinality`): each ``k`` gets the
        time left but 10% of it for each later ``k`` (at least an equal
        share; what it leaves unused goes to the later ones); once the
        limit has passed, each remaining ``k`` gets the answer of the
        previous ``k`` grown by one forward greedy step and completed
        without a search (no solve, no swaps) and the bounds that need no
        solve (and no ``k`` gets more probes for its bound), and its
        ``status`` (and :attr:`CardinalityPath.status`) is
        ``"time_limit"``; Ctrl-C does the same with ``"interrupted"``.
        These answers, a few eigensolves of ``k`` features each, are made
        for every ``k`` left however short the limit (on a path of many
        ``k`` they add up: 40 ``k`` of 500 features, about two eigensolves
        of the covariance).

    Returns
    -------
    path : CardinalityPath
        ``ks``, ``supports``, ``variances``, ``variance_upper_bounds``,
        ``certified_ratios``, ``lambdas``, the per-``k`` ``results`` and a
        :meth:`~CardinalityPath.plot` helper.

    Raises
    ------
    ValueError
        For an empty ``ks``, a ``k`` outside the range above, or invalid
        ``Sigma`` or options (as :func:`dspca_cardinality`).
    TypeError
        If a ``k`` is not an integer.

    Examples
    --------
    >>> from spca import cardinality_path
    >>> from spca.datasets import load_pitprops
    >>> path = cardinality_path(load_pitprops().correlation, [2, 5, 8])
    >>> [int(s.size) for s in path.supports]
    [2, 5, 8]
    >>> bool((path.variances <= path.variance_upper_bounds).all())
    True
    """
    t0 = time.perf_counter()
    limit = TimeLimit.caller(check_time_limit(time_limit))
    values = [ks] if isinstance(ks, int | np.integer) else list(ks)
    if not values:
        raise ValueError("ks must hold at least one cardinality, got none")
    karr = np.unique([check_int(k, "k") for k in values]).astype(np.intp)
    tol = check_tol(tol)
    max_solves = check_int(max_solves, "max_solves")
    lam_rtol = check_positive(lam_rtol, "lam_rtol")
    max_sweeps = check_int(max_sweeps, "max_sweeps")
    options = _solver_options(5, 1e-3, True)
    cov = _MatrixCovariance(Sigma)
    if karr[-1] > cov.n:
        raise ValueError(f"k must be <= n_features = {cov.n}, got k={int(karr[-1])}")
    _check_psd_once(cov)
    solver = _Solver(cov, max_sweeps=max_sweeps, options=options, verbose=verbose)
    results: list[CardinalityResult] = []
    interrupted = False
    for i, k in enumerate(karr):
        # (once the limit has passed, the answer of a k grows the last k's)
        late = None if not results else _Pick(
            results[-1].support, results[-1].loadings, results[-1].explained_variance,
            f"grown from k={results[-1].k}", (np.zeros((0, 0)), False))
        # The support of the k before is one more start (grown to k).
        before = ((f"from k={results[-1].k}", results[-1].support),) if results else ()
        r = _search(cov, int(k), tol=tol, search_tol=tol, max_solves=max_solves,
                    lam_rtol=lam_rtol, max_sweeps=max_sweeps, options=options,
                    verbose=verbose, solver=solver,
                    limit=_share(_next_limit(limit, interrupted), karr.size - i),
                    late_start=late, neighbours=before, starts=PATH_STARTS, fine=False)
        r, interrupted = _after(r, interrupted)
        results.append(r)
    # The support of the k after, pruned to k (no solve), where it does
    # better; and probes of every k's bound, placed by all the path's cuts
    # (skipped once the time limit has passed or after Ctrl-C).
    probed = 0
    try:
        for i in range(len(results) - 2, -1, -1):
            if interrupted or limit.expired():
                break
            results[i] = _from_after(solver, results[i], results[i + 1], limit)
        for r in results:
            if interrupted or limit.expired():
                break
            _probe_path(solver, r.k, limit)
            probed += 1
    except _Stop:
        pass  # (the time limit: each k keeps the bound of the solves made)
    except KeyboardInterrupt:
        # (the k not probed: their searches ended, their bounds did not)
        results = results[:probed] + [_after(r, True)[0] for r in results[probed:]]
    # The solves of the later searches are cuts of the earlier ones too, and
    # so are the cuts that needed no solve.
    cuts = [_ksparse.Cut(t.lam, t.upper_bound, t.l1_norm) for t in solver.trials
            if t.lam >= solver.outside and math.isfinite(t.upper_bound)]
    cuts += solver.free_cuts
    final = []
    for r in results:
        bound, lam = _ksparse.bound_from_cuts(_verify_cuts(solver, cuts, r.k), r.k)
        bound = _certified(bound, r.k, r.explained_variance)
        if bound < r.variance_upper_bound:
            r = dataclasses.replace(r, variance_upper_bound=bound, bound_lam=lam)
        head = r.message.rsplit("; support: ", 1)[0]
        final.append(dataclasses.replace(r, message=(
            f"{head}; support: {r.origin}, certified ratio {r.certified_ratio:.4f}")))
    _warn_unfinished([(f"k={r.k}", r) for r in final], None, stacklevel=3)
    return CardinalityPath(ks=karr, results=tuple(final), n_solves=len(solver.trials),
                           seconds=time.perf_counter() - t0)
