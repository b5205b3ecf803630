"""A barrier (interior-point) method on the DSPCA dual, for small problems.

Block coordinate ascent needs many sweeps where the optimal ``Z`` has high
rank: on a 40 x 40 tridiagonal covariance (1 on the diagonal, 0.5 beside it)
at ``lam = 0.2`` the optimum has some 30 nonzero eigenvalues decaying
geometrically, and the sweeps and the first-order polish took 47 s.  A
second-order method does not care about the rank.  The dual

.. code-block:: text

    phi = min  lambda_max(S + U)   over U symmetric, |U_ij| <= lam

has ``U_ii = -lam`` at an optimum (lowering a diagonal entry never raises
``lambda_max``), so with ``S' = S - lam I`` it is

.. code-block:: text

    min  t   over t and the pairs u_ij (i < j) of U with  t I - S' - U  PSD,  |u_ij| <= lam .

The barrier method minimises, for decreasing ``mu``,

.. code-block:: text

    F(t, u) = t / mu - log det(t I - S' - U) - sum_{i<j} log(lam^2 - u_ij^2)

by Newton's method, from ``u = 0`` and ``t = lambda_max(S') + 1``.  With
``W = (t I - S' - U)^-1`` the Newton matrix has ``Tr(W^2)`` for ``t``,
``-2 (W^2)_ij`` between ``t`` and ``u_ij``, and ``2 (W_ik W_jl + W_il W_jk)``
(plus the box barrier's curvature on the diagonal) between ``u_ij`` and
``u_kl``: ``n (n - 1) / 2 + 1`` unknowns, formed from ``W`` by gathers and
factored by Cholesky.  That is ``O(n^6)`` flops a step, cheap up to a few
dozen features and the reason the method is only used on small blocks (see
``INTERIOR_MAX``).  ``mu`` is divided by ``MU_FACTOR`` after each centring,
down to the ``mu`` that the gap asks for.

Bounds hold whatever the accuracy of the Newton steps.  ``U`` stays strictly
inside the box, so ``lambda_max(S + U)`` with the eigensolver's rounding
margin is an upper bound; ``Z = W / Tr W`` is positive definite with trace
one, so its objective, evaluated exactly, is a lower bound.  Their difference
is at most ``t - Tr(S' Z) + lam sum_{i != j} |Z_ij| = Tr((tI - S' - U) Z) +
sum_{i != j} (U_ij Z_ij + lam |Z_ij|)``: ``n / Tr W`` (about ``n mu`` once
``t`` is centred) plus terms that vanish on the central path as ``mu -> 0``.
These bounds do not rely on the centring being accurate, which is what makes
the method robust down to gaps of ``1e-9`` and below.

Every decision depends on work done (Newton steps), never on the clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ._certificate import dspca_objective, lambda_max_upper, relative_gap

__all__ = ["InteriorResult", "interior_point", "INTERIOR_MAX"]

# Largest block that dspca_bca hands to interior_point.
INTERIOR_MAX = 40

# mu is divided by MU_FACTOR after each centring.
MU_FACTOR = 10.0
# A centring stops when the squared Newton decrement is below CENTRE_TOL.
CENTRE_TOL = 1e-2
# Fraction of the largest step to the boundary of the box or the PSD cone.
STEP_BACK = 0.98
# Armijo constant of the backtracking line search.
ARMIJO = 0.25


@dataclass(frozen=True)
class InteriorResult:
    """What :func:`interior_point` returns (in the units of the ``S`` given).

    ``Z`` is positive definite with trace one and ``lower`` its objective
    ``Tr(S Z) - lam ||Z||_1``; ``D = S + U`` with ``U`` symmetric,
    ``|U_ij| <= lam``, and ``upper >= lambda_max(D)`` (rounding margin
    included).  ``n_newton`` counts Newton steps; ``converged`` says whether
    the relative gap reached the ``tol`` asked for.
    """

    Z: np.ndarray
    lower: float
    D: np.ndarray
    upper: float
    n_newton: int
    converged: bool

    @property
    def gap(self) -> float:
        """Relative gap ``(upper - lower) / |upper|``."""
        return relative_gap(self.lower, self.upper)


def _slack(t: float, Sp: np.ndarray, U: np.ndarray) -> np.ndarray:
    """``t I - S' - U``."""
    A = -Sp - U
    A.reshape(-1)[:: A.shape[0] + 1] += t
    return A


def _chol(A: np.ndarray) -> np.ndarray | None:
    """Upper Cholesky factor of ``A``, or ``None`` when it is not positive definite."""
    c, info = sla.lapack.dpotrf(A, lower=False, clean=True)
    return c if info == 0 else None


def _inverse_from(c: np.ndarray) -> np.ndarray:
    """``A^-1`` from the upper Cholesky factor of ``A``."""
    inv, info = sla.lapack.dpotri(c, lower=False)
    if info != 0:  # pragma: no cover - c is a Cholesky factor
        raise np.linalg.LinAlgError(f"inverse from a Cholesky factor failed (info={info})")
    inv = np.triu(inv)
    return inv + np.triu(inv, 1).T


def _merit(t: float, u: np.ndarray, Sp: np.ndarray, lam: float, mu: float,
           iu: np.ndarray, ju: np.ndarray) -> float:
    """``F(t, u)`` (``inf`` outside its domain)."""
    w = lam * lam - u * u
    if np.any(w <= 0.0):
        return math.inf
    U = np.zeros_like(Sp)
    U[iu, ju] = u
    U[ju, iu] = u
    c = _chol(_slack(t, Sp, U))
    if c is None:
        return math.inf
    return t / mu - 2.0 * float(np.log(np.diag(c)).sum()) - float(np.log(w).sum())


def _max_psd_step(A: np.ndarray, dA: np.ndarray) -> float:
    """Largest ``a`` with ``A + a dA`` positive semidefinite (``inf`` if none)."""
    L = np.linalg.cholesky(A)
    M = sla.solve_triangular(L, dA, lower=True)
    M = sla.solve_triangular(L, M.T, lower=True)
    e = float(np.linalg.eigvalsh(0.5 * (M + M.T))[0])
    return math.inf if e >= 0.0 else -1.0 / e


def _max_box_step(u: np.ndarray, du: np.ndarray, lam: float) -> float:
    """Largest ``a`` with ``|u + a du| <= lam`` entrywise."""
    up = du > 0
    down = du < 0
    a = math.inf
    if up.any():
        a = min(a, float(((lam - u[up]) / du[up]).min()))
    if down.any():
        a = min(a, float(((-lam - u[down]) / du[down]).min()))
    return a


def _bounds(S: np.ndarray, lam: float, W: np.ndarray, U: np.ndarray
            ) -> tuple[np.ndarray, float, np.ndarray, float]:
    """The primal ``Z = W / Tr W`` with its value and the dual ``S + U``
    (diagonal ``S_ii - lam``) with its bound."""
    Z = W / float(np.trace(W))
    Z = 0.5 * (Z + Z.T)
    lower = dspca_objective(S, Z, lam)
    D = S + np.clip(U, -lam, lam)
    D = 0.5 * (D + D.T)
    np.fill_diagonal(D, np.diag(S) - lam)
    return Z, lower, D, lambda_max_upper(D)


def _hkm_matrix(G: np.ndarray, Z: np.ndarray, iu: np.ndarray, ju: np.ndarray) -> np.ndarray:
    """``M[p, q] = G_ik Z_jl + G_il Z_jk + G_jk Z_il + G_jl Z_ik`` for the pairs
    ``p = (i, j)``, ``q = (k, l)``: the rows ``R[p, k, l] = G_ik Z_jl + Z_ik G_jl``
    (an ``m x n x n`` array), then ``M = R[:, iu, ju] + R[:, ju, iu]``."""
    R = G[iu][:, :, None] * Z[ju][:, None, :]
    R += Z[iu][:, :, None] * G[ju][:, None, :]
    M = R[:, iu, ju]
    M += R[:, ju, iu]
    return M


def _max_cone_step(X: np.ndarray, dX: np.ndarray) -> float:
    """Largest ``a`` with ``X + a dX`` positive semidefinite (``X`` positive
    definite; ``inf`` if there is none)."""
    return _max_psd_step(X, dX)


def _max_orthant_step(x: np.ndarray, dx: np.ndarray) -> float:
    """Largest ``a`` with ``x + a dx >= 0`` (``x > 0``)."""
    neg = dx < 0
    if not neg.any():
        return math.inf
    return float((-x[neg] / dx[neg]).min())


def interior_point(S: np.ndarray, lam: float, *, tol: float = 1e-6,
                   max_iter: int = 100, verbose: bool = False) -> InteriorResult:
    """Solve the DSPCA relaxation of a small ``S`` by a primal-dual interior-point method.

    .. code-block:: text

        phi = max  Tr(S Z) - lam ||Z||_1   over Z PSD, Tr Z = 1
            = min  lambda_max(S + U)        over U symmetric, |U_ij| <= lam

    See the module docstring for the method.  ``S`` is symmetric positive
    semidefinite (not checked; the solver's units have its largest variance
    equal to 1), ``lam >= 0``.  Stops when the relative gap of the bounds is
    at most ``tol`` or after ``max_iter`` iterations (a work limit).  The
    result's bounds are valid either way.  ``S`` is not modified.
    """
    S = np.asarray(S, dtype=np.float64)
    n = S.shape[0]
    if n == 1 or lam <= 0.0:
        # no pair, or the box is a point: phi = lambda_max(S - lam I)
        D = S.copy()
        np.fill_diagonal(D, np.diag(S) - lam)
        v = np.linalg.eigh(D)[1][:, -1]
        Z = np.outer(v, v)
        lower, upper = dspca_objective(S, Z, lam), lambda_max_upper(D)
        return InteriorResult(Z, lower, D, upper, 0, relative_gap(lower, upper) <= tol)
    Sp = S.copy()
    Sp.reshape(-1)[:: n + 1] -= lam
    iu, ju = np.triu_indices(n, 1)
    m = iu.size
    nu = n + 2 * m  # barrier parameter: the PSD cone and 2 m half-lines
    # dual (t, u): Lam = t I - S' - U and s+- = lam -+ u, all strictly feasible
    u = np.zeros(m)
    t = float(np.linalg.eigvalsh(Sp)[-1]) + 1.0
    # primal (Z, z+-): Tr Z = 1 and 2 Z_ij + z+_ij - z-_ij = 0, strictly feasible
    Z = np.eye(n) / n
    zp = np.full(m, 1.0)
    zm = np.full(m, 1.0)
    best_lower, best_Z = -math.inf, None
    best_upper, best_D = math.inf, None
    gap = math.inf
    it = 0
    diag_m = np.arange(m)
    while True:
        U = np.zeros((n, n))
        U[iu, ju] = u
        U[ju, iu] = u
        Lam = _slack(t, Sp, U)
        c = _chol(Lam)
        if c is None:  # pragma: no cover - steps stay inside the cone
            break
        G = _inverse_from(c)
        sp, sm = lam - u, lam + u
        # bounds of this iterate (both valid whatever its accuracy)
        Zs = 0.5 * (Z + Z.T)
        Zs = Zs / float(np.trace(Zs))
        lower = dspca_objective(S, Zs, lam)
        if lower > best_lower:
            best_lower, best_Z = lower, Zs
        D = S + U
        np.fill_diagonal(D, np.diag(S) - lam)
        upper = lambda_max_upper(D)
        if upper < best_upper:
            best_upper, best_D = upper, D
        gap = relative_gap(best_lower, best_upper)
        mu = (float(np.vdot(Lam, Z)) + float(sp @ zp + sm @ zm)) / nu
        if verbose:
            print(f"  interior {it:3d}  mu={mu:.2e}  lower={best_lower:.10g}  "
                  f"upper={best_upper:.10g}  gap={gap:.2e}")
        if gap <= tol or it >= max_iter:
            break
        it += 1
        # HKM direction: dZ = sym(sigma mu G - Z - G dLam Z), dLam = dt I - dU;
        # the normal equations in (dt, du) are
        #   [ Tr(GZ)  -c'     ] [dt]   [ -(1 - sigma mu Tr G)              ]
        #   [ -c      M + Dg  ] [du] = [ -(2 sigma mu G_ij + sigma mu (1/s+ - 1/s-)) ]
        # with c_ij = (GZ + ZG)_ij, M the HKM operator on pairs, Dg = z+/s+ + z-/s-
        GZ = G @ Z
        cvec = (GZ + GZ.T)[iu, ju]
        M = _hkm_matrix(G, Z, iu, ju)
        M[diag_m, diag_m] += zp / sp + zm / sm
        K = np.empty((m + 1, m + 1))
        K[0, 0] = float(np.trace(GZ))
        K[0, 1:] = K[1:, 0] = -cvec
        K[1:, 1:] = M
        del M
        try:
            cf = sla.cho_factor(K, lower=False, overwrite_a=True, check_finite=False)
        except np.linalg.LinAlgError:
            break
        trG = float(np.trace(G))

        def direction(sigma_mu: float):
            rhs = np.empty(m + 1)
            rhs[0] = -(1.0 - sigma_mu * trG)
            rhs[1:] = -(2.0 * sigma_mu * G[iu, ju] + sigma_mu * (1.0 / sp - 1.0 / sm))
            d = sla.cho_solve(cf, rhs, check_finite=False)
            dt, du = float(d[0]), d[1:]
            dU = np.zeros((n, n))
            dU[iu, ju] = du
            dU[ju, iu] = du
            dLam = -dU
            dLam.reshape(-1)[:: n + 1] += dt
            dZ = sigma_mu * G - Z - G @ dLam @ Z
            dZ = 0.5 * (dZ + dZ.T)
            dzp = sigma_mu / sp - zp + (zp / sp) * du
            dzm = sigma_mu / sm - zm - (zm / sm) * du
            return dt, du, dLam, dZ, dzp, dzm

        def steps(dt, du, dLam, dZ, dzp, dzm):
            a_d = min(_max_cone_step(Lam, dLam), _max_orthant_step(sp, -du),
                      _max_orthant_step(sm, du))
            a_p = min(_max_cone_step(Z, dZ), _max_orthant_step(zp, dzp),
                      _max_orthant_step(zm, dzm))
            return a_p, a_d

        # Mehrotra's predictor: the affine direction gives the centring sigma
        aff = direction(0.0)
        a_p, a_d = steps(*aff)
        a_p, a_d = min(1.0, a_p), min(1.0, a_d)
        _, du_a, dLam_a, dZ_a, dzp_a, dzm_a = aff
        mu_aff = (float(np.vdot(Lam + a_d * dLam_a, Z + a_p * dZ_a))
                  + float((sp - a_d * du_a) @ (zp + a_p * dzp_a))
                  + float((sm + a_d * du_a) @ (zm + a_p * dzm_a))) / nu
        sigma = min(1.0, (mu_aff / mu) ** 3)
        dt, du, dLam, dZ, dzp, dzm = direction(sigma * mu)
        a_p, a_d = steps(dt, du, dLam, dZ, dzp, dzm)
        a_p = min(1.0, STEP_BACK * a_p)
        a_d = min(1.0, STEP_BACK * a_d)
        t += a_d * dt
        u = u + a_d * du
        Z = Z + a_p * dZ
        Z = 0.5 * (Z + Z.T)
        zp = zp + a_p * dzp
        zm = zm + a_p * dzm
    assert best_Z is not None and best_D is not None
    return InteriorResult(best_Z, best_lower, best_D, best_upper, it, gap <= tol)
