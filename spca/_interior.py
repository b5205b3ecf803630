"""A primal-dual interior-point method for small DSPCA blocks.

Block coordinate ascent needs many sweeps where the optimal ``Z`` has high
rank: on a 40 x 40 tridiagonal covariance (1 on the diagonal, 0.5 beside it)
at ``lam = 0.2`` the optimum has some 30 nonzero eigenvalues decaying
geometrically, and the sweeps with the first-order polish took 47 s.  An
interior-point method does not care about the rank.  The dual

.. code-block:: text

    phi = min  lambda_max(S + U)   over U symmetric, |U_ij| <= lam

has ``U_ii = -lam`` at an optimum (lowering a diagonal entry never raises
``lambda_max``), so with ``S' = S - lam I`` and the ``m = n (n - 1) / 2``
pairs ``u_ij`` (``i < j``) of ``U`` it is the conic problem

.. code-block:: text

    min  t   over (t, u) with  Lam = t I - S' - U  PSD,  s+ = lam - u >= 0,  s- = lam + u >= 0,

whose Lagrange multipliers ``Z`` (PSD) and ``z+``, ``z- >= 0`` satisfy
``Tr Z = 1`` and ``2 Z_ij + z+_ij - z-_ij = 0``: the DSPCA primal.  Both
start strictly feasible (``u = 0``, ``t = lambda_max(S') + 1``; ``Z = I / n``,
``z+ = z- = 1``) and stay so.  Each iteration takes a Newton step on the
perturbed complementarity ``Lam Z = sigma mu I``, ``s+- z+- = sigma mu``
with the HKM direction (``dZ = sym(sigma mu Lam^-1 - Z - Lam^-1 dLam Z)``),
``sigma`` from Mehrotra's predictor and his second-order corrector.
Eliminating ``dZ`` and ``dz+-`` leaves normal equations in ``(dt, du)``:
``m + 1`` unknowns whose matrix,
``Lam^-1_ik Z_jl + Lam^-1_il Z_jk + Lam^-1_jk Z_il + Lam^-1_jl Z_ik``
between the pairs ``(i, j)`` and ``(k, l)``, is formed (its upper triangle)
by broadcast products of row blocks (one per ``i``, see :func:`_hkm_matrix`)
and factored by Cholesky: ``O(n^6)`` flops an iteration, which is why only blocks of up to
``INTERIOR_MAX`` features are handed to this method.
Measured with one BLAS thread on the tridiagonal family at ``lam = 0.2``
(without the corrector: 25, 34 and 43 iterations): 13 iterations at
n = 20, 18 at n = 40 (1-2 s on a loaded 2-core machine), 22 at n = 60
(5.4 s).

Bounds hold whatever the accuracy of the iterations: ``Z`` is positive
definite with trace one, so its objective, evaluated exactly, is a lower
bound, and ``u`` stays strictly inside the box, so ``lambda_max(S + U)``
with the eigensolver's rounding margin is an upper bound.  Every decision
depends on work done (iterations), never on the clock.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import scipy.linalg as sla

from ._certificate import (
    Certificate,
    dspca_objective,
    lambda_max_upper,
    leading_eigenvector,
    polish,
    rank_one_dual,
    relative_gap,
)
from ._limits import stopwatch

__all__ = ["INTERIOR_FALLBACK", "INTERIOR_MAX", "INTERIOR_SWEEPS", "InteriorResult",
           "convergence_advice", "finish_block", "interior_point"]

# dspca_bca finishes a block of at most INTERIOR_MAX features by
# interior_point when INTERIOR_SWEEPS sweeps have not certified it (and the
# caller allowed more sweeps than that, and asked for a tight gap).  One
# iteration costs O(n^6) flops: at n = 40 the tridiagonal case at lam = 0.2
# took 1-2 s (18 iterations); at n = 60 the hand-over took 3.4-4.8 s on the
# tridiagonal family (certified, where the sweeps and their polish stop at
# gaps of 2e-4 to 6e-4) but 3.6 s against 0.6-1.3 s on a Gaussian and a
# spiked covariance that the polish certifies, so blocks above 40 keep the
# polish.  Low-rank optima (most problems) certify within 25 sweeps, before
# the hand-over.
INTERIOR_MAX = 40
INTERIOR_SWEEPS = 30
# A block of at most INTERIOR_FALLBACK features that the polish leaves
# uncertified is finished by interior_point too (tridiagonal
# n = 60: certified after 3.4-4.8 s more, where the polish stopped at gaps of
# 2e-4 and 6e-4).  Not raised to 100: on the tridiagonal family at lam = 0.2
# (one BLAS thread, loaded 2-core machine) interior_point takes 24 iterations
# at n = 80 (0.17 s forming, 0.4-0.6 s Cholesky each) and 31 at n = 100
# (0.69 s forming, 1.9-2.7 s Cholesky each: 110 s for interior_point alone,
# where Clarabel took 111 s); dspca_bca with the fallback at n = 80 took 35 s
# against Clarabel's 52 s.  The Cholesky factor dominates and no pair's
# barrier weight z/s exceeds its HKM diagonal in the last iterations (n = 40,
# 60 at lam = 0.05, 0.2, 0.45): both grow like 1 / mu, so a preconditioner
# that factors only the "free" pairs has nothing to split off.  Cheaper routes
# measured at n = 80, lam = 0.2 and not adopted (CHANGELOG, issue 28): both
# sides of the polish's bracket are loose (4.0e-5 and 3.2e-5 from Clarabel's
# phi), the dual from the KKT equations of Clarabel's own Z by bounded least
# squares leaves lambda_max at 1.71 (phi 1.137), the dual restricted to a band
# of 40 pairs around the diagonal is 2.7e-5 above phi, and conjugate gradients
# preconditioned in Z's eigenbasis need more iterations than unknowns from the
# fourth iteration (n = 20).
INTERIOR_FALLBACK = 60
# Fraction of the largest step to the boundary of the cones.
STEP_BACK = 0.98
# Mehrotra's second-order corrector.
CORRECTOR = True
# Iterations allowed by default (a work limit; 55 were the most measured).
MAX_ITER = 100


@dataclass(frozen=True)
class InteriorResult:
    """What :func:`interior_point` returns (in the units of the ``S`` given).

    ``Z`` is positive definite with trace one and ``lower`` its objective
    ``Tr(S Z) - lam ||Z||_1``; ``D = S + U`` with ``U`` symmetric,
    ``|U_ij| <= lam`` (diagonal ``-lam``), and ``upper >= lambda_max(D)``
    (rounding margin included).  ``n_iter`` counts iterations;
    ``converged`` says whether the relative gap reached ``tol``.
    """

    Z: np.ndarray
    lower: float
    D: np.ndarray
    upper: float
    n_iter: int
    converged: bool

    @property
    def gap(self) -> float:
        """Relative gap ``(upper - lower) / |upper|``."""
        return relative_gap(self.lower, self.upper)


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


def _max_cone_step(X: np.ndarray, dX: np.ndarray) -> float:
    """Largest ``a`` with ``X + a dX`` positive semidefinite, for a positive
    definite ``X`` (``inf`` if there is none)."""
    L = np.linalg.cholesky(X)
    M = sla.solve_triangular(L, dX, lower=True)
    M = sla.solve_triangular(L, M.T, lower=True)
    e = float(np.linalg.eigvalsh(0.5 * (M + M.T))[0])
    return math.inf if e >= 0.0 else -1.0 / e


def _max_orthant_step(x: np.ndarray, dx: np.ndarray) -> float:
    """Largest ``a`` with ``x + a dx >= 0``, for ``x > 0``."""
    neg = dx < 0
    if not neg.any():
        return math.inf
    return float((-x[neg] / dx[neg]).min())


def _hkm_matrix(G: np.ndarray, Z: np.ndarray, iu: np.ndarray, ju: np.ndarray,
                out: np.ndarray, upper: bool = False) -> np.ndarray:
    """``M[p, q] = (G_ik Z_jl + Z_ik G_jl) + (G_il Z_jk + Z_il G_jk)`` for the
    pairs ``p = (i, j)``, ``q = (k, l)``, written into ``out`` (``m x m``).
    With ``upper=True`` only the columns ``q`` from the first row of each
    row block on are written (every ``q >= p``: the upper triangle that an
    upper Cholesky factorisation reads, and about half the products); the
    rest of ``out`` is left as it was.

    The rows of the pairs ``(i, j)`` with one ``i`` form a contiguous block
    (``iu`` is sorted) in which the factors of ``i`` are one row of the
    ``n x m`` column gathers ``G[:, iu]``, ``G[:, ju]``, ``Z[:, iu]``,
    ``Z[:, ju]`` and those of ``j`` their rows ``i + 1, ..., n - 1``: each block
    is four broadcast products of contiguous slices, without the ``m x n x n``
    array and the ``m x m`` gathers from it that this replaced (2-3 times
    slower at n = 80).  The sums are grouped as written, as they were there.
    """
    n = G.shape[0]
    Gi, Gj, Zi, Zj = G[:, iu], G[:, ju], Z[:, iu], Z[:, ju]
    t1 = np.empty((n - 1, iu.size))
    t2 = np.empty_like(t1)
    start = 0
    for i in range(n - 1):
        stop = start + n - 1 - i
        c = start if upper else 0  # first column written
        rows = stop - start
        blk, a, b = out[start:stop, c:], t1[:rows, c:], t2[:rows, c:]
        np.multiply(Zj[i + 1:, c:], Gi[i, c:], out=blk)  # G_ik Z_jl
        np.multiply(Gj[i + 1:, c:], Zi[i, c:], out=a)  # Z_ik G_jl
        blk += a
        np.multiply(Zi[i + 1:, c:], Gj[i, c:], out=a)  # G_il Z_jk
        np.multiply(Gi[i + 1:, c:], Zj[i, c:], out=b)  # Z_il G_jk
        a += b
        blk += a
        start = stop
    return out


@dataclass
class _Iterate:
    """A strictly feasible primal-dual point and what its Newton system needs."""

    t: float
    u: np.ndarray
    Z: np.ndarray
    zp: np.ndarray
    zm: np.ndarray
    Lam: np.ndarray | None = None
    G: np.ndarray | None = None  # Lam^-1

    def slacks(self, lam: float) -> tuple[np.ndarray, np.ndarray]:
        return lam - self.u, lam + self.u


def _pairs_matrix(n: int, iu: np.ndarray, ju: np.ndarray, v: np.ndarray) -> np.ndarray:
    """The symmetric matrix with ``v`` on the pairs and zero diagonal."""
    A = np.zeros((n, n))
    A[iu, ju] = v
    A[ju, iu] = v
    return A


def _direction(x: _Iterate, lam: float, cf, iu: np.ndarray, ju: np.ndarray,
               sigma_mu: float, aff: tuple | None = None) -> tuple:
    """The HKM Newton direction towards ``sigma mu`` from the factored normal
    equations ``cf`` (see :func:`interior_point`); with the affine direction
    ``aff``, Mehrotra's corrector: the products ``dLam_a dZ_a`` and
    ``ds_a dz_a`` join the right-hand side of the complementarity."""
    n = x.Z.shape[0]
    G = x.G
    sp, sm = x.slacks(lam)
    m = iu.size
    rhs = np.empty(m + 1)
    rhs[0] = -(1.0 - sigma_mu * float(np.trace(G)))
    rhs[1:] = -(2.0 * sigma_mu * G[iu, ju] + sigma_mu * (1.0 / sp - 1.0 / sm))
    E = cp = cm = None
    if aff is not None:
        _, du_a, dLam_a, dZ_a, dzp_a, dzm_a = aff
        E = -(G @ dLam_a @ dZ_a)
        E = 0.5 * (E + E.T)
        cp = du_a * dzp_a / sp  # -ds+_a dz+_a / s+, with ds+ = -du
        cm = -du_a * dzm_a / sm  # -ds-_a dz-_a / s-, with ds- = du
        rhs[0] += float(np.trace(E))
        rhs[1:] -= 2.0 * E[iu, ju] + cp - cm
    d = sla.cho_solve(cf, rhs, check_finite=False)
    dt, du = float(d[0]), d[1:]
    dLam = -_pairs_matrix(n, iu, ju, du)
    dLam.reshape(-1)[:: n + 1] += dt
    dZ = sigma_mu * G - x.Z - G @ dLam @ x.Z
    dZ = 0.5 * (dZ + dZ.T)
    dzp = sigma_mu / sp - x.zp + (x.zp / sp) * du
    dzm = sigma_mu / sm - x.zm - (x.zm / sm) * du
    if aff is not None:
        dZ += E
        dzp += cp
        dzm += cm
    return dt, du, dLam, dZ, dzp, dzm


def _step_lengths(x: _Iterate, lam: float, direction: tuple) -> tuple[float, float]:
    """Largest primal and dual steps along ``direction`` that stay feasible."""
    _, du, dLam, dZ, dzp, dzm = direction
    sp, sm = x.slacks(lam)
    a_d = min(_max_cone_step(x.Lam, dLam), _max_orthant_step(sp, -du),
              _max_orthant_step(sm, du))
    a_p = min(_max_cone_step(x.Z, dZ), _max_orthant_step(x.zp, dzp),
              _max_orthant_step(x.zm, dzm))
    return a_p, a_d


def _check(S: np.ndarray, lam: float, tol: float, max_iter: int) -> np.ndarray:
    """Validate the arguments of :func:`interior_point`; return ``S`` as float64."""
    S = np.asarray(S, dtype=np.float64)
    if S.ndim != 2 or S.shape[0] != S.shape[1] or S.shape[0] == 0:
        raise ValueError(f"S must be a non-empty square matrix, got shape {S.shape}")
    if not np.all(np.isfinite(S)):
        raise ValueError("S must be finite, got NaN or inf entries")
    if not (math.isfinite(lam) and lam >= 0.0):
        raise ValueError(f"lam must be a finite number >= 0, got {lam!r}")
    if not 0.0 < tol < 1.0:
        raise ValueError(f"tol must be a relative gap in (0, 1), got {tol!r}")
    if max_iter < 1:
        raise ValueError(f"max_iter must be >= 1, got {max_iter!r}")
    return S


def interior_point(S: np.ndarray, lam: float, *, tol: float = 1e-6, max_iter: int = MAX_ITER,
                   verbose: bool = False) -> InteriorResult:
    """Solve the DSPCA relaxation of a small ``S`` by a primal-dual interior-point method.

    .. code-block:: text

        phi = max  Tr(S Z) - lam ||Z||_1   over Z PSD, Tr Z = 1
            = min  lambda_max(S + U)        over U symmetric, |U_ij| <= lam

    See the module docstring for the method.  ``S`` is symmetric positive
    semidefinite (its symmetry and definiteness are not checked; the solver
    passes its block scaled to a largest variance of 1), ``lam >= 0``.
    Stops when the relative gap of the bounds is at most ``tol`` or after
    ``max_iter`` iterations (a work limit).  The bounds of the result are
    valid either way.  ``S`` is not modified.

    Raises
    ------
    ValueError
        If ``S`` is not a finite non-empty square matrix, ``lam`` is negative
        or not finite, ``tol`` is outside ``(0, 1)`` or ``max_iter < 1``.
    """
    S = _check(S, lam, tol, max_iter)
    n = S.shape[0]
    # U = 0 off the diagonal is dual feasible and Z = v v' (v the leading
    # eigenvector of S - lam I) primal feasible: exact with one feature or
    # lam = 0, and within tol when lam is tiny (the box is then too thin for
    # the barrier)
    D = S.copy()
    np.fill_diagonal(D, np.diag(S) - lam)
    v = np.linalg.eigh(D)[1][:, -1]
    Z = np.outer(v, v)
    lower, upper = dspca_objective(S, Z, lam), lambda_max_upper(D)
    if n == 1 or relative_gap(lower, upper) <= tol:
        return InteriorResult(Z, lower, D, upper, 0, True)
    Sp = S.copy()
    Sp.reshape(-1)[:: n + 1] -= lam
    iu, ju = np.triu_indices(n, 1)
    m = iu.size
    nu = n + 2 * m  # the PSD cone of order n and 2 m half-lines
    x = _Iterate(t=float(np.linalg.eigvalsh(Sp)[-1]) + 1.0, u=np.zeros(m),
                 Z=np.eye(n) / n, zp=np.ones(m), zm=np.ones(m))
    best_lower, best_Z = -math.inf, None
    best_upper, best_D = math.inf, None
    gap = math.inf
    it = 0
    diag_m = np.arange(m)
    while True:
        U = _pairs_matrix(n, iu, ju, x.u)
        x.Lam = -Sp - U
        x.Lam.reshape(-1)[:: n + 1] += x.t
        c = _chol(x.Lam)
        if c is None:  # pragma: no cover - the steps stay inside the cone
            break
        x.G = _inverse_from(c)
        # the bounds of this iterate (valid whatever its accuracy)
        Z = x.Z / float(np.trace(x.Z))
        lower = dspca_objective(S, Z, lam)
        if lower > best_lower:
            best_lower, best_Z = lower, Z
        D = S + U
        np.fill_diagonal(D, np.diag(S) - lam)
        upper = lambda_max_upper(D)
        if upper < best_upper:
            best_upper, best_D = upper, D
        gap = relative_gap(best_lower, best_upper)
        sp, sm = x.slacks(lam)
        mu = (float(np.vdot(x.Lam, x.Z)) + float(sp @ x.zp + sm @ x.zm)) / nu
        if verbose:
            print(f"  interior point {it:3d}  mu={mu:.2e}  lower={best_lower:.10g}  "
                  f"upper={best_upper:.10g}  gap={gap:.2e}")
        if gap <= tol or it >= max_iter:
            break
        it += 1
        # normal equations in (dt, du):
        #   [ Tr(G Z)   -c'    ] [dt]   [ -(1 - sigma mu Tr G)                     ]
        #   [ -c        M + Dg ] [du] = [ -sigma mu (2 G_ij + 1 / s+ - 1 / s-)     ]
        # with G = Lam^-1, c_ij = (G Z + Z G)_ij, M the HKM matrix of the pairs
        # and Dg = z+ / s+ + z- / s-
        GZ = x.G @ x.Z
        K = np.empty((m + 1, m + 1))
        K[0, 0] = float(np.trace(GZ))
        K[0, 1:] = K[1:, 0] = -(GZ + GZ.T)[iu, ju]
        # (the upper triangle only: cho_factor(lower=False) reads no other entry)
        M = _hkm_matrix(x.G, x.Z, iu, ju, out=K[1:, 1:], upper=True)
        M[diag_m, diag_m] += x.zp / sp + x.zm / sm
        try:
            cf = sla.cho_factor(K, lower=False, overwrite_a=True, check_finite=False)
        except np.linalg.LinAlgError:  # pragma: no cover - K is positive definite
            break
        # Mehrotra's predictor: the affine-scaling direction sets sigma
        aff = _direction(x, lam, cf, iu, ju, 0.0)
        a_p, a_d = (min(1.0, a) for a in _step_lengths(x, lam, aff))
        _, du_a, dLam_a, dZ_a, dzp_a, dzm_a = aff
        mu_aff = (float(np.vdot(x.Lam + a_d * dLam_a, x.Z + a_p * dZ_a))
                  + float((sp - a_d * du_a) @ (x.zp + a_p * dzp_a))
                  + float((sm + a_d * du_a) @ (x.zm + a_p * dzm_a))) / nu
        sigma = min(1.0, (mu_aff / mu) ** 3)
        step = _direction(x, lam, cf, iu, ju, sigma * mu, aff if CORRECTOR else None)
        a_p, a_d = (min(1.0, STEP_BACK * a) for a in _step_lengths(x, lam, step))
        dt, du, _, dZ, dzp, dzm = step
        Zn = x.Z + a_p * dZ
        x = _Iterate(t=x.t + a_d * dt, u=x.u + a_d * du, Z=0.5 * (Zn + Zn.T),
                     zp=x.zp + a_p * dzp, zm=x.zm + a_p * dzm)
    assert best_Z is not None and best_D is not None
    return InteriorResult(best_Z, best_lower, best_D, best_upper, it, gap <= tol)


def finish_block(S: np.ndarray, lam: float, X: np.ndarray, M: np.ndarray, out: tuple, *,
                 tol: float, history: list, scale: float, verbose: bool = False) -> tuple:
    """Finish a block that the sweeps did not certify by :func:`interior_point`.

    ``out`` is the tuple of ``_bca._sweeps`` (sweeps, certificate, passes,
    exact QPs, certificate seconds, beta); the same tuple is returned with the
    better bounds of both.  The interior point's primal ``Z`` is returned as
    is (labelled ``"interior point"``) or as the rank-one ``x x'`` polished
    from its leading eigenvector when that is at least as good.  ``X`` and
    ``M`` are overwritten (in place) with a valid warm start: ``X = phi Z``
    for the interior point's positive definite ``Z`` (the trace of the
    barrier iterate is close to ``phi``) and ``M = S + U``, its dual matrix.
    Timings are measured for the report only.
    """
    sweep, cert, passes, exact, t_cert, beta_k = out
    t0 = stopwatch()
    res = interior_point(S, lam, tol=tol, verbose=verbose)
    label = "interior point"
    lower, Z, x, primal = cert.lower, cert.Z, cert.x, cert.primal
    upper, dual = cert.upper, cert.dual
    if res.lower > lower:
        lower, Z, x, primal = res.lower, res.Z, None, label
    if res.upper < upper:
        upper, dual = res.upper, label
    xr, val = polish(S, lam, leading_eigenvector(res.Z))
    if val >= lower:
        lower, Z, x, primal = val, np.outer(xr, xr), xr, "rank-one polish"
        ub = rank_one_dual(S, lam, xr, res.D)
        if ub < upper:
            upper, dual = ub, "rank-one"
    new = Certificate(lower=lower, upper=upper, Z=Z, x=x, primal=primal, dual=dual,
                      barrier_lower=cert.barrier_lower, barrier_upper=cert.barrier_upper)
    X[...] = max(res.lower, 1e-12) * res.Z  # phi > 0 on a block that survived elimination
    M[...] = res.D
    history.append((sweep, beta_k * scale**2, lower * scale, upper * scale))
    if verbose:
        print(f"interior point ({res.n_iter} iterations):  lower={lower * scale:.10g}  "
              f"upper={upper * scale:.10g}  gap={new.gap:.2e}  ({primal} / {dual})")
    return sweep, new, passes, exact, t_cert + stopwatch() - t0, beta_k


def convergence_advice(*, gap: float, tol: float, sweeps: int, max_sweeps: int,
                       largest_block: int, history: list | tuple,
                       polish_from: int = 50) -> str:
    """What to do about a solve of ``dspca_bca`` that stopped with ``gap > tol``.

    A block small enough for :func:`finish_block` was not handed to it because
    ``max_sweeps`` was at most ``INTERIOR_SWEEPS``: more sweeps then certify
    it; if it was handed over, the interior-point method ran out of
    iterations, which more sweeps do not change.  A solve that stopped before
    ``max_sweeps`` (``sweeps`` fewer) was ended by the polish of stalled
    sweeps, which more sweeps do not change either.
    Otherwise the rate of the gap over the second half of the sweeps' checks
    in ``history`` (``(sweep, beta, lower, upper)``; the first entry of each
    sweep, later ones being the polish's) says whether more sweeps would
    reach ``tol``, and about how many; when it does not and ``max_sweeps``
    is below ``polish_from`` (the sweep from which stalled sweeps are handed
    to the polish), the advice is to let the polish have its turn.  Where
    more sweeps will not help, the advice says that the bounds are valid;
    it suggests no larger ``tol``, which changes the solve's path and need
    not certify the gap reached.
    """
    if largest_block <= INTERIOR_MAX and max_sweeps <= INTERIOR_SWEEPS:
        return (f"increase max_sweeps above {INTERIOR_SWEEPS} (blocks of up to "
                f"{INTERIOR_MAX} features are then finished by an interior-point method)")
    # No larger tol is suggested: it changes the barrier schedule (beta_min is
    # proportional to tol) and the solve's path.  Tridiagonal n = 80 and 100
    # at lam = 0.2 (gaps 6.3e-5 and 6.0e-5) were told "pass tol >= 6.3e-05"
    # and "6e-05"; with those tol they stopped at gaps of 1.5e-4 and 1.6e-4.
    valid = (f"the bounds are valid as they are (objective <= phi <= upper_bound, "
             f"relative gap {gap:.2g})")
    if largest_block <= INTERIOR_MAX:
        # the interior-point finish ran and used up its MAX_ITER iterations
        return ("more sweeps will not help: the interior-point finish of the block "
                f"stopped at its limit of {MAX_ITER} iterations; " + valid)
    if sweeps < max_sweeps:
        return (f"more sweeps will not help: the sweeps stalled (an optimum of rank above "
                f"one) and the polish that took over ended at sweep {sweeps} of "
                f"{max_sweeps}; " + valid)
    checks: list[tuple[int, float]] = []
    for h in history:
        if not checks or int(h[0]) > checks[-1][0]:
            checks.append((int(h[0]), relative_gap(h[2], h[3])))
    if checks:
        last, g = checks[-1]
        s1, g1 = next(c for c in checks if c[0] >= last // 2)
        if last > s1 and g > 0.0 and g1 > g:
            need = last + math.log(g / tol) * (last - s1) / math.log(g1 / g)
            if need <= 4 * max_sweeps:
                return (f"increase max_sweeps to about {math.ceil(1.25 * need)} (where the "
                        f"rate of the gap over the second half of the sweeps reaches tol)")
    if max_sweeps < polish_from:
        return (f"increase max_sweeps to at least {polish_from} (from sweep {polish_from} "
                f"on, stalled sweeps are handed to first-order iterations that certify "
                f"optima of rank above one)")
    return ("more sweeps are unlikely to help: the gap stalled (optima of rank above one "
            "converge slowly by block coordinate ascent); " + valid)
