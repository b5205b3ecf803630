"""Primal heuristics: ``k``-supports found during the search.

Any support of ``k`` features is feasible for the whole problem, so a node's
heuristic need not respect the node: it rounds the node's relaxation (the
forced features plus the free ones of largest magnitude in the leading
eigenvector of the dual matrix) and improves the new supports it finds by the
swaps of :class:`spca._ksparse._Pool` (one feature out, one in, while the
largest eigenvalue grows).  The search starts from the best of the caller's
support, forward greedy selection and truncated power iterations, each
improved by swaps.  Under the caller's time limit (``limit``) no start is
begun, no greedy selection grows and no swap search goes on once it has
passed, as soon as one ``k``-support is at hand.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .. import _ksparse, _limits

__all__: list[str] = []

# A rounded support is improved by swaps only if its variance is within this
# fraction of the incumbent's (swaps cost k eigensolves and a bordered
# secular solve per step; most rounded supports are far below).
SWAP_WINDOW = 0.002
# ... and while the node roundings have improved at most SWAP_CALLS supports
# plus one per SWAP_EVERY nodes (a work budget).
SWAP_CALLS = 10
SWAP_EVERY = 200
# Greedy selection also starts from each of this many features of largest
# variance (a greedy path that opens with the largest variance can miss a
# group of features whose covariances, not variances, make the best support).
SEEDS = 16


class Incumbent:
    """The best support found so far, over a candidate pool ``P`` (positions in
    ``Sigma``) whose block is ``B``; ``limit`` is the caller's time limit
    (none: no decision reads the clock)."""

    def __init__(self, B: NDArray[np.float64], k: int,
                 limit: _limits.TimeLimit | None = None) -> None:
        self.pool = _ksparse._Pool(B)
        self.B = B
        self.k = k
        self.support = np.zeros(0, dtype=np.intp)  # positions in the pool
        self.value = -np.inf
        self.seen: set[bytes] = set()
        self.n_swaps = 0
        self.n_calls = 0
        self.n_nodes = 0
        self.limit = limit

    def late(self) -> bool:
        """Whether a support is at hand and the caller's limit has passed."""
        return (self.support.size > 0 and self.limit is not None
                and self.limit.expired())

    def offer(self, S: NDArray[np.intp], improve: bool = True) -> bool:
        """Evaluate the support ``S`` (pool positions), improve it by swaps if it is
        new and ``improve``; whether the incumbent improved."""
        S = np.sort(np.asarray(S, dtype=np.intp))
        key = S.tobytes()
        if key in self.seen:
            return False
        self.seen.add(key)
        if improve and self.support.size and not self.worth(S):
            improve = False
        if improve:
            self.n_calls += 1
            mv = self.pool.swaps(S, self.limit)
            self.n_swaps += mv.swaps
            S, val = mv.support, mv.variance
            self.seen.add(S.tobytes())
        else:
            val = self.pool.variance(S)
        if val > self.value * (1 + _ksparse.SWAP_RTOL) or self.support.size == 0:
            self.support, self.value = S, float(val)
            return True
        return False

    def worth(self, S: NDArray[np.intp]) -> bool:
        """Whether swaps from ``S`` are worth their cost: its variance is within
        SWAP_WINDOW of the incumbent's."""
        if self.n_calls >= SWAP_CALLS + self.n_nodes // SWAP_EVERY:
            return False
        return self.pool.variance(S) >= (1.0 - SWAP_WINDOW) * self.value

    def starts(self) -> None:
        """Greedy selection (from nothing, and from each of the SEEDS features of
        largest variance) and two truncated-power starts, each with swaps; the
        ones after the first complete support are skipped once the limit has
        passed."""
        k, pool = self.k, self.pool
        if self.late():
            return
        self.offer(self.grown(np.zeros(0, dtype=np.intp)))
        if k > 1:
            order = np.argsort(-np.where(pool.usable, pool.d, -np.inf), kind="stable")
            for j in order[:min(SEEDS, int(pool.usable.sum()))]:
                if self.late():
                    return
                S = self.grown(np.array([j], dtype=np.intp))
                self.offer(S, improve=self.worth(S))
        if self.late():
            return
        e = np.zeros(pool.m)
        e[int(np.argmax(np.where(pool.usable, pool.d, -np.inf)))] = 1.0
        self.offer(pool.truncated_power(e, k))
        if self.late():
            return
        x = np.zeros(pool.m)
        x[self.support] = _ksparse.top_eig(self.B[np.ix_(self.support, self.support)])[1]
        self.offer(pool.truncated_power(x, k))

    def grown(self, S: NDArray[np.intp]) -> NDArray[np.intp]:
        """``S`` grown greedily to ``k`` features; once a support is at hand,
        growing stops at the caller's limit and the features grown so far
        are completed without a search (:meth:`spca._ksparse._Pool.complete`)."""
        T = self.pool.grow(S, self.k, self.limit if self.support.size else None)
        return self.pool.complete(T, self.k) if T.size < self.k else T

    def round(self, inside: NDArray[np.intp], free: NDArray[np.intp],
              v_free: NDArray[np.float64]) -> bool:
        """Round a node: ``inside`` plus the ``k - |inside|`` free features of
        largest ``|v|`` (all pool positions)."""
        r = self.k - inside.size
        if r < 0 or free.size < r:
            return False
        pick = free[np.argsort(-np.abs(v_free), kind="stable")[:r]]
        return self.offer(np.concatenate([inside, pick]))
