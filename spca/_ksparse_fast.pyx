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

from libc.math cimport fabs, sqrt
from libc.stdlib cimport free, malloc


def secular_roots(const double[::1] mu, const double[:, ::1] W2, const double[::1] c,
                  double[::1] x, double[::1] lo, double[::1] hi, *,
                  int max_iter, double threshold):
    """Safeguarded Newton steps on ``f_j(x) = x - c_j - sum_i W2_ij / (x - mu_i)``
    for every column ``j``, in place on ``x`` (the iterates), ``lo`` and
    ``hi`` (the brackets), until no step is larger than ``threshold`` or
    ``max_iter`` steps.  Terms with ``x <= mu_i`` count as zero."""
    cdef Py_ssize_t s = mu.shape[0], m = c.shape[0], i, j, _it
    cdef double xj, den, t, sum_t, sum_tp, f, fp, newton, x_new, step, max_step
    cdef bint opened, pos, nan_step
    if W2.shape[0] != s or W2.shape[1] != m or x.shape[0] != m or lo.shape[0] != m \
            or hi.shape[0] != m:
        raise ValueError(f"secular_roots: shapes do not match: mu ({s},), W2 "
                         f"({W2.shape[0]}, {W2.shape[1]}), c ({m},), x ({x.shape[0]},)")
    with nogil:
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
                        t = W2[i, j] / den
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
            lower[j] = 0.5 * (s + sqrt(d2 + (4.0 * w[j]) * w[j]))
            upper[j] = 0.5 * (s + sqrt(d2 + 4.0 * nb2[j]))
