"""Compiled kernel of pass 2 of the text pipeline: word co-occurrence sums.

For a block of documents given as coordinate records grouped by document,
``cooccurrence_add`` adds ``sum_d x[d, a] x[d, b]`` over the document's pairs
of records into a dense ``k x k`` array.  The cost is ``sum_d m_d^2 / 2`` for
``m_d`` candidate words in document ``d``, with no intermediate sparse matrix.
"""
# SPDX-License-Identifier: BSD-3-Clause

from libc.stdint cimport int64_t


def cooccurrence_add(const int64_t[::1] doc, const int64_t[::1] col,
                     const double[::1] x, double[:, ::1] pairs, double[::1] squares):
    """Accumulate the products of the records of each document.

    Parameters
    ----------
    doc : int64 array of shape (r,)
        Document of each record; the records of a document must be
        contiguous (any document order).
    col : int64 array of shape (r,)
        Row/column of each record in ``pairs``, in ``0 .. k - 1``.
    x : float64 array of shape (r,)
        Value of each record.
    pairs : float64 array of shape (k, k), updated in place
        Receives ``x_i x_j`` at ``[col_i, col_j]`` for every pair ``i < j`` of
        records of one document (one triangle or the other, by record order).
    squares : float64 array of shape (k,), updated in place
        Receives ``x_i^2`` at ``col_i`` for every record.

    Notes
    -----
    The Gram matrix of the records is ``pairs + pairs.T + diag(squares)``;
    this is exact also when a (document, column) pair repeats, as
    ``(x_i + x_j)^2 = x_i^2 + x_j^2 + 2 x_i x_j``.
    """
    cdef Py_ssize_t r = doc.shape[0]
    cdef Py_ssize_t k = pairs.shape[0]
    cdef Py_ssize_t s = 0, e, i, j, a
    cdef double xa
    if col.shape[0] != r or x.shape[0] != r:
        raise ValueError("doc, col and x must have the same length")
    if pairs.shape[1] != k or squares.shape[0] != k:
        raise ValueError("pairs must be k x k and squares of length k")
    for i in range(r):
        if col[i] < 0 or col[i] >= k:
            raise ValueError(f"column index {col[i]} out of range 0..{k - 1}")
    with nogil:
        while s < r:
            e = s + 1
            while e < r and doc[e] == doc[s]:
                e += 1
            for i in range(s, e):
                a = col[i]
                xa = x[i]
                squares[a] += xa * xa
                for j in range(i + 1, e):
                    pairs[a, col[j]] += xa * x[j]
            s = e
