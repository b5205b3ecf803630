"""Compiled kernels of the two corpus passes of the text pipeline.

``word_moments`` (pass 1) gives the per-word record count, mean and sum of
squared deviations of a block of documents in two sweeps over its records.

``cooccurrence_add`` (pass 2): for a block of documents given as coordinate
records grouped by document, adds ``sum_d x[d, a] x[d, b]`` over the
document's pairs of records into a dense ``k x k`` array.  The cost is
``sum_d m_d^2 / 2`` for ``m_d`` candidate words in document ``d``, with no
intermediate sparse matrix.
"""
# SPDX-License-Identifier: BSD-3-Clause

from libc.stdint cimport int32_t, int64_t

ctypedef fused word_t:
    int32_t
    int64_t


def word_moments(const word_t[::1] word, const double[::1] x, Py_ssize_t n_docs,
                 int64_t[::1] count, double[::1] mean, double[::1] m2):
    """Per-word statistics of the records of a block of ``n_docs`` documents.

    Parameters
    ----------
    word : int32 or int64 array of shape (r,)
        Word of each record, in ``0 .. n_words - 1``.
    x : float64 array of shape (r,)
        Value of each record.
    n_docs : int
        Number of documents of the block (positive; documents without a
        record count as zeros).
    count, mean, m2 : arrays of shape (n_words,), overwritten
        Records of each word; its mean ``sum x / n_docs`` over the block;
        its sum of squared deviations from that mean over the ``n_docs``
        documents, ``sum (x - mean)^2 + (n_docs - count) mean^2``.

    Notes
    -----
    Two sweeps (sums, then deviations), so the deviations are exact; the
    sums are in record order, as ``numpy.bincount`` would give them.
    """
    cdef Py_ssize_t r = word.shape[0]
    cdef Py_ssize_t W = count.shape[0]
    cdef Py_ssize_t i, w
    cdef double dev, mw
    cdef bint bad = False
    if x.shape[0] != r:
        raise ValueError("word and x must have the same length")
    if mean.shape[0] != W or m2.shape[0] != W:
        raise ValueError("count, mean and m2 must have the same length")
    if n_docs <= 0:
        raise ValueError(f"n_docs must be positive, got {n_docs}")
    with nogil:
        for w in range(W):
            count[w] = 0
            mean[w] = 0.0
            m2[w] = 0.0
        for i in range(r):
            w = word[i]
            if w < 0 or w >= W:
                bad = True
                break
            count[w] += 1
            mean[w] += x[i]
        if not bad:
            for w in range(W):
                mean[w] = mean[w] / n_docs
            for i in range(r):
                w = word[i]
                dev = x[i] - mean[w]
                m2[w] += dev * dev
            for w in range(W):
                mw = mean[w]
                m2[w] = m2[w] + <double>(n_docs - count[w]) * (mw * mw)
    if bad:
        raise ValueError(f"word index {word[i]} out of range 0..{W - 1}")


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
