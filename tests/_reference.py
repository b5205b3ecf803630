"""Reference computations shared by the solver tests (importable via pytest's pythonpath)."""

import numpy as np


def sdp_value(Sigma, lam):
    """phi = max Tr(Sigma Z) - lam ||Z||_1, Z PSD, Tr Z = 1, by Clarabel (interior point)."""
    import cvxpy as cp

    n = Sigma.shape[0]
    Z = cp.Variable((n, n), PSD=True)
    prob = cp.Problem(
        cp.Maximize(cp.trace(Sigma @ Z) - lam * cp.sum(cp.abs(Z))), [cp.trace(Z) == 1]
    )
    prob.solve(solver=cp.CLARABEL)
    assert prob.status == cp.OPTIMAL
    return prob.value


def half_max_offdiag(Sigma):
    """The lam of the benchmarks: half the largest off-diagonal |Sigma_ij|."""
    return 0.5 * np.abs(Sigma - np.diag(np.diag(Sigma))).max()


def high_rank_problem():
    """Gaussian n = 60 at lam = a tenth of the largest off-diagonal entry.

    Its optimal Z has rank about 3 (Clarabel: eigenvalues 0.72, 0.13, 0.11,
    0.03, 0.01): no rank-one certificate exists, the support refinement
    cannot certify it, and the sweeps alone leave a gap of about 6e-4 after
    500 of them.
    """
    from spca.datasets import make_gaussian_covariance

    Sigma = make_gaussian_covariance(60, random_state=0)
    return Sigma, 0.2 * half_max_offdiag(Sigma)


def project_rows_breakpoints(R0, xs, lo, hi):
    """Rows ``clip(r0 - theta xs, lo, hi)`` orthogonal to ``xs`` where the box
    meets that hyperplane, in NumPy: ``g(theta) = r(theta) . xs`` evaluated at
    every breakpoint (where a coordinate with ``xs_k != 0`` reaches a bound)
    and its zero interpolated on the interval where it changes sign; ``theta``
    at the first or last breakpoint when ``g`` keeps one sign."""
    nz = np.flatnonzero(xs)
    if nz.size == 0:
        return np.clip(R0, lo, hi)
    x = xs[nz]
    r0, lo_s, hi_s = R0[:, nz], lo[:, nz], hi[:, nz]
    q, s = r0.shape
    bp = np.sort(np.concatenate([(r0 - lo_s) / x, (r0 - hi_s) / x], axis=1), axis=1)
    g = np.clip(r0[:, None, :] - bp[:, :, None] * x, lo_s[:, None, :], hi_s[:, None, :]) @ x
    j = (g > 0).sum(axis=1)
    theta = np.empty(q)
    for i in range(q):
        if j[i] == 0:
            theta[i] = bp[i, 0]
        elif j[i] == 2 * s:
            theta[i] = bp[i, -1]
        else:
            t0, t1 = bp[i, j[i] - 1], bp[i, j[i]]
            g0, g1 = g[i, j[i] - 1], g[i, j[i]]
            frac = g0 / (g0 - g1) if g0 > g1 else 0.0
            theta[i] = t0 + min(max(frac, 0.0), 1.0) * (t1 - t0)
    return np.clip(R0 - theta[:, None] * xs, lo, hi)


def project_rows_bisection(R0, xs, lo, hi, n_iter=200):
    """The rows of :func:`project_rows_breakpoints` with ``theta`` found by
    bisection on ``g(theta) = r(theta) . xs`` (an independent route)."""
    ax = np.abs(xs)
    if not np.any(ax > 0):
        return np.clip(R0, lo, hi)
    bound = (np.abs(R0).max() + np.abs(lo).max() + np.abs(hi).max()) / ax[ax > 0].min() + 1.0
    a = np.full(R0.shape[0], -bound)
    b = np.full(R0.shape[0], bound)
    for _ in range(n_iter):
        mid = 0.5 * (a + b)
        pos = np.clip(R0 - mid[:, None] * xs, lo, hi) @ xs > 0
        a = np.where(pos, mid, a)
        b = np.where(pos, b, mid)
    return np.clip(R0 - (0.5 * (a + b))[:, None] * xs, lo, hi)
