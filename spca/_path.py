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

from . import _bca, _bca_fast
from ._bca import (
    RESTRICT_FRACTION,
    ConvergenceWarning,
    DSPCAResult,
    _block_bound,
    _dspca_bca_checked,
)
from ._validation import check_bool, check_int, check_positive, check_psd, check_tol
from ._variance import _Covariance, _MatrixCovariance, offdiag_rowmax

__all__ = ["CardinalityResult", "LamTrial", "dspca_cardinality"]

# When lowering lam to find a bracket, jump to lam = 0 (ordinary PCA) once lam
# falls below this fraction of the k-th largest variance.
ZERO_FRACTION = 1e-3


class LamTrial(NamedTuple):
    """One solve of the cardinality search.

    The first four fields are ``(lam, cardinality, sweeps, seconds)``.
    """

    lam: float
    cardinality: int
    sweeps: int
    seconds: float
    gap: float
    reduced_size: int
    tol: float


@dataclass(frozen=True, repr=False)
class CardinalityResult:
    """Result of :func:`dspca_cardinality`.

    Attributes
    ----------
    result : DSPCAResult
        The DSPCA solution at :attr:`lam`, in the caller's feature order
        (``kept``, ``support`` and ``loadings`` index the full ``Sigma``).
    k : int
        The requested number of nonzero loadings.
    exact : bool
        Whether ``result`` has exactly ``k`` nonzero loadings.
    message : str
        How the search ended; says why when ``exact`` is False.
    trials : tuple of LamTrial
        Every solve, in order: ``(lam, cardinality, sweeps, seconds, gap,
        reduced_size, tol)``.
    bracket : tuple of float
        ``(lo, hi)``: the last interval known to hold the crossing, with
        cardinality ``> k`` at ``lo`` and ``< k`` at ``hi`` (``hi`` may be the
        Theorem 1 bound ``v_(k)``, which needs no solve; ``lo`` is ``nan`` if
        no solve gave more than ``k`` nonzeros).
    seconds : float
        Wall time of the whole search.
    """

    result: DSPCAResult
    k: int
    exact: bool
    message: str
    trials: tuple[LamTrial, ...]
    bracket: tuple[float, float]
    seconds: float

    @property
    def lam(self) -> float:
        """The penalty of ``result``."""
        return self.result.lam

    @property
    def cardinality(self) -> int:
        """Number of nonzero loadings of ``result``."""
        return int(self.result.support.size)

    @property
    def loadings(self) -> NDArray[np.float64]:
        """Unit-norm sparse loadings (``result.loadings``)."""
        return self.result.loadings

    @property
    def support(self) -> NDArray[np.intp]:
        """Indices of the nonzero loadings (``result.support``)."""
        return self.result.support

    @property
    def objective(self) -> float:
        """DSPCA objective of ``result``."""
        return self.result.objective

    @property
    def upper_bound(self) -> float:
        """Certified upper bound of ``result``."""
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
    def explained_variance(self) -> float:
        """``loadings' Sigma loadings``."""
        return self.result.explained_variance

    @property
    def n_solves(self) -> int:
        """Number of DSPCA solves."""
        return len(self.trials)

    @property
    def n_sweeps(self) -> int:
        """Total number of sweeps over all solves."""
        return int(sum(t.sweeps for t in self.trials))

    def __repr__(self) -> str:
        status = "exact" if self.exact else "NOT exact"
        return (
            f"CardinalityResult({status}, k={self.k}, cardinality={self.cardinality}, "
            f"lam={self.lam:.8g}, support={_fmt_support(self.support)}, "
            f"objective={self.objective:.6g}, gap={self.gap:.2e}, solves={self.n_solves}, "
            f"sweeps={self.n_sweeps}, time={self.seconds:.3g}s)"
        )


def _fmt_support(support: NDArray[np.intp]) -> str:
    if support.size <= 12:
        return str(support.tolist())
    return f"<{support.size} features>"


def _lift(res: DSPCAResult, W: NDArray[np.intp], n: int) -> DSPCAResult:
    """A result on the block ``Sigma[W][:, W]`` re-expressed over all ``n`` features."""
    loadings = np.zeros(n)
    loadings[W] = res.loadings
    return dataclasses.replace(
        res, kept=W[res.kept].astype(np.intp), n_features=n, loadings=loadings,
        support=W[res.support].astype(np.intp),
    )


class _Solved(NamedTuple):
    """A solve kept for warm starts: its iterate ``X`` over the features ``G``
    (a subset of the surviving ``W``) and the diagonal over all of ``W``."""

    lam: float
    W: NDArray[np.intp]
    G: NDArray[np.intp]
    X: NDArray[np.float64]
    diag: NDArray[np.float64]
    result: DSPCAResult


# A warm start needs this fraction of the features solved over to have been
# solved over before (else the solve starts cold).
WARM_OVERLAP = 0.3


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
        # id(result) -> (result, W, diagonal over W, number of blocks) of the
        # results solved over their relevant features only
        self._restricted: dict[int, tuple[DSPCAResult, NDArray[np.intp], NDArray[np.float64],
                                          int]] = {}
        self.trials: list[LamTrial] = []

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
        return self._block[np.ix_(pos, pos)]

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
        # The graph among A (every other feature of W is a block of its own).
        lab_a = np.empty(A.size, dtype=np.intp)
        excess = np.empty(A.size)
        n_a = _bca_fast.threshold_components(self._block, np.searchsorted(self._idx, A),
                                             lam, lab_a, excess)
        if n_a == 1 and A.size == m:
            return None, 1
        pos_a = np.searchsorted(W, A)
        labels = np.empty(m, dtype=np.intp)
        alone = np.ones(m, dtype=bool)
        alone[pos_a] = False
        labels[pos_a] = lab_a
        labels[alone] = n_a + np.arange(m - A.size)
        n_comp = n_a + m - A.size
        dW = d[W]
        best = int(np.argmax(dW))
        floor = float(dW[best]) - lam
        rows = dW - lam
        rows[pos_a] += excess
        size = np.bincount(labels, minlength=n_comp)
        gersh = np.full(n_comp, -np.inf)
        np.maximum.at(gersh, labels, rows)
        keep = np.zeros(n_comp, dtype=bool)
        keep[labels[best]] = True
        # (a relative margin keeps a block whose bound ties with floor)
        for c in np.flatnonzero((size > 1) & (gersh > floor - 1e-12 * abs(floor)) & ~keep):
            keep[c] = _block_bound(self._sub(W[labels == c]), lam) > floor
        R = np.flatnonzero(keep[labels])
        if R.size > (1.0 - RESTRICT_FRACTION) * m:
            return None, n_comp
        return W[R], n_comp

    def _warm_start(self, lam: float, W: NDArray[np.intp],
                    G: NDArray[np.intp]) -> tuple[Any, NDArray[np.float64]]:
        """Warm start over ``G`` (a subset of ``W``) from the solve at the nearest
        ``lam``, and the diagonal over ``W`` that the features outside ``G``
        keep (as in :func:`spca._bca._solve` for a restricted problem)."""
        scale = float(self.d[W].max())
        if not self._solved:
            return None, np.full(W.size, (scale - lam) / W.size)

        def distance(item: _Solved) -> float:
            other = item.lam
            if lam > 0 and other > 0:
                return abs(math.log(lam / other))
            return math.inf if lam != other else 0.0

        prev = min(self._solved, key=distance)
        # The diagonal the previous iterate had over W (zero for new features).
        diag = np.zeros(W.size)
        _, i_prev, i_new = np.intersect1d(prev.W, W, assume_unique=True,
                                          return_indices=True)
        diag[i_new] = prev.diag[i_prev]
        diag[diag == 0] = _bca.NEW_DIAG * (scale - lam) / W.size
        if prev.G.size == 0:
            return None, diag
        if np.array_equal(prev.G, G):
            return prev.result, diag
        common, i_prev, i_new = np.intersect1d(prev.G, G, assume_unique=True,
                                               return_indices=True)
        if common.size < WARM_OVERLAP * G.size:
            # Mostly new features: the previous iterate is concentrated on
            # others, and a cold start is the better guess.
            return None, np.full(W.size, (scale - lam) / W.size)
        X0 = np.zeros((G.size, G.size))
        X0[np.ix_(i_new, i_new)] = prev.X[np.ix_(i_prev, i_prev)]
        inside = np.isin(G, common, assume_unique=True)
        outside = np.flatnonzero(~inside)
        if outside.size:
            # Features of G outside the previous G keep the previous diagonal.
            pos = np.searchsorted(prev.W, G[outside])
            ok = (pos < prev.W.size) & (prev.W[np.minimum(pos, prev.W.size - 1)] == G[outside])
            X0[outside[ok], outside[ok]] = prev.diag[pos[ok]]
        return X0, diag

    def solve(self, lam: float, tol: float, max_sweeps: int | None = None) -> DSPCAResult:
        """Solve at ``lam``; returns the result over all features and records a trial.

        ``max_sweeps`` caps this solve below the solver's own limit.  The
        result may be over the relevant features only; pass it to :meth:`full`
        for the form of :func:`spca.dspca_bca`.
        """
        budget = self.max_sweeps if max_sweeps is None else min(max_sweeps, self.max_sweeps)
        t0 = time.perf_counter()
        W = np.flatnonzero(self.d > lam).astype(np.intp)
        self._ensure_block(lam, W)
        R, n_blocks = self._relevant(lam, W)
        G = W if R is None else R
        X0, diag = self._warm_start(lam, W, G)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            res = _dspca_bca_checked(self._sub(G), lam, tol=tol, max_sweeps=budget, X0=X0,
                                     **self.options)
        out = _lift(res, G, self.cov.n)
        if R is not None:
            pos = np.searchsorted(W, R)
            diag[pos] = np.diag(res.X_reduced)
            self._restricted[id(out)] = (out, W, diag, n_blocks)
        else:
            diag = np.diag(res.X_reduced).copy()
        self._solved.append(_Solved(lam, W, G[res.kept], res.X_reduced, diag, res))
        trial = LamTrial(lam=float(lam), cardinality=int(out.support.size),
                         sweeps=int(res.n_sweeps), seconds=time.perf_counter() - t0,
                         gap=float(res.gap), reduced_size=int(W.size), tol=tol)
        self.trials.append(trial)
        if self.verbose:
            print(f"  lam={trial.lam:.10g}  cardinality={trial.cardinality:4d}  "
                  f"reduced={trial.reduced_size:5d}  sweeps={trial.sweeps:3d}  "
                  f"gap={trial.gap:.1e}  {trial.seconds:.3f}s")
        return out

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
        pos = np.searchsorted(W, res.kept)
        ix = np.ix_(pos, pos)
        Z = np.zeros((W.size, W.size))
        Z[ix] = res.Z_reduced
        X = _bca.diagonal_matrix(diag)
        X[ix] = res.X_reduced
        return dataclasses.replace(res, Z_reduced=Z, X_reduced=X, kept=W, _dual_columns=None,
                                   n_blocks=n_blocks)


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

# Smallest ratio between consecutive lams of the downward phase of the search.
STEP_MIN = 0.7
# ... and once the last solve has at least k / 2 nonzeros (a solve past the
# crossing, where the support is large, costs the most; measured on the NYT
# sample's topics and random Gaussian and spiked searches).
STEP_MIN_NEAR = 0.8


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


def _search(cov: _Covariance, k: int, *, tol: float, search_tol: float, max_solves: int,
            lam_rtol: float, max_sweeps: int, options: dict[str, Any],
            verbose: bool) -> CardinalityResult:
    """Cardinality search over a covariance operator (see :func:`dspca_cardinality`)."""
    t_start = time.perf_counter()
    d = cov.diag
    ds = np.sort(d)[::-1]
    npos = int(np.count_nonzero(d > 0))
    if npos < k:
        raise ValueError(
            f"k={k} nonzero loadings requested but only {npos} feature(s) have positive "
            f"variance; a feature with zero variance is never selected"
        )
    solver = _Solver(cov, max_sweeps=max_sweeps, options=options, verbose=verbose)
    results: list[DSPCAResult] = []
    cur_tol = search_tol
    # Theorem 1: at lam >= v_(k) at most k - 1 features survive.
    hi = float(ds[k - 1])
    lo = math.nan
    found: DSPCAResult | None = None
    reason = ""

    def run(lam: float) -> DSPCAResult | None:
        """Solve at lam; update the bracket; return the result if it is exact."""
        nonlocal lo, hi, cur_tol
        # A bracketing solve only needs the side of k its support falls on:
        # it gets SEARCH_SWEEPS sweeps (past the crossing, where the support
        # is large, a solve can need hundreds).
        res = solver.solve(lam, cur_tol, SEARCH_SWEEPS)
        results.append(res)
        card = res.support.size
        if card == k and (cur_tol > tol or not res.converged):
            # Confirm at the requested accuracy and sweep limit before
            # accepting (warm-started from the solve just made).
            cur_tol = tol
            res = solver.solve(lam, tol)
            results.append(res)
            card = res.support.size
        if card == k:
            return res
        if card > k:
            lo = lam
        elif lam < hi:
            hi = lam
        return None

    # Phase 1: lower lam until some solve gives more than k nonzeros.
    lam = hi
    if k == npos:
        # Every feature with positive variance is wanted: try ordinary PCA first.
        lam = 0.0
        found = run(lam)
    while found is None and math.isnan(lo):
        if len(solver.trials) >= max_solves:
            reason = f"max_solves={max_solves} reached before a bracket was found"
            break
        if lam == 0.0:
            best = max(t.cardinality for t in solver.trials)
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
        last = solver.trials[-1].cardinality if solver.trials else 0
        step = STEP_MIN_NEAR if 2 * last >= k else STEP_MIN
        floor_lam = max(float(ds[2 * m]) if 2 * m < d.size else 0.0, step * lam)
        pred = _predict(solver.trials, k + 1)
        cand = 0.5 * lam if pred is None else pred
        nxt = min(max(cand, floor_lam), 0.9 * lam)
        if nxt < ZERO_FRACTION * ds[k - 1]:
            nxt = 0.0
        lam = nxt
        found = run(lam)

    # Phase 2: safeguarded interpolation in log(lam) (halving while lo = 0).
    while found is None and not math.isnan(lo):
        if lo > 0 and hi / lo - 1.0 <= lam_rtol:
            break
        if lo == 0 and hi <= lam_rtol * ds[k - 1]:
            break
        if len(solver.trials) >= max_solves:
            reason = f"max_solves={max_solves} reached with the bracket [{lo:.10g}, {hi:.10g}]"
            break
        if lo > 0:
            # Interpolate the cardinality linearly in log(lam), safeguarded to the
            # middle of the bracket (so the log-width shrinks by 0.75 at least).
            c_lo = _card_at(solver.trials, lo, k + 1)
            c_hi = _card_at(solver.trials, hi, min(k - 1, int(np.count_nonzero(d > hi))))
            frac = (c_lo - k) / max(c_lo - c_hi, 1)
            frac = min(max(frac, 0.25), 0.75)
            mid = math.exp(math.log(lo) + frac * (math.log(hi) - math.log(lo)))
        else:
            mid = 0.5 * hi
        found = run(mid)

    if found is not None:
        final = found
        exact = True
        message = (f"lam={final.lam:.10g} gives exactly k={k} nonzero loadings "
                   f"({len(solver.trials)} solves)")
    else:
        # Nearest cardinality; on ties the sparser one (k is read as a budget),
        # then the lam closest to the crossing (the latest solve).
        tight = [r for r, t in zip(results, solver.trials, strict=True) if t.tol <= tol]
        pool = tight or results
        order = sorted(range(len(pool)),
                       key=lambda i: (abs(pool[i].support.size - k), pool[i].support.size > k,
                                      -i))
        final = pool[order[0]]
        if final.n_sweeps and solver.trials and (cur_tol > tol or not final.converged):
            final = solver.solve(final.lam, tol)
        exact = final.support.size == k
        if not reason:
            card_hi = [t.cardinality for t in solver.trials if t.lam == hi]
            at_hi = (f"{card_hi[-1]}" if card_hi
                     else f"at most {int(np.count_nonzero(d > hi))} (Theorem 1)")
            card_lo = [t.cardinality for t in solver.trials if t.lam == lo]
            reason = (
                f"no lam gives exactly k={k} nonzero loadings: the cardinality jumps from "
                f"{card_lo[-1] if card_lo else '?'} at lam={lo:.10g} to {at_hi} at "
                f"lam={hi:.10g} (relative width {hi / lo - 1 if lo > 0 else math.inf:.1e}, "
                f"lam_rtol={lam_rtol:g}), e.g. because of tied or duplicated features"
            )
        message = (f"{reason}; returning the nearest: {final.support.size} nonzero loadings "
                   f"at lam={final.lam:.10g}")
    if not final.converged:
        warnings.warn(
            f"the DSPCA solve at lam={final.lam:.10g} stopped with relative gap "
            f"{final.gap:.3e} > tol={tol:g}; increase max_sweeps or tol",
            ConvergenceWarning, stacklevel=3,
        )
    return CardinalityResult(result=solver.full(final), k=k, exact=bool(exact),
                             message=message,
                             trials=tuple(solver.trials), bracket=(lo, hi),
                             seconds=time.perf_counter() - t_start)


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
    verbose: bool = False,
) -> CardinalityResult:
    r"""DSPCA with a target number ``k`` of nonzero loadings.

    Finds a penalty ``lam`` at which the DSPCA relaxation

    .. code-block:: text

        phi(lam) = max  Tr(Sigma Z) - lam * sum_ij |Z_ij|   over Z PSD, Tr Z = 1

    solved by :func:`spca.dspca_bca` (with safe feature elimination) has
    exactly ``k`` nonzero loadings, or the nearest cardinality reachable, and
    says which.

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
        The search gives up on exactly ``k`` when the bracket
        ``[lo, hi]`` (cardinality above ``k`` at ``lo``, below at ``hi``)
        satisfies ``hi / lo - 1 <= lam_rtol``: the cardinality jumps over ``k``.
    max_sweeps, max_qp_passes, qp_tol, qp_finish :
        Passed to :func:`spca.dspca_bca` for every solve.
    verbose : bool, default=False
        Print one line per solve.

    Returns
    -------
    result : CardinalityResult
        ``result.result`` is the :class:`~spca.DSPCAResult` at ``result.lam``
        (caller's feature order); ``exact`` says whether it has ``k``
        nonzeros, ``message`` why not; ``trials`` lists
        ``(lam, cardinality, sweeps, seconds, ...)`` of every solve.

    Raises
    ------
    ValueError
        If ``k < 1``, ``k > n_features`` or ``k`` exceeds the number of
        features with positive variance; for invalid ``Sigma`` or options
        (as :func:`spca.dspca_bca`).
    TypeError
        If ``k`` is not an integer.

    Warns
    -----
    ConvergenceWarning
        If the returned solve did not reach ``tol``.

    Notes
    -----
    *Bracket.* By Theorem 1 at most ``#{i : Sigma_ii > lam}`` features
    survive, so ``hi = v_(k)``, the ``k``-th largest variance, has fewer than
    ``k`` nonzeros without a solve. ``lam`` is then lowered until a solve has
    more than ``k`` nonzeros: each step halves it, or follows the log-log
    secant through the last two solves towards ``1.5 k + 1`` nonzeros, but
    never more than doubles the number of surviving features (the cost of a
    solve grows quickly with it) and lowers ``lam`` by at least 10%; below
    ``1e-3 v_(k)`` it jumps to ``lam = 0`` (ordinary PCA; tried first when
    ``k`` is the number of features with positive variance). The bracket is
    then narrowed by interpolating the cardinality linearly in ``log(lam)``,
    safeguarded to the middle half of the bracket (so it shrinks at least as
    fast as a 3:1 bisection). Any solve with exactly ``k`` nonzeros ends the
    search.

    *Non-monotone cardinality.* The cardinality of the DSPCA solution is not
    monotone in ``lam`` in general. The search only relies on the bracket
    (above ``k`` at ``lo``, below at ``hi``), which it keeps, so it always
    ends at a ``lam`` with ``k`` nonzeros or at a jump over ``k`` narrower
    than ``lam_rtol`` (e.g. tied or duplicated features that enter together).
    It localises one crossing of ``k``: a band of ``lam`` with exactly ``k``
    nonzeros elsewhere on the path may be missed.

    *Not exact.* The nearest cardinality among all solves is returned, on
    ties the smaller one (``k`` is read as a budget).

    *Cost.* Each solve is warm-started from the solution at the nearest
    ``lam`` solved so far (:func:`spca.dspca_bca` with ``X0=``), and works on
    the features surviving elimination only.

    Examples
    --------
    >>> import numpy as np
    >>> from spca._path import dspca_cardinality
    >>> rng = np.random.default_rng(0)
    >>> F = rng.standard_normal((200, 30))
    >>> F[:, :6] += 2 * rng.standard_normal((200, 1))
    >>> res = dspca_cardinality(F.T @ F / 200, k=4)
    >>> res.exact, res.cardinality
    (True, 4)
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
    cov = _MatrixCovariance(Sigma)
    if k > cov.n:
        raise ValueError(f"k must be <= n_features = {cov.n}, got k={k}")
    _check_psd_once(cov)
    return _search(cov, k, tol=tol, search_tol=search_tol, max_solves=max_solves,
                   lam_rtol=lam_rtol, max_sweeps=max_sweeps, options=options,
                   verbose=verbose)
