"""DSPCA by Nesterov's smoothing: the first-order method of d'Aspremont et al.

This is the baseline that Zhang & El Ghaoui (NIPS 2011) compare block
coordinate ascent against: the method of Section 4 of d'Aspremont, El Ghaoui,
Jordan & Lanckriet (SIAM Review 2007).  The dual

    phi = min  lambda_max(Sigma + U)   over U symmetric, |U_ij| <= lam

is smoothed into ``f_mu(U) = mu log Tr exp((Sigma + U) / mu)``, whose gradient
``Z(U) = exp((Sigma + U) / mu) / Tr exp((Sigma + U) / mu)`` is a primal
feasible point (PSD, trace one) and is Lipschitz with constant ``1 / mu`` in
the Frobenius norm, and ``f_mu`` is minimised over the box by Nesterov's
optimal scheme for smooth functions (Nesterov, Math. Program. 2005, Section 3)
with the prox function ``||U||_F^2 / 2``.  The weighted average of the
gradients is the primal iterate.

Every bound reported is rigorous: a primal value is the DSPCA objective of a
PSD trace-one matrix, and a dual value is a largest eigenvalue from LAPACK plus
the rounding margin of :func:`spca._certificate.lambda_max_upper`.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import scipy.linalg as sla
from numpy.typing import ArrayLike

from ._bca import (
    ConvergenceWarning,
    DSPCAResult,
    _build_result,
    _empty_result,
    _screen,
    stopwatch,
)
from ._certificate import (
    EPS,
    Certificate,
    dspca_objective,
    lambda_max_upper,
    relative_gap,
    with_margin,
)
from ._limits import STATUS_OPTIMAL, STATUS_TIME_LIMIT, STATUS_WORK_LIMIT, TimeLimit
from ._validation import (
    check_bool,
    check_int,
    check_lam,
    check_positive,
    check_psd,
    check_tol,
    dense_block,
)

__all__ = ["dspca_first_order"]

# Eigenvalues more than WINDOW * mu below the largest get weight
# exp(-WINDOW) < 3e-20 in exp((Sigma + U) / mu) / Tr(...) and are dropped.
WINDOW = 45.0
# The dual bound lambda_max(Sigma + Y_k) of Nesterov's projected-gradient
# point costs an extra eigenvalue computation; it is taken every CHECK_EVERY
# iterations (the bound at U_k comes free with the iteration's eigenproblem).
CHECK_EVERY = 10
# Consecutive iterations recorded in `history` are about this ratio apart.
RECORD_RATIO = 10.0 ** 0.1


def _mixing_weight(m: int) -> float:
    """Weight ``delta`` of ``I / m`` mixed into the returned Z.

    ``(1 - delta) Z + delta I / m`` is positive definite with smallest
    eigenvalue ``>= delta / m``, far enough from zero for a Cholesky
    factorisation (so that ``objective * Z`` is a valid warm start for
    :func:`spca.dspca_bca`), and its objective differs from that of ``Z`` by
    ``delta * (obj(Z) - obj(I / m))``, i.e. by about ``1e-10`` relative.
    """
    return min(1e-6, max(1e-10, 10.0 * m * m * EPS))


class _Smoother:
    """The smoothed dual at one point: top of the spectrum and the gradient.

    Only the eigenpairs within ``WINDOW * mu`` of the largest eigenvalue
    carry weight, so a partial eigendecomposition (LAPACK ``syevr`` for the
    top ``k`` pairs) is used, ``k`` adapted from the previous iteration;
    when ``k`` would exceed a third of the spectrum the full ``syevd`` is
    cheaper.  This is the paper's one eigendecomposition per iteration,
    restricted to the part of it that the matrix exponential needs.
    """

    def __init__(self, m: int) -> None:
        self.m = m
        self.k = min(m, 2)

    def __call__(self, A: np.ndarray, mu: float) -> tuple[float, np.ndarray]:
        """Return ``(lambda_max(A), B)`` with ``Z(A) = B B'`` (PSD, trace one).

        ``lambda_max`` is the computed value, without rounding margin.
        """
        m = self.m
        k = self.k
        while True:
            if 3 * k >= m:
                w, V = np.linalg.eigh(A)
                break
            w, V = sla.eigh(A, subset_by_index=[m - k, m - 1], check_finite=False)
            # Complete once the smallest computed eigenvalue is outside the
            # window: every eigenvalue below it is further out.
            if (w[0] - w[-1]) / mu <= -WINDOW:
                break
            k = min(m, 2 * k)
        t = (w - w[-1]) / mu
        inside = t > -WINDOW
        n_in = int(inside.sum())
        self.k = min(m, n_in + 2)
        p = np.exp(t[inside])
        p /= p.sum()
        B = V[:, inside] * np.sqrt(p)
        return float(w[-1]), B


def dspca_first_order(
    Sigma: ArrayLike,
    lam: float,
    *,
    tol: float = 1e-3,
    max_iter: int | None = None,
    max_time: float | None = None,
    eliminate: bool = True,
    mu: float | None = None,
    verbose: bool = False,
) -> DSPCAResult:
    r"""Sparse PCA by the DSPCA relaxation, solved by the first-order method of
    d'Aspremont et al. (2007).

    Solves

    .. code-block:: text

        phi = max  Tr(Sigma Z) - lam * sum_ij |Z_ij|   over Z PSD, Tr Z = 1
            = min  lambda_max(Sigma + U)                over U symmetric, |U_ij| <= lam

    by minimising the smoothed dual

    .. code-block:: text

        f_mu(U) = mu * log Tr exp((Sigma + U) / mu),
        lambda_max(Sigma + U) <= f_mu(U) <= lambda_max(Sigma + U) + mu log n

    over the box ``|U_ij| <= lam`` with Nesterov's optimal method for smooth
    minimisation, and stops when a certified relative duality gap is below
    ``tol``. This is the baseline of Zhang & El Ghaoui (2011), Figure 1.

    Parameters
    ----------
    Sigma : array-like or scipy.sparse matrix of shape (n_features, n_features)
        Symmetric positive semidefinite covariance matrix (validated, screened
        and converted exactly as by :func:`spca.dspca_bca`; the caller's array
        is not modified).
    lam : float
        Sparsity penalty, ``lam >= 0``.
    tol : float, default=1e-3
        Target relative duality gap ``(upper_bound - objective) / upper_bound``.
    max_iter : int, optional
        Maximum number of iterations. By default ``2 n lam / sqrt(mu eps)``,
        the number after which the complexity bound guarantees the target gap
        for the default ``mu`` (see Notes), so that in exact arithmetic the
        default never stops early.
    max_time : float, optional
        Wall-clock limit in seconds, checked after every iteration: the only
        clock the solver reads (a result it ends has ``status ==
        "time_limit"``).
    eliminate : bool, default=True
        Apply the safe feature elimination of Zhang & El Ghaoui (Theorem 1)
        first and solve the relaxation on the features with
        ``Sigma_ii > lam`` only, as :func:`spca.dspca_bca` does. With
        ``False`` the relaxation is solved on all features.
    mu : float, optional
        Smoothing parameter, in the units of ``Sigma``. By default
        ``mu = eps / (2 log n)`` with ``eps = tol * (max_i Sigma_ii - lam)``
        (see Notes).
    verbose : bool, default=False
        Print the bounds at the iterations recorded in ``history``.

    Returns
    -------
    result : DSPCAResult
        See :class:`spca.DSPCAResult`. For this method ``beta`` holds the
        smoothing parameter ``mu``, ``n_sweeps`` the number of iterations,
        ``n_qp_passes`` is 0, ``primal`` and ``dual`` are ``"first-order"``,
        ``history`` holds ``(iteration, mu, lower, upper)`` with the best
        bounds found up to that iteration, and ``X_reduced`` is
        ``objective * Z_reduced`` (positive definite: a valid warm start
        ``X0`` for :func:`spca.dspca_bca`).

    Raises
    ------
    ValueError
        If ``Sigma`` is not square, not symmetric, holds NaN or inf, has a
        negative diagonal entry or is not positive semidefinite on the
        features solved over; if ``lam < 0``, ``tol`` is outside (0, 1),
        ``max_iter < 1``, or ``max_time`` or ``mu`` is not positive.
    TypeError
        If an argument has the wrong type.

    Warns
    -----
    ConvergenceWarning
        When ``max_iter`` or ``max_time`` is reached with ``gap > tol``.
    EmptyProblemWarning
        When no feature has ``Sigma_ii > lam`` (the result is the empty
        component, as for :func:`spca.dspca_bca`).

    Notes
    -----
    *Algorithm.* With ``L = 1 / mu`` the Lipschitz constant of ``Z(U)`` in
    the Frobenius norm and ``Pi`` the projection onto the box (a clip), the
    iteration is, from ``U_0 = 0`` (the centre of the prox function
    ``||U||_F^2 / 2``),

    .. code-block:: text

        Z_k     = exp((Sigma + U_k) / mu) / Tr exp((Sigma + U_k) / mu)
        Y_k     = Pi(U_k - Z_k / L)
        W_k     = Pi(-(1 / L) sum_{i<=k} (i + 1) / 2 Z_i)
        U_{k+1} = 2 / (k + 3) W_k + (k + 1) / (k + 3) Y_k
        Xhat_k  = sum_{i<=k} 2 (i + 1) / ((k + 1)(k + 2)) Z_i

    ``Z_k`` costs one (partial, see below) symmetric eigendecomposition,
    shifted by the largest eigenvalue; everything else is ``O(n^2)``.

    *Smoothing.* For a target absolute accuracy ``eps`` the paper takes
    ``mu = eps / (2 log n)``, so that the smoothing error ``mu log n`` is
    ``eps / 2``. Here ``eps = tol * phi0`` with ``phi0 = max_i Sigma_ii - lam``
    (after elimination), the value of ``Z = e_i e_i'`` and a lower bound on
    ``phi``: reaching an absolute gap ``eps`` then certifies the relative gap
    ``tol``, so the target is met without any continuation or restart in
    ``mu``, and none is done. A caller's ``mu`` is used as is (if
    ``mu log n`` exceeds ``tol * phi`` the gap may stall above ``tol``).

    *Complexity.* Nesterov's bound gives
    ``lambda_max(Sigma + Y_k) - obj(Xhat_k) <= mu log n + 2 n^2 lam^2 / (mu (k + 1)(k + 2))``,
    hence an absolute gap ``eps`` after ``N = 2 n lam sqrt(2 log n) / eps``
    iterations (the default ``max_iter``), each ``O(n^3)``: ``O(n^4 sqrt(log
    n) / eps)`` in all.

    *Certificate and stopping rule.* After every iteration the lower bound
    is the best objective of ``Z_k`` and ``Xhat_k`` so far (any PSD trace-one
    matrix is feasible), and the upper bound the best of
    ``lambda_max(Sigma + U_k)`` (from the iteration's eigendecomposition)
    and, every 10 iterations, ``lambda_max(Sigma + Y_k)``, each plus the
    rounding margin of :func:`spca._certificate.lambda_max_upper`. The solver
    stops at the first iteration with ``(upper - lower) / upper <= tol``, or
    at ``max_iter`` / ``max_time``. ``objective <= phi <= upper_bound`` holds
    whenever it stops.

    *Implementation details.* Eigenvalues more than ``45 mu`` below the
    largest have weight below ``3e-20`` in ``Z`` and are dropped, so only
    the top of the spectrum is computed (LAPACK ``syevr``) when it is small;
    ``Z`` stays exactly PSD with trace one. The returned ``Z`` is
    ``(1 - delta) Z_best + delta I / n`` with ``delta`` about ``1e-10``, which
    is positive definite; ``objective`` is computed from it. ``loadings``
    and ``support`` follow the rule of :func:`spca.dspca_bca` for a
    non-polished ``Z`` (leading eigenvector of ``Z``, entries below
    ``1e-3`` of the largest set to zero).

    References
    ----------
    A. d'Aspremont, L. El Ghaoui, M. I. Jordan and G. R. G. Lanckriet, "A
    Direct Formulation for Sparse PCA Using Semidefinite Programming", SIAM
    Review 49(3), 2007, Section 4.
    Y. Nesterov, "Smooth minimization of non-smooth functions", Mathematical
    Programming 103, 2005.
    Y. Zhang and L. El Ghaoui, "Large-Scale Sparse Principal Component Analysis
    with Application to Text Data", NIPS 2011.

    Examples
    --------
    >>> import numpy as np
    >>> from spca import dspca_first_order
    >>> rng = np.random.default_rng(0)
    >>> F = rng.standard_normal((100, 20))
    >>> Sigma = F.T @ F / 100
    >>> res = dspca_first_order(Sigma, lam=0.3)
    >>> bool(res.converged), res.gap <= 1e-3
    (True, True)
    """
    t_start = stopwatch()
    lam = check_lam(lam)
    tol = check_tol(tol)
    if max_iter is not None:
        max_iter = check_int(max_iter, "max_iter")
    if max_time is not None:
        max_time = check_positive(max_time, "max_time")
    # the caller's limit: the only clock a decision of this solver reads
    limit = TimeLimit(max_time) if max_time is not None else TimeLimit(None, start=0.0)
    if mu is not None:
        mu = check_positive(mu, "mu")
    verbose = check_bool(verbose, "verbose")
    S_in, n, kept = _screen(Sigma, lam, eliminate)
    t_elim = stopwatch()
    if kept.size == 0:
        return _empty_result(n, lam, tol, bool(eliminate), t_start, S_in)

    B = dense_block(S_in, kept)
    check_psd(B, kept)
    # Units where the largest variance is 1 (Z does not change; values and mu
    # scale back by `scale`).
    scale = float(B.diagonal().max())
    S = np.ascontiguousarray(B / scale)
    lam_n = lam / scale
    m = kept.size
    phi0 = 1.0 - lam_n  # objective of e_i e_i' for the largest variance: > 0
    if mu is not None:
        mu_n = mu / scale
    elif m > 1:
        mu_n = tol * phi0 / (2.0 * math.log(m))
    else:
        mu_n = 0.0  # one feature: solved exactly below, nothing to smooth
    if max_iter is None:
        # Nesterov's bound 2 n^2 lam^2 / (mu k^2) on the optimisation error is
        # eps / 2 = tol * phi0 / 2 after 2 n lam / sqrt(mu eps) iterations
        # (= 2 n lam sqrt(2 log n) / eps for the default mu).
        eps = tol * phi0
        max_iter = 1 if m == 1 else max(1, math.ceil(2.0 * m * lam_n / math.sqrt(mu_n * eps)))

    delta = _mixing_weight(m)
    c_identity = float(np.trace(S)) / m - lam_n  # objective of I / m
    i0 = int(np.argmax(np.diag(S)))
    Z_best = np.zeros((m, m))
    Z_best[i0, i0] = 1.0
    lower = (1.0 - delta) * phi0 + delta * c_identity  # of the mixed e_i e_i'
    U_best = np.zeros((m, m))
    upper = np.inf
    history: list[tuple[int, float, float, float]] = []
    t_setup = stopwatch()

    if m == 1:
        # Z = [[1]] and U = [[-lam]] are optimal: phi = Sigma_11 - lam.
        U_best[0, 0] = -lam_n
        upper = lambda_max_upper(S + U_best)
        it = 0
        history.append((0, mu_n * scale, lower * scale, upper * scale))
    else:
        smoother = _Smoother(m)
        U = np.zeros((m, m))          # U_k (prox centre U_0 = 0)
        G = np.zeros((m, m))          # sum_i (i + 1) / 2 Z_i
        A = np.empty((m, m))
        Y = np.empty((m, m))
        W = np.empty((m, m))
        it = 0
        next_record = 1
        while True:
            it += 1
            k = it - 1  # the paper's iteration index
            np.add(S, U, out=A)
            margin = float(m * EPS * np.linalg.norm(A))
            top, Bk = smoother(A, mu_n)
            Z = Bk @ Bk.T
            if top + margin < upper:
                upper = top + margin
                U_best[...] = U
            # primal candidates: the gradient Z_k and the average Xhat_k
            val = (1.0 - delta) * dspca_objective(S, Z, lam_n) + delta * c_identity
            if val > lower:
                lower = val
                Z_best[...] = Z
            # Y_k = Pi(U_k - mu Z_k)
            np.multiply(Z, -mu_n, out=Y)
            Y += U
            np.clip(Y, -lam_n, lam_n, out=Y)
            # W_k = Pi(U_0 - mu sum_i (i + 1) / 2 Z_i), U_0 = 0
            G += (0.5 * (k + 1)) * Z
            np.multiply(G, -mu_n, out=W)
            np.clip(W, -lam_n, lam_n, out=W)
            c_avg = 4.0 / ((k + 1) * (k + 2))
            val = (1.0 - delta) * c_avg * dspca_objective(S, G, lam_n) + delta * c_identity
            if val > lower:
                lower = val
                np.multiply(G, c_avg, out=Z_best)
            if it % CHECK_EVERY == 0:
                up_y = lambda_max_upper(S + Y)
                if up_y < upper:
                    upper = up_y
                    U_best[...] = Y
            # U_{k+1} = 2 / (k + 3) W_k + (k + 1) / (k + 3) Y_k
            np.multiply(W, 2.0 / (k + 3), out=U)
            U += ((k + 1) / (k + 3)) * Y

            gap = relative_gap(lower, upper)
            if gap <= tol:
                # Confirm with the objective of the matrix actually returned.
                lower = dspca_objective(S, (1.0 - delta) * Z_best + (delta / m) * np.eye(m), lam_n)
                gap = relative_gap(lower, upper)
            done = gap <= tol or it >= max_iter or limit.expired()
            if it >= next_record or done:
                # about ten records per decade, at multiples of CHECK_EVERY
                # from iteration 10 on (where the Y_k bound is included)
                next_record = it + 1 if it < 10 else CHECK_EVERY * math.ceil(
                    it * RECORD_RATIO / CHECK_EVERY
                )
                history.append((it, mu_n * scale, lower * scale, upper * scale))
                if verbose:
                    print(
                        f"iter {it:7d}  mu={mu_n * scale:.2e}  lower={lower * scale:.10g}"
                        f"  upper={upper * scale:.10g}  gap={gap:.2e}"
                        f"  ({stopwatch() - t_start:.2f}s)"
                    )
            if done:
                break

    t_end = stopwatch()
    Z_ret = (1.0 - delta) * Z_best
    Z_ret[np.diag_indices(m)] += delta / m
    Z_ret = 0.5 * (Z_ret + Z_ret.T)
    lower = dspca_objective(S, Z_ret, lam_n)
    cert = Certificate(
        lower=lower, upper=upper, Z=Z_ret, x=None, primal="first-order",
        dual="first-order", barrier_lower=lower, barrier_upper=upper,
    )
    cert = with_margin(cert, S, lam_n)  # the reported bracket holds in floating point
    status = STATUS_OPTIMAL
    if cert.gap > tol:
        why = "max_time" if it < max_iter else "max_iter"
        status = STATUS_TIME_LIMIT if it < max_iter else STATUS_WORK_LIMIT
        warnings.warn(
            f"dspca_first_order stopped at {why} after {it} iterations with relative "
            f"gap {cert.gap:.3e} > tol = {tol:g}; increase {why} or tol",
            ConvergenceWarning,
            stacklevel=2,
        )
    # Sigma + U of the best dual point (symmetrised), in the layout that
    # dspca_bca uses for its dual columns.
    D = S + 0.5 * (U_best + U_best.T)
    return _build_result(
        cert=cert, S=S, scale=scale, X=lower * Z_ret, M=D, kept=kept, n=n, lam=lam,
        tol=tol, beta=mu_n * scale, eliminate=bool(eliminate), sweeps=it, passes=0,
        history=history,
        timings={
            "elimination": t_elim - t_start,
            "setup": t_setup - t_elim,
            "iterations": t_end - t_setup,
            "total": t_end - t_start,
        },
        status=status,
    )
