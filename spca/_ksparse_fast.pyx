"""Compiled kernel of the k-sparse heuristics (``spca/_ksparse.py``).

Forward greedy selection and the swap searches score every candidate
feature by the largest eigenvalue of a bordered matrix, the root of a
secular equation (see ``_ksparse.bordered_top``).  Its safeguarded Newton
iteration over all candidates at once costs, through NumPy, a dozen array
passes per step; on blocks of tens of features that overhead was most of a
60-feature ``cardinality_path``.  ``secular_roots`` runs the same iteration,
operation for operation and in the same order (so the same roots, bit for
bit), in one loop.  ``top_k_positions`` selects the truncated power
method's ``k`` largest magnitudes in one pass; ``pair_bounds`` evaluates
the candidates' ``2 x 2`` eigenvalue bounds (``_ksparse._pair_bounds``) in
one loop, with NumPy's operations in NumPy's order.
"""
# SPDX-License-Identifier: BSD-3-Clause

from libc.math cimport INFINITY, fabs, sqrt
from libc.stdlib cimport free, malloc

import numpy as np


cdef void _secular(const double* mu, const double* W2, Py_ssize_t ld, const double* c,
                   double* x, double* lo, double* hi, Py_ssize_t s, Py_ssize_t m,
                   int max_iter, double threshold) noexcept nogil:
    """The loop of ``secular_roots`` (``W2`` row-major, ``ld`` entries a row)."""
    cdef Py_ssize_t i, j, _it
    cdef double xj, den, t, sum_t, sum_tp, f, fp, newton, x_new, step, max_step
    cdef bint opened, pos, nan_step
    for _it in range(max_iter):
        max_step = 0.0
        nan_step = False
        for j in range(m):
            xj = x[j]
            sum_t = 0.0
            sum_tp = 0.0
            for i in range(s):
                den = xj - mu[i]
                if den > 0:
                    t = W2[i * ld + j] / den
                    sum_t = sum_t + t
                    sum_tp = sum_tp + t / den
            f = xj - c[j] - sum_t
            fp = 1.0 + sum_tp
            opened = xj > lo[j]
            pos = f >= 0
            if pos:
                hi[j] = xj
            elif opened:
                lo[j] = xj
            newton = xj - f / fp
            if newton >= lo[j] and newton <= hi[j]:
                x_new = newton
            else:
                x_new = 0.5 * (lo[j] + hi[j])
            step = fabs(x_new - xj)
            if step != step:
                nan_step = True
            elif step > max_step:
                max_step = step
            x[j] = x_new
        if not nan_step and max_step <= threshold:
            break


def secular_roots(const double[::1] mu, const double[:, ::1] W2, const double[::1] c,
                  double[::1] x, double[::1] lo, double[::1] hi, *,
                  int max_iter, double threshold):
    """Safeguarded Newton steps on ``f_j(x) = x - c_j - sum_i W2_ij / (x - mu_i)``
    for every column ``j``, in place on ``x`` (the iterates), ``lo`` and
    ``hi`` (the brackets), until no step is larger than ``threshold`` or
    ``max_iter`` steps.  Terms with ``x <= mu_i`` count as zero."""
    cdef Py_ssize_t s = mu.shape[0], m = c.shape[0]
    if W2.shape[0] != s or W2.shape[1] != m or x.shape[0] != m or lo.shape[0] != m \
            or hi.shape[0] != m:
        raise ValueError(f"secular_roots: shapes do not match: mu ({s},), W2 "
                         f"({W2.shape[0]}, {W2.shape[1]}), c ({m},), x ({x.shape[0]},)")
    with nogil:
        _secular(&mu[0] if s else NULL, &W2[0, 0] if s and m else NULL, W2.shape[1],
                 &c[0] if m else NULL, &x[0] if m else NULL, &lo[0] if m else NULL,
                 &hi[0] if m else NULL, s, m, max_iter, threshold)


def top_k_positions(const double[::1] a, Py_ssize_t[::1] out):
    """Positions of the ``k = len(out)`` largest entries of ``a`` in ``out``,
    increasing; ties go to the lower position (the first ``k`` of a stable
    sort of ``-a``).  One pass keeping the ``k`` best so far in order, by
    insertion (``O(len(a) k)``: for small ``k``).  Returns the number of NaN
    entries of ``a`` (``out`` is then not the sort's: the caller sorts)."""
    cdef Py_ssize_t m = a.shape[0], k = out.shape[0], j, p, filled = 0, n_nan = 0
    cdef double v
    cdef double* vals
    if k > m:
        raise ValueError(f"top_k_positions: k = {k} is larger than len(a) = {m}")
    if k == 0:
        return 0
    vals = <double*> malloc(k * sizeof(double))
    if vals == NULL:
        raise MemoryError()
    with nogil:
        for j in range(m):
            v = a[j]
            if v != v:
                n_nan += 1
                continue
            if filled == k:
                if not v > vals[k - 1]:
                    continue  # (an equal value comes later: it loses the tie)
                p = k - 1
            else:
                p = filled
                filled += 1
            # (after every kept entry >= v: the earlier positions win ties)
            while p > 0 and vals[p - 1] < v:
                vals[p] = vals[p - 1]
                out[p] = out[p - 1]
                p -= 1
            vals[p] = v
            out[p] = j
        # the k positions in increasing order (insertion sort of k entries)
        for j in range(1, filled):
            p = j
            while p > 0 and out[p - 1] > out[p]:
                out[p - 1], out[p] = out[p], out[p - 1]
                p -= 1
    free(vals)
    return n_nan


cdef inline double _pair_root(double s, double d2, double q) noexcept nogil:
    """The larger eigenvalue of a ``2 x 2`` block from its trace ``s``, the
    squared difference ``d2`` of its diagonal and ``q`` = 4 times its squared
    coupling: ``0.5 (s + sqrt(d2 + q))`` (the bounds of :func:`pair_bounds`
    and :func:`best_addition`)."""
    return 0.5 * (s + sqrt(d2 + q))


def pair_bounds(double top, const double[::1] w, const double[::1] nb2,
                const double[::1] c, double[::1] lower, double[::1] upper):
    """The two ``2 x 2`` bounds of ``_ksparse._pair_bounds`` for every column
    ``j``, in place, operation for operation as NumPy evaluates them:
    ``lower_j = 0.5 * (top + c_j + sqrt((top - c_j)^2 + 4 w_j w_j))`` and
    ``upper_j`` the same with ``nb2_j`` for ``w_j w_j``."""
    cdef Py_ssize_t m = c.shape[0], j
    cdef double s, d2
    if w.shape[0] != m or nb2.shape[0] != m or lower.shape[0] != m or upper.shape[0] != m:
        raise ValueError(f"pair_bounds: shapes do not match: c ({m},), w ({w.shape[0]},), "
                         f"nb2 ({nb2.shape[0]},), lower ({lower.shape[0]},), "
                         f"upper ({upper.shape[0]},)")
    with nogil:
        for j in range(m):
            s = top + c[j]
            d2 = (top - c[j]) * (top - c[j])
            lower[j] = _pair_root(s, d2, (4.0 * w[j]) * w[j])
            upper[j] = _pair_root(s, d2, 4.0 * nb2[j])


def best_addition(const double[::1] mu, const double[:, ::1] U, const double[:, ::1] X,
                  const double[::1] c, double floor, int max_iter, double rtol):
    """The scoring of ``_ksparse._Pool._best_addition`` in one call.

    ``mu`` (increasing) and ``U`` are the eigenvalues and eigenvectors of the
    support's block ``A`` (``s x s``), ``X`` (``s x m``) the candidates'
    columns ``b_j`` of ``B[S, C]`` and ``c`` their variances.  Each candidate
    is bracketed by the two ``2 x 2`` bounds of :func:`pair_bounds` (from the
    top eigenpair, and from ``||b_j||``); ``floor`` rises to the largest
    lower bound (times ``1 - 1e-12``); the candidates whose upper bound is
    above it are scored by the largest root of the bordered matrix's secular
    equation (``_ksparse.bordered_top``, with :func:`secular_roots`'
    iteration, ``max_iter`` steps, threshold ``rtol`` times the scale).
    Returns ``(j, value, floor)``: the best candidate's column and value, or
    ``(-1, floor, floor)`` when none is above ``floor``.  The products
    ``u' b_j`` and ``U' b_j`` are summed in index order (NumPy's BLAS may
    sum them in another order: the scores agree to rounding).
    """
    cdef Py_ssize_t s = mu.shape[0], m = X.shape[1], i, j, p, q, nk = 0, best = -1
    cdef double top, w, nb2, sm, d2, lmax = 0.0, t, topm, scale, hmax, v, best_val
    cdef double tiny = 2.2250738585072014e-308
    if U.shape[0] != s or U.shape[1] != s or X.shape[0] != s or c.shape[0] != m:
        raise ValueError(f"best_addition: shapes do not match: mu ({s},), U ({U.shape[0]}, "
                         f"{U.shape[1]}), X ({X.shape[0]}, {m}), c ({c.shape[0]},)")
    if m == 0 or s == 0:
        raise ValueError("best_addition needs a support and a candidate")
    upper_a = np.empty(m)
    keep_a = np.empty(m, dtype=np.intp)
    cdef double[::1] upper = upper_a
    cdef Py_ssize_t[::1] keep = keep_a
    top = mu[s - 1]
    with nogil:
        for j in range(m):
            w = 0.0
            nb2 = 0.0
            for i in range(s):
                w = w + U[i, s - 1] * X[i, j]
                nb2 = nb2 + X[i, j] * X[i, j]
            sm = top + c[j]
            d2 = (top - c[j]) * (top - c[j])
            t = _pair_root(sm, d2, (4.0 * w) * w)
            upper[j] = _pair_root(sm, d2, 4.0 * nb2)
            # (np.max: the first NaN wins)
            if j == 0 or (lmax == lmax and (t > lmax or t != t)):
                lmax = t
        t = lmax * (1.0 - 1e-12)
        if t > floor:  # (Python's max(floor, t))
            floor = t
        for j in range(m):
            if upper[j] > floor:
                keep[nk] = j
                nk += 1
    if nk == 0:
        return -1, floor, floor
    W2_a = np.empty((s, nk))
    x_a = np.empty(nk)
    lo_a = np.empty(nk)
    hi_a = np.empty(nk)
    cdef double[:, ::1] W2 = W2_a
    cdef double[::1] x = x_a
    cdef double[::1] lo = lo_a
    cdef double[::1] hi = hi_a
    cdef double[::1] ck = np.empty(nk)
    with nogil:
        topm = mu[0]
        for i in range(1, s):
            if topm == topm and (mu[i] > topm or mu[i] != mu[i]):
                topm = mu[i]
        hmax = 0.0
        for p in range(nk):
            j = keep[p]
            ck[p] = c[j]
            nb2 = 0.0
            for i in range(s):
                w = 0.0
                for q in range(s):
                    w = w + U[q, i] * X[q, j]
                W2[i, p] = w * w
            for i in range(s):
                nb2 = nb2 + W2[i, p]
            lo[p] = topm if topm >= c[j] else c[j]
            v = 0.5 * (topm + c[j] + sqrt((topm - c[j]) * (topm - c[j]) + 4.0 * nb2))
            hi[p] = v if v >= lo[p] else lo[p]
            x[p] = hi[p]
            if fabs(hi[p]) > hmax:
                hmax = fabs(hi[p])
        scale = fabs(topm)
        if hmax > scale:
            scale = hmax
        if tiny > scale:
            scale = tiny
        _secular(&mu[0], &W2[0, 0], nk, &ck[0], &x[0], &lo[0], &hi[0], s, nk, max_iter,
                 rtol * scale)
        best_val = -INFINITY
        for p in range(nk):
            v = x[p] if x[p] >= lo[p] else lo[p]
            if best < 0 or v > best_val:
                best, best_val = p, v
    if best_val > floor:
        return keep[best], best_val, floor
    return -1, floor, floor
