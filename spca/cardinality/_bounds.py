"""Upper bounds on the best variance of a node of the search.

A node fixes some features in (``I``, ``m`` of them), some out, and leaves the
rest free (``F``); its supports are the ``k``-subsets ``S`` with
``I <= S <= N = I + F``, and its value is ``max lambda_max(Sigma_SS)`` over
them.  Every function here returns a number that is at least that value
(floating-point rounding included), cheapest first:

* :func:`trace_bound`: ``lambda_max <= trace``: the variances of ``I`` plus the
  ``r = k - m`` largest free variances;
* :func:`gershgorin_bound`: a row of ``S`` is its diagonal plus the ``k - 1``
  other entries of ``S``, of which those in ``I`` are known;
* :func:`lambda_max_upper`: ``lambda_max(Sigma_NN)`` (interlacing), exact
  when ``|N| = k``;
* :func:`spectral_bound`: the eigen-decomposition of ``Sigma_NN`` against the
  sparsity of ``x`` (a fractional knapsack over ``(u_i' x)^2``);
* :func:`schur_bound`: the Schur complement of the forced block against the
  ``r`` free slots (exact for one);
* :func:`coupling_bound`: ``x = (x_I, x_F)``, ``x' Sigma x <= [a b] M [a b]'``
  with ``M = [[lambda_max(Sigma_II), sigma], [sigma, beta]]``, ``beta`` a bound
  on ``r``-sparse variance over ``F`` and ``sigma`` on ``||Sigma_IF y||`` over
  ``r``-sparse unit ``y``;
* :class:`PartialDual`: the DSPCA dual with the ``l1`` penalty weighted by
  ``w_i w_j`` (``w = s`` on ``I``, ``1`` on ``F``).  For unit ``x`` with
  ``I <= supp(x)``, ``|supp(x) & F| <= r``, and any symmetric ``U`` with ``|U_ij| <= lam w_i w_j``,

  .. code-block:: text

      x' Sigma x = x' (Sigma + U) x - x' U x
                 <= lambda_max(Sigma + U) + lam (sum_i w_i |x_i|)^2
                 <= lambda_max(Sigma + U) + lam (s^2 m + r)

  (Cauchy-Schwarz: ``s ||x_I||_1 + ||x_F||_1 <= s sqrt(m) a + sqrt(r) b`` with
  ``a^2 + b^2 = 1``).  ``s = 1`` is the plain DSPCA bound; ``s = 0`` leaves the
  forced block unpenalised and charges only ``lam r``.  ``U`` is the scaled
  multiplier of an ADMM on the weighted DSPCA problem, which is feasible after
  each step, so every iterate gives a valid bound;
* :func:`row_norm_bound`: ``lambda_max(Sigma + U) + ||rho_S||`` for any
  symmetric ``U`` (``rho_i`` the norm of row ``i`` of ``U`` over the
  support), at most the DSPCA bound at ``U = -L`` and tightening as features
  are forced in or out; :func:`row_norm_descent` lowers it at the root,
  :func:`node_descent` at a node (with the node's forced and free features:
  the dual of a perspective-type relaxation, where any ``U`` bounds, so the
  descent never needs to converge), and :func:`fast_node_descent`, the same
  steps at a fraction of the cost: Ritz estimates of the largest eigenpairs
  (:func:`ritz_pairs`, warm-started) steer it, the penalty's rows come from a
  compiled kernel (:func:`row_norm_rows`), and a node is closed only on a
  proof that ``lambda_max(S + U) <= level - penalty``
  (:func:`certify_below`: one Cholesky factorisation).

Eigenvalues that bound come from LAPACK, with a margin ``n * eps * ||A||_F``
(a bound on the backward error of the symmetric eigensolver) added, or are
certified by Cholesky (:func:`certify_below`, with its own margin).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg as sla
from numpy.typing import NDArray

from .. import _limits
from . import _descent_fast

__all__: list[str] = []

EPS = float(np.finfo(np.float64).eps)


def lambda_max_upper(A: NDArray[np.float64]) -> float:
    """An upper bound on the largest eigenvalue of the symmetric ``A`` (rounding included)."""
    n = A.shape[0]
    if n == 0:
        return 0.0
    if n == 1:
        return float(A[0, 0])
    top = sla.eigh(A, eigvals_only=True, subset_by_index=[n - 1, n - 1],
                   check_finite=False)[0]
    return float(top) + n * EPS * float(np.linalg.norm(A))


def top_pair(A: NDArray[np.float64]) -> tuple[float, NDArray[np.float64]]:
    """The largest eigenvalue of ``A`` plus the rounding margin, and its eigenvector."""
    n = A.shape[0]
    if n == 1:
        return float(A[0, 0]), np.ones(1)
    w, V = sla.eigh(A, subset_by_index=[n - 1, n - 1], check_finite=False)
    return float(w[0]) + n * EPS * float(np.linalg.norm(A)), V[:, 0]


def spectral_bound(w: NDArray[np.float64], U: NDArray[np.float64], inside: NDArray[np.bool_],
                   r: int, scale: float, tail: float | None = None) -> float:
    """The eigen-decomposition ``A = sum_i w_i u_i u_i'`` against sparsity.

    For unit ``x`` on a node's support, ``x' A x = sum_i w_i c_i`` with
    ``c_i = (u_i' x)^2``, ``sum_i c_i = 1`` and
    ``c_i <= ||u_i[S]||^2 <= tau_i = ||u_i[I]||^2 + (the r largest u_ij^2, j free)``.
    The largest ``sum_i w_i c_i`` under these constraints (a fractional
    knapsack: fill the largest ``w_i`` first) bounds ``x' A x``.  ``w`` and the
    columns of ``U`` in any order; ``scale`` (``||A||_F``) sets the rounding
    margin.  With only some eigenpairs (``tail``: a bound on every other
    eigenvalue, e.g. the smallest of ``w``), the mass they leave goes to
    ``tail``.
    """
    n = w.size
    order = np.argsort(-w, kind="stable")
    w = w[order]
    U2 = U[:, order] ** 2
    tau = U2[inside].sum(axis=0) if inside.any() else np.zeros(n)
    F = U2[~inside]
    if r > 0 and F.shape[0]:
        rr = min(r, F.shape[0])
        tau = tau + np.partition(F, F.shape[0] - rr, axis=0)[F.shape[0] - rr:].sum(axis=0)
    tau = np.minimum(tau, 1.0)
    # prefix caps: sum_{i <= q} c_i = ||U_q' x||^2 <= T_q, the same count on the
    # squared row norms of the first q columns (forced rows plus the r largest)
    C = np.cumsum(U2, axis=1)
    T = C[inside].sum(axis=0) if inside.any() else np.zeros(n)
    Cf = C[~inside]
    if r > 0 and Cf.shape[0]:
        rr = min(r, Cf.shape[0])
        T = T + np.partition(Cf, Cf.shape[0] - rr, axis=0)[Cf.shape[0] - rr:].sum(axis=0)
    # greedy fill, largest w first, under c_i <= tau_i, the prefix caps and sum = 1
    cap = np.minimum(np.minimum.accumulate(T[::-1])[::-1], 1.0)
    c = np.zeros(n)
    used = 0.0
    for i in range(n):
        c[i] = max(min(tau[i], cap[i] - used, 1.0 - used), 0.0)
        used += c[i]
        if used >= 1.0:
            break
    total = float(w @ c)
    if tail is not None:
        total += max(1.0 - used, 0.0) * tail
    elif used < 1.0 - 1e-9:  # (cannot happen for a full orthonormal U)
        total = float(w[0])
    return total + 4 * n * EPS * scale


def spectrum(A: NDArray[np.float64], q: int = 8) -> tuple[NDArray[np.float64],
                                                      NDArray[np.float64], float | None]:
    """``(w, V, tail)``: all eigenpairs of ``A`` up to ``2 q`` rows, else the
    ``q`` largest (LAPACK's evr) and ``tail``, a bound on the others (the
    smallest of them plus the rounding margin)."""
    n = A.shape[0]
    if n <= 2 * q:
        w, V = np.linalg.eigh(A)
        return w, V, None
    w, V = sla.eigh(A, subset_by_index=[n - q, n - 1], driver="evr", check_finite=False)
    return w, V, float(w[0]) + n * EPS * float(np.linalg.norm(A))


def trace_bound(d_in: NDArray[np.float64], d_free: NDArray[np.float64], r: int) -> float:
    """Variances of the forced features plus the ``r`` largest free ones."""
    total = float(d_in.sum())
    if r > 0 and d_free.size:
        r = min(r, d_free.size)
        total += float(np.partition(d_free, d_free.size - r)[d_free.size - r:].sum())
    return total * (1.0 + 4 * EPS * (d_in.size + r))


def gershgorin_bound(A: NDArray[np.float64], d: NDArray[np.float64],
                     inside: NDArray[np.bool_], k: int) -> float:
    """Gershgorin on every ``k``-support of the node.

    ``A`` holds ``|Sigma_ij|`` over ``N`` with a zero diagonal, ``d`` the
    variances and ``inside`` marks ``I``.  The row of ``i`` in ``S`` holds
    ``|Sigma_il|`` for every ``l`` of ``I`` and at most the remaining slots of
    the largest free ones.
    """
    return gershgorin_node(A, d, inside, k)[0]


def gershgorin_node(A: NDArray[np.float64], d: NDArray[np.float64],
                    inside: NDArray[np.bool_], k: int) -> tuple[float, float]:
    """:func:`gershgorin_bound` of the node, and the same bound on the
    ``r``-sparse variance of its free block alone (``r = k - |I|``; ``inf``
    without a free feature), from one partial sort of the free columns.

    The free block's row of ``i`` holds ``d_i`` and the ``r - 1`` largest
    ``|Sigma_il|`` over free ``l``: the node's free rows without their forced
    part.
    """
    n = d.size
    m = int(inside.sum())
    if n == 0:
        return 0.0, 0.0
    forced = A[:, inside].sum(axis=1) if m else np.zeros(n)
    free = A[:, ~inside]
    # slots for free partners: k - 1 - |I \ {i}|
    slots = np.where(inside, k - m, k - 1 - m)
    total = d + forced
    f = free.shape[1]
    part = np.zeros(n)
    top = min(int(slots.max()), f)
    if top > 0:
        # the top largest entries of each row, largest first (a partition, then
        # a sort of those only)
        big = np.partition(free, f - top, axis=1)[:, f - top:] if top < f else free
        big = -np.sort(-big, axis=1)
        csum = np.concatenate([np.zeros((n, 1)), np.cumsum(big, axis=1)], axis=1)
        part = csum[np.arange(n), np.minimum(slots, top)]
        total = total + part
    r = k - m
    node = float(total.max()) * (1.0 + 4 * EPS * k)
    if f == 0 or r <= 0:
        return node, math.inf
    alone = float((d + part)[~inside].max()) * (1.0 + 4 * EPS * r)
    return node, alone


def coupling_bound(lam_in: float, cols2: NDArray[np.float64], beta: float, r: int) -> float:
    """Larger eigenvalue of ``[[lam_in, sigma], [sigma, beta]]``, ``sigma^2`` the sum
    of the ``r`` largest squared column norms ``cols2`` of ``Sigma_IF``."""
    if r <= 0 or cols2.size == 0:
        return lam_in
    r = min(r, cols2.size)
    sigma2 = float(np.partition(cols2, cols2.size - r)[cols2.size - r:].sum())
    t = 0.5 * (lam_in + beta + math.sqrt((lam_in - beta) ** 2 + 4.0 * sigma2))
    return t * (1.0 + 8 * EPS) + 8 * EPS * (abs(lam_in) + abs(beta))


def schur_bound(A: NDArray[np.float64], B: NDArray[np.float64], c: NDArray[np.float64],
                r: int, iters: int = 60, Bc: NDArray[np.float64] | None = None,
                cap: float = math.inf) -> float:
    """A bound on ``lambda_max`` of ``[[A, B_T], [B_T', C_TT]]`` over every set
    ``T`` of ``r`` columns (``A`` the forced block, ``B`` its coupling to the
    free features, ``c`` their variances, ``Bc`` optionally their block).

    Above ``lambda_max(A)``, ``lam`` is an eigenvalue only if it is one of the
    PSD matrix ``C_TT + B_T' (lam - A)^{-1} B_T``, whose eigenvalues are at
    most its trace, at most the sum ``g(lam)`` of the ``r`` largest
    ``c_j + b_j' (lam - A)^{-1} b_j`` (nonincreasing in ``lam``).  The
    returned ``lam`` has ``g(lam) <= lam``, so no ``T`` has a larger
    eigenvalue (bisection; exact for ``r = 1``).  Rounding: the computed
    eigenpairs of ``A`` are exact for ``A + E``, ``||E|| <= delta``, and
    ``(lam - A)^{-1} <= (lam - delta - (A + E))^{-1}``; ``g`` is evaluated
    with ``mu_i + delta`` and inflated by a relative ``4 (m + r) eps``.
    The bisection stops at a relative width ``SCHUR_RTOL`` (or ``iters``
    halvings); ``cap`` (a bound the caller has already) skips the tries of
    Gershgorin at points that could not go below it.
    """
    m = A.shape[0]
    mu, V = np.linalg.eigh(A)
    W2 = (V.T @ B) ** 2 * (1.0 + 8 * (m + 1) * EPS)
    delta = 8 * m * EPS * float(np.linalg.norm(A)) + np.finfo(float).tiny
    mu_up = mu + delta
    grow = 1.0 + 4 * (m + r) * EPS
    rr = min(r, c.size)

    def excess(lam: float) -> float:
        diag = c + (W2 / (lam - mu_up)[:, None]).sum(axis=0)
        return float(np.partition(diag, diag.size - rr)[diag.size - rr:].sum()) * grow - lam

    lo = float(mu_up[-1]) * (1.0 + 4 * EPS) + delta
    if excess(lo) <= 0:
        return lo
    hi = lo + max(1.0, float(np.sort(c)[-rr:].sum()) + float(np.sqrt(W2.sum(axis=0)).max()) * rr)
    while excess(hi) > 0:
        hi = lo + 2.0 * (hi - lo)
    for _ in range(iters):
        if hi - lo <= SCHUR_RTOL * abs(hi):
            break
        mid = 0.5 * (lo + hi)
        if excess(mid) > 0:
            lo = mid
        else:
            hi = mid
    if Bc is not None and rr > 1 and c.size <= GERSHGORIN_MAX:
        # Below hi, the trace of the r x r block overstates; Gershgorin on the
        # whole matrix M(lam) bounds every r-sparse eigenvalue of it, and of
        # M(lam') <= M(lam) for lam' >= lam: a lam where it is <= lam bounds
        # the node too.
        base = float(mu_up[-1]) + delta
        Vs = V.T @ B
        for t in np.linspace(0.0, 1.0, GERSHGORIN_TRIES + 2)[1:-1]:
            lam = base + t * (hi - base)
            if lam >= cap:
                break
            G = Vs / (lam - mu_up)[:, None]
            M = Bc + Vs.T @ G
            err = 16 * (m + c.size) * EPS * float(np.abs(M).max())
            d = np.diag(M).copy()
            Ao = np.abs(M) + err
            np.fill_diagonal(Ao, 0.0)
            top = -np.partition(-Ao, rr - 2, axis=1)[:, :rr - 1]
            g = float((d + err + top.sum(axis=1)).max()) * grow
            if g <= lam:
                return lam
    return hi


# Points below the trace bound where schur_bound tries Gershgorin on the whole
# Schur complement (when it has at most GERSHGORIN_MAX rows).
GERSHGORIN_TRIES = 3
GERSHGORIN_MAX = 400
# Relative width at which schur_bound's bisection stops (far below any gap a
# search asks for; full precision took 60 halvings).
SCHUR_RTOL = 1e-10


def _simplex(w: NDArray[np.float64]) -> NDArray[np.float64]:
    """Euclidean projection of ``w`` on ``{x >= 0, sum x = 1}``."""
    u = np.sort(w)[::-1]
    css = np.cumsum(u) - 1.0
    idx = np.arange(1, w.size + 1)
    rho = int(np.nonzero(u - css / idx > 0)[0][-1])
    theta = css[rho] / (rho + 1.0)
    return np.maximum(w - theta, 0.0)


class PartialDual:
    """ADMM on the weighted DSPCA problem over one node's features.

    Solves ``max Tr(S Z) - lam sum_ij W_ij |Z_ij|`` over ``Z`` PSD, ``Tr Z = 1``
    by the splitting ``Z = Y`` (``Z`` on the spectraplex, ``Y`` soft-thresholded)
    and keeps the multiplier ``L``, which after each ``Y`` step satisfies
    ``|L_ij| <= lam W_ij``: ``lambda_max(S - L)`` bounds the problem from above.
    """

    def __init__(self, S: NDArray[np.float64], W: NDArray[np.float64], lam: float,
                 rho: float, inside: NDArray[np.bool_] | None = None, r: int = 0) -> None:
        self.inside = inside
        self.r = r
        self.S = S
        self.W = W
        self.lam = lam
        self.box = lam * W
        self.rho = rho
        n = S.shape[0]
        self.L = np.zeros((n, n))
        self.Y = np.zeros((n, n))
        self.best = math.inf
        self.best_L = self.L  # the multiplier (in the box) of the best bound
        self.vector = np.zeros(n)
        self.iters = 0

    def start(self, L0: NDArray[np.float64] | None, v: NDArray[np.float64]) -> None:
        """Warm start: a multiplier (clipped to this box) and a unit vector for ``Y``."""
        if L0 is not None:
            self.L = np.clip(L0, -self.box, self.box)
        self.Y = np.outer(v, v)

    def bound(self) -> float:
        """``lambda_max(S - L)`` plus the rounding margin (``L`` inside the box)."""
        L = np.clip(self.L, -self.box, self.box)
        A = self.S - L
        if self.inside is None:
            val, v = top_pair(A)
        else:
            w, V, tail = spectrum(A)
            v = V[:, -1]
            nrm = float(np.linalg.norm(A))
            val = min(float(w[-1]) + A.shape[0] * EPS * nrm,
                      spectral_bound(w, V, self.inside, self.r, nrm, tail))
        if val < self.best:
            self.best, self.vector, self.best_L = val, v, L
        return val

    def slope(self, c: float) -> float:
        """``c - sum_ij W_ij |Y_ij|``: the slope in ``lam`` of ``phi(lam) + lam c``
        estimated from the current primal iterate."""
        return c - float((self.W * np.abs(self.Y)).sum())

    def run(self, iters: int, check: int = 5) -> float:
        """``iters`` ADMM steps, the bound evaluated every ``check``; the best bound."""
        rho, S = self.rho, self.S
        inv = 1.0 / rho
        for it in range(1, iters + 1):
            A = self.Y + (S - self.L) * inv
            w, V = np.linalg.eigh(A)
            p = _simplex(w)
            keep = p > 0
            Vk = V[:, keep]
            Z = (Vk * p[keep]) @ Vk.T
            T = Z + self.L * inv
            thr = self.box * inv
            self.Y = np.sign(T) * np.maximum(np.abs(T) - thr, 0.0)
            self.L = self.L + rho * (Z - self.Y)
            self.iters += 1
            if it % check == 0 or it == iters:
                self.bound()
        return self.best


def feature_bounds(Sigma: NDArray[np.float64], k: int, beta: float) -> NDArray[np.float64]:
    """For every feature ``j``, a bound on the variance of the ``k``-supports
    that hold ``j``: :func:`coupling_bound` with ``I = {j}`` (``beta`` bounds the
    ``(k - 1)``-sparse variance of the other features)."""
    d = np.diag(Sigma).copy()
    if k == 1:
        return d * (1.0 + 4 * EPS)
    C2 = Sigma * Sigma
    np.fill_diagonal(C2, 0.0)
    r = min(k - 1, Sigma.shape[0] - 1)
    top = -np.partition(-C2, r - 1, axis=1)[:, :r]
    sigma2 = top.sum(axis=1)
    t = 0.5 * (d + beta + np.sqrt((d - beta) ** 2 + 4.0 * sigma2))
    return t * (1.0 + 8 * EPS) + 8 * EPS * (np.abs(d) + abs(beta))


def _penalty_margin(n: int, m: int, r: int) -> float:
    """The factor that covers the rounding of a row-norm penalty over ``n``
    features, ``m`` of them forced in and ``r`` free slots (a relative
    ``4 (n + m + r) eps``)."""
    return 1.0 + 4 * (n + m + r) * EPS


def row_norm_penalty(U: NDArray[np.float64], inside: NDArray[np.bool_], r: int) -> float:
    """A bound on ``-x' U x`` over the unit ``x`` of a node (any symmetric ``U``
    over its features ``N``; ``inside`` marks ``I``, ``r`` free slots).

    For ``S`` the support of ``x``, ``sum_j |U_ij| |x_j| <= ||U_iS||_2 <=
    rho_i`` (``rho_i^2``: the squares of row ``i`` over ``I`` plus its ``r``
    largest over the free features), so ``|x' U x| <= sum_{i in S} |x_i|
    rho_i <= ||rho_S||_2``, at most the squares of ``rho`` over ``I`` plus
    the ``r`` largest free ones.  With every ``|U_ij| <= lam`` this is at most
    ``lam k`` (the DSPCA term), and it shrinks as features are forced in or
    out.  Rounding: a relative ``4 (n + k) eps``.
    """
    n = U.shape[0]
    U2 = U * U
    m = int(inside.sum())
    free = ~inside
    f = n - m
    rho2 = U2[:, inside].sum(axis=1) if m else np.zeros(n)
    rr = min(r, f)
    if rr > 0:
        F2 = U2[:, free]
        rho2 = rho2 + np.partition(F2, f - rr, axis=1)[:, f - rr:].sum(axis=1)
    total = float(rho2[inside].sum()) if m else 0.0
    if rr > 0:
        rf = rho2[free]
        total += float(np.partition(rf, f - rr)[f - rr:].sum())
    return math.sqrt(total) * _penalty_margin(n, m, r)


def row_norm_bound(S: NDArray[np.float64], U: NDArray[np.float64], inside: NDArray[np.bool_],
                   r: int) -> tuple[float, NDArray[np.float64]]:
    """``x' S x <= x' (S + U) x + |x' U x|`` over the node's unit ``x``: the
    spectral bound of ``S + U`` (:func:`spectral_bound`) plus
    :func:`row_norm_penalty`; valid for any symmetric ``U``.  Returns the bound
    and the leading eigenvector of ``S + U``."""
    A = S + U
    w, V, tail = spectrum(A)
    nrm = float(np.linalg.norm(A))
    top = min(float(w[-1]) + A.shape[0] * EPS * nrm, spectral_bound(w, V, inside, r, nrm, tail))
    return top + row_norm_penalty(U, inside, r), V[:, -1]


def row_norm_descent(S: NDArray[np.float64], U0: NDArray[np.float64], k: int, iters: int,
                     step: float, first: int = 0,
                     limit: _limits.TimeLimit | None = None) -> tuple[float, NDArray[np.float64]]:
    """Lower ``lambda_max(S + U) + row_norm_penalty(U)`` (root: nothing forced,
    ``k`` slots) over symmetric ``U`` by ``iters`` normalised subgradient steps
    of size ``step / sqrt(j)``, ``j = first + 1, ...``, from ``U0`` (the
    largest eigenvalue smoothed at a scale of ``1e-3`` of it; ``first``
    resumes a descent).  Every iterate bounds the ``k``-sparse variance
    (evaluated with :func:`spectral_bound` of ``S + U`` too, which the steps
    do not follow), so the descent need not converge (and ``limit``, the
    caller's time limit, may end it): returns the lowest bound seen (rounding
    margins included) and its ``U``."""
    n = S.shape[0]
    inside = np.zeros(n, dtype=bool)
    kk = min(k, n)
    U = (U0 + U0.T) / 2
    best, best_U = math.inf, U
    rows = np.arange(n)[:, None]
    mu = 0.0
    for j in range(iters + 1):
        A = S + U
        w, V = np.linalg.eigh(A)
        nrm = float(np.linalg.norm(A))
        # the value as the nodes see it: the spectral bound of S + U as well
        val = min(float(w[-1]) + n * EPS * nrm, spectral_bound(w, V, inside, k, nrm))
        val += row_norm_penalty(U, inside, k)
        if val < best:
            best, best_U = val, U
        if j == iters or (limit is not None and limit.expired()):
            break
        if mu == 0.0:
            mu = 1e-3 * max(abs(float(w[-1])), np.finfo(float).tiny)
        e = np.exp((w - w[-1]) / mu)
        G = (V * (e / e.sum())) @ V.T
        # the penalty's subgradient: the k largest entries of the k rows of
        # largest rho, over the penalty
        U2 = U * U
        idx = np.argpartition(-U2, kk - 1, axis=1)[:, :kk]
        rho2 = U2[rows, idx].sum(axis=1)
        top = np.argpartition(-rho2, kk - 1)[:kk]
        pen = math.sqrt(float(rho2[top].sum()))
        if pen > 0:
            G[top[:, None], idx[top]] += U[top[:, None], idx[top]] / pen
        G = (G + G.T) / 2
        scale = float(np.abs(G).max())
        if not scale > 0:
            break
        U = U - (step / math.sqrt(first + j + 1)) * G / scale
    return best, best_U


def row_norm_subgradient(U: NDArray[np.float64], inside: NDArray[np.bool_],
                         r: int) -> tuple[float, NDArray[np.float64]]:
    """:func:`row_norm_penalty` of a node and a subgradient of it in ``U``
    (not symmetrised): for the rows that make the penalty (``I`` and the
    ``r`` free rows of largest ``rho``), their entries over ``I`` and their
    ``r`` largest free ones, over the penalty."""
    n = U.shape[0]
    U2 = U * U
    m = int(inside.sum())
    fi = np.flatnonzero(~inside)
    rr = min(r, fi.size)
    rho2 = U2[:, inside].sum(axis=1) if m else np.zeros(n)
    picked = np.zeros((n, n), dtype=bool)
    picked[:, inside] = True
    if rr > 0:
        F2 = U2[:, fi]
        idx = np.argpartition(F2, fi.size - rr, axis=1)[:, fi.size - rr:]
        rows = np.arange(n)[:, None]
        rho2 = rho2 + F2[rows, idx].sum(axis=1)
        picked[rows, fi[idx]] = True
    sel = inside.copy()
    if rr > 0:
        sel[fi[np.argpartition(rho2[fi], fi.size - rr)[fi.size - rr:]]] = True
    total = float(rho2[sel].sum())
    pen = math.sqrt(total)
    G = np.zeros_like(U)
    if pen > 0:
        rows_sel = np.flatnonzero(sel)
        G[rows_sel] = np.where(picked[rows_sel], U[rows_sel], 0.0) / pen
    return pen * _penalty_margin(n, m, r), G


def node_descent(S: NDArray[np.float64], U0: NDArray[np.float64], inside: NDArray[np.bool_],
                 r: int, iters: int, step: float, q: int = 8,
                 cap: float = -math.inf) -> tuple[float, NDArray[np.float64], NDArray[np.float64]]:
    """Lower a node's :func:`row_norm_bound` over symmetric ``U`` by ``iters``
    normalised subgradient steps of size ``step / sqrt(j)`` from ``U0``.

    Entry ``(i, j)`` of a step is scaled by ``(S_ii S_jj)^(1/4)`` (over its
    largest value), the scale of ``S_ij`` on a raw covariance (measured: the
    NYT sample's 300 words of largest variance, raw, k = 20, gap after 60 s
    5.6% with it, 6.2% without; no change on a correlation).  The largest
    eigenvalue is smoothed at a scale of ``1e-3`` of it over the
    ``q`` largest eigenpairs of ``S + U`` (:func:`spectrum`; only the
    direction of a step uses the smoothing).  Each iterate is evaluated as a
    bound (the spectral bound of ``S + U`` plus :func:`row_norm_penalty`,
    rounding margins included), so any number of steps gives a valid bound.
    Stops early once a value is at most ``cap`` (the node is closed).
    Returns the lowest value, its ``U`` and the leading eigenvector of
    ``S + U`` there."""
    U = (U0 + U0.T) / 2
    best, best_U, best_v = math.inf, U, np.zeros(S.shape[0])
    mu = 0.0
    root = np.sqrt(np.sqrt(np.maximum(np.diag(S), 0.0)))
    W = np.outer(root, root)
    W /= max(float(W.max()), np.finfo(float).tiny)
    for j in range(iters + 1):
        A = S + U
        w, V, tail = spectrum(A, q)
        nrm = float(np.linalg.norm(A))
        val = min(float(w[-1]) + A.shape[0] * EPS * nrm,
                  spectral_bound(w, V, inside, r, nrm, tail))
        pen, Gp = row_norm_subgradient(U, inside, r)
        val += pen
        if val < best:
            best, best_U, best_v = val, U, V[:, -1]
        if j == iters or best <= cap:
            break
        if mu == 0.0:
            mu = 1e-3 * max(abs(float(w[-1])), np.finfo(float).tiny)
        e = np.exp((w - w[-1]) / mu)
        G = (V * (e / e.sum())) @ V.T + Gp
        G = W * (G + G.T) / 2
        scale = float(np.abs(G).max())
        if not scale > 0:
            break
        U = U - (step / math.sqrt(j + 1)) * G / scale
    return best, best_U, best_v


def ritz_pairs(A: NDArray[np.float64], X: NDArray[np.float64],
               depth: int = 2) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Estimates of the ``q`` largest eigenpairs of the symmetric ``A`` from
    ``X`` (``n x q``, e.g. the previous step's): Rayleigh-Ritz on the block
    Krylov space ``[X, A X, ..., A^depth X]`` (``depth + 1`` products of ``A``
    with ``q`` columns and a QR of ``(depth + 1) q`` columns, against the
    ``O(n^3)`` tridiagonalisation of LAPACK).  The values are Ritz values,
    each at most the eigenvalue it estimates: they steer a descent and never
    bound (see :func:`certify_below`).  Ascending, as ``eigh``."""
    blocks = [X]
    Y = X
    for _ in range(depth):
        Y = A @ Y  # the Krylov block A^j X
        blocks.append(Y)
    Q, _ = np.linalg.qr(np.hstack(blocks))
    H = Q.T @ (A @ Q)  # A projected on the Krylov space
    w, Z = np.linalg.eigh((H + H.T) / 2)
    q = X.shape[1]
    return w[-q:], Q @ Z[:, -q:]


def certify_below(A: NDArray[np.float64], target: float) -> bool:
    """Whether ``lambda_max(A) <= target`` is proven (``A`` symmetric, as
    stored, and the exact ``A'`` it was rounded from with
    ``|A' - A| <= eps |A|`` entrywise) by one Cholesky factorisation of
    ``t I - A`` at ``t`` a margin below ``target``.

    If LAPACK's Cholesky of the stored ``M = fl(t I - A)`` runs to the end,
    ``R' R = M + E`` with ``|E| <= g |R'| |R|``, ``g = gamma_{n+1}``
    (Higham, Accuracy and Stability, Thm. 10.3), so
    ``lambda_min(M) >= -||E||_2 >= -g ||R||_F^2 >= -g trace(M) / (1 - g)``;
    forming ``M`` moves its diagonal by at most ``eps |t - A_ii|`` and ``A'``
    is within ``eps ||A||_F`` of ``A``.  The margin is twice the sum of these
    (so ``True`` is a proof; ``False`` proves nothing: the caller falls back
    to an eigensolver or keeps its bound).  ``O(n^3 / 3)`` flops, blocked."""
    n = A.shape[0]
    if n == 0:
        return target >= 0.0
    if not math.isfinite(target):
        return target > 0
    diag = np.diag(A)
    g = (n + 1) * EPS / (1.0 - (n + 1) * EPS)
    trace = abs(n * target - float(diag.sum())) + n * abs(target) * EPS
    margin = 2.0 * (EPS * float(np.linalg.norm(A))
                    + EPS * (abs(target) + float(np.abs(diag).max()))
                    + g / (1.0 - g) * trace)
    t = target - margin
    M = -A  # t I - A, a new array (A is not modified)
    M[np.diag_indices(n)] += t
    _, info = sla.lapack.dpotrf(M, lower=1, clean=0, overwrite_a=1)
    return int(info) == 0


def _kernel_rows(U: NDArray[np.float64], inside: NDArray[np.bool_], r: int,
                 hint: NDArray[np.intp] | None = None,
                 ) -> tuple[float, NDArray[np.intp], NDArray[np.intp], int]:
    """The compiled pass of :func:`row_norm_rows`: ``(penalty, rows, picks,
    rr)``, the penalty without its rounding margin, the penalty's rows and
    each row's ``rr = min(r, free)`` largest free columns.  ``hint``: the
    ``picks`` of a call with the same ``inside`` and ``r`` (the previous
    descent step's), which lets the kernel skip most entries."""
    n = U.shape[0]
    fi = np.flatnonzero(~inside)
    rr = min(r, fi.size)
    rho2 = np.empty(n)
    picks = np.empty((n, max(rr, 1)), dtype=np.intp)
    use = hint is not None and hint.shape == picks.shape
    _descent_fast.row_norm_rows(np.ascontiguousarray(U), inside.view(np.uint8), rr, rho2, picks,
                                hint if use else picks, use)
    sel = inside.copy()
    if rr > 0:
        sel[fi[np.argpartition(rho2[fi], fi.size - rr)[fi.size - rr:]]] = True
    rows = np.flatnonzero(sel)
    return math.sqrt(float(rho2[rows].sum())), rows, picks, rr


def row_norm_value(U: NDArray[np.float64], inside: NDArray[np.bool_], r: int) -> float:
    """:func:`row_norm_penalty` (the same number, up to the order of its sums,
    rounding margin included) from the compiled kernel: one pass over each
    row instead of a partition of the whole matrix."""
    n, m = U.shape[0], int(inside.sum())
    return _kernel_rows(U, inside, r)[0] * _penalty_margin(n, m, r)


def row_norm_rows(U: NDArray[np.float64], inside: NDArray[np.bool_],
                  r: int) -> tuple[float, NDArray[np.intp], NDArray[np.intp]]:
    """:func:`row_norm_penalty` (the same number, up to the order of its
    sums) and a subgradient of it in ``U`` as entries ``(rows, cols)``:
    the penalty's rows (``I`` and the ``r`` free rows of largest ``rho``),
    each with its columns over ``I`` and its ``r`` largest free ones; the
    subgradient there is ``U[rows, cols] / penalty`` (compiled kernel
    :func:`spca.cardinality._descent_fast.row_norm_rows`)."""
    return _penalty_rows(U, inside, r)[:3]


def _penalty_rows(U: NDArray[np.float64], inside: NDArray[np.bool_], r: int,
                  hint: NDArray[np.intp] | None = None,
                  ) -> tuple[float, NDArray[np.intp], NDArray[np.intp], NDArray[np.intp]]:
    """:func:`row_norm_rows` and every row's picks (the ``hint`` of the next
    call, see :func:`_kernel_rows`)."""
    n = U.shape[0]
    m = int(inside.sum())
    pen, rows, picks, rr = _kernel_rows(U, inside, r, hint)
    cols = np.hstack([np.broadcast_to(np.flatnonzero(inside), (rows.size, m)),
                      picks[rows, :rr]])
    return (pen * _penalty_margin(n, m, r), np.repeat(rows, cols.shape[1]),
            cols.ravel(), picks)


def fast_node_descent(S: NDArray[np.float64], U0: NDArray[np.float64],
                      inside: NDArray[np.bool_], r: int, iters: int, step: float,
                      level: float, X0: NDArray[np.float64], *, check: int = 0,
                      hope: float = math.inf,
                      ) -> tuple[bool, float, NDArray[np.float64], NDArray[np.float64], int]:
    """:func:`node_descent`'s steps with the eigensolves replaced by
    :func:`ritz_pairs` (warm-started from ``X0``, ``n x q``, and then from the
    previous step), aiming only below ``level``: as soon as the estimated
    value ``theta + row_norm_penalty(U)`` is below ``level``,
    :func:`certify_below` tries to prove ``lambda_max(S + U) <= level -
    penalty``, and the descent stops on a proof.

    The step is :func:`node_descent`'s, ``W * (G + G') / 2`` over its largest
    entry, with the smoothed top eigenvector term ``sum_i e_i x_i x_i'`` (its
    weights below ``1e-12`` dropped) formed as ``Y Y'``, ``W``'s scaling in
    ``Y``, and the penalty's sparse subgradient (:func:`row_norm_rows`) added
    entry by entry.

    Returns ``(closed, estimate, U, X, steps)``: ``closed`` is proven;
    ``estimate`` is the lowest estimated value (a Ritz value plus the
    penalty: an estimate, not a bound) at ``U``, whose Ritz vectors are
    ``X``; ``steps`` the subgradient steps taken.  Every ``check`` steps
    (``0``: never), the descent gives up when its lowest estimate is still
    above ``level * (1 + hope)``."""
    U = (U0 + U0.T) / 2
    root = np.sqrt(np.sqrt(np.maximum(np.diag(S), 0.0)))
    root /= max(float(root.max()), np.finfo(float).tiny)  # W = root root'
    X = X0
    best, best_U, best_X = math.inf, U, X0
    mu = 0.0
    hint = None
    for j in range(iters + 1):
        A = S + U
        w, X = ritz_pairs(A, X, RITZ_DEPTH)
        # (the previous step's picks let the kernel skip most entries)
        pen, ii, jj, hint = _penalty_rows(U, inside, r, hint)
        est = float(w[-1]) + pen
        if est < best:
            best, best_U, best_X = est, U, X
        if est < level and certify_below(A, level - pen):
            return True, est, U, X, j
        if j == iters or (check and j and j % check == 0 and best > level * (1.0 + hope)):
            return False, best, best_U, best_X, j
        if mu == 0.0:
            mu = 1e-3 * max(abs(float(w[-1])), np.finfo(float).tiny)
        e = np.exp((w - w[-1]) / mu)
        e /= e.sum()
        keep = e > 1e-12
        Y = X[:, keep] * (np.sqrt(e[keep]) * root[:, None])
        G = Y @ Y.T  # W * (sum_i e_i x_i x_i')
        if pen > 0:
            g = 0.5 * U[ii, jj] / pen * root[ii] * root[jj]  # W * (Gp + Gp') / 2
            # (the pairs (ii, jj) are distinct, and so are (jj, ii))
            G[ii, jj] += g
            G[jj, ii] += g
        scale = max(float(G.max()), -float(G.min()))
        if not scale > 0:
            break
        G *= step / math.sqrt(j + 1) / scale
        U = U - G  # (a new array: best_U may hold the old one)
    return False, best, best_U, best_X, iters


# Krylov depth of the Ritz estimates of fast_node_descent (measured: the NYT
# sample's 300 words of largest variance, raw, k = 19, two runs side by side
# on a loaded machine: proven in 4,335 nodes / 51.1 s of CPU at depth 1,
# 4,369 / 56.5 s at 2; 55.3 against 57.3 s in another pair).
RITZ_DEPTH = 1
