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
