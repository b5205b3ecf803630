"""Best-bound-first branch and bound over supports of ``k`` features.

The search keeps the open nodes in a heap ordered by their bound (ties by
creation order, so the same input always explores the same nodes).  A node is
bounded cheapest first (:mod:`._bounds`), rounded by the heuristics of
:mod:`._starts`, and split on one free feature (:mod:`._branching`) unless its
bound says that it cannot beat the incumbent by more than the gap asked for.
Every decision depends on the work done (nodes, ADMM steps), never on the
clock; only the caller's ``time_limit`` (:class:`spca._limits.TimeLimit`) can
end the search at a machine-dependent point.
"""

from __future__ import annotations

import heapq
import math
import sys
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .. import _limits
from . import _bounds
from ._branching import Node, children, choose_feature
from ._starts import Incumbent

__all__ = ["SearchResult", "branch_and_bound"]

# The dual bound (the partial dual of ``_bounds``) joins the search once this
# many nodes were not enough with the cheaper bounds: its lam is searched at
# the root (ROOT_ITER ADMM steps per lam, at most LAM_STEPS values of lam,
# expanding by LAM_FACTOR), and each later node evaluates the root's
# multiplier restricted to its features (one eigendecomposition).
DUAL_AFTER = 32
# ... and leaves it again when, after DUAL_TRIAL nodes, it has closed at
# least DUAL_HELP of the open gap (bound - level) at fewer than a fraction
# DUAL_KEEP of the nodes it bounded (a work-based rule).
DUAL_TRIAL = 64
DUAL_KEEP = 0.05
DUAL_HELP = 0.1
# Eigenpairs of a node's block for its spectral bound (all of them up to twice
# this many features).
SPECTRUM = 8
# The nodes evaluate the row-norm bound of _bounds (lambda_max(Sigma + U) +
# row_norm_penalty(U), at most the DSPCA bound at U = -L) with the root's
# multiplier restricted to their features: -L from the dual's start, then,
# after ROW_AFTER nodes, lowered by ROW_ITER subgradient steps of
# ROW_STEP * lam / sqrt(j).  (Measured: 20 steps at 32 nodes and 20 more each
# time the nodes doubled left tissue_gene_expression's top-300 standardised,
# k = 20, at 9,989 nodes and gap 5.9e-4 after 60 s, against 1,795 nodes to
# the proof with 100 at once.  At 64 nodes, Eisen2 at k = 10, 73 nodes, paid
# 1.1-1.2x the CPU time of the DSPCA bound for them; at 128, 0.94x, and
# Eisen2 k = 5/20, tissue std k = 20 and digits raw k = 20 0.94/0.86/0.22/0.88x.)
ROW_AFTER = 128
ROW_ITER = 100
ROW_STEP = 1.0
# Once the root's multiplier has been lowered (ROW_AFTER), the nodes' own
# spectrum (step 4 of bound_node: an eigensolve of Sigma_NN) is skipped for
# good when, over its first SPEC_TRIAL nodes, it was below the row-norm bound
# of the same node (or closed the node) at fewer than a fraction SPEC_KEEP of
# them: the row-norm bound's eigensolve of Sigma_NN + U then serves the bound,
# the rounding and the branching alone (a negative SPEC_TRIAL: never run it
# after the descent; a work-based rule).
SPEC_TRIAL = 64
SPEC_KEEP = 0.05
# Likewise Gershgorin's bound and the coupling bound (steps 2 and 3 of
# bound_node, about 1 ms a node at 300 features): skipped for good when, over
# their first GERSH_TRIAL nodes after the root's descent, they closed fewer
# than a fraction GERSH_KEEP of them (a work-based rule; measured: the NYT
# sample's 300 words of largest variance, raw, k = 19: none of 3,244 nodes
# closed there).
GERSH_TRIAL = 128
GERSH_KEEP = 0.01
# After the root's descent, a node that the row-norm bound with its parent's
# multiplier leaves open, by at most FAST_WINDOW (relative), lowers that
# multiplier by up to FAST_ITER subgradient steps of its own
# (_bounds.fast_node_descent: with the node's forced and free features; the
# RITZ largest eigenpairs of Sigma_NN + U estimated by Rayleigh-Ritz on a
# block Krylov space, warm from the parent's, or from LAPACK's at a node
# whose parent did not descend; each step ~0.8-1.2 ms at 300 features against
# ~4.8 ms with LAPACK's eigenpairs), stops at a proof that it is closed
# (a Cholesky factorisation, _bounds.certify_below), and gives up at every
# FAST_CHECK-th step while its lowest estimate is more than FAST_HOPE above
# the level.  Its children start from its multiplier and Ritz vectors; an
# open node's bound is the certified CERT_SLACK above its lowest estimate,
# if that holds and is lower.  Measured (the NYT sample's 300 words of
# largest variance, raw, 60 s of CPU, one BLAS thread): k = 18, gap 2.92%
# (node descents of 20 LAPACK steps within 3%) -> proven in 30-36 s; 20
# steps at every node within 5% gave 0.59%, 40 steps with the give-up rule
# proven in 46.8 s against 49.8 s without it (both without the probing).
FAST_ITER = 40
# The node descents' step, relative to the root's (ROW_STEP * lam): measured
# on 74 descents recorded in the search above at k = 19 (the same rules):
# 24 closed their node in 1,036 steps at 1, 33-34 in 1,122-1,167 at 0.35,
# 0.5 or 0.7 (33 at 0.25); the larger steps overshoot, the estimate often
# does not fall in the first 5-10 of them.
FAST_STEP = 0.5
FAST_CHECK = 10
FAST_HOPE = 0.01
FAST_WINDOW = 0.05
RITZ = 4
CERT_SLACK = 1e-4
# The descents stop for good when, after DESC_TRIAL of them, fewer than a
# fraction DESC_KEEP closed their node (a work-based rule; measured with the
# LAPACK descents: tissue_gene_expression's 300 genes standardised, k = 20,
# none of 1,782 closed, which cost the proof: 2,330 nodes in 60 s against
# 10,685 to the proof in 24 s without descents; the NYT sample's 300 words,
# raw, k = 18 / 20: about 50% / 25% of the fast descents close their node).
DESC_TRIAL = 32
DESC_KEEP = 0.1
ROOT_ITER = 20
LAM_STEPS = 10
LAM_FACTOR = 1.6
# The ADMM penalty, relative to max(Sigma_ii) / |N|.
RHO = 100.0
# A progress line of the log at most this often (seconds; display only).
LOG_EVERY = 1.0
# The progress bar appears after this many seconds (display only).
BAR_DELAY = 2.0


@dataclass(frozen=True)
class SearchResult:
    """Outcome of :func:`branch_and_bound`.

    ``support`` (indices into ``Sigma``, ascending) has variance ``variance``;
    no ``k``-support has variance above ``bound``.  ``status`` is
    ``"optimal"`` (``gap <= optimality_gap``), ``"time_limit"`` or
    ``"interrupted"``.
    """

    support: NDArray[np.intp]
    variance: float
    bound: float
    status: str
    n_nodes: int
    seconds: float
    lam: float

    @property
    def gap(self) -> float:
        """``(bound - variance) / bound``."""
        if not self.bound > 0:
            return 0.0
        return max(self.bound - self.variance, 0.0) / self.bound


def _rel_gap(best: float, bound: float) -> float:
    if not bound > 0:
        return 0.0
    return max(bound - best, 0.0) / bound


class _Search:
    def __init__(self, B: NDArray[np.float64], k: int, gap: float, limit: _limits.TimeLimit,
                 verbose: bool) -> None:
        self.B = B
        self.k = k
        self.gap = gap
        self.limit = limit
        self.verbose = verbose
        self.d = np.ascontiguousarray(np.diag(B))
        self.inc = Incumbent(B, k, limit if limit.limited else None)
        self.heap: list[Node] = []
        self.closed = -math.inf  # largest bound of a node closed without branching
        self.root_bound = math.inf
        self.n_nodes = 0
        self.counter = 0
        self.lam = math.nan
        self.root_dual: tuple[NDArray[np.float64], NDArray[np.intp]] | None = None
        self.dual_on = True
        self.row_steps = 0
        self.current: Node | None = None
        self.dual_tries = 0
        self.dual_wins = 0
        self.node_mult: tuple[NDArray[np.float64], NDArray[np.intp]] | None = None
        self.node_steps = 0
        self.desc_tries = 0
        self.desc_closed = 0
        self.desc_on = True
        self._last_log = -math.inf
        self.bar: Any = None
        self.stage = ""  # the last bound a node reached (for the measurements)
        self.spec_on = SPEC_TRIAL >= 0
        self.spec_tries = 0
        self.spec_wins = 0
        self.gersh_on = True
        self.gersh_tries = 0
        self.gersh_wins = 0

    # -- bookkeeping -------------------------------------------------------------------
    def level(self) -> float:
        """A node whose bound is at most this is closed: it cannot beat the
        incumbent by more than the gap asked for."""
        return self.inc.value / (1.0 - self.gap) if self.inc.value > 0 else 0.0

    def target(self) -> float:
        """The largest bound at most :meth:`level` that, as a node's closing
        bound, leaves the relative gap at most the one asked for (rounding:
        ``level`` itself may miss it by an ulp)."""
        t = self.level()
        while t > 0 and _rel_gap(self.inc.value, t) > self.gap:
            t = float(np.nextafter(t, 0.0))
        return t

    def upper(self) -> float:
        top = -self.heap[0].key[0] if self.heap else -math.inf
        return min(self.root_bound, max(self.inc.value, self.closed, top))

    def close(self, bound: float) -> None:
        self.closed = max(self.closed, bound)

    def push(self, inside: NDArray[np.intp], free: NDArray[np.intp], bound: float,
             parent: Node | None,
             mult: tuple[NDArray[np.float64], NDArray[np.intp]] | None = None) -> None:
        """Queue a child, or evaluate it directly when its support is fixed."""
        n = inside.size + free.size
        if n < self.k:
            return  # no k-support left
        if inside.size == self.k or n == self.k:
            S = inside if inside.size == self.k else np.union1d(inside, free)
            self.inc.offer(S, improve=True)
            self.close(self.inc.pool.variance(S))
            return
        if bound <= self.level():
            self.close(bound)
            return
        self.counter += 1
        depth = 0 if parent is None else parent.depth + 1
        heapq.heappush(self.heap, Node((-bound, self.counter), inside, free, bound, depth,
                                       mult))

    # -- the log -------------------------------------------------------------------------
    def log(self, force: bool = False) -> None:
        t = self.limit.elapsed()
        ub = self.upper()
        if self.bar is not None:
            self.bar.update(self.n_nodes - self.bar.n)
            self.bar.set_postfix_str(f"best {self.inc.value:.6g} bound {ub:.6g} "
                                     f"gap {100 * _rel_gap(self.inc.value, ub):.3f}%",
                                     refresh=False)
        if not self.verbose or (not force and t - self._last_log < LOG_EVERY):
            return
        if self._last_log == -math.inf:
            print(f"{'nodes':>8} {'open':>7} {'best':>13} {'bound':>13} {'gap':>9} "
                  f"{'time':>8}")
        self._last_log = t
        print(f"{self.n_nodes:8d} {len(self.heap):7d} {self.inc.value:13.7g} {ub:13.7g} "
              f"{100 * _rel_gap(self.inc.value, ub):8.4f}% {t:7.2f}s")

    # -- bounds --------------------------------------------------------------------------
    def dual(self, N: NDArray[np.intp], inside_mask: NDArray[np.bool_], BN: NDArray[np.float64],
             lam: float, s: float) -> tuple[_bounds.PartialDual, float]:
        m = int(inside_mask.sum())
        r = self.k - m
        w = np.where(inside_mask, s, 1.0)
        W = np.outer(w, w)
        top = max(float(np.max(self.d[N])), np.finfo(float).tiny)
        pd = _bounds.PartialDual(BN, W, lam, RHO * top / N.size, inside_mask, r)
        return pd, lam * (s * s * m + r)

    def root_lam(self, BN: NDArray[np.float64], N: NDArray[np.intp], v: NDArray[np.float64],
                 lam0: float) -> tuple[float, NDArray[np.float64], float]:
        """Minimise ``phi(lam) + lam k`` over ``lam`` (golden section in
        ``log lam``, warm-started): ``(bound, multiplier, lam)``; the best of
        the ``lam`` evaluated so far once the caller's limit has passed
        (every one bounds the root)."""
        k = self.k
        mask = np.zeros(N.size, dtype=bool)
        dN = np.sort(self.d[N])[::-1]
        hi = float(dN[min(k, dN.size) - 1])
        lo = 1e-3 * hi
        if not (math.isfinite(lam0) and lo < lam0 < hi):
            lam0 = math.sqrt(lo * hi)
        cache: dict[float, tuple[float, NDArray[np.float64]]] = {}
        L_prev: list[Any] = [None, None]

        def h(lam: float) -> float:
            if lam in cache:
                return cache[lam][0]
            pd, c = self.dual(N, mask, BN, lam, 1.0)
            # start from the soft-thresholding multiplier clip(Sigma, -lam, lam)
            # or the previous lam's, scaled, whichever bounds lower
            pd.start(BN, v)
            if L_prev[0] is not None:
                first = pd.bound()
                alt, _ = self.dual(N, mask, BN, lam, 1.0)
                alt.start(L_prev[0] * (lam / L_prev[1]), v)
                if alt.bound() < first:
                    pd = alt
            val = pd.run(ROOT_ITER) + c
            # (the multiplier of the best bound, not the last iterate's: on
            # tissue_gene_expression's raw top-300 covariance, k = 20, the
            # last one bounded 44.5 where the best bounded 39.7)
            cache[lam] = (val, pd.best_L)
            L_prev[0], L_prev[1] = pd.best_L, lam
            return val

        # expand from lam0 by factors STEP until the bound rises on both sides,
        # then narrow the bracket by golden sections (in log lam)
        step = math.log(LAM_FACTOR)
        a_lim, b_lim = math.log(lo), math.log(hi)
        t0 = math.log(lam0)
        f0 = h(math.exp(t0))
        t1 = min(t0 + step, b_lim)
        f1 = h(math.exp(t1)) if t1 > t0 and not self.limit.expired() else math.inf
        if f1 < f0:
            a, b, fb_ = t0, t1, f1
            direction = 1.0
        else:
            a, b, fb_ = t1, t0, f0  # a is the far end, b the best so far
            direction = -1.0
        n_eval = 2
        while n_eval < LAM_STEPS:
            if self.limit.expired():
                n_eval = LAM_STEPS
                c = b
                break
            t = min(max(b + direction * step, a_lim), b_lim)
            if t == b:
                c = b
                break
            ft = h(math.exp(t))
            n_eval += 1
            if ft >= fb_:
                a, b, c = a, b, t
                break
            a, b, fb_ = b, t, ft
        else:
            c = b
        lo_t, hi_t = sorted((a, c)) if n_eval < LAM_STEPS else (b, b)
        g = (math.sqrt(5) - 1) / 2
        while n_eval < LAM_STEPS and hi_t - lo_t > 1e-3 and not self.limit.expired():
            # probe the larger half of [lo_t, hi_t] around b
            t = b + (1 - g) * ((hi_t - b) if hi_t - b > b - lo_t else (lo_t - b))
            ft = h(math.exp(t))
            n_eval += 1
            if ft < fb_:
                if t > b:
                    lo_t = b
                else:
                    hi_t = b
                b, fb_ = t, ft
            elif t > b:
                hi_t = t
            else:
                lo_t = t
        lam = min(cache, key=lambda t: cache[t][0])
        if self.verbose:
            for t in sorted(cache):
                print(f"root lam {t:.5g}: bound {cache[t][0]:.7g}")
        return cache[lam][0], cache[lam][1], lam

    def bound_node(self, node: Node) -> tuple[float, NDArray[np.float64] | None]:
        """The node's bound (never above its parent's) and the leading vector of
        its (dual) matrix over its features (``None`` when closed early)."""
        k, B = self.k, self.B
        inside, free = node.inside, node.free
        N = node.features
        m, r = inside.size, k - inside.size
        bound = node.bound
        level = self.level()
        mask = np.isin(N, inside)
        # 1. variances
        self.stage = "trace"
        bound = min(bound, _bounds.trace_bound(self.d[inside], self.d[free], r))
        if bound <= level:
            return bound, None
        BN = B[np.ix_(N, N)]
        row_ready = self.root_dual is not None and self.dual_on and self.row_steps > 0
        if self.gersh_on:
            closed = self.gershgorin_coupling(BN, N, mask, free, r, level, bound)
            if row_ready:
                self.gersh_tries += 1
                self.gersh_wins += closed <= level
                if (self.gersh_tries >= GERSH_TRIAL
                        and self.gersh_wins < GERSH_KEEP * self.gersh_tries):
                    self.gersh_on = False
            bound = min(bound, closed)
            if bound <= level:
                return bound, None
        # 4. lambda_max of the node, and its spectrum against sparsity (skipped
        #    once the row-norm bound of 5. has shown itself lower, see SPEC_TRIAL)
        v: NDArray[np.float64] | None = None
        spec = math.inf
        if self.spec_on or not row_ready:
            self.stage = "spectral"
            nrm = float(np.linalg.norm(BN))
            w, V, tail = _bounds.spectrum(BN, SPECTRUM)
            v = V[:, -1]
            top = float(w[-1]) + N.size * _bounds.EPS * nrm
            spec = min(top, _bounds.spectral_bound(w, V, mask, r, nrm, tail))
            bound = min(bound, spec)
            self.inc.round(inside, free, v[~mask])
            level = self.level()
            if bound <= level:
                if row_ready:  # (a node it closed counts for it)
                    self.spec_tries += 1
                    self.spec_wins += 1
                return bound, None
        if m:
            # the Schur complement of the forced block (measured: Eisen1, k = 20,
            # 35 nodes with it at every node, 1,035 up to 3 free slots only,
            # 17,568 without)
            self.stage = "schur"
            bound = min(bound, _bounds.schur_bound(
                BN[np.ix_(mask, mask)], BN[np.ix_(mask, ~mask)], self.d[free], r,
                Bc=BN[np.ix_(~mask, ~mask)], cap=bound))
            if bound <= level:
                return bound, None
        # 5. the row-norm bound with the parent's multiplier (the root's at
        #    first) restricted to the node (one eigendecomposition); its
        #    penalty, unlike DSPCA's lam k, shrinks as features are forced in
        #    or out.  After the root's descent, the node lowers the multiplier
        #    for itself and its children (fast_descent, while open).
        if self.root_dual is None or not self.dual_on:
            return bound, v
        self.stage = "row_norm"
        U_src, idx = node.mult[:2] if node.mult is not None else self.root_dual
        before = bound
        pos = np.searchsorted(idx, N)
        # (a stored multiplier is float32; any U bounds, and the bound is
        # evaluated in float64 on the U actually used)
        U_in = U_src[np.ix_(pos, pos)].astype(np.float64)
        if FAST_ITER and self.row_steps:
            X_in = (node.mult[2][pos].astype(np.float64)
                    if node.mult is not None and len(node.mult) > 2 else None)
            val, vec, closed = self.fast_descent(BN, U_in, N, mask, r, level, X_in=X_in,
                                                 src=(U_src, idx, pos))
            if closed:
                return min(bound, val), None
        else:
            val, _, vec = _bounds.node_descent(BN, U_in, mask, r, 0, 0.0, SPECTRUM)
        if row_ready and v is not None:
            # the spectrum of the node's own block against the row-norm bound
            self.spec_tries += 1
            if spec < val:
                self.spec_wins += 1
            if self.spec_tries >= SPEC_TRIAL and self.spec_wins < SPEC_KEEP * self.spec_tries:
                self.spec_on = False
        # the split follows the row-norm bound's eigenvector even where an
        # earlier bound is lower (measured, the NYT sample's 300 words of
        # largest variance, raw, k = 15, no probing, one process: the proof in
        # 1,725 nodes against no proof in 3,940 nodes, 40 s of CPU, gap 3.0%,
        # with the eigenvector of Sigma_NN there)
        bound = min(bound, val)
        self.dual_tries += 1
        if before - bound >= DUAL_HELP * (before - level):
            self.dual_wins += 1
        if self.dual_tries >= DUAL_TRIAL and self.dual_wins < DUAL_KEEP * self.dual_tries:
            self.dual_on = False  # it rarely lowers a bound here: not worth its cost
        if vec is not v:
            self.inc.round(inside, free, vec[~mask])
        return bound, vec

    def gershgorin_coupling(self, BN: NDArray[np.float64], N: NDArray[np.intp],
                            mask: NDArray[np.bool_], free: NDArray[np.intp], r: int,
                            level: float, bound: float) -> float:
        """Steps 2 and 3 of :meth:`bound_node`: Gershgorin with the forced rows
        (and on the free block alone, for the coupling), then the forced
        block coupled to the free features, before the node's eigenpairs, as
        it closes most of the nodes it is tried on at a fraction of their
        cost (measured: tissue_gene_expression's 300 genes of largest
        variance standardised, k = 20: 3,530 of 4,100 closed nodes; the
        eigenpairs took half of the time).  The lower of the two bounds (or
        ``bound``)."""
        A = np.abs(BN)
        np.fill_diagonal(A, 0.0)
        self.stage = "gershgorin"
        gb, beta = _bounds.gershgorin_node(A, self.d[N], mask, self.k)
        bound = min(bound, gb)
        if bound <= level or not mask.any():
            return bound
        self.stage = "coupling"
        lam_in = _bounds.lambda_max_upper(BN[np.ix_(mask, mask)])
        beta = min(beta, _bounds.trace_bound(self.d[free][:0], self.d[free], r))
        cols2 = (BN[np.ix_(mask, ~mask)] ** 2).sum(axis=0)
        return min(bound, _bounds.coupling_bound(lam_in, cols2, beta, r))

    def fast_descent(self, BN: NDArray[np.float64], U_in: NDArray[np.float64],
                     N: NDArray[np.intp], mask: NDArray[np.bool_], r: int,
                     level: float, *, X_in: NDArray[np.float64] | None,
                     src: tuple[NDArray[Any], NDArray[np.intp], NDArray[np.intp]],
                     ) -> tuple[float, NDArray[np.float64], bool]:
        """The row-norm bound of a node at its parent's multiplier ``U_in``,
        then, while open, FAST_ITER steps of :func:`_bounds.fast_node_descent`
        from it (Ritz pairs, certified by Cholesky): ``(bound, vector,
        closed)``; the children start from the multiplier of the lowest
        estimate and its Ritz vectors.  With the parent's Ritz vectors
        (``X_in``, rows over ``N``) the starting value is their Ritz estimate
        (certified by Cholesky if it closes the node, else a bound
        ``CERT_SLACK`` above it if one holds, else none: ``inf``); without,
        LAPACK's ``SPECTRUM`` largest eigenpairs and the spectral bound.  A
        node that does not descend passes its Ritz (or LAPACK's) vectors on
        to its children with the multiplier it was given (``src``: that
        multiplier, the pool positions of its rows and the node's rows in
        it), so that no child repeats LAPACK's eigensolve."""
        A = BN + U_in
        pen = _bounds.row_norm_value(U_in, mask, r)
        target = self.target()
        if X_in is not None:
            w, X0 = _bounds.ritz_pairs(A, X_in, _bounds.RITZ_DEPTH)
            est = float(w[-1]) + pen
            vec = X0[:, -1]
            if est <= target and _bounds.certify_below(A, target - pen):
                return target, vec, True
            val = self.certified_above(A, est, pen)
            start = est
        else:
            w, V, tail = _bounds.spectrum(A, SPECTRUM)
            nrm = float(np.linalg.norm(A))
            val = min(float(w[-1]) + A.shape[0] * _bounds.EPS * nrm,
                      _bounds.spectral_bound(w, V, mask, r, nrm, tail)) + pen
            vec = V[:, -1]
            if val <= level:
                return val, vec, True
            X0 = V[:, -max(1, min(RITZ, A.shape[0] // 3)):]
            start = val
        if not self.desc_on or start > level + FAST_WINDOW * start:
            U_src, idx, pos = src
            X_full = np.zeros((idx.size, X0.shape[1]), dtype=np.float32)
            X_full[pos] = X0
            self.node_mult = (U_src, idx, X_full)
            return val, vec, False
        self.stage = "descent"
        closed, est, U, X, steps = _bounds.fast_node_descent(
            BN, U_in, mask, r, FAST_ITER, FAST_STEP * ROW_STEP * self.lam, target, X0,
            check=FAST_CHECK, hope=FAST_HOPE)
        self.node_steps += steps
        self.desc_tries += 1
        self.node_mult = (U.astype(np.float32), N, X.astype(np.float32))
        self.desc_closed += closed
        if self.desc_tries >= DESC_TRIAL and self.desc_closed < DESC_KEEP * self.desc_tries:
            self.desc_on = False  # they seldom close a node here: not worth their cost
        if closed:
            return target, X[:, -1], True
        pen = _bounds.row_norm_value(U, mask, r)
        return min(val, self.certified_above(BN + U, est, pen)), X[:, -1], False

    def certified_above(self, A: NDArray[np.float64], est: float, pen: float) -> float:
        """``t + pen``, ``t`` CERT_SLACK (relative) above the estimate
        ``est - pen`` of ``lambda_max(A)``, if :func:`_bounds.certify_below`
        proves it; else ``inf``."""
        t = est * (1.0 + CERT_SLACK) + CERT_SLACK * abs(est)
        return t if _bounds.certify_below(A, t - pen) else math.inf

    def start_dual(self, N: NDArray[np.intp], BN: NDArray[np.float64],
                   v: NDArray[np.float64]) -> None:
        """Search the root's lam and keep its multiplier for the nodes to come."""
        val, L, lam = self.root_lam(BN, N, v, self.lam)
        self.lam = lam
        # the multiplier in the DSPCA box, then lowered for the row-norm bound
        # (from which every node's multiplier is cut)
        self.root_bound = min(self.root_bound, val)
        self.root_dual = (-np.clip(L, -lam, lam), N)
        if self.verbose:
            print(f"root: DSPCA bound {val:.7g}")

    def descend(self) -> None:
        """ROW_ITER subgradient steps on the root's row-norm bound."""
        if self.root_dual is None:
            return
        U, N = self.root_dual
        BN = self.B[np.ix_(N, N)]
        rb, U = _bounds.row_norm_descent(BN, U, self.k, ROW_ITER, ROW_STEP * self.lam,
                                         limit=self.limit)
        self.row_steps += ROW_ITER
        self.root_bound = min(self.root_bound, rb)
        self.root_dual = (U, N)
        # a new multiplier gets a new trial at the nodes
        self.dual_on, self.dual_tries, self.dual_wins = True, 0, 0
        if self.verbose:
            print(f"root: row-norm bound {rb:.7g} after {self.row_steps} subgradient steps")

    # -- the search ------------------------------------------------------------------------
    def run(self, root_free: NDArray[np.intp], lam0: float) -> str:
        k = self.k
        N = root_free
        BN = self.B[np.ix_(N, N)]
        top, v = _bounds.top_pair(BN)
        self.root_bound = min(self.root_bound, top)
        self.inc.round(np.zeros(0, np.intp), N, v)
        if N.size <= k:
            self.inc.offer(N)
            self.close(self.inc.pool.variance(N))
            return _limits.STATUS_OPTIMAL
        self.lam = lam0
        self.push(np.zeros(0, np.intp), N, self.root_bound, None)
        self.log(force=True)
        status = _limits.STATUS_OPTIMAL
        try:
            while self.heap:
                if self.limit.expired():
                    status = _limits.STATUS_TIME_LIMIT
                    break
                node = heapq.heappop(self.heap)
                self.current = node
                if node.bound <= self.level():
                    self.close(node.bound)
                    continue
                if self.root_dual is None and self.n_nodes == DUAL_AFTER:
                    self.start_dual(N, BN, v)
                elif self.n_nodes == max(ROW_AFTER, DUAL_AFTER + 1):
                    self.descend()
                self.n_nodes += 1
                self.inc.n_nodes = self.n_nodes
                self.node_mult = node.mult
                bound, vec = self.bound_node(node)
                if vec is None or bound <= self.level():
                    self.close(bound)
                    self.log()
                    continue
                Nn = node.features
                j = choose_feature(node, Nn, vec)
                (i_in, f_in), (i_out, f_out) = children(node, j)
                self.push(i_in, f_in, bound, node, self.node_mult)
                self.push(i_out, f_out, bound, node, self.node_mult)
                self.log()
                self.current = None
        except KeyboardInterrupt:
            status = _limits.STATUS_INTERRUPTED
            if self.current is not None:  # its bound still counts
                self.close(self.current.bound)
        if status == _limits.STATUS_OPTIMAL and _rel_gap(self.inc.value, self.upper()) > self.gap:
            status = _limits.STATUS_TIME_LIMIT  # pragma: no cover - cannot happen
        self.log(force=True)
        return status


class _Expired(Exception):  # noqa: N818 - a signal, not an error
    """The caller's time limit passed before the root was searched."""


def _progress_bar(limit: _limits.TimeLimit) -> Any:
    """A tqdm bar on a terminal (shown after BAR_DELAY seconds), else ``None``."""
    if not getattr(sys.stderr, "isatty", lambda: False)():
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover - tqdm is a dependency
        return None
    return tqdm(desc="branch and bound", unit=" nodes", delay=BAR_DELAY, leave=False)


def branch_and_bound(Sigma: NDArray[np.float64], k: int, *, optimality_gap: float,
                     time_limit: _limits.TimeLimit,
                     start: NDArray[np.intp] | None = None,
                     start_bound: float = math.inf, lam0: float = math.nan,
                     below: float = math.inf, verbose: bool = False) -> SearchResult:
    """Search for the ``k``-support of largest variance, to the relative gap
    ``optimality_gap`` or until ``time_limit`` expires.

    ``Sigma`` is a dense PSD matrix (read only); ``start`` a support to begin
    from, ``start_bound`` a certified bound on the best ``k``-sparse variance
    (both from :func:`spca.dspca_cardinality`'s default path), ``lam0`` the
    penalty where the root's search over ``lam`` starts, ``below`` a certified
    bound on the best ``(k - 1)``-sparse variance (for the probing).
    """
    limit = time_limit
    P = np.flatnonzero(np.diag(Sigma) > 0)
    if P.size < k:
        raise ValueError(f"k={k} exceeds the number of features of positive variance "
                         f"({P.size})")
    B = np.ascontiguousarray(Sigma[np.ix_(P, P)], dtype=np.float64)
    search = _Search(B, k, optimality_gap, limit, verbose)
    if start is not None and np.isin(start, P).all() and start.size == k:
        search.inc.offer(np.searchsorted(P, start))
    d = search.d
    # Bounds that need no solve, in case Ctrl-C comes before the root is queued.
    search.root_bound = min(start_bound, _bounds.trace_bound(d[:0], d, k))
    status = _limits.STATUS_OPTIMAL
    search.bar = _progress_bar(limit)
    try:
        search.inc.starts()
        if limit.limited and limit.expired() and search.inc.support.size == k:
            # no time for the probing and the root (an eigensolve and a solve
            # over every feature): the incumbent, under the bound given
            search.close(search.root_bound)
            raise _Expired
        # Probing: drop every feature whose supports cannot beat the incumbent.
        beta = min(below, _bounds.trace_bound(d[:0], d, k - 1))
        if k > 1:
            A = np.abs(B)
            np.fill_diagonal(A, 0.0)
            beta = min(beta, _bounds.gershgorin_bound(A, d, np.zeros(d.size, bool), k - 1))
        fb = _bounds.feature_bounds(B, k, beta)
        keep = fb > search.level()
        root = np.flatnonzero(keep | np.isin(np.arange(P.size), search.inc.support))
        if (~keep).any():
            search.close(float(fb[~keep].max()))
        status = search.run(root.astype(np.intp), lam0)
    except _Expired:
        status = _limits.STATUS_TIME_LIMIT
    except KeyboardInterrupt:
        if search.inc.support.size != k:
            raise
        status = _limits.STATUS_INTERRUPTED
        search.close(search.root_bound)  # the root was not queued yet
    finally:
        if search.bar is not None:
            search.bar.close()
    ub = max(search.upper(), search.inc.value)
    return SearchResult(P[search.inc.support].astype(np.intp), float(search.inc.value), ub,
                        status, search.n_nodes, limit.elapsed(), search.lam)
