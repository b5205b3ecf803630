"""Compiled kernels of the block coordinate ascent (BCA) solver for DSPCA.

The Python layer (``spca/_bca.py``) validates, eliminates features, scales and
allocates; the functions here only run loops over typed memoryviews.

Notation (Zhang & El Ghaoui 2011, Algorithm 1).  For column ``j`` of the barrier
iterate ``X`` let ``Y = X[\\j, \\j]``, ``s = Sigma[\\j, j]``, ``t = Tr Y`` and
``c = Sigma[j, j] - lam - t``.  One column update

1. solves the box QP ``R2 = min u' Y u  s.t.  |u - s|_inf <= lam`` by cyclic
   coordinate descent, warm-started from the previous sweep's ``u``;
2. takes ``tau``, the positive root of ``tau^3 + c tau^2 - beta tau - R2 = 0``;
3. sets ``X[\\j, j] = Y u / tau`` and ``X[j, j] = beta / tau + R2 / tau^2``
   (equal to ``c + tau`` at the root, but free of cancellation), so that the
   Schur complement of ``Y`` in the new ``X`` is exactly ``beta / tau > 0``.

The vector ``u`` is the ``j``-th column of ``Sigma + U`` for a dual-feasible
``U`` (``|U_ij| <= lam``); the rows of the array ``M`` keep these vectors
between sweeps, which both warm-starts the QP and yields a duality bound.
"""
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport fabs, sqrt, cbrt
from libc.stdlib cimport free, malloc
from scipy.linalg.cython_blas cimport daxpy, ddot, dgemv, dger, dtrsv
from scipy.linalg.cython_lapack cimport dpotrf, dpotri

import numpy as np


cdef inline double _clip(double x, double lo, double hi) noexcept nogil:
    """Return x clipped to the interval [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x


cdef double _cubic_root(double c, double beta, double r2) noexcept nogil:
    """Return the positive root of f(tau) = tau^3 + c tau^2 - beta tau - r2.

    Requires beta > 0 and r2 >= 0, under which the root is unique.  Newton's
    method started to the right of the root, where f is convex and increasing,
    decreases monotonically to it; it stops when a step no longer decreases.
    """
    cdef double hi, tq, tau, f, fp, step
    cdef int _it
    # f(hi) >= 0 for hi = max(-c, 0) + sqrt(beta) + cbrt(r2) (see the tests).
    hi = (-c if c < 0.0 else 0.0) + sqrt(beta) + cbrt(r2)
    if c > 0.0:
        # f(tau) >= c tau^2 - beta tau - r2, whose positive root is tighter.
        tq = (beta + sqrt(beta * beta + 4.0 * c * r2)) / (2.0 * c)
        if tq < hi:
            hi = tq
    tau = hi
    for _it in range(200):
        f = ((tau + c) * tau - beta) * tau - r2
        if f <= 0.0:
            break
        fp = (3.0 * tau + 2.0 * c) * tau - beta
        if fp <= 0.0:
            break
        step = f / fp
        if step <= 0.0 or tau - step >= tau:
            break
        if tau - step <= 0.0:
            tau = 0.5 * tau
        else:
            tau = tau - step
    return tau


cdef Py_ssize_t _box_qp_cd(
    const double[:, ::1] Y,  # IN   symmetric PSD matrix; row/column `skip` ignored
    Py_ssize_t skip,          # IN   index left out of the QP (-1: none)
    const double[::1] s,      # IN   box centres
    double lam,               # IN   box half-width
    double[::1] u,            # IN/OUT iterate, u[skip] is ignored and left as is
    double[::1] w,            # OUT  Y u (restricted to i != skip)
    Py_ssize_t max_passes,
    double tol,
) noexcept nogil:
    """Coordinate descent for min u'Yu s.t. |u - s|_inf <= lam; return passes.

    ``w`` is recomputed from ``u`` at the start, then kept equal to ``Y u`` by
    one axpy per coordinate that moves.  The loop stops after a pass in which no
    coordinate moved by more than ``tol * max(lam, 1e-300)``, or after
    ``max_passes`` passes.
    """
    cdef Py_ssize_t n = Y.shape[0]
    cdef Py_ssize_t i, k, p, nnz = 0
    cdef int n_int = <int> n, one = 1
    cdef double alpha = 1.0, zero = 0.0
    cdef double saved = 0.0, d, new, delta, max_delta
    cdef double thresh = tol * (lam if lam > 1e-300 else 1e-300)

    if skip >= 0:
        saved = u[skip]
        u[skip] = 0.0
    for i in range(n):
        if u[i] != 0.0:
            nnz += 1
    # w = Y u, by a gemv when u is dense and by axpys over its nonzeros otherwise.
    if nnz * 4 > n:
        # Y is symmetric and C-ordered, so the Fortran gemv without transpose
        # computes Y' u = Y u.
        dgemv(b"N", &n_int, &n_int, &alpha, &Y[0, 0], &n_int, &u[0], &one,
              &zero, &w[0], &one)
    else:
        for i in range(n):
            w[i] = 0.0
        for k in range(n):
            if u[k] != 0.0:
                d = u[k]
                # w += u[k] * Y[k, :]
                daxpy(&n_int, &d, &Y[k, 0], &one, &w[0], &one)

    for p in range(max_passes):
        max_delta = 0.0
        for i in range(n):
            if i == skip:
                continue
            d = Y[i, i]
            if d > 0.0:
                new = _clip(u[i] - w[i] / d, s[i] - lam, s[i] + lam)
            elif w[i] - d * u[i] > 0.0:
                new = s[i] - lam
            else:
                new = s[i] + lam
            delta = new - u[i]
            if delta != 0.0:
                u[i] = new
                # w += delta * Y[i, :]
                daxpy(&n_int, &delta, &Y[i, 0], &one, &w[0], &one)
                if fabs(delta) > max_delta:
                    max_delta = fabs(delta)
        if max_delta <= thresh:
            p += 1
            break
    else:
        p = max_passes
    if skip >= 0:
        u[skip] = saved
    return p


cdef inline double _dot_skip(const double[::1] a, const double[::1] b,
                             Py_ssize_t skip) noexcept nogil:
    """Return sum_{i != skip} a[i] * b[i]."""
    cdef int n_int = <int> a.shape[0], one = 1
    cdef double out = ddot(&n_int, &a[0], &one, &b[0], &one)
    if skip >= 0:
        out -= a[skip] * b[skip]
    return out


cdef inline void _lower_solve(double[:, ::1] L, Py_ssize_t b, double[::1] x,
                              bint transposed) noexcept nogil:
    """Solve ``L x = x`` (``transposed``: ``L' x = x``) in place for the lower
    triangular leading ``b`` by ``b`` block of the C-ordered ``L``.

    Read as a Fortran array, ``L`` is its transpose, an upper triangle with
    leading dimension ``L.shape[1]``, so the BLAS solve takes the other
    ``trans`` flag.
    """
    cdef int n_int = <int> b, lda = <int> L.shape[1], one = 1
    if b == 0:
        return
    dtrsv(b"U", b"N" if transposed else b"T", b"N", &n_int, &L[0, 0], &lda, &x[0], &one)


cdef inline bint _ws_add(const double[:, ::1] H, Py_ssize_t j, double hjj, Py_ssize_t c,
                         double[:, ::1] GB, double[:, ::1] L, double[::1] lvec,
                         Py_ssize_t[::1] bidx, Py_ssize_t *b, Py_ssize_t *nfree,
                         signed char[::1] inb) noexcept nogil:
    """Add coordinate ``c`` to the working set: its row of ``G`` and a new row of
    the Cholesky factor ``L`` of ``G_BB`` (``O(n + b^2)``); 0 if ``G_BB`` would
    lose definiteness or the work arrays are full."""
    cdef Py_ssize_t n = H.shape[0], bmax = GB.shape[0], bb = b[0], i, a, t, sl
    cdef double coef, d2
    if bb == bmax:
        return 0
    sl = bidx[2 * bmax + nfree[0] - 1]
    coef = H[j, c] / hjj
    for i in range(n):
        GB[sl, i] = H[c, i] - coef * H[j, i]
    # L l = G_B,c by forward substitution; the new diagonal is sqrt(G_cc - l'l).
    d2 = GB[sl, c]
    for a in range(bb):
        lvec[a] = GB[bidx[bmax + a], c]
    _lower_solve(L, bb, lvec, False)
    for a in range(bb):
        d2 -= lvec[a] * lvec[a]
    if not d2 > 1e-12 * GB[sl, c]:
        return 0
    for t in range(bb):
        L[bb, t] = lvec[t]
    L[bb, bb] = sqrt(d2)
    bidx[bb] = c
    bidx[bmax + bb] = sl
    inb[c] = 1
    nfree[0] -= 1
    b[0] = bb + 1
    return 1


cdef inline void _ws_remove(Py_ssize_t p, double[:, ::1] L, Py_ssize_t[::1] bidx,
                            Py_ssize_t *b, Py_ssize_t *nfree,
                            signed char[::1] inb) noexcept nogil:
    """Drop position ``p`` of the working set: delete row and column ``p`` of
    ``G_BB`` from its Cholesky factor by Givens rotations (``O(b^2)``)."""
    cdef Py_ssize_t bmax = L.shape[0], bb = b[0], r, i, t
    cdef double x, y, h, cs, sn, a1, a2
    inb[bidx[p]] = 0
    bidx[2 * bmax + nfree[0]] = bidx[bmax + p]
    nfree[0] += 1
    for r in range(p, bb - 1):
        bidx[r] = bidx[r + 1]
        bidx[bmax + r] = bidx[bmax + r + 1]
        for t in range(r + 2):
            L[r, t] = L[r + 1, t]
    # Rows p..b-2 now reach one column past the diagonal: rotate it away.
    for r in range(p, bb - 1):
        x = L[r, r]
        y = L[r, r + 1]
        h = sqrt(x * x + y * y)
        cs = x / h
        sn = y / h
        for i in range(r, bb - 1):
            a1 = L[i, r]
            a2 = L[i, r + 1]
            L[i, r] = cs * a1 + sn * a2
            L[i, r + 1] = cs * a2 - sn * a1
    b[0] = bb - 1


cdef Py_ssize_t _active_set_finish(
    const double[:, ::1] H,   # IN   inverse of the current X
    Py_ssize_t j,
    const double[::1] s,      # IN   box centres (row j of Sigma)
    double lam,
    double[::1] u,            # IN/OUT QP iterate (feasible, from coordinate descent)
    double[::1] w,            # OUT  Y u: zero on free coordinates
    double[:, ::1] GB,        # work (bmax, n): rows of Y^-1 of the working set
    double[:, ::1] L,         # work (bmax, bmax): Cholesky factor of G_BB
    double[::1] z,            # work (2 bmax,)
    Py_ssize_t[::1] bidx,     # work (3 bmax,): working set, row of GB, free rows
    double[::1] unew,         # work (n,)
    double[::1] ucur,         # work (n,)
    signed char[::1] inb,     # work (n,): 1 if in the working set
    Py_ssize_t max_rounds,
) noexcept nogil:
    """Finish the box QP exactly by a primal active-set method; 1 on success.

    Starting from the feasible ``u`` with working set ``B`` = coordinates at a
    bound, each round minimises ``u'Yu`` with ``u_B`` fixed: the minimiser has
    ``(Y u)_F = 0`` on the free set, so ``u = G[:, B] z`` with ``G = Y^-1`` and
    ``G_BB z = u_B``, and ``z = (Y u)_B`` is the gradient on ``B``.  ``G`` is read
    off ``H = X^-1`` by ``G = H[\\j, \\j] - H[\\j, j] H[j, \\j] / H[j, j]``.  If
    that point leaves the box, the method steps to the first bound met and adds
    it to ``B``; otherwise it drops from ``B`` the coordinate whose gradient has
    the wrong sign (the largest), or stops at the optimum.  Each round lowers
    the objective, so the method is finite; it gives up (returning 0 and
    leaving ``u`` and ``w`` unchanged) after ``max_rounds`` rounds or when the
    working set outgrows the work arrays.

    The rows of ``G`` on ``B`` and the Cholesky factor of ``G_BB`` are updated
    as coordinates enter (``O(n + b^2)``) and leave (``O(b^2)``), so a round
    costs ``O(n b)`` for the new point instead of a refactorisation.
    """
    cdef Py_ssize_t n = H.shape[0], bmax = GB.shape[0]
    cdef Py_ssize_t i, a, c, b = 0, nfree = bmax, _rnd, block, worst, worst_pos
    cdef int n_int = <int> n, one = 1
    cdef double hjj = H[j, j], lo, hi
    cdef double step, tt, d, viol, worst_viol, slack
    cdef double[::1] y = z[bmax:]

    if not lam > 0.0:
        return 0  # the box is a point: coordinate descent is already exact
    for a in range(bmax):
        bidx[2 * bmax + a] = bmax - 1 - a
    c = 0
    for i in range(n):
        ucur[i] = u[i]
        inb[i] = 0
        if i != j and (u[i] == s[i] - lam or u[i] == s[i] + lam):
            c += 1
    if c > bmax:
        return 0  # give up before any work: the start is too far from a small active set
    for i in range(n):
        if i != j and (u[i] == s[i] - lam or u[i] == s[i] + lam):
            if not _ws_add(H, j, hjj, i, GB, L, y, bidx, &b, &nfree, inb):
                return 0
    for _rnd in range(max_rounds):
        # z = G_BB^-1 u_B by two triangular solves, then unew = G[:, B] z.
        for a in range(b):
            z[a] = ucur[bidx[a]]
        _lower_solve(L, b, z, False)
        _lower_solve(L, b, z, True)
        for i in range(n):
            unew[i] = 0.0
        for a in range(b):
            daxpy(&n_int, &z[a], &GB[bidx[bmax + a], 0], &one, &unew[0], &one)
        for a in range(b):
            unew[bidx[a]] = ucur[bidx[a]]
        # Largest feasible step from ucur towards unew.
        step = 1.0
        block = -1
        for i in range(n):
            if i == j or inb[i]:
                continue
            lo = s[i] - lam
            hi = s[i] + lam
            d = unew[i] - ucur[i]
            slack = 1e-13 * (fabs(s[i]) + lam)
            if unew[i] > hi + slack and d > 0.0:
                tt = (hi - ucur[i]) / d
                if tt < step:
                    step = tt
                    block = i
            elif unew[i] < lo - slack and d < 0.0:
                tt = (lo - ucur[i]) / d
                if tt < step:
                    step = tt
                    block = i
        if block >= 0:
            if step < 0.0:
                step = 0.0
            for i in range(n):
                if i != j and not inb[i]:
                    ucur[i] = _clip(ucur[i] + step * (unew[i] - ucur[i]),
                                    s[i] - lam, s[i] + lam)
            ucur[block] = s[block] + lam if unew[block] > s[block] else s[block] - lam
            if not _ws_add(H, j, hjj, block, GB, L, y, bidx, &b, &nfree, inb):
                return 0
            continue
        for i in range(n):
            if i != j and not inb[i]:
                ucur[i] = _clip(unew[i], s[i] - lam, s[i] + lam)
        # Optimal for this working set: check the gradient signs on B.
        worst = -1
        worst_pos = -1
        worst_viol = 0.0
        for a in range(b):
            c = bidx[a]
            # at the upper bound the gradient must be <= 0, at the lower >= 0
            viol = z[a] if ucur[c] > s[c] else -z[a]
            if viol > worst_viol:
                worst_viol = viol
                worst = c
                worst_pos = a
        if worst < 0:
            break
        _ws_remove(worst_pos, L, bidx, &b, &nfree, inb)
    else:
        return 0
    for i in range(n):
        if i != j:
            u[i] = ucur[i]
            w[i] = 0.0
    for a in range(b):
        w[bidx[a]] = z[a]
    return 1


cdef void _matvec_skip(const double[:, ::1] Y, Py_ssize_t skip, double[::1] u,
                       double[::1] w) noexcept nogil:
    """w = Y u with row and column ``skip`` left out (``w[skip]`` is garbage)."""
    cdef int n_int = <int> Y.shape[0], one = 1
    cdef double alpha = 1.0, zero = 0.0, saved = u[skip]
    u[skip] = 0.0
    # Y is symmetric and C-ordered: the Fortran gemv without transpose gives Y u.
    dgemv(b"N", &n_int, &n_int, &alpha, &Y[0, 0], &n_int, &u[0], &one,
          &zero, &w[0], &one)
    u[skip] = saved


cdef double _column_update(
    const double[:, ::1] Sigma,  # IN
    double[:, ::1] X,             # IN/OUT barrier iterate: row and column j rewritten
    double[:, ::1] H,             # IN/OUT X^-1 (shape (0, 0): no exact finish)
    double[:, ::1] M,             # IN/OUT row j holds the QP solution u of column j
    Py_ssize_t j,
    double lam,
    double beta,
    double trace,                 # IN   Tr X before the update
    double[::1] w,                # work (n,): Y u
    double[:, ::1] GB,            # work arrays of the exact finish
    double[:, ::1] Gbb,
    double[::1] z,
    Py_ssize_t[::1] bidx,
    double[::1] unew,
    double[::1] ucur,
    signed char[::1] inb,
    Py_ssize_t max_passes,
    double qp_tol,
    Py_ssize_t max_rounds,
    Py_ssize_t *passes,           # OUT  coordinate-descent passes
    int *exact,                   # OUT  1 if the QP was finished exactly
    double *tau_out,              # OUT  root of the cubic
) noexcept nogil:
    """Update row and column j of X (and H = X^-1) in place; return the new Tr X.

    After the QP, ``w = Y u`` is recomputed from ``Y`` itself, so that the new
    diagonal ``X[j, j] = beta / tau + u'w / tau^2`` makes the Schur complement
    exactly ``beta / tau`` whatever the accuracy of ``H``.  ``H`` is then
    updated by the bordering formula: with ``G = Y^-1 = H[\\j, \\j] - h h' /
    h_jj`` and ``Y^-1 y = u / tau``, the new inverse is
    ``[[G + u u' / (beta tau), -u / beta], [-u' / beta, tau / beta]]``.
    """
    cdef Py_ssize_t n = X.shape[0], i
    cdef int n_int = <int> n, one = 1
    cdef double t, c, r2, tau, inv_tau, xjj, coef
    cdef double[::1] u = M[j]
    cdef bint finish = max_rounds > 0 and H.shape[0] == n

    t = trace - X[j, j]
    c = Sigma[j, j] - lam - t
    exact[0] = 0
    if finish:
        # One pass to find the active set, the exact finish, and more passes
        # only if the finish gave up.
        passes[0] = _box_qp_cd(X, j, Sigma[j], lam, u, w, 1, qp_tol)
        exact[0] = <int> _active_set_finish(H, j, Sigma[j], lam, u, w, GB, Gbb, z,
                                            bidx, unew, ucur, inb, max_rounds)
        if exact[0]:
            _matvec_skip(X, j, u, w)
        elif max_passes > 1:
            passes[0] += _box_qp_cd(X, j, Sigma[j], lam, u, w, max_passes - 1, qp_tol)
    else:
        passes[0] = _box_qp_cd(X, j, Sigma[j], lam, u, w, max_passes, qp_tol)
    r2 = _dot_skip(u, w, j)
    if r2 < 0.0:  # rounding only: Y is positive definite
        r2 = 0.0
    tau = _cubic_root(c, beta, r2)
    inv_tau = 1.0 / tau
    for i in range(n):
        if i != j:
            X[i, j] = w[i] * inv_tau
            X[j, i] = X[i, j]
    xjj = beta * inv_tau + r2 * inv_tau * inv_tau
    X[j, j] = xjj
    u[j] = 0.0
    if finish:
        # H -= h h' / h_jj  (row and column j of H become zero) ...
        for i in range(n):
            unew[i] = H[j, i]
        coef = -1.0 / H[j, j]
        dger(&n_int, &n_int, &coef, &unew[0], &one, &unew[0], &one,
             &H[0, 0], &n_int)
        # ... H += u u' / (beta tau), then the new row and column j.
        coef = inv_tau / beta
        dger(&n_int, &n_int, &coef, &u[0], &one, &u[0], &one, &H[0, 0], &n_int)
        for i in range(n):
            H[i, j] = -u[i] / beta
            H[j, i] = H[i, j]
        H[j, j] = tau / beta
    u[j] = Sigma[j, j] - lam
    tau_out[0] = tau
    return t + xjj


def cubic_root(double c, double beta, double r2):
    """Positive root of tau^3 + c tau^2 - beta tau - r2 (beta > 0, r2 >= 0)."""
    if not beta > 0.0:
        raise ValueError(f"beta must be > 0, got {beta!r}")
    if not r2 >= 0.0:
        raise ValueError(f"r2 must be >= 0, got {r2!r}")
    return _cubic_root(c, beta, r2)


def box_qp(const double[:, ::1] Y, const double[::1] s, double lam,
           double[::1] u, double[::1] w, Py_ssize_t max_passes, double tol,
           Py_ssize_t skip=-1):
    """Run coordinate descent on the box QP in place; return the passes used.

    ``u`` (IN/OUT) is the warm start and the result; ``w`` (OUT) is ``Y u``.
    With ``skip >= 0`` that index is left out of the problem.
    """
    cdef Py_ssize_t p
    with nogil:
        p = _box_qp_cd(Y, skip, s, lam, u, w, max_passes, tol)
    return p


def box_qp_finish(const double[:, ::1] H, Py_ssize_t j, const double[::1] s,
                  double lam, double[::1] u, double[::1] w, Py_ssize_t bmax,
                  Py_ssize_t max_rounds):
    """Exact active-set finish of the box QP of column ``j``; True on success.

    ``H`` is the inverse of the full matrix whose block without ``j`` is the QP
    matrix; ``u`` (IN/OUT, feasible) is the start and the result and ``w`` (OUT)
    is the gradient ``Y u`` implied by ``H`` (zero on free coordinates).
    """
    cdef Py_ssize_t n = H.shape[0], ok
    cdef double[:, ::1] GB = np.empty((bmax, n))
    cdef double[:, ::1] Gbb = np.empty((bmax, bmax))
    cdef double[::1] z = np.empty(2 * bmax)
    cdef Py_ssize_t[::1] bidx = np.empty(3 * bmax, dtype=np.intp)
    cdef double[::1] unew = np.empty(n)
    cdef double[::1] ucur = np.empty(n)
    cdef signed char[::1] inb = np.empty(n, dtype=np.int8)
    with nogil:
        ok = _active_set_finish(H, j, s, lam, u, w, GB, Gbb, z, bidx, unew, ucur, inb,
                                max_rounds)
    return bool(ok)


cdef class Workspace:
    """Work arrays of the column update, allocated once per solve.

    ``bmax`` bounds the active set that the exact QP finish will handle.
    """
    cdef double[::1] w
    cdef double[:, ::1] GB
    cdef double[:, ::1] Gbb
    cdef double[::1] z
    cdef Py_ssize_t[::1] bidx
    cdef double[::1] unew
    cdef double[::1] ucur
    cdef signed char[::1] inb

    def __init__(self, Py_ssize_t n, Py_ssize_t bmax):
        bmax = max(1, min(bmax, n))
        self.w = np.empty(n)
        self.GB = np.empty((bmax, n))
        self.Gbb = np.empty((bmax, bmax))
        self.z = np.empty(2 * bmax)
        self.bidx = np.empty(3 * bmax, dtype=np.intp)
        self.unew = np.empty(n)
        self.ucur = np.empty(n)
        self.inb = np.empty(n, dtype=np.int8)


def column_update(const double[:, ::1] Sigma, double[:, ::1] X, double[:, ::1] H,
                  double[:, ::1] M, Py_ssize_t j, double lam, double beta,
                  double trace, *, Workspace work, Py_ssize_t max_passes, double qp_tol,
                  Py_ssize_t max_rounds):
    """One row/column update in place; return ``(trace, tau, passes, exact)``.

    Pass ``H`` of shape (0, 0) or ``max_rounds=0`` for the paper's plain
    coordinate-descent QP (``H`` is then neither read nor updated).
    """
    cdef Py_ssize_t passes = 0
    cdef int exact = 0
    cdef double tau = 0.0
    with nogil:
        trace = _column_update(Sigma, X, H, M, j, lam, beta, trace, work.w, work.GB,
                               work.Gbb, work.z, work.bidx, work.unew, work.ucur,
                               work.inb, max_passes, qp_tol, max_rounds, &passes,
                               &exact, &tau)
    return trace, tau, passes, exact


def bca_sweep(const double[:, ::1] Sigma, double[:, ::1] X, double[:, ::1] H,
              double[:, ::1] M, double lam, double beta, double trace,
              Workspace work, *, Py_ssize_t max_passes, double qp_tol,
              Py_ssize_t max_rounds, Py_ssize_t start=0, Py_ssize_t stop=-1):
    """One sweep of column updates j = start..stop-1 in place (all columns,
    0..n-1, by default; ``stop=-1`` means ``n``).

    ``H`` must hold ``X^-1`` on entry (unless it has shape (0, 0)) and holds
    the inverse of the new ``X`` on exit, up to rounding.  Returns
    ``(trace, total_passes, n_exact)``: the new Tr X, the coordinate-descent
    passes summed over columns and the number of QPs finished exactly.
    Consecutive column ranges that pass the returned ``trace`` on make the
    same arithmetic as one call over their union (a caller's time limit
    checks between them); every column update keeps ``X`` positive definite.
    """
    cdef Py_ssize_t n = X.shape[0], j, passes = 0, total = 0, n_exact = 0
    cdef int exact = 0
    cdef double tau = 0.0
    cdef double[::1] w = work.w, unew = work.unew, ucur = work.ucur, z = work.z
    cdef double[:, ::1] GB = work.GB, Gbb = work.Gbb
    cdef Py_ssize_t[::1] bidx = work.bidx
    cdef signed char[::1] inb = work.inb
    if stop < 0:
        stop = n
    if start < 0 or start > stop or stop > n:
        raise ValueError(f"columns start={start}..stop={stop} must satisfy "
                         f"0 <= start <= stop <= n = {n}")
    with nogil:
        for j in range(start, stop):
            trace = _column_update(Sigma, X, H, M, j, lam, beta, trace, w, GB, Gbb, z,
                                   bidx, unew, ucur, inb, max_passes, qp_tol,
                                   max_rounds, &passes, &exact, &tau)
            total += passes
            n_exact += exact
    return trace, total, n_exact


def spd_inverse(const double[:, ::1] X, double[:, ::1] out):
    """``out = X^-1`` for the symmetric positive definite ``X`` (both m x m).

    The arithmetic of ``scipy.linalg.lapack``'s ``dpotrf(X, lower=False)``
    then ``dpotri`` on the upper triangle, mirrored to a full C-ordered
    matrix as ``triu(inv) + triu(inv, 1).T`` does (each entry plus a zero),
    without their temporaries.  Returns LAPACK's ``info`` of the
    factorisation (0 on success; ``out`` is then undefined otherwise).
    """
    cdef int m = <int> X.shape[0], info = 0
    cdef Py_ssize_t i, j
    cdef double v
    cdef char uplo = b'U'
    if X.shape[1] != m or out.shape[0] != m or out.shape[1] != m:
        raise ValueError(f"X and out must be square of the same size, got "
                         f"({X.shape[0]}, {X.shape[1]}) and ({out.shape[0]}, {out.shape[1]})")
    if m == 0:
        return 0
    with nogil:
        # out holds X in Fortran order: logical entry (i, j) at out[j, i]
        for i in range(m):
            for j in range(m):
                out[j, i] = X[i, j]
        dpotrf(&uplo, &m, &out[0, 0], &m, &info)
        if info == 0:
            dpotri(&uplo, &m, &out[0, 0], &m, &info)
            info = 0  # (dpotri's info is not checked, as before)
            # the logical upper triangle (i <= j) sits at out[j, i]
            for j in range(m):
                for i in range(j + 1):
                    v = out[j, i] + 0.0
                    out[j, i] = v
                    out[i, j] = v
    return info


def principal_block(const double[:, ::1] A, const Py_ssize_t[::1] idx, double[:, ::1] out):
    """``out = A[np.ix_(idx, idx)]``: the principal block over ``idx``, read
    entry by entry (``A.take(idx, 0).take(idx, 1)`` first copies whole rows:
    100 of a 1,024-column matrix for a 100 x 100 block).

    Raises
    ------
    ValueError
        For a shape mismatch or an index out of range.
    """
    cdef Py_ssize_t m = idx.shape[0], n = A.shape[0], i, j
    cdef const double* row
    if A.shape[1] != n or out.shape[0] != m or out.shape[1] != m:
        raise ValueError(f"A must be square and out {m} x {m}, got ({n}, {A.shape[1]}) "
                         f"and ({out.shape[0]}, {out.shape[1]})")
    for i in range(m):
        if idx[i] < 0 or idx[i] >= n:
            raise ValueError(f"idx[{i}] = {idx[i]} is out of range 0..{n - 1}")
    with nogil:
        for i in range(m):
            row = &A[idx[i], 0]
            for j in range(m):
                out[i, j] = row[idx[j]]


cdef inline Py_ssize_t _root(Py_ssize_t* parent, Py_ssize_t a) noexcept nogil:
    """Root of ``a`` in the union-find forest, halving the path on the way."""
    while parent[a] != a:
        parent[a] = parent[parent[a]]
        a = parent[a]
    return a


def threshold_components(const double[:, ::1] S, const Py_ssize_t[::1] idx, double lam,
                         Py_ssize_t[::1] labels, double[::1] excess):
    """Connected components of the graph ``|S_ab| > lam`` over the features ``idx``.

    The graph has a node per entry of ``idx`` and an edge between ``a != b``
    where ``|S[idx[a], idx[b]]| > lam`` (the splitting of DSPCA: across
    components ``U_ab = -S_ab`` is dual feasible).  One pass over the upper
    triangle, with a union-find forest; no ``len(idx)^2`` temporary.

    Parameters
    ----------
    S : float64 array of shape (n, n), C-contiguous
        Symmetric; only the entries ``S[idx[a], idx[b]]``, ``a < b``, are read.
    idx : intp array of shape (m,)
        Rows/columns of ``S`` that are the nodes, each in ``0 .. n - 1``.
    lam : float
        Threshold.
    labels : intp array of shape (m,), OUT
        Component of each node, numbered ``0, 1, ...`` in the order of the
        components' first nodes (as SciPy's ``connected_components``).
    excess : float64 array of shape (m,), OUT
        ``sum_b (|S_ab| - lam)`` over the edges of each node: the off-diagonal
        row sums of ``S - clip(S, -lam, lam)`` (for Gershgorin's bound).

    Returns
    -------
    n_components : int
    """
    cdef Py_ssize_t m = idx.shape[0], n = S.shape[0], a, b, ra, rb, ia, n_comp = 0
    cdef double v
    cdef Py_ssize_t* parent
    if labels.shape[0] != m or excess.shape[0] != m:
        raise ValueError(f"labels and excess must have length len(idx) = {m}")
    if S.shape[1] != n:
        raise ValueError(f"S must be square, got shape ({n}, {S.shape[1]})")
    for a in range(m):
        if idx[a] < 0 or idx[a] >= n:
            raise ValueError(f"idx[{a}] = {idx[a]} is out of range 0..{n - 1}")
    parent = <Py_ssize_t*> malloc(max(m, 1) * sizeof(Py_ssize_t))
    if parent == NULL:
        raise MemoryError()
    try:
        with nogil:
            for a in range(m):
                parent[a] = a
                excess[a] = 0.0
            for a in range(m):
                ia = idx[a]
                for b in range(a + 1, m):
                    v = fabs(S[ia, idx[b]])
                    if v > lam:
                        excess[a] += v - lam
                        excess[b] += v - lam
                        ra = _root(parent, a)
                        rb = _root(parent, b)
                        if ra != rb:  # the smaller index becomes the root
                            if ra < rb:
                                parent[rb] = ra
                            else:
                                parent[ra] = rb
            # Roots are each component's smallest node, met first in order.
            for a in range(m):
                ra = _root(parent, a)
                if ra == a:
                    labels[a] = n_comp
                    n_comp += 1
                else:
                    labels[a] = labels[ra]
    finally:
        free(parent)
    return n_comp


def offdiag_rowmax(const double[:, ::1] A, double[::1] out):
    """``out[i] = max_{j != i} |A_ij|`` for the square ``A`` (0 for a 1 x 1 ``A``),
    in one read of ``A`` (no temporary)."""
    cdef Py_ssize_t n = A.shape[0], i, j
    cdef double best, v
    if A.shape[1] != n:
        raise ValueError(f"A must be square, got shape ({n}, {A.shape[1]})")
    if out.shape[0] != n:
        raise ValueError(f"out must have length {n}, got {out.shape[0]}")
    with nogil:
        for i in range(n):
            best = 0.0
            for j in range(i):
                v = fabs(A[i, j])
                if v > best:
                    best = v
            for j in range(i + 1, n):
                v = fabs(A[i, j])
                if v > best:
                    best = v
            out[i] = best


def abs_max(const double[:, ::1] A):
    """``max |A_ij|`` in one read of ``A`` (no temporary): 0 for an empty
    ``A``, NaN when some entry is NaN (as ``np.abs(A).max()``).  Four
    running maxima over each row (independent chains); a NaN fails every
    comparison and is flagged on its own."""
    cdef Py_ssize_t m = A.shape[0], n = A.shape[1], i, j, n4 = n - n % 4
    cdef double b0 = 0.0, b1 = 0.0, b2 = 0.0, b3 = 0.0, v
    cdef bint nan = False
    cdef const double* row
    with nogil:
        for i in range(m):
            row = &A[i, 0] if n else NULL
            for j in range(0, n4, 4):
                v = fabs(row[j])
                b0 = v if v > b0 else b0
                nan = nan or v != v
                v = fabs(row[j + 1])
                b1 = v if v > b1 else b1
                nan = nan or v != v
                v = fabs(row[j + 2])
                b2 = v if v > b2 else b2
                nan = nan or v != v
                v = fabs(row[j + 3])
                b3 = v if v > b3 else b3
                nan = nan or v != v
            for j in range(n4, n):
                v = fabs(row[j])
                b0 = v if v > b0 else b0
                nan = nan or v != v
    if nan:
        return float("nan")
    return max(b0, b1, b2, b3)


def symmetrise_within(double[:, ::1] B, double tol, Py_ssize_t tile):
    """Replace the square ``B`` by ``(B + B') / 2`` in place (``0.5 B_ij +
    0.5 B_ji``, pair by pair, ``tile x tile`` blocks at a time) unless some
    ``|B_ij - B_ji|`` exceeds ``tol`` (or is NaN): then return False, ``B``
    partly symmetrised; else True."""
    cdef Py_ssize_t n = B.shape[0], i0, j0, i, j, i1, j1, start
    cdef double a, b, d, h
    cdef bint ok = True
    if B.shape[1] != n:
        raise ValueError(f"B must be square, got shape ({n}, {B.shape[1]})")
    if tile < 1:
        raise ValueError(f"tile must be >= 1, got {tile}")
    with nogil:
        i0 = 0
        while i0 < n and ok:
            i1 = min(i0 + tile, n)
            j0 = i0
            while j0 < n and ok:
                j1 = min(j0 + tile, n)
                for i in range(i0, i1):
                    start = i + 1 if j0 == i0 else j0
                    for j in range(start, j1):
                        a = B[i, j]
                        b = B[j, i]
                        d = fabs(a - b)
                        if not d <= tol:
                            ok = False
                            break
                        h = 0.5 * a + 0.5 * b
                        B[i, j] = h
                        B[j, i] = h
                    if not ok:
                        break
                j0 = j1
            i0 = i1
    return bool(ok)


# numpy's pairwise summation (its reductions' inner loop): below 8 terms a
# plain sum from -0.0, up to PW_BLOCK terms eight running sums combined as
# ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7)) plus the rest in order,
# above that the two halves (the first a multiple of 8 long) summed alike.
DEF PW_BLOCK = 128


cdef double _pw_scaled(const double* a, Py_ssize_t n, double g) noexcept nogil:
    """The pairwise sum of ``a[i] * g``, ``i < n``."""
    cdef Py_ssize_t i, n2
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = -0.0
        for i in range(n):
            res = res + a[i] * g
        return res
    if n <= PW_BLOCK:
        r0 = a[0] * g
        r1 = a[1] * g
        r2 = a[2] * g
        r3 = a[3] * g
        r4 = a[4] * g
        r5 = a[5] * g
        r6 = a[6] * g
        r7 = a[7] * g
        i = 8
        while i < n - (n % 8):
            r0 = r0 + a[i] * g
            r1 = r1 + a[i + 1] * g
            r2 = r2 + a[i + 2] * g
            r3 = r3 + a[i + 3] * g
            r4 = r4 + a[i + 4] * g
            r5 = r5 + a[i + 5] * g
            r6 = r6 + a[i + 6] * g
            r7 = r7 + a[i + 7] * g
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res = res + a[i] * g
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pw_scaled(a, n2, g) + _pw_scaled(a + n2, n - n2, g)


cdef inline double _sq_dev(double x, double g, double mu) noexcept nogil:
    cdef double d = x * g - mu
    return d * d


cdef double _pw_sqdev(const double* a, Py_ssize_t n, double g, double mu) noexcept nogil:
    """The pairwise sum of ``(a[i] * g - mu) ** 2``, ``i < n``."""
    cdef Py_ssize_t i, n2
    cdef double res, r0, r1, r2, r3, r4, r5, r6, r7
    if n < 8:
        res = -0.0
        for i in range(n):
            res = res + _sq_dev(a[i], g, mu)
        return res
    if n <= PW_BLOCK:
        r0 = _sq_dev(a[0], g, mu)
        r1 = _sq_dev(a[1], g, mu)
        r2 = _sq_dev(a[2], g, mu)
        r3 = _sq_dev(a[3], g, mu)
        r4 = _sq_dev(a[4], g, mu)
        r5 = _sq_dev(a[5], g, mu)
        r6 = _sq_dev(a[6], g, mu)
        r7 = _sq_dev(a[7], g, mu)
        i = 8
        while i < n - (n % 8):
            r0 = r0 + _sq_dev(a[i], g, mu)
            r1 = r1 + _sq_dev(a[i + 1], g, mu)
            r2 = r2 + _sq_dev(a[i + 2], g, mu)
            r3 = r3 + _sq_dev(a[i + 3], g, mu)
            r4 = r4 + _sq_dev(a[i + 4], g, mu)
            r5 = r5 + _sq_dev(a[i + 5], g, mu)
            r6 = r6 + _sq_dev(a[i + 6], g, mu)
            r7 = r7 + _sq_dev(a[i + 7], g, mu)
            i += 8
        res = ((r0 + r1) + (r2 + r3)) + ((r4 + r5) + (r6 + r7))
        while i < n:
            res = res + _sq_dev(a[i], g, mu)
            i += 1
        return res
    n2 = n // 2
    n2 -= n2 % 8
    return _pw_sqdev(a, n2, g, mu) + _pw_sqdev(a + n2, n - n2, g, mu)


def row_moments(const double[:, ::1] A, double g, bint center,
                double[::1] mean, double[::1] ss):  # OUT: mean, ss
    """For each row ``a`` of ``A`` (a column of ``X`` in Fortran order), in
    numpy's arithmetic: ``mean = (a * g).mean()`` (0 without ``center``) and
    ``ss = ((a * g - mean) ** 2).sum()``, both sums pairwise as numpy's
    reductions of a contiguous row; the row is read from memory once and
    from cache once, with no scaled copy."""
    cdef Py_ssize_t m = A.shape[0], n = A.shape[1], j
    cdef double mu
    if mean.shape[0] != m or ss.shape[0] != m:
        raise ValueError("mean and ss must have one entry per row of A")
    with nogil:
        for j in range(m):
            # (numpy's reduction starts from its identity, +0.0, and adds
            # the pairwise sum: a row of -0.0 sums to +0.0)
            mu = 0.0
            if center:
                mu = (0.0 + _pw_scaled(&A[j, 0], n, g)) / n
            mean[j] = mu
            ss[j] = 0.0 + _pw_sqdev(&A[j, 0], n, g, mu)
    return None
