"""Compiled kernel of the node descents (``spca/cardinality/_bounds.py``).

The row-norm penalty of a node needs, for every row ``i`` of a multiplier
``U``, ``rho_i^2``: the squares of row ``i`` over the forced features plus
its ``r`` largest squares over the free ones, and for its subgradient the
columns of those ``r``.  Through NumPy that is an ``argpartition`` of the
whole matrix per descent step, most of a step's cost once the eigensolve is
a Ritz estimate; ``row_norm_rows`` finds them in one pass over each row
with a heap of ``r`` entries.
"""
# SPDX-License-Identifier: BSD-3-Clause

from libc.stdlib cimport free, malloc


cdef inline void _sift_up(double *val, Py_ssize_t *col, Py_ssize_t at) noexcept nogil:
    """Move entry ``at`` of the min-heap ``val`` up to its place."""
    cdef Py_ssize_t parent
    cdef double v = val[at]
    cdef Py_ssize_t c = col[at]
    while at > 0:
        parent = (at - 1) // 2
        if val[parent] <= v:
            break
        val[at] = val[parent]
        col[at] = col[parent]
        at = parent
    val[at] = v
    col[at] = c


cdef inline void _sift_down(double *val, Py_ssize_t *col, Py_ssize_t size,
                            Py_ssize_t at) noexcept nogil:
    """Restore the min-heap order of ``val`` (with ``col`` alongside) below ``at``."""
    cdef Py_ssize_t child
    cdef double v = val[at]
    cdef Py_ssize_t c = col[at]
    while True:
        child = 2 * at + 1
        if child >= size:
            break
        if child + 1 < size and val[child + 1] < val[child]:
            child = child + 1
        if val[child] >= v:
            break
        val[at] = val[child]
        col[at] = col[child]
        at = child
    val[at] = v
    col[at] = c


def row_norm_rows(const double[:, ::1] U, const unsigned char[::1] inside, Py_ssize_t r,
                  double[::1] rho2, Py_ssize_t[:, ::1] picks,
                  const Py_ssize_t[:, ::1] hint, bint use_hint):
    """For every row ``i`` of ``U`` (``n x n``): ``rho2[i]`` (OUT), the sum of
    ``U_ij^2`` over ``inside[j]`` plus the ``r`` largest ``U_ij^2`` over the
    other ``j``, and ``picks[i, :r]`` (OUT) those ``r`` columns (ties: the
    smaller column first; ``r`` at most the number of free columns).

    With ``use_hint``, ``hint[i, :r]`` holds ``r`` distinct free columns of
    row ``i`` (e.g. the picks of the previous descent step): the smallest of
    their squares is at most the ``r``-th largest, so the entries below it
    are skipped without entering the heap (the same columns picked)."""
    cdef Py_ssize_t n = U.shape[0], i, j, size
    cdef double x, s_in, s_top, low
    cdef double *val
    cdef Py_ssize_t *col
    if U.shape[1] != n or inside.shape[0] != n or rho2.shape[0] != n \
            or picks.shape[0] != n or picks.shape[1] < r or r < 0 \
            or (use_hint and (hint.shape[0] != n or hint.shape[1] < r)):
        raise ValueError(f"row_norm_rows: shapes do not match: U ({U.shape[0]}, "
                         f"{U.shape[1]}), inside ({inside.shape[0]},), r {r}, "
                         f"picks ({picks.shape[0]}, {picks.shape[1]}), "
                         f"hint ({hint.shape[0]}, {hint.shape[1]})")
    if use_hint:
        for i in range(n):
            for j in range(r):
                if hint[i, j] < 0 or hint[i, j] >= n or inside[hint[i, j]]:
                    raise ValueError(f"row_norm_rows: hint[{i}, {j}] = {hint[i, j]} "
                                     f"is not a free column")
    val = <double *> malloc((r + 1) * sizeof(double))
    col = <Py_ssize_t *> malloc((r + 1) * sizeof(Py_ssize_t))
    if val == NULL or col == NULL:
        free(val)
        free(col)
        raise MemoryError()
    with nogil:
        for i in range(n):
            s_in = 0.0
            size = 0
            low = 0.0
            if use_hint and r > 0:
                low = U[i, hint[i, 0]] * U[i, hint[i, 0]]
                for j in range(1, r):
                    x = U[i, hint[i, j]] * U[i, hint[i, j]]
                    if x < low:
                        low = x
            for j in range(n):
                x = U[i, j] * U[i, j]
                if inside[j]:
                    s_in = s_in + x
                elif x < low:
                    continue  # below the r-th largest: never picked
                elif size < r:
                    # grow the heap: sift the new entry up
                    val[size] = x
                    col[size] = j
                    size = size + 1
                    _sift_up(val, col, size - 1)
                elif r > 0 and x > val[0]:
                    val[0] = x
                    col[0] = j
                    _sift_down(val, col, size, 0)
            s_top = 0.0
            for j in range(size):
                s_top = s_top + val[j]
                picks[i, j] = col[j]
            rho2[i] = s_in + s_top
    free(val)
    free(col)
