"""Compiled kernels of the two corpus passes of the text pipeline.

``word_moments`` (pass 1) gives the per-word record count, mean and sum of
squared deviations of a block of documents in two sweeps over its records;
``normalize_documents`` divides each document by its l1 or l2 norm.

``cooccurrence_add`` (pass 2) adds ``sum_d x[d, a] x[d, b]`` over the pairs
of candidate records of each document of a block into a dense ``k x k``
array.  It maps word ids to candidate positions itself (skipping the other
words) and groups each document's candidates by tile row, in one sweep;
then it loops over the documents' pairs tile by tile of the ``k x k``
array, so that the part being updated stays in cache.  The cost is
``sum_d m_d^2 / 2`` for ``m_d`` candidate words in document ``d``, with no
intermediate sparse matrix.  The accumulator is float64, or int32 for
integer values (counts) while a bound shows every sum exact: half the
memory, so more of it stays in cache.

Both steps run on all cores (OpenMP): the grouping over runs of whole
documents, and, as the tiles are disjoint, the tile pairs (the largest
first, dynamic schedule).  Every entry still receives its terms in
document order, from one thread, so the result is bit for bit the same for
any number of threads.  The number of threads is OpenMP's default
(``OMP_NUM_THREADS``, or a ``threadpoolctl`` limit), or the kernel's
``n_threads``.  Built without OpenMP (``-Dopenmp=disabled``, or a compiler
without it) the loops run serially.

``symmetrize_gram`` (``symmetrize_int_gram`` from an int32 accumulator) and
``centre_gram`` finish pass 2 in one sweep each, also on OpenMP's default
number of threads.

``parse_records`` is the fast path of the UCI reader: it parses a block of
well-formed ``docword`` records and leaves anything else to ``numpy.loadtxt``.
"""
# SPDX-License-Identifier: BSD-3-Clause

import operator

import numpy as np

from ._memory import huge_empty

from libc.stdint cimport int32_t, int64_t
from libc.math cimport fabs, sqrt
from libc.stdlib cimport calloc, free, malloc, realloc
from libc.string cimport memcpy, memmove

from cython.parallel cimport prange

cdef extern from *:
    """
    #ifdef _OPENMP
    #include <omp.h>
    #define SPCA_OPENMP 1
    static int spca_omp_max_threads(void) { return omp_get_max_threads(); }
    #else
    #define SPCA_OPENMP 0
    static int spca_omp_max_threads(void) { return 1; }
    #endif
    """
    const int SPCA_OPENMP
    int spca_omp_max_threads() noexcept nogil

#: Whether this module was compiled with OpenMP (else its loops are serial).
_OPENMP = bool(SPCA_OPENMP)

# Fewest records per thread in step 1 of cooccurrence_add (about 0.1 ms of
# work: fewer are not worth waking a thread).
cdef Py_ssize_t _GROUP_RECORDS = 1 << 14

ctypedef fused doc_t:
    int32_t
    int64_t

ctypedef fused word_t:
    int32_t
    int64_t

# The accumulator of the pairs and the candidate values it multiplies: float64,
# or int32 for integer values whose sums provably fit (see cooccurrence_add).
ctypedef fused acc_t:
    double
    int32_t


cdef inline void _fold_band(acc_t* p, Py_ssize_t ld, Py_ssize_t k, Py_ssize_t band) noexcept nogil:
    """``p[a, b] = p[b, a] = p[a, b] + p[b, a]`` (``p`` a ``k x ld`` C-ordered
    array) for the rows ``a`` of band ``64 band .. 64 band + 63`` and every
    column ``b > a``, by blocks of 64 x 64; the bands touch disjoint entries."""
    cdef Py_ssize_t a0 = band * 64
    cdef Py_ssize_t a1 = min(a0 + 64, k)
    cdef Py_ssize_t a, b, b0, b1
    cdef acc_t v
    for b0 in range(a0, k, 64):
        b1 = min(b0 + 64, k)
        for a in range(a0, a1):
            for b in range(max(a + 1, b0), b1):
                v = p[a * ld + b] + p[b * ld + a]
                p[a * ld + b] = v
                p[b * ld + a] = v


# The pair loops add, for rows i of one segment of records and columns j of
# another, x_i x_j to pairs[col_i, col_j].  Four rows at a time: each (col_j,
# x_j) loaded serves four updates, which keeps the loop bound by the updates
# themselves (read-modify-write of scattered entries) rather than the loads.

cdef inline void _rectangle(acc_t* base, Py_ssize_t ld, const int32_t* col,
                            const acc_t* x, Py_ssize_t i0, Py_ssize_t i1,
                            Py_ssize_t j0, Py_ssize_t j1) noexcept nogil:
    """Every pair (i, j), i0 <= i < i1, j0 <= j < j1."""
    cdef Py_ssize_t i = i0, j
    cdef acc_t x0, x1, x2, x3, xj
    cdef acc_t* r0
    cdef acc_t* r1
    cdef acc_t* r2
    cdef acc_t* r3
    cdef int32_t cj
    if j0 == j1:
        return
    while i + 3 < i1:
        x0 = x[i]
        x1 = x[i + 1]
        x2 = x[i + 2]
        x3 = x[i + 3]
        r0 = base + col[i] * ld
        r1 = base + col[i + 1] * ld
        r2 = base + col[i + 2] * ld
        r3 = base + col[i + 3] * ld
        for j in range(j0, j1):
            cj = col[j]
            xj = x[j]
            r0[cj] += x0 * xj
            r1[cj] += x1 * xj
            r2[cj] += x2 * xj
            r3[cj] += x3 * xj
        i += 4
    while i < i1:
        x0 = x[i]
        r0 = base + col[i] * ld
        for j in range(j0, j1):
            r0[col[j]] += x0 * x[j]
        i += 1


cdef inline void _triangle(acc_t* base, Py_ssize_t ld, const int32_t* col,
                           const acc_t* x, Py_ssize_t i0, Py_ssize_t i1) noexcept nogil:
    """Every pair (i, j), i0 <= i < j < i1: by groups of four rows, the pairs
    inside the group, then the group against the rows after it."""
    cdef Py_ssize_t i = i0, j
    cdef acc_t x0
    cdef acc_t* r0
    cdef acc_t* r1
    cdef acc_t* r2
    while i + 3 < i1:
        r0 = base + col[i] * ld
        r1 = base + col[i + 1] * ld
        r2 = base + col[i + 2] * ld
        r0[col[i + 1]] += x[i] * x[i + 1]
        r0[col[i + 2]] += x[i] * x[i + 2]
        r0[col[i + 3]] += x[i] * x[i + 3]
        r1[col[i + 2]] += x[i + 1] * x[i + 2]
        r1[col[i + 3]] += x[i + 1] * x[i + 3]
        r2[col[i + 3]] += x[i + 2] * x[i + 3]
        _rectangle(base, ld, col, x, i, i + 4, i + 4, i1)
        i += 4
    while i < i1:
        x0 = x[i]
        r0 = base + col[i] * ld
        for j in range(i + 1, i1):
            r0[col[j]] += x0 * x[j]
        i += 1


cdef void _tile_pair(acc_t* base, Py_ssize_t ld, const int32_t* col, const acc_t* x,
                     const Py_ssize_t* ptr, Py_ssize_t stride, Py_ssize_t n_runs,
                     Py_ssize_t p, Py_ssize_t q) noexcept nogil:
    """All the pairs of tile (p, q), p <= q, run after run (document order)."""
    cdef Py_ssize_t t
    cdef const Py_ssize_t* P
    if p == q:
        for t in range(n_runs):
            P = ptr + t * stride
            _triangle(base, ld, col, x, P[p], P[p + 1])
    else:
        for t in range(n_runs):
            P = ptr + t * stride
            _rectangle(base, ld, col, x, P[q], P[q + 1], P[p], P[p + 1])


# Step 1 of cooccurrence_add on a run of whole documents, the records
# start .. stop - 1: their candidate records go to scol/sx from index start
# on (there are at most stop - start of them), grouped by tile row within
# each document, and the tile-row starts of each document with two or more
# candidates to the rows of ptr.  With several threads, each fills one group.
cdef struct _Group:
    Py_ssize_t start, stop  # the records
    Py_ssize_t n_out  # candidate records written: scol[start .. start + n_out - 1]
    Py_ssize_t n_runs, cap  # rows of ptr used, allocated
    Py_ssize_t* ptr  # each row: nb + 1 tile-row starts (indices into scol)
    Py_ssize_t w  # at an error: the word ...
    int64_t c  # ... and its position
    # 1: word out of range, 2: position out of range, 3: out of memory,
    # 4: (int32 values) a value or a document the int32 path does not take
    int err


# The largest |value| the int32 path takes: its square, and so any product of
# two such values, is below 2**31.
cdef double _INT_VALUE_MAX = 46340.0


cdef void _group(_Group* g, const doc_t* doc, const word_t* word, const double* x,
                 const int64_t* position, Py_ssize_t W, Py_ssize_t k, Py_ssize_t nb,
                 Py_ssize_t shift, int32_t* scol, acc_t* sx, int32_t* tcol, acc_t* tx,
                 Py_ssize_t* off) noexcept nogil:
    """Fill ``g`` (``tcol``, ``tx``: scratch from index ``g.start`` on, for
    ``nb > 1``; ``off``: ``nb + 1`` entries of scratch).  For int32 values,
    every candidate value must be an integer of magnitude at most
    ``_INT_VALUE_MAX`` and the candidate positions of each document strictly
    increasing (no repeated word), else ``g.err`` is 4."""
    cdef Py_ssize_t s = g.start, r = g.stop, stride = nb + 1
    cdef Py_ssize_t e, i, j, p, m, o, w, n_out = g.start
    cdef int64_t c, last
    cdef double v
    cdef bint ordered
    cdef Py_ssize_t* P
    cdef Py_ssize_t* grown
    while s < r:
        e = s + 1
        while e < r and doc[e] == doc[s]:
            e += 1
        o = n_out
        last = -1
        ordered = True
        for i in range(s, e):
            w = word[i]
            if w < 0 or w >= W:
                g.err = 1
                g.w = w
                return
            c = position[w]
            if c < 0:
                if c == -1:
                    continue
            if c < 0 or c >= k:
                g.err = 2
                g.w = w
                g.c = c
                return
            if acc_t is int32_t:
                v = x[i]
                # (the range first: a cast of a larger double is undefined)
                if c <= last or not (fabs(v) <= _INT_VALUE_MAX and v == <double> <int32_t> v):
                    g.err = 4
                    return
                sx[o] = <int32_t> v
            else:
                sx[o] = x[i]
            if c < last:
                ordered = False
            last = c
            scol[o] = <int32_t> c
            o += 1
        m = o - n_out
        if m >= 2:
            if g.n_runs == g.cap:
                grown = <Py_ssize_t*> realloc(g.ptr, 2 * g.cap * stride * sizeof(Py_ssize_t))
                if grown == NULL:
                    g.err = 3
                    return
                g.ptr = grown
                g.cap *= 2
            P = g.ptr + g.n_runs * stride
            if ordered or nb == 1:  # already grouped: find where each row starts
                j = n_out
                for p in range(nb):
                    while j < o and (scol[j] >> shift) < p:
                        j += 1
                    P[p] = j
                P[nb] = o
            else:  # a counting sort by tile row, stable
                for p in range(stride):
                    off[p] = 0
                for i in range(m):
                    tcol[g.start + i] = scol[n_out + i]
                    tx[g.start + i] = sx[n_out + i]
                    off[(scol[n_out + i] >> shift) + 1] += 1
                off[0] = n_out
                for p in range(nb):
                    off[p + 1] += off[p]
                    P[p] = off[p]
                P[nb] = o
                for i in range(m):
                    p = tcol[g.start + i] >> shift
                    j = off[p]
                    scol[j] = tcol[g.start + i]
                    sx[j] = tx[g.start + i]
                    off[p] = j + 1
            g.n_runs += 1
        n_out = o
        s = e
    g.n_out = n_out - g.start


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


ctypedef fused ptr_t:
    int32_t
    int64_t


def document_ids(const ptr_t[::1] indptr, Py_ssize_t row, Py_ssize_t stop,
                 int64_t[::1] out):
    """The document of each record of the CSR rows ``row .. stop - 1``:
    ``np.repeat(np.arange(row, stop), np.diff(indptr[row:stop + 1]))``,
    written into ``out`` (of length ``indptr[stop] - indptr[row]``).

    Raises
    ------
    ValueError
        If ``row .. stop`` is not a range of rows of ``indptr``, if
        ``indptr`` decreases there, or for a wrong length of ``out``.
    """
    cdef Py_ssize_t d, i, lo, a, b
    if not 0 <= row <= stop < indptr.shape[0]:
        raise ValueError(f"rows {row}..{stop} out of range 0..{indptr.shape[0] - 1}")
    lo = indptr[row]
    if out.shape[0] != indptr[stop] - lo:
        raise ValueError(f"out must have length {indptr[stop] - lo}, got {out.shape[0]}")
    for d in range(row, stop):
        if indptr[d + 1] < indptr[d]:
            raise ValueError(f"indptr decreases at row {d}")
    with nogil:
        for d in range(row, stop):
            a = indptr[d] - lo
            b = indptr[d + 1] - lo
            for i in range(a, b):
                out[i] = d


def normalize_documents(const doc_t[::1] doc, double[::1] x, int norm):
    """Divide the values of each document by their l1 or l2 norm, in place.

    Parameters
    ----------
    doc : int32 or int64 array of shape (r,)
        Document of each record; the records of a document must be
        contiguous.
    x : float64 array of shape (r,), updated in place
        Value of each record.  A document whose norm is 0 is left as is.
    norm : {1, 2}
        ``sum |x|`` or ``sqrt(sum x^2)`` over the records of the document,
        summed in record order (as ``numpy.bincount`` would).
    """
    cdef Py_ssize_t r = doc.shape[0]
    cdef Py_ssize_t s = 0, e, i
    cdef double acc
    if x.shape[0] != r:
        raise ValueError("doc and x must have the same length")
    if norm != 1 and norm != 2:
        raise ValueError(f"norm must be 1 or 2, got {norm}")
    with nogil:
        while s < r:
            e = s + 1
            while e < r and doc[e] == doc[s]:
                e += 1
            acc = 0.0
            if norm == 1:
                for i in range(s, e):
                    acc += fabs(x[i])
            else:
                for i in range(s, e):
                    acc += x[i] * x[i]
                acc = sqrt(acc)
            if acc > 0:
                for i in range(s, e):
                    x[i] = x[i] / acc
            s = e


def _requested_threads(n_threads):
    """``n_threads`` of :func:`cooccurrence_add` as an int (``<= 0``: the default)."""
    if n_threads is None:
        return 0
    if isinstance(n_threads, bool):
        raise ValueError(f"n_threads must be None or an integer, got {n_threads!r}")
    try:
        return operator.index(n_threads)
    except TypeError:
        raise ValueError(
            f"n_threads must be None or an integer, got {n_threads!r}"
        ) from None


def _default_threads():
    """The number of threads a parallel loop of this module uses by default:
    OpenMP's (``OMP_NUM_THREADS``, or a ``threadpoolctl`` limit set in this
    thread), 1 when the module was built without OpenMP."""
    return spca_omp_max_threads()


def cooccurrence_add(const doc_t[::1] doc, const word_t[::1] word, const double[::1] x,
                     const int64_t[::1] position, acc_t[:, ::1] pairs,
                     double[::1] squares, double[::1] sums, Py_ssize_t block=256, *,
                     n_threads=None):
    """Accumulate the products of the candidate records of each document.

    Parameters
    ----------
    doc : int32 or int64 array of shape (r,)
        Document of each record; the records of a document must be
        contiguous (any document order).
    word : int32 or int64 array of shape (r,)
        Word of each record, in ``0 .. n_words - 1``.
    x : float64 array of shape (r,)
        Value of each record.
    position : int64 array of shape (n_words,)
        Row/column in ``pairs`` of each word, in ``0 .. k - 1``, or ``-1``
        for a word to skip; distinct words must have distinct positions.
    pairs : float64 or int32 array of shape (k, ld), ``ld >= k``, updated in place
        Receives ``x_i x_j`` at ``[pos_i, pos_j]`` or ``[pos_j, pos_i]`` for
        every pair ``i < j`` of candidate records of one document: when
        ``pos_i // block`` and ``pos_j // block`` differ, in the lower
        triangle ``[max, min]``, otherwise in one triangle or the other, by
        record order.  Columns ``k ..`` (a padding that keeps the rows off
        cache-aliasing strides) are unused.  int32 (half the memory, so
        more of it stays in cache) only for integer values whose sums
        provably fit, see Returns.
    squares : float64 array of shape (k,), updated in place
        Receives ``x_i^2`` at ``pos_i`` for every candidate record.  With an
        int32 ``pairs`` it must hold the squares of every record already
        added into ``pairs`` (the bound that keeps the sums exact).
    sums : float64 array of shape (k,), updated in place
        Receives ``x_i`` at ``pos_i`` for every candidate record.
    block : int, default 256
        Side of the tiles of ``pairs`` (a power of two): all the pairs of a
        tile are added, document after document, before the next tile.
    n_threads : int, optional
        Threads, at most: one per 16,384 records when grouping them, one per
        tile pair (``nb (nb + 1) / 2`` with ``nb = ceil(k / block)``) in the
        tile loop.  ``None`` or ``<= 0`` (default): OpenMP's default, i.e.
        ``OMP_NUM_THREADS`` or a ``threadpoolctl`` limit set in the calling
        thread, else all cores.  Without OpenMP in the build, always 1.

    Returns
    -------
    added : bool
        True, except with an int32 ``pairs`` when the values do not allow
        it: then nothing was written, and the caller adds the block into a
        float64 copy.  int32 sums are exact when every candidate value is an
        integer (of magnitude at most 46,340), each document holds each
        candidate word at most once with increasing positions (as in a CSR
        matrix with sorted indices and candidates numbered in word order),
        and every ``squares`` entry stays below ``2**31`` with this block's
        records: by the Cauchy-Schwarz inequality every partial sum of an
        entry is then at most ``sqrt(squares[a] squares[b]) < 2**31`` in
        magnitude.  Such sums are also exact in float64, so either
        accumulator gives the same Gram matrix, bit for bit.

    Raises
    ------
    ValueError
        For inconsistent shapes, a word outside ``0 .. n_words - 1``, a
        position outside ``-1 .. k - 1`` or an ``n_threads`` that is not
        ``None`` or an integer; then the outputs are unchanged.

    Notes
    -----
    The Gram matrix of the candidate columns is
    ``pairs + pairs.T + diag(squares)`` (see :func:`symmetrize_gram`); this
    is exact also when a (document, word) pair repeats, as
    ``(x_i + x_j)^2 = x_i^2 + x_j^2 + 2 x_i x_j``.  Every entry receives its
    terms in document order, as a loop over the documents would add them.

    Threads: first each thread groups the candidate records of a run of
    whole documents (the records cut into equal parts between documents)
    into its own part of the scratch arrays; the sums and squares are then
    added in document order, in one sweep.  Then each thread takes the next
    tile pair, the ones with the most products first, and adds all its
    products, document after document.  A tile pair writes only its own
    tile of ``pairs``, so the result is the same, bit for bit, for any
    number of threads.  An off-diagonal tile pair ``(p, q)``, ``p < q``,
    writes below the diagonal, in the rows of tile ``q``: the heaviest tile
    pairs (those of the most frequent candidates' tile row) then write
    different rows of ``pairs`` at the same time; with tile pairs sharing
    their rows, the tile loop was 1.3 times slower on 2 cores (NYT sample,
    k = 1024: 13.4 ms against 10.4 ms; 1 thread: 21.3 ms against 20.7 ms).
    A Dask worker started by a nanny has ``OMP_NUM_THREADS=1`` (Dask's
    default), so its tasks stay single-threaded.
    """
    cdef Py_ssize_t r = doc.shape[0]
    cdef Py_ssize_t k = squares.shape[0]
    cdef Py_ssize_t W = position.shape[0]
    cdef Py_ssize_t ld = pairs.shape[1]
    cdef Py_ssize_t i, j, p, q, t, m, e, w = 0, nb, shift = 0
    cdef Py_ssize_t n_runs = 0, stride, n_pairs, u, v, a
    cdef int64_t c = 0
    cdef int err = 0, nt, ng
    cdef double xa
    cdef acc_t* base
    cdef const doc_t* docp
    cdef const word_t* wordp
    cdef const double* xp
    cdef const int64_t* posp
    cdef int32_t* scol = NULL  # candidate records: positions ...
    cdef acc_t* sx = NULL  # ... and values
    cdef int32_t* tcol = NULL  # a document's candidates, while grouped by tile row
    cdef acc_t* tx = NULL
    cdef double* add_sq = NULL  # int32: the block's squares and sums, before the check
    cdef double* add_sum = NULL
    cdef Py_ssize_t* off = NULL  # next free slot of each tile row, for each group
    cdef _Group* groups = NULL  # step 1's runs of whole documents, one per thread
    cdef Py_ssize_t* ptr = NULL  # of each document with 2+ candidates: its tile rows' starts
    cdef Py_ssize_t* P
    cdef double* work = NULL  # of each tile pair, while ordering them
    cdef Py_ssize_t* pair_p = NULL  # the tile pairs, by decreasing work
    cdef Py_ssize_t* pair_q = NULL
    if word.shape[0] != r or x.shape[0] != r:
        raise ValueError("doc, word and x must have the same length")
    if pairs.shape[0] != k or ld < k or sums.shape[0] != k:
        raise ValueError("pairs must be k x (>= k), squares and sums of length k")
    if block < 1 or block & (block - 1):
        raise ValueError(f"block must be a power of two, got {block}")
    if k >= 2**31:
        raise ValueError("too many candidate words")
    requested = _requested_threads(n_threads)
    if r == 0:
        return True
    while (1 << shift) < block:
        shift += 1
    nb = (k + block - 1) >> shift
    stride = nb + 1
    n_pairs = nb * (nb + 1) // 2
    threads = spca_omp_max_threads() if requested <= 0 else requested
    # step 1: a thread per run of at least _GROUP_RECORDS records; step 3: a
    # thread per tile pair at most
    ng = <int> max(1, min(threads, r // _GROUP_RECORDS))
    nt = <int> max(1, min(threads, n_pairs))
    docp = &doc[0]
    wordp = &word[0]
    xp = &x[0]
    posp = &position[0] if W > 0 else NULL
    # (the candidate records' values, then their positions, in one numpy
    # buffer: numpy asks the kernel for transparent huge pages on buffers of
    # 4 MiB or more, so that first touching it costs a few page faults
    # instead of one per 4 KiB, and huge_empty aligns it so that every
    # 2 MiB of it can be one; r > 0 here, and the data is at least 16-byte
    # aligned, so the values are aligned)
    scratch = huge_empty(r * (sizeof(acc_t) + sizeof(int32_t)), np.uint8)
    cdef unsigned char[::1] scratch_view = scratch
    sx = <acc_t*> &scratch_view[0]
    scol = <int32_t*> (&scratch_view[0] + r * sizeof(acc_t))
    off = <Py_ssize_t*> malloc(ng * stride * sizeof(Py_ssize_t))
    groups = <_Group*> calloc(ng, sizeof(_Group))
    if nb > 1:
        tcol = <int32_t*> malloc(r * sizeof(int32_t))
        tx = <acc_t*> malloc(r * sizeof(acc_t))
    if acc_t is int32_t:
        add_sq = <double*> calloc(k if k else 1, sizeof(double))
        add_sum = <double*> calloc(k if k else 1, sizeof(double))
    if nt > 1:
        work = <double*> malloc(n_pairs * sizeof(double))
        pair_p = <Py_ssize_t*> malloc(n_pairs * sizeof(Py_ssize_t))
        pair_q = <Py_ssize_t*> malloc(n_pairs * sizeof(Py_ssize_t))
    try:
        if (scol == NULL or sx == NULL or off == NULL or groups == NULL
                or (nb > 1 and (tcol == NULL or tx == NULL))
                or (acc_t is int32_t and (add_sq == NULL or add_sum == NULL))
                or (nt > 1 and (work == NULL or pair_p == NULL or pair_q == NULL))):
            raise MemoryError()
        # the groups: about r / ng records each, cut between documents
        for j in range(ng):
            groups[j].start = groups[j - 1].stop if j else 0
            e = r if j == ng - 1 else max(r * (j + 1) // ng, groups[j].start)
            while 0 < e < r and doc[e] == doc[e - 1]:
                e += 1
            groups[j].stop = e
            groups[j].cap = 1024
            groups[j].ptr = <Py_ssize_t*> malloc(1024 * stride * sizeof(Py_ssize_t))
            if groups[j].ptr == NULL:
                raise MemoryError()
        with nogil:
            # 1. the candidate records, document after document, those of a
            #    document grouped by tile row (block 0's records, block 1's, ...);
            #    in parallel, each thread a group of documents
            if ng == 1:
                _group(&groups[0], docp, wordp, xp, posp, W, k, nb, shift, scol, sx,
                       tcol, tx, off)
            else:
                for j in prange(ng, schedule="static", num_threads=ng):
                    _group(&groups[j], docp, wordp, xp, posp, W, k, nb, shift, scol, sx,
                           tcol, tx, off + j * stride)
            for j in range(ng):  # the first error, in record order
                if groups[j].err:
                    err = groups[j].err
                    w = groups[j].w
                    c = groups[j].c
                    break
            if not err:
                # the groups' runs, in document order
                if ng == 1:
                    ptr = groups[0].ptr
                    groups[0].ptr = NULL
                    n_runs = groups[0].n_runs
                else:
                    for j in range(ng):
                        n_runs += groups[j].n_runs
                    ptr = <Py_ssize_t*> malloc((n_runs + 1) * stride * sizeof(Py_ssize_t))
                    if ptr == NULL:
                        err = 3
                    else:
                        t = 0
                        for j in range(ng):
                            memcpy(ptr + t * stride, groups[j].ptr,
                                   groups[j].n_runs * stride * sizeof(Py_ssize_t))
                            t += groups[j].n_runs
            if not err:
                # 2. sums and squares (each entry in document order); int32:
                #    the block's first, then the bound of every sum, then the
                #    totals (integers below 2**53: the same values)
                if acc_t is int32_t:
                    for j in range(ng):
                        for i in range(groups[j].start, groups[j].start + groups[j].n_out):
                            xa = <double> sx[i]
                            add_sum[scol[i]] += xa
                            add_sq[scol[i]] += xa * xa
                    for i in range(k):
                        if not squares[i] + add_sq[i] < 2147483648.0:
                            err = 4
                            break
                    if not err:
                        for i in range(k):
                            sums[i] += add_sum[i]
                            squares[i] += add_sq[i]
                else:
                    for j in range(ng):
                        for i in range(groups[j].start, groups[j].start + groups[j].n_out):
                            xa = sx[i]
                            sums[scol[i]] += xa
                            squares[scol[i]] += xa * xa
            if not err:
                # 3. the pairs, tile by tile: a tile pair (p, q) writes only
                #    its own tile of pairs, so the tile pairs are independent
                base = &pairs[0, 0]
                if nt == 1:
                    for p in range(nb):
                        for q in range(p, nb):
                            _tile_pair(base, ld, scol, sx, ptr, stride, n_runs, p, q)
                else:
                    # the work of each tile pair (its number of products), then
                    # the pairs by decreasing work (an insertion sort: a few
                    # hundred pairs at most), so that the largest start first
                    # and the small ones fill in at the end
                    u = 0
                    for p in range(nb):
                        for q in range(p, nb):
                            pair_p[u] = p
                            pair_q[u] = q
                            work[u] = 0.0
                            u += 1
                    for t in range(n_runs):
                        P = ptr + t * stride
                        u = 0
                        for p in range(nb):
                            m = P[p + 1] - P[p]
                            work[u] += 0.5 * <double> (m * (m - 1))
                            u += 1
                            for q in range(p + 1, nb):
                                work[u] += <double> (m * (P[q + 1] - P[q]))
                                u += 1
                    for u in range(1, n_pairs):
                        xa = work[u]
                        p = pair_p[u]
                        q = pair_q[u]
                        v = u
                        while v > 0 and work[v - 1] < xa:
                            work[v] = work[v - 1]
                            pair_p[v] = pair_p[v - 1]
                            pair_q[v] = pair_q[v - 1]
                            v -= 1
                        work[v] = xa
                        pair_p[v] = p
                        pair_q[v] = q
                    for a in prange(n_pairs, schedule="dynamic", num_threads=nt):
                        _tile_pair(base, ld, scol, sx, ptr, stride, n_runs, pair_p[a], pair_q[a])
    finally:
        if groups != NULL:
            for j in range(ng):
                free(groups[j].ptr)
        free(groups)
        free(tcol)
        free(tx)
        free(off)
        free(ptr)
        free(work)
        free(pair_p)
        free(pair_q)
        free(add_sq)
        free(add_sum)
    if err == 4:
        return False
    if err == 1:
        raise ValueError(f"word index {w} out of range 0..{W - 1}")
    if err == 2:
        raise ValueError(f"position {c} of word {w} out of range -1..{k - 1}")
    if err == 3:
        raise MemoryError()
    return True


def symmetrize_gram(double[:, ::1] pairs, const double[::1] squares):
    """``gram = pairs + pairs.T + diag(squares)`` in place, as a C-ordered k x k array.

    Parameters
    ----------
    pairs : float64 array of shape (k, ld), ``ld >= k``, overwritten
        As filled by :func:`cooccurrence_add`.  On exit, the first ``k * k``
        entries of its buffer hold the Gram matrix, row by row (without the
        padding): ``pairs.reshape(-1)[:k * k].reshape(k, k)``, exactly
        symmetric (``gram[a, b]`` and ``gram[b, a]`` are the same sum).
    squares : float64 array of shape (k,)

    Notes
    -----
    In place, so that no new ``k x k`` array is allocated (for k ~ 1000 its
    first touch costs more than the sweep itself).  The bands of 64 rows
    (with the matching columns) run in parallel on OpenMP's default number
    of threads (k = 1024, 2 cores: 1.0 -> 0.6 ms); the diagonal and the
    removal of the padding are sequential.
    """
    cdef Py_ssize_t k = squares.shape[0]
    cdef Py_ssize_t ld = pairs.shape[1]
    cdef Py_ssize_t n_bands = (k + 63) // 64
    cdef Py_ssize_t band, a
    cdef int nt = <int> max(1, min(spca_omp_max_threads(), n_bands))
    cdef double* base
    if pairs.shape[0] != k or ld < k:
        raise ValueError("pairs must be k x (>= k)")
    if k == 0:
        return
    base = &pairs[0, 0]
    with nogil:
        # band a0 .. a1 - 1 swaps the entries of rows a0 .. and of columns
        # a0 .. beyond the diagonal: the bands are disjoint
        for band in prange(n_bands, schedule="dynamic", num_threads=nt):
            _fold_band(base, ld, k, band)
        for a in range(k):
            pairs[a, a] = pairs[a, a] + pairs[a, a] + squares[a]
        if ld > k:  # drop the padding; row a moves down, never over a row still to move
            for a in range(1, k):
                memmove(base + a * k, base + a * ld, k * sizeof(double))


def symmetrize_int_gram(double[:, ::1] gram, Py_ssize_t ld, const double[::1] squares):
    """``gram = pairs + pairs.T + diag(squares)`` from the int32 ``pairs`` held
    at the start of ``gram``'s own buffer, in place.

    Parameters
    ----------
    gram : float64 array of shape (k, k), overwritten
        Its first ``4 k ld`` bytes hold ``pairs``, a C-ordered ``k x ld``
        int32 array as filled by :func:`cooccurrence_add` (whose bound keeps
        every entry, and every sum of two, below ``2**31`` in magnitude);
        the rest is scratch.  On exit, the Gram matrix, exactly symmetric:
        the same values, bit for bit, as :func:`symmetrize_gram` gives from a
        float64 accumulator of the same records (integer sums below
        ``2**53`` are exact in either).
    ld : int
        Row length of ``pairs``, ``k <= ld <= 2 k``.
    squares : float64 array of shape (k,)

    Notes
    -----
    The int32 accumulator inside the output's buffer keeps pass 2's memory
    at the ``k x k`` float64 array (a separate one would add half of it).
    First ``pairs[a, b] = pairs[b, a] = pairs[a, b] + pairs[b, a]`` by
    blocks of 64 x 64, as in :func:`symmetrize_gram`; then each row,
    copied out, is widened into row ``a`` of ``gram`` from the last row up:
    row ``a`` of ``gram`` starts at byte ``8 k a >= 4 ld a``, so it covers
    only int32 rows ``a`` (the copy) and later, already widened.
    """
    cdef Py_ssize_t k = squares.shape[0]
    cdef Py_ssize_t n_bands = (k + 63) // 64
    cdef Py_ssize_t band, a, b
    cdef int nt = <int> max(1, min(spca_omp_max_threads(), n_bands))
    cdef int32_t* ip
    cdef int32_t* row = NULL
    cdef double* out
    if gram.shape[0] != k or gram.shape[1] != k:
        raise ValueError("gram must be k x k, squares of length k")
    if ld < k or ld > 2 * k:
        raise ValueError(f"ld must be in k .. 2k ({k} .. {2 * k}), got {ld}")
    if k == 0:
        return
    ip = <int32_t*> &gram[0, 0]
    out = &gram[0, 0]
    row = <int32_t*> malloc(k * sizeof(int32_t))
    if row == NULL:
        raise MemoryError()
    with nogil:
        # the bands a0 .. a1 - 1 own the entries of their rows and columns
        # beyond the diagonal: disjoint
        for band in prange(n_bands, schedule="dynamic", num_threads=nt):
            _fold_band(ip, ld, k, band)
        a = k - 1
        while a >= 0:
            memcpy(row, ip + a * ld, k * sizeof(int32_t))
            for b in range(k):
                out[a * k + b] = <double> row[b]
            out[a * k + a] = <double> (2 * <int64_t> row[a]) + squares[a]
            a -= 1
    free(row)


def centre_gram(double[:, ::1] gram, const double[::1] mean, double n_docs,
                double[::1] rowmax=None):
    """``gram / n_docs - outer(mean, mean)`` in place, in one sweep.

    Parameters
    ----------
    gram : float64 array of shape (k, k), overwritten
        ``X' X``.  On exit, the covariance; exactly symmetric if ``gram`` is,
        as ``mean[a] * mean[b] == mean[b] * mean[a]``.
    mean : float64 array of shape (k,)
    n_docs : float
    rowmax : float64 array of shape (k,), optional, overwritten
        ``max_{b != a} |cov[a, b]|`` of each row of the result, in the same
        sweep (the solver's screening rows, ``spca._variance.offdiag_rowmax``,
        without a second read of the ``k x k`` array: 0.7 ms at k = 1,024).

    Notes
    -----
    The rows run in parallel on OpenMP's default number of threads, from
    k = 128 (k = 1024, 2 cores: 0.7 -> 0.4 ms).
    """
    cdef Py_ssize_t k = mean.shape[0]
    cdef Py_ssize_t a, b
    cdef int nt = <int> max(1, min(spca_omp_max_threads(), k // 64))
    cdef double ma, v, best
    cdef bint rows = rowmax is not None
    if gram.shape[0] != k or gram.shape[1] != k:
        raise ValueError("gram must be k x k")
    if rows and rowmax.shape[0] != k:
        raise ValueError(f"rowmax must have length {k}, got {rowmax.shape[0]}")
    with nogil:
        for a in prange(k, schedule="static", num_threads=nt):
            ma = mean[a]
            best = 0.0
            for b in range(k):
                v = gram[a, b] / n_docs - ma * mean[b]
                gram[a, b] = v
                v = fabs(v)
                # (a NaN fails the comparison, as in offdiag_rowmax)
                if b != a and v > best:
                    best = v
            if rows:
                rowmax[a] = best


def parse_records(const unsigned char[::1] block, int32_t[:, ::1] out):
    """Parse the records of a block of a UCI ``docword`` file into ``out``.

    The fast path of the reader: lines of three decimal integers in
    ``0 .. 2**31 - 1`` separated by spaces or tabs, each line ended by
    ``\\n`` (the last one may lack it), are written to the rows of ``out``
    (OUT) in order.

    Returns the number of records, or -1 when the block holds anything
    else -- a sign, another character (``\\r`` included), a blank line, a
    line of other than three values, a value of ``2**31`` or more, more
    lines than ``out`` has rows -- so that the caller parses it with
    ``numpy.loadtxt``, which names the problem.  For every block this
    accepts, ``numpy.loadtxt(..., dtype=int32)`` gives the same array.
    """
    cdef Py_ssize_t n = block.shape[0], cap = out.shape[0]
    cdef Py_ssize_t i, row = 0
    cdef int col = 0, fail = 0
    cdef bint in_number = False
    cdef int64_t value = 0
    cdef unsigned char c
    if out.shape[1] != 3:
        raise ValueError("out must have 3 columns")
    with nogil:
        for i in range(n):
            c = block[i]
            if 48 <= c <= 57:  # a digit
                if not in_number:
                    in_number = True
                    value = 0
                value = value * 10 + (c - 48)
                if value > 2147483647:
                    fail = 1
                    break
            elif c == 32 or c == 9 or c == 10:  # space, tab, newline
                if in_number:
                    if col >= 3 or row >= cap:
                        fail = 1
                        break
                    out[row, col] = <int32_t> value
                    col += 1
                    in_number = False
                if c == 10:
                    if col != 3:
                        fail = 1
                        break
                    row += 1
                    col = 0
            else:
                fail = 1
                break
        if not fail and (in_number or col):
            # the last line, without its newline
            if in_number:
                if col >= 3 or row >= cap:
                    fail = 1
                else:
                    out[row, col] = <int32_t> value
                    col += 1
            if not fail:
                if col != 3:
                    fail = 1
                else:
                    row += 1
    return -1 if fail else row
