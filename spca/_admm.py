"""Alternating direction iterations for DSPCA optima of high rank.

At small ``lam`` on unstructured data (e.g. a Gaussian covariance of 500
features at a quarter of its largest off-diagonal entry) the optimal ``Z``
has rank in the hundreds: its eigenvalues decay smoothly, with no gap after
the first few.  The sweeps stall there (a gap of 1.7e-3 after 500 sweeps),
and the proximal point iterations (``spca/_proximal.py``), whose Newton
steps work on the hundreds of kept eigenvectors, close the gap more slowly
than the sweeps.  The alternating
direction method of multipliers (ADMM) on the splitting

    max  Tr(Sigma Z) - lam ||Y||_1   over Z in Delta, Y = Z

(``Delta`` = PSD matrices of trace one) has no such dependence on the rank:
each iteration is one eigendecomposition (a projection onto ``Delta``), one
soft-thresholding and one update of the scaled multiplier ``W``:

    Z+ = Pi_Delta(Y - W + Sigma / rho)
    Y+ = soft(Z+ + W, lam / rho)
    W+ = W + Z+ - Y+ .

Measured from the sweeps' iterate (one thread, default ``tol``), with the
penalty ``rho`` rebalanced so that the primal residual ``||Z - Y||`` and the
dual one ``rho ||Y+ - Y||`` stay within a factor 2: the Gaussian problem
above is certified in about 60 s of iterations (77 s in all when they ran
alone; the sweeps alone take 60 s for their 500 sweeps), and so are Gaussian
problems of 120 and 200 features at 0.15 times the largest off-diagonal
entry (optima of rank 24 and 40), where the proximal point iterations left
gaps of 4e-4 and 9e-4.  On small optima of rank 2-3 the proximal point
iterations are often faster (Gaussian n = 80 at 0.05 times the largest
off-diagonal entry: 0.54 s against 2.3 s), which is why ``dspca_bca`` runs
both, taking turns (see ``_polish`` there).
Where the optimum is not strictly complementary (the rank-2 correlation
problem of the README) both are sublinear.

The bounds hold whatever the iterations' accuracy.  Every ``Z`` is PSD with
trace one, so its objective is a lower bound; ``U = -rho W`` clipped to the
box ``|U_ij| <= lam`` is dual feasible, so ``lambda_max(Sigma + U)`` (with the
eigensolver's rounding margin) is an upper bound.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import scipy.linalg as sla

from ._certificate import BestBounds
from ._proximal import BOUND_WORK, WorkMeter, _simplex

# Start of rho (largest variance 1): it settled at 16-32 on Gaussian n = 500 from 1 or 10.
RHO_START = 10.0
# Bounds and the rho rebalance every 10 iterations.
CHECK_EVERY = 10
# Rebalance at residuals 2x apart (n = 500, 1,500 iterations: gap 1.7e-5; 10: 5.6e-4).
BALANCE = 2.0
# Cost model (spca/_proximal.py): a divide-and-conquer eigendecomposition, 0.09-0.41 sweeps.
ITERATION_WORK = 0.2
# ... plus this times r / m for rebuilding Z (2 m^2 r flops).
RANK_WORK = 0.2


@dataclass
class ADMMState:
    """Where the iterations stand: ``Y``, the scaled multiplier ``W``, the
    penalty ``rho``, the iterations ``k`` and the work done in all (sweep
    equivalents)."""

    Y: np.ndarray
    W: np.ndarray
    rho: float
    k: int = 0
    work: float = 0.0


def _project(A: np.ndarray) -> tuple[np.ndarray, int]:
    """``Pi_Delta(A)`` and its rank (``A`` is overwritten)."""
    # LAPACK's divide and conquer, in place: 24 ms against numpy.linalg.eigh's
    # 29 ms at n = 478 (one thread)
    a, Q = sla.eigh(A, driver="evd", overwrite_a=True, check_finite=False)
    p = _simplex(a)
    keep = p > 0
    Qk = Q[:, keep]
    return (Qk * p[keep]) @ Qk.T, int(keep.sum())


def admm_dual(Sigma: np.ndarray, lam: float, Z0: np.ndarray, U0: np.ndarray, *,
              work: float, lower: float = -np.inf, tol: float = 0.0,
              state: ADMMState | None = None, max_iter: int = 1_000_000,
              time_limit: Any = None, verbose: bool = False
              ) -> tuple[float, np.ndarray | None, float, np.ndarray | None, ADMMState]:
    """Better bounds on ``phi`` from a primal ``Z0`` and a box dual ``U0``.

    Runs the iterations of the module docstring from ``Y = Z0`` and
    ``W = -U0 / rho`` (``U0`` clipped to the box), or from ``state`` (the
    previous call's, which then replaces them), for at most ``work`` sweep
    equivalents of work (see the cost model above; checked every iteration),
    ``max_iter`` iterations or until the caller's ``time_limit`` (a
    :class:`spca._limits.TimeLimit`, checked every iteration) has passed, or
    until the relative gap between the best upper bound and
    ``max(lower, best primal value)`` is within ``tol``.  ``Z0`` must be PSD
    with trace one; neither it nor ``U0`` is modified.  Bounds are evaluated
    every ``CHECK_EVERY`` iterations and at the last one.

    Returns ``(upper, D, value, Z, state)`` as ``proximal_dual`` does: the
    best upper bound of this call and its matrix ``D = Sigma + U``
    (symmetric, ``|U_ij| <= lam``; ``inf`` and ``None`` if no bound was
    evaluated), the best primal value with its feasible ``Z`` (``-inf`` and
    ``None`` likewise), and the state to resume from.
    """
    if state is None:
        rho = RHO_START
        U = np.clip(0.5 * (U0 + U0.T), -lam, lam)
        state = ADMMState(Y=np.array(Z0, dtype=np.float64), W=-U / rho, rho=rho)
    Y, W, rho, k = state.Y, state.W, state.rho, state.k
    m = Sigma.shape[0]
    meter = WorkMeter(state.work + work, time_limit, done=state.work)
    best = BestBounds()
    for it in range(max_iter):
        Z, rank = _project(Y - W + Sigma / rho)
        Y_old = Y
        A = Z + W
        Y = np.sign(A) * np.maximum(np.abs(A) - lam / rho, 0.0)
        W = A - Y
        k += 1
        meter.add(ITERATION_WORK + RANK_WORK * rank / m)
        out_of_time = meter.exhausted()
        if k % CHECK_EVERY and not out_of_time and it < max_iter - 1:
            continue
        ub, value = best.update(Sigma, lam, Sigma + np.clip(-rho * W, -lam, lam), Z)
        meter.add(BOUND_WORK)
        gap = best.gap(lower)
        primal = float(np.linalg.norm(Z - Y))
        dual = rho * float(np.linalg.norm(Y - Y_old))
        if verbose:
            print(f"  admm {k:5d}  rho={rho:.3g}  rank={rank}  value={value:.10g}  "
                  f"upper={ub:.10g}  gap={gap:.2e}  residuals {primal:.1e} / {dual:.1e}")
        if gap <= tol or out_of_time:
            break
        # rebalance: W is the multiplier scaled by 1 / rho
        if primal > BALANCE * dual:
            rho *= 2.0
            W = W / 2.0
        elif dual > BALANCE * primal:
            rho /= 2.0
            W = W * 2.0
    return best.upper, best.D, best.value, best.Z, ADMMState(Y, W, rho, k, meter.done)
