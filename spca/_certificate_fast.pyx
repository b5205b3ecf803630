"""Compiled kernels of the certificates (``spca/_certificate.py``).

A certificate needs the largest eigenvalue (and often its eigenvector) of
many small symmetric matrices: blocks of a few to a few hundred features,
hundreds of times per cardinality search.  Through SciPy or NumPy each call
pays tens of microseconds of argument checks and workspace queries, more
than LAPACK's work on a 10 x 10 matrix.  Here LAPACK's ``dsyevr`` (MRRR,
only the top eigenpair) is called directly, with ``dsyevd`` (divide and
conquer, every eigenpair) as the fallback should MRRR fail, as in
``_certificate._top_eigh``.

``polish_support`` runs the whole sign-fixed polish of one support (see
``_certificate._polish_support``) in one call; ``project_rows`` the
projection of the cross rows of a rank-one dual (see
``_certificate._project_rows``), row by row, and ``project_cross`` the same
in place in ``Sigma + U`` (``_certificate.rank_one_dual_matrix``).
``barrier_fill`` and ``soft_fill`` build the box-feasible ``Sigma + U`` of
the barrier dual and of soft thresholding in one pass each, with the
arithmetic of the NumPy expressions they replace.
"""
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport fabs, INFINITY
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy
from scipy.linalg.cython_lapack cimport dsyevd, dsyevr

import numpy as np


cdef int _top(double* a, int n, bint vec, double* w, double* z, double* top) noexcept nogil:
    """Largest eigenvalue (into ``top``) and, with ``vec``, a unit eigenvector
    (into ``z``, length n) of the symmetric n x n ``a``, which is destroyed.
    ``w`` is scratch of length n.  Returns LAPACK's info of the last driver
    tried (0 on success) or -1000 when out of memory."""
    cdef char jobz = b'V' if vec else b'N'
    cdef char rng = b'I'
    cdef char uplo = b'L'
    cdef int il = n, iu = n, found = 0, info = 0, lda = n, ldz = n
    cdef int lwork = 26 * n, liwork = 10 * n
    cdef double vl = 0.0, vu = 0.0, abstol = 0.0
    cdef double* work
    cdef double* keep = NULL
    cdef int* iwork
    cdef int* isuppz
    cdef Py_ssize_t i
    work = <double*> malloc(lwork * sizeof(double))
    iwork = <int*> malloc(liwork * sizeof(int))
    isuppz = <int*> malloc(2 * sizeof(int))
    keep = <double*> malloc(<size_t> n * n * sizeof(double))
    if work == NULL or iwork == NULL or isuppz == NULL or keep == NULL:
        info = -1000
    else:
        memcpy(keep, a, <size_t> n * n * sizeof(double))
        dsyevr(&jobz, &rng, &uplo, &n, a, &lda, &vl, &vu, &il, &iu, &abstol, &found, w, z,
               &ldz, isuppz, work, &lwork, iwork, &liwork, &info)
        if info == 0 and found == 1:
            top[0] = w[0]
        else:
            # MRRR can fail on clustered spectra: every eigenpair by D&C.
            free(work)
            free(iwork)
            lwork = 1 + 6 * n + 2 * n * n if vec else 2 * n + 1
            liwork = 3 + 5 * n if vec else 1
            work = <double*> malloc(lwork * sizeof(double))
            iwork = <int*> malloc(liwork * sizeof(int))
            if work == NULL or iwork == NULL:
                info = -1000
            else:
                dsyevd(&jobz, &uplo, &n, keep, &lda, w, work, &lwork, iwork, &liwork, &info)
                if info == 0:
                    top[0] = w[n - 1]
                    if vec:
                        for i in range(n):
                            z[i] = keep[(n - 1) * n + i]
    free(work)
    free(iwork)
    free(isuppz)
    free(keep)
    return info


cdef _check_info(int info):
    """Raise for a failed ``_top`` (out of memory, or both drivers failed)."""
    if info == -1000:
        raise MemoryError()
    if info != 0:
        raise np.linalg.LinAlgError(f"symmetric eigensolver failed (LAPACK info={info})")


def top_eigh(const double[:, ::1] A, bint vector=True):
    """Largest eigenvalue of the symmetric ``A`` and, with ``vector``, a unit
    eigenvector (else ``None``).

    Only the lower triangle of ``A`` (as LAPACK reads a C-ordered array: its
    upper triangle) is used; ``A`` is not modified.

    Raises
    ------
    ValueError
        If ``A`` is not square or is empty.
    numpy.linalg.LinAlgError
        If both LAPACK drivers fail.
    """
    cdef Py_ssize_t n = A.shape[0]
    cdef double top = 0.0
    cdef int info
    cdef double* a
    cdef double* w
    if A.shape[1] != n:
        raise ValueError(f"A must be square, got shape ({n}, {A.shape[1]})")
    if n == 0:
        raise ValueError("A must have at least one row")
    if n >= 46340:  # n * n must fit in a LAPACK int
        raise ValueError(f"A is too large for this kernel, got {n} rows")
    vec = np.empty(n) if vector else None
    cdef double[::1] z = vec if vector else np.empty(1)
    a = <double*> malloc(<size_t> n * n * sizeof(double))
    w = <double*> malloc(n * sizeof(double))
    if a == NULL or w == NULL:
        free(a)
        free(w)
        raise MemoryError()
    memcpy(a, &A[0, 0], <size_t> n * n * sizeof(double))
    with nogil:
        info = _top(a, <int> n, vector, w, &z[0], &top)
    free(a)
    free(w)
    _check_info(info)
    return top, vec


def polish_support(const double[:, ::1] Sigma, const Py_ssize_t[::1] S,
                   const double[::1] signs, double lam, int max_iter,
                   double[::1] best_x):
    """Sign-fixed polish of the support ``S``: the best rank-one value found.

    With ``sigma = signs`` (entries -1, 0 or 1), repeat at most ``max_iter``
    times: ``x`` = the unit leading eigenvector of
    ``Sigma_SS - lam sigma sigma'`` (its entry of largest magnitude made
    positive, the first on ties), valued ``x' Sigma_SS x - lam ||x||_1^2``;
    stop when ``sign(x)`` equals ``sigma`` or is all zero, else take it as
    the new ``sigma``.  The best ``x`` goes to ``best_x`` (length ``len(S)``)
    and its value is returned.

    Raises
    ------
    ValueError
        For inconsistent lengths or an index of ``S`` out of range.
    numpy.linalg.LinAlgError
        If the eigensolver fails.
    """
    cdef Py_ssize_t k = S.shape[0], n = Sigma.shape[0], i, j, imax, _it
    cdef double val = -INFINITY, best = -INFINITY, top = 0.0, quad, l1, amax, s
    cdef bint changed, nonzero
    cdef int info = 0
    cdef double* sub
    cdef double* a
    cdef double* w
    cdef double* z
    cdef double* sigma
    if signs.shape[0] != k or best_x.shape[0] != k:
        raise ValueError(f"signs and best_x must have length len(S) = {k}")
    if Sigma.shape[1] != n:
        raise ValueError(f"Sigma must be square, got shape ({n}, {Sigma.shape[1]})")
    if k == 0:
        raise ValueError("S must not be empty")
    for i in range(k):
        if S[i] < 0 or S[i] >= n:
            raise ValueError(f"S[{i}] = {S[i]} is out of range 0..{n - 1}")
    sub = <double*> malloc(<size_t> k * k * sizeof(double))
    a = <double*> malloc(<size_t> k * k * sizeof(double))
    w = <double*> malloc(k * sizeof(double))
    z = <double*> malloc(k * sizeof(double))
    sigma = <double*> malloc(k * sizeof(double))
    if sub == NULL or a == NULL or w == NULL or z == NULL or sigma == NULL:
        info = -1000
    else:
        with nogil:
            for i in range(k):
                sigma[i] = signs[i]
                best_x[i] = 0.0
                for j in range(k):
                    sub[i * k + j] = Sigma[S[i], S[j]]
            for _it in range(max_iter):
                for i in range(k):
                    for j in range(k):
                        a[i * k + j] = sub[i * k + j] - lam * sigma[i] * sigma[j]
                info = _top(a, <int> k, True, w, z, &top)
                if info != 0:
                    break
                imax = 0
                amax = fabs(z[0])
                for i in range(1, k):
                    if fabs(z[i]) > amax:
                        amax = fabs(z[i])
                        imax = i
                if z[imax] < 0:
                    for i in range(k):
                        z[i] = -z[i]
                quad = 0.0
                l1 = 0.0
                for i in range(k):
                    s = 0.0
                    for j in range(k):
                        s += sub[i * k + j] * z[j]
                    quad += z[i] * s
                    l1 += fabs(z[i])
                val = quad - lam * l1 * l1
                if val > best:
                    best = val
                    for i in range(k):
                        best_x[i] = z[i]
                changed = False
                nonzero = False
                for i in range(k):
                    s = 1.0 if z[i] > 0 else (-1.0 if z[i] < 0 else 0.0)
                    if s != sigma[i]:
                        changed = True
                    if s != 0.0:
                        nonzero = True
                    sigma[i] = s
                if not changed or not nonzero:
                    break
    free(sub)
    free(a)
    free(w)
    free(z)
    free(sigma)
    _check_info(info)
    return best


def polish_thresholds(const double[:, ::1] Sigma, double lam, const double[::1] v,
                      thresholds, Py_ssize_t max_support, int patience, memo,
                      int max_iter=5):
    """The loop of ``_certificate.polish`` over the supports
    ``S = {i : |v_i| >= theta max|v|}`` (``theta`` in ``thresholds``, in
    order), each polished by :func:`polish_support` from ``sign(v_S)``:
    ``(x, value)`` of the best (the smallest support on ties within a relative
    ``1e-12``).  A support of a size seen before is skipped, so is one larger
    than ``max_support`` once there is a candidate; the loop stops after
    ``patience`` supports in a row that polish below the best.  ``x`` has
    length ``len(v)``, zero off its support; a one-feature support gives
    ``e_i`` and ``Sigma_ii - lam``.  ``memo`` (a dict, or ``None``) caches
    ``(x, value)`` by ``(S.tobytes(), signs.tobytes())`` (``S`` as intp,
    ``signs`` as float64), as ``_certificate.polish`` did in Python.
    """
    cdef Py_ssize_t n = v.shape[0], i, j, count
    cdef double vmax = 0.0, t, val, best_val = -INFINITY
    cdef int worse = 0
    if Sigma.shape[0] != n or Sigma.shape[1] != n:
        raise ValueError(f"Sigma must be {n} x {n} (the length of v), got "
                         f"({Sigma.shape[0]}, {Sigma.shape[1]})")
    a = np.empty(n)
    cdef double[::1] av = a
    for i in range(n):
        av[i] = fabs(v[i])
    if n:
        vmax = av[0]
        for i in range(1, n):
            # (np.max: a NaN wins)
            if av[i] > vmax or av[i] != av[i]:
                vmax = av[i]
    best_x = None
    seen = set()
    cdef Py_ssize_t[::1] Sv
    cdef double[::1] sv
    cdef double[::1] xv
    for theta in thresholds:
        t = <double> theta * vmax
        count = 0
        for i in range(n):
            if av[i] >= t:
                count += 1
        if count in seen or (count > max_support and best_x is not None):
            continue
        if worse >= patience:
            break
        seen.add(count)
        S = np.empty(count, dtype=np.intp)
        signs = np.empty(count)
        Sv = S
        sv = signs
        j = 0
        for i in range(n):
            if av[i] >= t:
                Sv[j] = i
                # (np.sign)
                sv[j] = 1.0 if v[i] > 0 else (-1.0 if v[i] < 0 else v[i])
                j += 1
        key = None
        hit = None
        if memo is not None:
            key = (S.tobytes(), signs.tobytes())
            hit = memo.get(key)
        if hit is None:
            x = np.zeros(n)
            xv = x
            if count == 1:
                xv[Sv[0]] = 1.0
                val = Sigma[Sv[0], Sv[0]] - lam
            else:
                xs = np.empty(count)
                val = polish_support(Sigma, S, signs, lam, max_iter, xs)
                sv = xs
                for j in range(count):
                    xv[Sv[j]] = sv[j]
            hit = (x, float(val))
            if memo is not None:
                memo[key] = hit
        x, val = hit
        # Strict improvement needed, so that ties keep the smaller support.
        if best_x is None or val > best_val + 1e-12 * fabs(best_val):
            best_x, best_val = x, val
            worse = 0
        elif val < best_val:
            worse += 1
    return best_x, best_val


cdef inline double _clip(double v, double lo, double hi) noexcept nogil:
    """``v`` clipped to ``[lo, hi]`` as NumPy's clip does (the lower end
    first, then the upper)."""
    if v < lo:
        v = lo
    if v > hi:
        v = hi
    return v


cdef double _row_dot(const double* r0, const double* lo, const double* hi, const double* x,
                     const Py_ssize_t* nz, Py_ssize_t s, double theta) noexcept nogil:
    """``clip(r0 - theta x, lo, hi) . x`` over the coordinates ``nz``."""
    cdef double g = 0.0
    cdef Py_ssize_t t, k
    for t in range(s):
        k = nz[t]
        g += _clip(r0[k] - theta * x[k], lo[k], hi[k]) * x[k]
    return g


cdef double _row_theta(const double* r0, const double* lo, const double* hi,
                       const double* x, const Py_ssize_t* nz, Py_ssize_t s,
                       double* bp) noexcept nogil:
    """The ``theta`` of one row of ``project_rows`` (``bp``: scratch of 2 s)."""
    cdef Py_ssize_t j, k, n_bp = 2 * s, nc
    cdef double ta, tb, ga, gb, t, pivot, g, p0, p1, p2, denom, frac
    for j in range(s):
        k = nz[j]
        bp[2 * j] = (r0[k] - lo[k]) / x[k]
        bp[2 * j + 1] = (r0[k] - hi[k]) / x[k]
    ta = bp[0]
    tb = bp[0]
    for j in range(1, n_bp):
        if bp[j] < ta:
            ta = bp[j]
        if bp[j] > tb:
            tb = bp[j]
    # g is non-increasing: g > 0 at every breakpoint up to the zero
    ga = _row_dot(r0, lo, hi, x, nz, s, ta)
    if not ga > 0.0:
        return ta
    gb = _row_dot(r0, lo, hi, x, nz, s, tb)
    if gb > 0.0:
        return tb
    # Shrink [ta, tb] (g(ta) > 0 >= g(tb), both breakpoints) to two
    # neighbouring breakpoints, as quickselect does: g at a pivot among the
    # breakpoints left inside (the median of the first, middle and last)
    # says which side keeps the zero, and the other side is dropped.
    nc = 0
    for j in range(n_bp):
        if bp[j] > ta and bp[j] < tb:
            bp[nc] = bp[j]
            nc += 1
    while nc > 0:
        p0 = bp[0]
        p1 = bp[nc // 2]
        p2 = bp[nc - 1]
        if p0 > p1:
            p0, p1 = p1, p0
        if p1 > p2:
            p1 = p2
        pivot = p0 if p0 > p1 else p1
        g = _row_dot(r0, lo, hi, x, nz, s, pivot)
        if g > 0.0:
            ta = pivot
            ga = g
        else:
            tb = pivot
            gb = g
        k = 0
        for j in range(nc):
            t = bp[j]
            if t > ta and t < tb:
                bp[k] = t
                k += 1
        nc = k
    denom = ga - gb
    frac = ga / denom if denom > 0.0 else 0.0
    if frac < 0.0:
        frac = 0.0
    if frac > 1.0:
        frac = 1.0
    return ta + frac * (tb - ta)


def project_rows(const double[:, ::1] R0, const double[::1] xs, const double[:, ::1] lo,
                 const double[:, ::1] hi, double[:, ::1] out):
    """Rows ``out_i = clip(R0_i - theta_i xs, lo_i, hi_i)`` with ``out_i . xs = 0``
    where the box meets that hyperplane (else the box corner closest to it).

    ``g(theta) = clip(r0 - theta xs, lo, hi) . xs`` is continuous,
    non-increasing and linear between its breakpoints, the values of
    ``theta`` where a coordinate with ``xs_k != 0`` reaches a bound.  Per row,
    an interval between two breakpoints where ``g`` changes sign is shrunk
    as quickselect does (``g`` at a median-of-three pivot among the
    breakpoints inside keeps one side; expected ``O(s)`` work besides about
    ``log2(2 s)`` evaluations of ``g``, for ``s`` nonzeros of ``xs``; no sort)
    until no breakpoint is left inside, and the zero is interpolated linearly
    there (``theta`` at the first or last breakpoint when ``g`` keeps one
    sign).  For a non-increasing ``g`` that interval does not depend on the
    pivots.
    Each row is a function of that row alone; ``xs`` must have a nonzero entry.

    Raises
    ------
    ValueError
        For inconsistent shapes, or ``xs`` all zero.
    """
    cdef Py_ssize_t q = R0.shape[0], m = R0.shape[1], s = 0, i, k, j
    cdef double theta
    cdef Py_ssize_t* nz
    cdef double* bp
    if xs.shape[0] != m:
        raise ValueError(f"xs must have length {m}, got {xs.shape[0]}")
    for arr, label in ((lo, "lo"), (hi, "hi"), (out, "out")):
        if arr.shape[0] != q or arr.shape[1] != m:
            raise ValueError(f"{label} must have shape ({q}, {m}), "
                             f"got ({arr.shape[0]}, {arr.shape[1]})")
    for k in range(m):
        if xs[k] != 0.0:
            s += 1
    if s == 0:
        raise ValueError("xs must have a nonzero entry")
    nz = <Py_ssize_t*> malloc(s * sizeof(Py_ssize_t))
    bp = <double*> malloc(2 * s * sizeof(double))
    if nz == NULL or bp == NULL:
        free(nz)
        free(bp)
        raise MemoryError()
    with nogil:
        j = 0
        for k in range(m):
            if xs[k] != 0.0:
                nz[j] = k
                j += 1
        for i in range(q):
            theta = _row_theta(&R0[i, 0], &lo[i, 0], &hi[i, 0], &xs[0], nz, s, bp)
            for k in range(m):
                out[i, k] = _clip(R0[i, k] - theta * xs[k], lo[i, k], hi[i, k])
    free(nz)
    free(bp)


def project_cross(const double[:, ::1] Sigma, double[:, ::1] D, const Py_ssize_t[::1] S,
                  const Py_ssize_t[::1] Sc, const double[::1] xs, double lam):
    """The cross block of a rank-one dual in place: ``project_rows`` of the rows
    ``D[Sc, S]`` with ``xs`` (``x`` on ``S``, no zero entry) and the box
    ``Sigma[Sc, S] -+ lam``, written to ``D[Sc, S]`` and its transpose
    ``D[S, Sc]``, without gathering the blocks.  ``S`` and ``Sc`` must be
    disjoint (the rows read are never written).

    Raises
    ------
    ValueError
        For inconsistent shapes, an index out of range or a zero in ``xs``.
    """
    cdef Py_ssize_t n = D.shape[0], s = S.shape[0], q = Sc.shape[0], i, k, row
    cdef double theta, v
    cdef Py_ssize_t* nz
    cdef double* buf
    if D.shape[1] != n or Sigma.shape[0] != n or Sigma.shape[1] != n:
        raise ValueError(f"Sigma and D must be square of the same size, got "
                         f"({Sigma.shape[0]}, {Sigma.shape[1]}) and ({n}, {D.shape[1]})")
    if xs.shape[0] != s:
        raise ValueError(f"xs must have length len(S) = {s}, got {xs.shape[0]}")
    if s == 0:
        raise ValueError("S must not be empty")
    for k in range(s):
        if S[k] < 0 or S[k] >= n:
            raise ValueError(f"S[{k}] = {S[k]} is out of range 0..{n - 1}")
        if xs[k] == 0.0:
            raise ValueError(f"xs[{k}] is zero")
    for i in range(q):
        if Sc[i] < 0 or Sc[i] >= n:
            raise ValueError(f"Sc[{i}] = {Sc[i]} is out of range 0..{n - 1}")
    nz = <Py_ssize_t*> malloc(s * sizeof(Py_ssize_t))
    # per row: r0, lo, hi (s each) and the breakpoints (2 s)
    buf = <double*> malloc(5 * s * sizeof(double))
    if nz == NULL or buf == NULL:
        free(nz)
        free(buf)
        raise MemoryError()
    with nogil:
        for k in range(s):
            nz[k] = k
        for i in range(q):
            row = Sc[i]
            for k in range(s):
                buf[k] = D[row, S[k]]
                buf[s + k] = Sigma[row, S[k]] - lam
                buf[2 * s + k] = Sigma[row, S[k]] + lam
            theta = _row_theta(buf, buf + s, buf + 2 * s, &xs[0], nz, s, buf + 3 * s)
            for k in range(s):
                v = _clip(buf[k] - theta * xs[k], buf[s + k], buf[2 * s + k])
                D[row, S[k]] = v
                D[S[k], row] = v
    free(nz)
    free(buf)


cdef inline double _clipped_mean(double a, double b, double s, double lam) noexcept nogil:
    """``0.5 (a + b)`` clipped to ``[s - lam, s + lam]`` (NumPy's clip: the
    lower end first, then the upper)."""
    return _clip(0.5 * (a + b), s - lam, s + lam)


def barrier_fill(const double[:, ::1] Sigma, double lam, const double[:, ::1] M,
                 double[:, ::1] D):
    """``D = clip((M + M') / 2, Sigma - lam, Sigma + lam)`` with diagonal
    ``diag(Sigma) - lam``, in one pass (the dual of ``_certificate.barrier_matrix``;
    the same arithmetic as those NumPy operations).

    Raises
    ------
    ValueError
        For arrays of different or non-square shapes.
    """
    cdef Py_ssize_t n = Sigma.shape[0], i, j
    for arr, label in ((Sigma, "Sigma"), (M, "M"), (D, "D")):
        if arr.shape[0] != n or arr.shape[1] != n:
            raise ValueError(f"{label} must have shape ({n}, {n}), "
                             f"got ({arr.shape[0]}, {arr.shape[1]})")
    with nogil:
        for i in range(n):
            for j in range(i):
                D[i, j] = _clipped_mean(M[i, j], M[j, i], Sigma[i, j], lam)
                # entry (j, i) against Sigma[j, i], as NumPy's clip does
                D[j, i] = _clipped_mean(M[j, i], M[i, j], Sigma[j, i], lam)
            D[i, i] = Sigma[i, i] - lam


def soft_fill(const double[:, ::1] Sigma, double lam, double[:, ::1] out):
    """``out = Sigma - clip(Sigma, -lam, lam)`` with diagonal
    ``diag(Sigma) - lam`` (the box-feasible ``Sigma + U`` of soft
    thresholding), in one pass with the arithmetic of those NumPy operations.

    Raises
    ------
    ValueError
        For arrays of different or non-square shapes.
    """
    cdef Py_ssize_t n = Sigma.shape[0], i, j
    cdef double v, c
    for arr, label in ((Sigma, "Sigma"), (out, "out")):
        if arr.shape[0] != n or arr.shape[1] != n:
            raise ValueError(f"{label} must have shape ({n}, {n}), "
                             f"got ({arr.shape[0]}, {arr.shape[1]})")
    with nogil:
        for i in range(n):
            for j in range(n):
                v = Sigma[i, j]
                c = v
                if c < -lam:
                    c = -lam
                if c > lam:
                    c = lam
                out[i, j] = v - c
            out[i, i] = Sigma[i, i] - lam
