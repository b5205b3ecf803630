"""Exactly ``k`` nonzero loadings: supports built, improved and certified.

The cardinality-constrained problem

.. code-block:: text

    psi_k = max  x' Sigma x   over ||x||_2 = 1, card(x) <= k

is NP-hard.  The DSPCA relaxation at a searched ``lam`` proposes a support;
this module turns what the search saw into a support of exactly ``k``
features and says how good it is:

* :class:`_Pool` works on a dense block ``B`` of the covariance over a pool
  of candidate features.  It grows a support greedily (add the feature that
  most raises the largest eigenvalue), prunes one (remove the feature whose
  removal costs the least), and improves one by *swaps* (one feature out,
  one in, while the largest eigenvalue grows).  Every candidate move is
  scored by the largest eigenvalue of a *bordered* matrix
  ``[[A, b], [b', c]]`` from one eigendecomposition of ``A``: in the
  eigenbasis ``(mu_i, u_i)`` of ``A`` it is the largest root of the secular
  equation ``lambda - c = sum_i (u_i' b)^2 / (lambda - mu_i)``, solved for
  all candidates at once; candidates whose two-by-two bound
  (``mu_i`` replaced by ``max mu``) cannot beat the best move so far are
  dropped before the root is found (both two-by-two bounds need only the
  top eigenvector and ``||b||``, see :func:`_pair_bounds`, so a dropped
  candidate is never rotated into the eigenbasis).  No candidate needs an
  eigensolve of its own.
* :func:`bound_from_cuts` is the certificate.  For every ``lam >= 0`` and
  every unit ``x`` with ``card(x) <= k``,
  ``x' Sigma x <= psi0(lam) + lam k <= phi(lam) + lam k`` where ``psi0`` is
  the ``l0``-penalised problem and ``phi`` any certified upper bound of the
  DSPCA problem at ``lam`` (the solver's ``upper_bound``; Theorem 1
  elimination is exact for ``phi``, and ``||x||_1^2 <= card(x)`` for unit
  ``x``).  So every solve is a *cut* ``g(lam) = U(lam) + lam k``, and the
  smallest one bounds ``psi_k``.  ``g`` is convex in ``lam`` with
  subgradient ``k - sum_ij |Z*_ij|``, which :func:`next_probe` uses to place
  a few more solves where they can lower the bound.  Two bounds that need
  no solve are added: the sum of the ``k`` largest variances
  (``lambda_max <= trace``) and, when the whole covariance is at hand, the
  largest row sum of the ``k - 1`` largest off-diagonal magnitudes plus the
  diagonal (Gershgorin on any ``k x k`` principal block; exact for
  ``k = 1``).

The pool, the moves and the order of the starts are heuristics: only the
certificate says how far from ``psi_k`` an answer can be.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple

import numpy as np
from numpy.typing import NDArray

from . import _ksparse_fast

if TYPE_CHECKING:
    from ._limits import TimeLimit

__all__: list[str] = []

# Relative improvement a swap must bring to be taken (guards against cycling
# on rounding).
SWAP_RTOL = 1e-10
# Supports larger than this consider only the SWAP_OUT features of smallest
# |loading| for removal in a swap (each removal costs one eigensolve of the
# remaining block).
SWAP_OUT = 32
# Cap on the number of swaps of one local search.
MAX_SWAPS = 200
# Iterations of a truncated-power start (it stops once its support repeats).
TPOWER_ITER = 200
# Pruning removes the feature of least cost exactly up to this support size,
# and the feature of smallest |loading| above it.
PRUNE_EXACT = 48
# Growing adds several features per eigensolve from this support size on.
BATCH_FROM = 64
# Iterations of the vectorised secular-equation solver (safeguarded Newton
# steps; each keeps a bracket of the root).
SECULAR_ITER = 60
SECULAR_RTOL = 1e-13
# A probe of the certificate below the best cut's lam goes at most this
# factor down. The secant through a cut far above (of a solve with one
# nonzero) extrapolates far past the minimum of U(lam) + lam k, which lies
# near the lam where the solve's l1 norm reaches k; and every feature with
# variance above the probe joins its solve. On the bundled NYT sample (five
# components of five words) a factor 0.5 put the probes of components 3-5 at
# the search's lowest lam (1,004-1,014 features, 0.10 s in all, two of three
# bounds not lowered); at 0.8 they took 771-890 features and 0.031 s, and the
# bounds of components 3-5 fell by 1.5%, 4.5% and 0.8% (component 2's rose by
# 0.2%; the k-sparse table's cases are unchanged).
PROBE_DOWN = 0.8


def top_k(a: NDArray[np.float64], k: int) -> NDArray[np.intp]:
    """Positions of the ``k`` largest entries of ``a``, sorted; ties go to the
    lower position: the set of ``np.sort(np.argsort(-a, kind="stable")[:k])``
    (``tests/test_ksparse_kernel.py`` checks it), for ``k`` up to TOP_K_SCAN
    by one compiled pass (1,024 candidate words, k = 5: about 2 us against
    4-14 us for the sort; ``np.partition`` took 79 us on a vector of one nonzero,
    the truncated power method's usual start).
    """
    m = a.size
    k = max(0, min(int(k), m))
    if k <= TOP_K_SCAN:
        out = np.empty(k, dtype=np.intp)
        if _ksparse_fast.top_k_positions(np.ascontiguousarray(a, dtype=np.float64), out) == 0:
            return out
    return np.sort(np.argsort(-a, kind="stable")[:k])


# Largest k selected by top_k's insertion pass (O(len(a) k)); larger k sort.
TOP_K_SCAN = 32


def top_eig(A: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """Largest eigenvalue of the symmetric ``A`` and its unit eigenvector,
    largest-magnitude entry positive."""
    w, V = np.linalg.eigh(A)
    v = V[:, -1]
    if v[np.argmax(np.abs(v))] < 0:
        v = -v
    return float(w[-1]), v


# Eigenvalues within this relative distance of the largest count as equal to
# it: a leading eigenspace of dimension > 1 (a degenerate top eigenvalue, e.g.
# of a diagonal or equicorrelated block) holds vectors with more nonzeros than
# the one eigenvector LAPACK returns.
DEGENERATE_RTOL = 1e-12
# A feature whose row of that eigenspace's orthonormal basis has a norm below
# this (relative to the largest row) cannot carry weight in it: its loading is
# set to exactly 0 (moving the variance by its square at most, ~1e-16).
ZERO_RTOL = 1e-8
# Cap on the eigensolves of the search for an equal-variance support whose
# vector has more nonzeros (see _Pool.fill).
FILL_EVALS = 4000


def spread_top(A: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """Largest eigenvalue of the symmetric ``A`` and a unit vector of its
    leading eigenspace with as many nonzeros as that eigenspace allows.

    When the largest eigenvalue is simple this is the eigenvector.  When it
    is degenerate (eigenvalues within ``DEGENERATE_RTOL``), the vector is a
    generic combination of the eigenspace's basis ``E``: the projection
    ``E E' g`` of a fixed vector ``g`` with distinct entries, which is zero
    only at the features whose row of ``E`` is zero (a nonzero row is
    orthogonal to ``g``'s projection only for ``g`` on a hyperplane; four
    such ``g`` are tried and the one with the largest smallest entry kept).
    Rows of ``E`` of norm below ``ZERO_RTOL`` give exact zeros.  The value
    returned is the Rayleigh quotient of the vector; its largest-magnitude
    entry is positive.
    """
    w, V = np.linalg.eigh(A)
    top = float(w[-1])
    return spread_in(A, V[:, w >= top - DEGENERATE_RTOL * max(abs(top), np.finfo(float).tiny)])


def spread_in(A: NDArray[np.float64],
              E: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """The vector and value of :func:`spread_top` from ``E``, an orthonormal
    basis of ``A``'s leading eigenspace (one column when it is simple)."""
    rows = np.linalg.norm(E, axis=1)
    live = rows > ZERO_RTOL * rows.max()
    if E.shape[1] == 1:
        v = E[:, 0].copy()
    else:
        best, v = -1.0, E[:, -1].copy()
        idx = np.arange(1, A.shape[0] + 1)
        for phase in (0.6180339887498949, 0.4142135623730951, 0.7320508075688772,
                      0.2360679774997897):
            g = 1.0 + (idx * phase) % 1.0
            c = E @ (E.T @ g)
            a = np.abs(c[live])
            score = float(a.min() / a.max()) if a.size and a.max() > 0 else 0.0
            if score > best:
                best, v = score, c
    v[~live] = 0.0
    v /= np.linalg.norm(v)
    if v[np.argmax(np.abs(v))] < 0:
        v = -v
    return float(v @ A @ v), v


def bordered_top(mu: NDArray[np.float64], W2: NDArray[np.float64],
                 c: NDArray[np.float64]) -> NDArray[np.float64]:
    """Largest eigenvalue of ``[[diag(mu), w_j], [w_j', c_j]]`` for every column ``j``.

    Parameters
    ----------
    mu : ndarray of shape (s,)
        Eigenvalues of ``A`` (any order).
    W2 : ndarray of shape (s, m)
        Squared coordinates ``(u_i' b_j)^2`` of each border ``b_j`` in the
        eigenbasis of ``A``.
    c : ndarray of shape (m,)
        Corner entries ``c_j``.

    Returns
    -------
    values : ndarray of shape (m,)
        The largest root of ``f(x) = x - c - sum_i W2_ij / (x - mu_i)`` on
        ``[max(max mu, c), inf)`` (``max(max mu, c)`` when ``b_j`` is
        orthogonal to the top eigenvectors and ``c`` is smaller).
    """
    if mu.size == 0:
        return c.astype(np.float64, copy=True)
    top = float(mu.max())
    nb2 = W2.sum(axis=0)
    lo = np.maximum(top, c)
    # Replacing every mu_i by top gives a 2 x 2 problem whose larger
    # eigenvalue bounds the root from above.
    hi = 0.5 * (top + c + np.sqrt((top - c) ** 2 + 4.0 * nb2))
    hi = np.maximum(hi, lo)
    x = hi.copy()
    scale = max(abs(top), float(np.max(np.abs(hi))), np.finfo(float).tiny)
    # Safeguarded Newton steps for every column at once, each keeping its
    # bracket [lo, hi] of the root; the kernel stops when no step is larger
    # than SECULAR_RTOL * scale (see spca/_ksparse_fast.pyx).
    _ksparse_fast.secular_roots(
        np.ascontiguousarray(mu, dtype=np.float64), np.ascontiguousarray(W2, dtype=np.float64),
        np.ascontiguousarray(c, dtype=np.float64), x, lo, hi,
        max_iter=SECULAR_ITER, threshold=SECULAR_RTOL * scale)
    return np.maximum(x, lo)


def _pair_bounds(top: float, u: NDArray[np.float64], X: NDArray[np.float64],
                 c: NDArray[np.float64]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Lower and upper bounds on the largest eigenvalue of ``[[A, b_j], [b_j', c_j]]``
    for every column ``b_j`` of ``X``, from ``A``'s largest eigenvalue ``top``
    and its unit eigenvector ``u`` alone.

    Two 2 x 2 problems bracket each value: the top eigenvector's coupling
    ``u' b_j`` alone (a Rayleigh quotient, from below) and every eigenvalue
    of ``A`` replaced by ``top`` (from above; the coupling is then the whole
    ``||b_j||``, which needs no eigenbasis).
    """
    w_top = u @ X  # (u' b_j for every j)
    nb2 = np.einsum("ij,ij->j", X, X)  # ||b_j||^2
    # lower = 0.5 * (top + c + sqrt((top - c)**2 + 4 w_top**2)), upper the
    # same with nb2, in one compiled pass (the same values as those NumPy
    # expressions, bit for bit: tests/test_ksparse_kernel.py; the whole
    # function 19 -> 11 us over 1,020 candidate words)
    lower = np.empty(c.size)
    upper = np.empty(c.size)
    _ksparse_fast.pair_bounds(float(top), np.ascontiguousarray(w_top, dtype=np.float64),
                              np.ascontiguousarray(nb2, dtype=np.float64),
                              np.ascontiguousarray(c, dtype=np.float64), lower, upper)
    return lower, upper


class Moves(NamedTuple):
    """A support and how it was reached."""

    support: NDArray[np.intp]  # pool positions, sorted
    variance: float
    swaps: int


class _Pool:
    """Local moves over the dense block ``B`` of a pool of candidate features.

    Supports are arrays of positions in the pool.  Only features of
    positive variance (``B_ii > 0``) ever enter a support.
    """

    def __init__(self, B: NDArray[np.float64],
                 memo: dict[bytes, tuple[NDArray[np.intp], float, int]] | None = None) -> None:
        self.B = B
        self.d = np.ascontiguousarray(np.diag(B))
        self.m = B.shape[0]
        self.usable = self.d > 0
        # Where a swap search from a support ends: support -> (the local
        # optimum, its variance, the swaps from the support to it), for every
        # support that a completed search of this pool passed through (a
        # swap search is deterministic from its support on; see swaps).  A
        # caller that builds several pools over the same B may share ``memo``.
        self.ends: dict[bytes, tuple[NDArray[np.intp], float, int]] = (
            {} if memo is None else memo)

    def variance(self, S: NDArray[np.intp]) -> float:
        return top_eig(self.B[np.ix_(S, S)])[0] if S.size else 0.0

    def _outside(self, S: NDArray[np.intp]) -> NDArray[np.intp]:
        mask = self.usable.copy()
        mask[S] = False
        return mask.nonzero()[0]  # (np.flatnonzero of a vector, without its wrappers)

    def _best_addition(self, R: NDArray[np.intp], C: NDArray[np.intp],
                       floor: float, BRC: NDArray[np.float64] | None = None,
                       BRR: NDArray[np.float64] | None = None) -> tuple[int, float]:
        """The candidate of ``C`` whose addition to ``R`` gives the largest
        top eigenvalue, if above ``floor``: ``(position, value)``, else
        ``(-1, floor)``.  ``BRC`` and ``BRR``, if given, are the blocks
        ``B[R, C]`` and ``B[R, R]`` (the same values, formed by the caller)."""
        if C.size == 0:
            return -1, floor
        c = self.d[C]
        if R.size == 0:
            j = int(np.argmax(c))
            return (int(C[j]), float(c[j])) if c[j] > floor else (-1, floor)
        if BRR is None or BRC is None:
            # (the values of B[np.ix_(R, R)] and B[np.ix_(R, C)], by takes of
            # R's rows: 15 -> 5 us for the greedy steps over 1,020 words)
            BR = self.B.take(R, axis=0)
            BRR = BR.take(R, axis=1) if BRR is None else BRR
            BRC = BR.take(C, axis=1) if BRC is None else BRC
        mu, U = np.linalg.eigh(BRR)
        # (the candidates' 2 x 2 bounds from the top eigenpair, see
        # _pair_bounds, then bordered_top of those that can beat the best
        # lower bound: one compiled call)
        j, val, floor = _ksparse_fast.best_addition(
            mu, np.ascontiguousarray(U), np.ascontiguousarray(BRC, dtype=np.float64),
            np.ascontiguousarray(c, dtype=np.float64), float(floor), SECULAR_ITER,
            SECULAR_RTOL)
        if j >= 0:
            return int(C[j]), float(val)
        return -1, floor

    def grow(self, S: NDArray[np.intp], k: int,
             limit: TimeLimit | None = None) -> NDArray[np.intp]:
        """Add features greedily (largest top eigenvalue each time) until ``k``.

        From BATCH_FROM features on, a quarter of the features still missing
        is added at once (the best-scoring ones for the current support), so
        that a large support costs a few dozen eigensolves, not one per
        feature.  With the caller's ``limit``, growing stops once it has
        passed (checked before every step but the first): the support
        returned may then have fewer than ``k`` features (see
        :meth:`complete`).
        """
        S = np.sort(np.asarray(S, dtype=np.intp))
        steps = 0
        while S.size < k:
            if steps and limit is not None and limit.expired():
                break
            steps += 1
            if S.size >= BATCH_FROM and k - S.size > 1:
                C = self._outside(S)
                mu, U = np.linalg.eigh(self.B[np.ix_(S, S)])
                X = self.B[np.ix_(S, C)]
                c = self.d[C]
                b = min(max(1, (k - S.size) // 4), C.size)
                # Only candidates whose upper bound reaches the b-th largest
                # lower bound can be among the b best (see _pair_bounds).
                lower, bound = _pair_bounds(float(mu[-1]), U[:, -1], X, c)
                floor = float(np.partition(lower, C.size - b)[C.size - b]) * (1.0 - 1e-12)
                keep = np.flatnonzero(bound >= floor)
                W = U.T @ X[:, keep]
                vals = bordered_top(mu, W * W, c[keep])
                pick = C[keep[np.argsort(-vals, kind="stable")[:b]]]
                S = np.sort(np.concatenate([S, pick]))
                continue
            j, _ = self._best_addition(S, self._outside(S), -math.inf)
            if j < 0:
                raise ValueError("not enough features of positive variance to grow a support")
            S = np.sort(np.append(S, j))
        return S

    def complete(self, S: NDArray[np.intp], k: int) -> NDArray[np.intp]:
        """``S`` completed to ``k`` features without a search (for a support
        that the caller's time limit cut short, and the answer that needs no
        search at all): the features outside ``S`` of largest ``|B x|`` for
        the leading eigenvector ``x`` of ``S``'s block (one step of the power
        method, ties to the larger variance), or of largest variance when
        ``S`` is empty.  Costs one eigensolve of ``S``'s block."""
        S = np.sort(np.asarray(S, dtype=np.intp))
        if S.size >= k:
            return S
        C = self._outside(S)
        if C.size < k - S.size:
            raise ValueError("not enough features of positive variance to complete a support")
        if S.size:
            _, x = top_eig(self.B[np.ix_(S, S)])
            score = np.abs(self.B[np.ix_(C, S)] @ x)
            order = np.lexsort((-self.d[C], -score))  # (|B x| first, then the variance)
        else:
            order = np.argsort(-self.d[C], kind="stable")
        return np.sort(np.concatenate([S, C[order[:k - S.size]]]))

    def prune(self, S: NDArray[np.intp], k: int) -> NDArray[np.intp]:
        """Remove features until ``k`` are left: the one whose removal keeps
        the largest top eigenvalue (up to PRUNE_EXACT features), else a
        quarter of the excess of smallest ``|loading|`` at once."""
        S = np.sort(np.asarray(S, dtype=np.intp))
        while S.size > k:
            if S.size <= PRUNE_EXACT:
                vals = [np.linalg.eigvalsh(self.B[np.ix_(R, R)])[-1]
                        for R in (np.delete(S, i) for i in range(S.size))]
                i = int(np.argmax(vals))
            else:
                # (a quarter of the excess at once, as in grow)
                _, v = top_eig(self.B[np.ix_(S, S)])
                b = max(1, (S.size - k) // 4)
                S = np.delete(S, np.argsort(np.abs(v), kind="stable")[:b])
                continue
            S = np.delete(S, i)
        return S

    def truncated_power(self, x0: NDArray[np.float64], k: int,
                        max_iter: int = TPOWER_ITER) -> NDArray[np.intp]:
        """Support of the truncated power method (Yuan & Zhang 2013) from ``x0``
        (a vector over the pool): ``x <- B x``, keep the ``k`` entries of
        largest magnitude, normalise, until the support repeats."""
        x = np.where(self.usable, x0, 0.0)
        S = top_k(np.abs(x), k)
        for _ in range(max_iter):
            # B x, x being zero off S (rows of the symmetric B: a contiguous
            # gather, half the time of the columns B[:, S])
            y = x[S] @ self.B.take(S, axis=0)
            y[~self.usable] = 0.0
            T = top_k(np.abs(y), k)
            x = np.zeros(self.m)
            x[T] = y[T] / max(float(np.linalg.norm(y[T])), np.finfo(float).tiny)
            if np.array_equal(T, S):
                break
            S = T
        return S

    def fill(self, S: NDArray[np.intp], value: float,
             limit: TimeLimit | None = None) -> tuple[NDArray[np.intp], float,
                                                     NDArray[np.float64]]:
        """An equal-variance support whose vector has more nonzeros.

        ``S`` (``k`` features) reaches ``value`` with a vector of fewer than
        ``k`` nonzeros (see :func:`spread_top`).  Swaps (one feature out, one
        in) that keep the largest eigenvalue within ``DEGENERATE_RTOL`` of
        ``value`` (or raise it) are taken while they add nonzeros, at most
        ``FILL_EVALS`` eigensolves in all, and none once the caller's
        ``limit`` has passed (checked between eigensolves).  Returns the
        support, the value and the vector over it (pool positions, sorted).
        """
        S = np.sort(np.asarray(S, dtype=np.intp))
        val, v = spread_top(self.B[np.ix_(S, S)])
        floor = value - DEGENERATE_RTOL * abs(value)
        evals = 0
        while np.count_nonzero(v) < S.size and evals < FILL_EVALS:
            C = self._outside(S)
            # (features without weight leave first)
            outs = np.argsort(np.abs(v), kind="stable")
            moved = False
            for i in outs:
                for j in C:
                    if limit is not None and limit.expired():
                        return S, val, v
                    T = np.sort(np.append(np.delete(S, i), j))
                    evals += 1
                    t_val, t_v = spread_top(self.B[np.ix_(T, T)])
                    if t_val >= floor and np.count_nonzero(t_v) > np.count_nonzero(v):
                        S, val, v, moved = T, t_val, t_v, True
                        break
                    if evals >= FILL_EVALS:
                        break
                if moved or evals >= FILL_EVALS:
                    break
            if not moved:
                break
        return S, val, v

    def swaps(self, S: NDArray[np.intp], limit: TimeLimit | None = None) -> Moves:
        """Best-improvement swap search: exchange one feature of ``S`` for one
        outside while the top eigenvalue grows (by more than SWAP_RTOL).

        With the caller's ``limit``, the search stops (keeping the best
        support so far, ``k`` features like ``S``) once it has passed: it is
        checked before every swap and between the removals a swap tries.
        The search from a support depends on that support alone, so a search
        that reaches a support an earlier completed search of this pool
        passed through takes that search's end (the same support, variance
        and number of swaps, without the scans; the starts of the real wide
        sets climb to one or two local optima).
        """
        S = np.sort(np.asarray(S, dtype=np.intp))
        known = self.ends.get(S.tobytes())
        if known is not None and known[2] <= MAX_SWAPS:
            return Moves(known[0], known[1], known[2])  # (no eigensolve)
        cur, v = top_eig(self.B[np.ix_(S, S)])
        n_swaps = 0
        C = self._outside(S)
        path: list[bytes] = []  # the supports left by a swap, in order
        ended = False  # whether the search ended where no swap improves
        while n_swaps < MAX_SWAPS and C.size and S.size:
            if limit is not None and limit.expired():
                break
            known = self.ends.get(S.tobytes())
            if known is not None and n_swaps + known[2] <= MAX_SWAPS:
                S, cur, rest = known[0], known[1], known[2]
                for i, key in enumerate(path):
                    self.ends[key] = (S, cur, len(path) - i + rest)
                return Moves(S, float(cur), n_swaps + rest)
            floor = cur * (1.0 + SWAP_RTOL) if cur > 0 else cur + SWAP_RTOL
            if S.size > SWAP_OUT:
                outs = np.argsort(np.abs(v), kind="stable")[:SWAP_OUT]
            else:
                outs = np.arange(S.size)
            best_out, best_in, best_val = -1, -1, floor
            cut = False
            # The blocks B[S, C] and B[S, S] once per swap: each removal's
            # blocks are theirs without row (and column) i -- the same values
            # as gathering B[R, C] and B[R, R] anew, at a fraction of the
            # cost (NCI60's 2,000 genes, k = 50: the gathers were a third of
            # the swap searches' time).
            BSC = self.B.take(S, axis=0)
            BSS = BSC.take(S, axis=1)
            BSC = BSC.take(C, axis=1)
            pos = np.arange(S.size)
            for i in outs:
                if limit is not None and limit.expired():
                    cut = True  # (the best swap of a partial scan is still taken)
                    break
                # (S, BSC and BSS without entry, row or column i: the arrays
                # of np.delete, by takes at a third of its overhead)
                r = pos[pos != i]
                BRS = BSS.take(r, axis=0)
                j, val = self._best_addition(S.take(r), C, best_val, BRC=BSC.take(r, axis=0),
                                             BRR=BRS.take(r, axis=1))
                if j >= 0:
                    best_out, best_in, best_val = int(i), j, val
            if best_out < 0:
                ended = not cut
                break
            T = np.sort(np.append(np.delete(S, best_out), best_in))
            new, w = top_eig(self.B[np.ix_(T, T)])
            if not new > cur:
                ended = not cut
                break  # the predicted gain was rounding
            path.append(S.tobytes())
            S, cur, v = T, new, w
            n_swaps += 1
            if cut:
                break
            C = self._outside(S)
        if ended:
            self.ends[S.tobytes()] = (S, float(cur), 0)
            for i, key in enumerate(path):
                self.ends[key] = (S, float(cur), len(path) - i)
        return Moves(S, float(cur), n_swaps)


# -- the certificate ---------------------------------------------------------------


class Cut(NamedTuple):
    """A certified DSPCA upper bound ``U`` at ``lam`` and ``sum |Z_ij|`` of its solve."""

    lam: float
    upper_bound: float
    l1: float


def bound_from_cuts(cuts: list[Cut], k: int) -> tuple[float, float]:
    """``min_i U_i + lam_i k`` over the cuts: ``(bound, lam)`` (``(inf, nan)`` if none)."""
    best, best_lam = math.inf, math.nan
    for c in cuts:
        g = c.upper_bound + c.lam * k
        if g < best:
            best, best_lam = g, c.lam
    return best, best_lam


def next_probe(cuts: list[Cut], k: int, lam_floor: float, lam_ceil: float,
               rtol: float) -> float | None:
    """Where one more solve may lower ``min_lam U(lam) + lam k``, or ``None``.

    ``g(lam) = phi(lam) + lam k`` is convex with subgradient
    ``k - sum |Z*_ij|``.  From the best cut, its subgradient sign says on
    which side the minimum lies.  If a cut on that side has the opposite
    sign, the minimum is bracketed and the tangents at the two ends meet
    where it can be lowest: that ``lam`` is probed (safeguarded to the inner
    80% of the bracket in ``log(lam)``), unless the tangents promise less
    than ``rtol`` relative improvement.  Otherwise the slope is extrapolated
    (secant of the subgradients of the best cut and its neighbour on the
    other side; a step of 20% without one), at most down to
    ``PROBE_DOWN`` times the best ``lam`` or up to twice it, and within
    ``[lam_floor, lam_ceil]``, unless the tangent at the
    best cut promises less than ``rtol`` over that step.  Tangents of
    approximate solves only guide the probes: the bound itself is
    ``min U + lam k`` over the solves made.
    """
    best: dict[float, tuple[float, float]] = {}
    for c in cuts:
        if math.isfinite(c.upper_bound) and math.isfinite(c.l1):
            g = c.upper_bound + c.lam * k
            if c.lam not in best or g < best[c.lam][0]:
                best[c.lam] = (g, k - c.l1)
    pts = sorted((lam, g, s) for lam, (g, s) in best.items())
    if not pts:
        return None
    b = min(range(len(pts)), key=lambda i: pts[i][1])
    lam_b, g_b, s_b = pts[b]
    if s_b == 0:
        return None
    down = s_b > 0  # g increases at lam_b: the minimum is at a smaller lam
    ahead = pts[:b][::-1] if down else pts[b + 1:]
    behind = pts[b + 1:] if down else pts[:b][::-1]
    closing = [p for p in ahead if (p[2] < 0) == down]
    if closing:
        lam_a, g_a, s_a = closing[0]
        # The tangents g_a + s_a (x - lam_a) and g_b + s_b (x - lam_b) meet at x.
        x = (g_b - g_a + s_a * lam_a - s_b * lam_b) / (s_a - s_b)
        model = g_b + s_b * (x - lam_b)
        if g_b - model <= rtol * abs(g_b):
            return None
        lo, hi = sorted((lam_a, lam_b))
        if lo > 0:
            t_lo, t_hi = math.log(lo), math.log(hi)
            lx = math.log(x) if x > 0 else t_lo
            lx = min(max(lx, t_lo + 0.1 * (t_hi - t_lo)), t_hi - 0.1 * (t_hi - t_lo))
            x = math.exp(lx)
        else:
            x = min(max(x, lo + 0.1 * (hi - lo)), hi - 0.1 * (hi - lo))
        return x if lo < x < hi else None
    x = math.nan
    if behind and behind[0][2] != s_b:
        lam_o, _, s_o = behind[0]
        x = lam_b - s_b * (lam_b - lam_o) / (s_b - s_o)
    if down:
        if lam_floor >= lam_b:
            return None
        if not x < lam_b:
            x = PROBE_DOWN * lam_b
        x = max(x, PROBE_DOWN * lam_b, lam_floor)
        if ahead:
            x = max(x, 0.5 * (lam_b + ahead[0][0]))
    else:
        if not x > lam_b:
            x = 1.25 * lam_b
        x = min(x, 2.0 * lam_b, lam_ceil)
        if ahead:
            x = min(x, 0.5 * (lam_b + ahead[0][0]))
    if abs(s_b) * abs(lam_b - x) <= rtol * abs(g_b) or x == lam_b:
        return None
    return x


def gershgorin_bound(B: NDArray[np.float64], k: int) -> float:
    """``max_i B_ii + (sum of the k - 1 largest |B_ij|, j != i)``: bounds the
    largest eigenvalue of every ``k x k`` principal block of ``B``."""
    m = B.shape[0]
    if m == 0:
        return 0.0
    d = np.diag(B)
    if k <= 1 or m == 1:
        return float(d.max())
    A = np.abs(B)
    np.fill_diagonal(A, 0.0)
    r = min(k - 1, m - 1)
    top = -np.partition(-A, r - 1, axis=1)[:, :r]
    return float((d + top.sum(axis=1)).max())


def diagonal_bound(d: NDArray[np.float64], k: int, outside: float = 0.0) -> float:
    """Sum of the ``k`` largest variances (features outside, if any, have
    variance at most ``outside``)."""
    vals = np.concatenate([d, np.full(k, outside)]) if outside > 0 else d
    k = min(k, vals.size)
    return float(np.sum(np.partition(vals, vals.size - k)[vals.size - k:]))
