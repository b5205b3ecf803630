"""Proximal point iterations for DSPCA optima of rank above one.

When the optimal ``Z`` has rank above one, block coordinate ascent at a fixed
barrier parameter contracts slowly (about 0.997 per sweep on a rank-3
Gaussian problem of 60 features), and the dual bound built from its box-QP
solutions (``barrier_dual``) can stay far above ``phi`` while the primal value
has long settled: on the correlation matrix of 64 samples of 500 features at
about 200 nonzeros, the primal moves by 5e-6 between sweeps 38 and 453 while
the best dual bound stays 7e-3 above it.

This module runs the proximal point method on the primal,

    Z+ = argmax_{Z in Delta}  Tr(Sigma Z) - lam ||Z||_1 - ||Z - Z_k||^2 / (2 sigma)

(``Delta`` = PSD matrices of trace one), whose inner problem is solved in its
dual variable ``U`` (the box ``|U_ij| <= lam``):

    min_{|U| <= lam}  h(U),  h(U) = max_{Z in Delta} Tr((Sigma + U) Z) - ||Z - Z_k||^2 / (2 sigma),

with ``grad h(U) = Z(U) = Pi_Delta(Z_k + sigma (Sigma + U))`` (projection
onto ``Delta``: an eigendecomposition and a projection of the eigenvalues
onto the simplex).  ``h`` is convex with a semismooth gradient, and the box
problem is solved by a projected Newton method with conjugate gradients on
the free entries, the generalised Jacobian of ``Pi_Delta`` supplying the
Hessian products.  A proximal term ``||U - U_k||^2 / (2 sigma)`` keeps the
Newton systems positive definite.  ``sigma`` triples from 1 up to
``SIGMA_MAX`` and then stays fixed, where the iterations converge linearly:
both the primal value of ``Z(U)`` and ``lambda_max(Sigma + U)`` approach
``phi``, which is what certifies optima of rank above one (the rank-3
problem above to a relative gap of 1e-6 in under a second; the 200-nonzero
correlation problem only to 3e-5 in a minute).

Every ``U`` the method visits is clipped to the box and symmetric, so
``lambda_max(Sigma + U)`` (with the eigensolver's rounding margin) is an
upper bound on ``phi`` however inexact the inner solves are, and every
``Z(U)`` is feasible, so its objective is a lower bound.  The bounds hold
by construction, not by trust in the method's convergence.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._certificate import BestBounds

# sigma (units of largest variance 1) triples from 1 up to SIGMA_MAX, then stays.
# SIGMA_MAX = 30: rank-3 Gaussian n = 60 to gap 1e-6 in 0.9 s (10: 1.6 s, 100: 3.3 s).
SIGMA_MAX = 30.0
SIGMA_GROWTH = 3.0
# Inner tolerance 1e-3 / (sigma k^1.1): rank-3 Gaussian 0.6 s at 1.1, 1.1 s at 2.
INNER_POWER = 1.1

# Cost model: the iterations stop on work done, never on the clock. Work is
# counted in sweep equivalents (one sweep of block coordinate ascent on the
# same m x m problem), each step's m^3 flops weighted by its speed measured
# against a sweep (one BLAS thread, m = 60-500; docs/user_guide/algorithm.rst).
# An evaluation of h (eigendecomposition with vectors): 0.08-0.39 sweeps measured.
EIGH_WORK = 0.2
# A Jacobian product at rank r, 2 m^3 + 6 m^2 r flops: 0.01-0.07 sweeps at r = 3.
JACOBIAN_WORK = 0.04
# ... plus this times r / m (0.15-0.32 sweeps measured at r = m / 2).
JACOBIAN_RANK_WORK = 0.4
# The bounds of an iterate (lambda_max with margin, objective): 0.02-0.1 sweeps.
BOUND_WORK = 0.06


class WorkMeter:
    """Work done by a polish run, in sweep equivalents, against its budget
    ``limit`` and the caller's ``time_limit`` (anything with ``expired()``;
    ``None``: no clock at all)."""

    __slots__ = ("done", "limit", "time_limit")

    def __init__(self, limit: float, time_limit: Any = None, done: float = 0.0) -> None:
        self.done = done
        self.limit = limit
        self.time_limit = time_limit

    def add(self, work: float) -> None:
        self.done += work

    def exhausted(self) -> bool:
        """Whether the budget is spent or the caller's time limit has passed."""
        if self.done >= self.limit:
            return True
        return self.time_limit is not None and self.time_limit.expired()


def _simplex(a: np.ndarray) -> np.ndarray:
    """Euclidean projection of the vector ``a`` onto ``{p >= 0, sum p = 1}``."""
    s = np.sort(a)[::-1]
    c = np.cumsum(s) - 1.0
    k = np.arange(1, a.size + 1)
    r = int(np.flatnonzero(s - c / k > 0)[-1]) + 1
    return np.maximum(a - c[r - 1] / r, 0.0)


class _Projection:
    """``Pi_Delta(A)`` for a symmetric ``A`` and products with its Jacobian."""

    def __init__(self, A: np.ndarray):
        a, Q = np.linalg.eigh(A)
        p = _simplex(a)
        top = p > 0
        self.Qa = Q[:, top]
        self.Qb = Q[:, ~top]
        pa = p[top]
        self.Z = (self.Qa * pa) @ self.Qa.T
        # first divided differences of the eigenvalue map between a kept
        # eigenvalue and a dropped one (those between two dropped are zero,
        # those between two kept are one)
        self.omega = pa[:, None] / (a[top][:, None] - a[~top][None, :])

    @property
    def rank(self) -> int:
        return self.Qa.shape[1]

    def jacobian(self, H: np.ndarray) -> np.ndarray:
        """Directional derivative of ``Pi_Delta`` at ``A`` along symmetric ``H``."""
        Qa, Qb = self.Qa, self.Qb
        HQa = H @ Qa
        Haa = Qa.T @ HQa
        # the simplex shift moves with the mean of the kept eigenvalues
        Haa[np.diag_indices_from(Haa)] -= np.trace(Haa) / Haa.shape[0]
        cross = Qa @ (self.omega * (HQa.T @ Qb)) @ Qb.T
        return Qa @ Haa @ Qa.T + cross + cross.T


def _inner(S: np.ndarray, lam: float, Zk: np.ndarray, Uk: np.ndarray, sigma: float, *,
           tol: float, max_newton: int, meter: WorkMeter,
           counts: list[int] | None = None) -> tuple[np.ndarray, _Projection]:
    """Minimise ``h(U) + ||U - Uk||^2 / (2 sigma)`` over the box by projected
    Newton-CG, adding the work of every step to ``meter`` (checked between
    Newton steps)."""
    rho = 1.0 / sigma
    m = S.shape[0]

    def value(U: np.ndarray) -> tuple[float, _Projection]:
        P = _Projection(Zk + sigma * (S + U))
        Z = P.Z
        v = (np.vdot(S + U, Z) - np.vdot(Z - Zk, Z - Zk) / (2.0 * sigma)
             + 0.5 * rho * np.vdot(U - Uk, U - Uk))
        return float(v), P

    U = Uk.copy()
    val, P = value(U)
    meter.add(EIGH_WORK)
    counts = counts if counts is not None else [0, 0, 0]
    counts[1] += 1
    for _ in range(max_newton):
        if meter.exhausted():
            break
        G = P.Z + rho * (U - Uk)
        step = U - np.clip(U - G, -lam, lam)
        size = float(np.abs(step).max())
        if size <= tol:
            break
        # entries at a bound that the gradient pushes outwards stay there
        eps = min(1e-3 * lam, size)
        fixed = ((U <= -lam + eps) & (G > 0)) | ((U >= lam - eps) & (G < 0))
        free = ~fixed
        # conjugate gradients on (sigma J + rho) d = -G over the free entries
        d = np.zeros_like(U)
        r = -np.where(free, G, 0.0)
        q = r.copy()
        rr = float(np.vdot(r, r))
        stop = min(0.1, rr ** 0.1) * np.sqrt(rr)
        counts[0] += 1
        # (no free entry with a gradient: only the entries near a bound move)
        for _ in range(100 if rr > 0 else 0):
            counts[2] += 1
            meter.add(JACOBIAN_WORK + JACOBIAN_RANK_WORK * P.rank / m)
            Aq = np.where(free, sigma * P.jacobian(q), 0.0) + rho * q
            alpha = rr / float(np.vdot(q, Aq))
            d += alpha * q
            r -= alpha * Aq
            rr_new = float(np.vdot(r, r))
            if np.sqrt(rr_new) <= stop:
                break
            q = r + (rr_new / rr) * q
            rr = rr_new
        d = np.where(free, d, -G)
        t = 1.0
        for _ in range(12):  # Armijo on the projected arc
            Un = np.clip(U + t * d, -lam, lam)
            vn, Pn = value(Un)
            meter.add(EIGH_WORK)
            counts[1] += 1
            if vn <= val + 1e-4 * float(np.vdot(G, Un - U)):
                break
            t *= 0.5
        else:
            break
        U, val, P = Un, vn, Pn
    return U, P


@dataclass
class ProximalState:
    """Where proximal point iterations stopped, to resume them: the prox centre
    ``Z``, the box dual ``U``, the number ``k`` of outer iterations run
    (which sets ``sigma``) and the work done in all, in sweep equivalents."""

    Z: np.ndarray
    U: np.ndarray
    k: int = 0
    work: float = 0.0


def proximal_dual(Sigma: np.ndarray, lam: float, Z0: np.ndarray, U0: np.ndarray, *,
                  work: float, lower: float = -np.inf, tol: float = 0.0,
                  state: ProximalState | None = None, max_outer: int = 10_000,
                  max_newton: int = 30, time_limit: Any = None, verbose: bool = False
                  ) -> tuple[float, np.ndarray | None, float, np.ndarray | None, ProximalState]:
    """Better bounds on ``phi`` from a primal ``Z0`` and a box dual ``U0``.

    Runs proximal point iterations (see the module docstring) from
    ``(Z0, U0)``, or from ``state`` (the previous call's, which then replaces
    them), for at most ``work`` sweep equivalents of work (see the cost model
    above; checked between Newton steps, so the last one may overrun by
    about one Newton step and its line search), ``max_outer`` iterations or
    until the caller's ``time_limit`` (a :class:`spca._limits.TimeLimit`,
    checked at the same places) has passed, or until the relative gap between the best
    upper bound and ``max(lower, best primal value)`` is within ``tol``.
    ``Z0`` must be PSD with trace one and ``U0`` symmetric (it is clipped to
    the box); neither is modified.  ``sigma`` is ``SIGMA_GROWTH ** k`` up to
    ``SIGMA_MAX`` at the ``k``-th iteration (from 0).

    Returns ``(upper, D, value, Z, state)``: the best upper bound of this
    call's iterates and its matrix ``D = Sigma + U`` (symmetric,
    ``|U_ij| <= lam``; ``inf`` and ``None`` if no iteration ran), the best
    primal value with its feasible ``Z`` (``-inf`` and ``None`` likewise),
    and the state to resume from.
    """
    if state is None:
        state = ProximalState(Z=np.array(Z0, dtype=np.float64),
                              U=np.clip(0.5 * (U0 + U0.T), -lam, lam))
    Zk, U, k = state.Z, state.U, state.k
    meter = WorkMeter(state.work + work, time_limit, done=state.work)
    best = BestBounds()
    for _ in range(max_outer):
        if meter.exhausted():
            break
        sigma = min(SIGMA_GROWTH ** min(k, 64), SIGMA_MAX)
        counts = [0, 0, 0]
        inner_tol = max(1e-13, 1e-3 / (sigma * (k + 1) ** INNER_POWER))
        U, P = _inner(Sigma, lam, Zk, U, sigma, tol=inner_tol, max_newton=max_newton,
                      meter=meter, counts=counts)
        U = np.clip(0.5 * (U + U.T), -lam, lam)
        Zk = P.Z
        k += 1
        ub, value = best.update(Sigma, lam, Sigma + U, Zk)
        meter.add(BOUND_WORK)
        gap = best.gap(lower)
        if verbose:
            print(f"  proximal {k:4d}  sigma={sigma:.1e}  newton={counts[0]} eigh={counts[1]} "
                  f"cg={counts[2]} rank={P.rank}  value={value:.10g}  upper={ub:.10g}  "
                  f"gap={gap:.2e}")
        if gap <= tol:
            break
    return best.upper, best.D, best.value, best.Z, ProximalState(Zk, U, k, meter.done)
