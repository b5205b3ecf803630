"""Partial results of the two corpus passes, over any run of whole documents.

The per-chunk arithmetic of :mod:`spca.text._stats` (pass 1: per-word count,
mean and sum of squared deviations; pass 2: the gram matrix and column sums
of the candidate words) as pure functions of a sequence of
:class:`~spca.text.DocumentChunk`, with the rules that merge the partials of
disjoint blocks of documents.  The backends (the local loop in ``_stats``,
the cluster tasks in ``_dask``) call these; nothing here imports a backend,
so data flows one way: sources -> partials -> backends -> statistics.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._cooccur import (
    cooccurrence_add,
    normalize_documents,
    symmetrize_gram,
    symmetrize_int_gram,
    word_moments,
)
from ._memory import huge_empty
from ._uci import DocumentChunk

__all__ = [
    "CentredPartial",
    "Pass1Partial",
    "Pass2Partial",
    "centred_partial",
    "combine_centred",
    "combine_pass1",
    "combine_pass2",
    "empty_pass1",
    "idf_from_df",
    "pass1_partial",
    "pass2_partial",
]


# --------------------------------------------------------------------------
# transforms
# --------------------------------------------------------------------------


def idf_from_df(document_frequency: ArrayLike, n_docs: int) -> NDArray[np.float64]:
    """Inverse document frequency ``log(n_docs / df)`` (0 where ``df == 0``).

    Parameters
    ----------
    document_frequency : array-like of int
        Number of documents containing each word.
    n_docs : int
        Number of documents.

    Returns
    -------
    idf : ndarray of float64
    """
    df = np.asarray(document_frequency, dtype=np.float64)
    idf = np.zeros_like(df)
    present = df > 0
    idf[present] = np.log(n_docs / df[present])
    return idf


def _values(chunk: DocumentChunk, transform: str, normalize: str | None,
            idf: NDArray[np.float64] | None) -> NDArray[np.float64]:
    """Transformed (and normalised) values of the records of a chunk, C-contiguous
    float64.  Read-only: for ``"count"`` without normalisation this may be
    ``chunk.count`` itself."""
    c = chunk.count
    if transform == "count":
        x = np.ascontiguousarray(c, dtype=np.float64)
        if normalize is not None and np.may_share_memory(x, c):
            x = x.copy()
    elif transform == "binary":
        x = np.ones(len(c), dtype=np.float64)
    elif transform == "log1p":
        x = np.log1p(np.asarray(c, dtype=np.float64))
    else:
        assert idf is not None
        x = np.asarray(c, dtype=np.float64) * idf[chunk.word]
    if normalize is not None and len(x):
        # in place (x is a fresh array); the records of a document are contiguous
        normalize_documents(_indices(chunk.doc), x, 1 if normalize == "l1" else 2)
    return x


def _indices(a: ArrayLike) -> NDArray[np.integer]:
    """``a`` as a C-contiguous int32 or int64 array (the kernels' index types)."""
    a = np.asarray(a)
    if a.dtype != np.int32 and a.dtype != np.int64:
        a = a.astype(np.int64)
    return np.ascontiguousarray(a)


# --------------------------------------------------------------------------
# partial results: computed over any run of whole documents, then combined
# --------------------------------------------------------------------------


class Pass1Partial(NamedTuple):
    """Pass-1 sums over a block of whole documents (see :func:`pass1_partial`).

    Attributes
    ----------
    n_docs : int
        Number of documents covered (empty documents included).
    mean : ndarray of shape (n_words,)
        Column means over these documents.
    m2 : ndarray of shape (n_words,)
        Sums of squared deviations from ``mean`` over these documents.
    document_frequency : ndarray of int64 of shape (n_words,)
        Documents of the block containing each word.
    nnz : int
        Records (nonzero entries) in the block.
    """

    n_docs: int
    mean: NDArray[np.float64]
    m2: NDArray[np.float64]
    document_frequency: NDArray[np.int64]
    nnz: int


def empty_pass1(n_docs: int, n_words: int) -> Pass1Partial:
    """The pass-1 partial of ``n_docs`` empty documents."""
    return Pass1Partial(int(n_docs), np.zeros(n_words), np.zeros(n_words),
                        np.zeros(n_words, dtype=np.int64), 0)


def combine_pass1(*parts: Pass1Partial) -> Pass1Partial:
    """Merge pass-1 partials of disjoint blocks of documents.

    Chan, Golub & LeVeque's pairwise update, applied left to right: the
    result does not depend on the grouping except for rounding.  The
    integer parts (document frequencies, nnz) are exact.  The inputs are
    not modified.
    """
    if not parts:
        raise ValueError("combine_pass1 needs at least one partial")
    n, mean, m2 = parts[0].n_docs, parts[0].mean.copy(), parts[0].m2.copy()
    df = parts[0].document_frequency.copy()
    nnz = parts[0].nnz
    for p in parts[1:]:
        df += p.document_frequency
        nnz += p.nnz
        if p.n_docs == 0:
            continue
        total = n + p.n_docs
        delta = p.mean - mean
        with np.errstate(over="ignore", invalid="ignore"):  # checked by the caller
            mean += delta * (p.n_docs / total)
            m2 += p.m2 + delta * delta * (n * p.n_docs / total)
        n = total
    return Pass1Partial(n, mean, m2, df, nnz)


def pass1_partial(chunks: Iterable[DocumentChunk], n_words: int, transform: str,
                  normalize: str | None, idf: NDArray[np.float64] | None) -> Pass1Partial:
    """Pass-1 partial (count, mean, M2, document frequency, nnz) of some chunks.

    Each chunk's mean and sum of squared deviations are exact from its
    nonzeros (an absent entry contributes ``(0 - mean)^2``), in two sweeps of
    a compiled loop over its records; chunks are merged in order as by
    :func:`combine_pass1`.
    """
    W = n_words
    n = 0
    mean = np.zeros(W)
    m2 = np.zeros(W)
    df_total = np.zeros(W, dtype=np.int64)
    nnz = 0
    occ = np.empty(W, dtype=np.int64)
    mean_c = np.empty(W)
    m2_c = np.empty(W)
    for chunk in chunks:
        n_c = chunk.row_stop - chunk.row_start
        if n_c <= 0:
            continue
        x = _values(chunk, transform, normalize, idf)
        word = _indices(chunk.word)
        nnz += len(word)
        word_moments(word, x, n_c, occ, mean_c, m2_c)
        df_total += occ
        total = n + n_c
        delta = mean_c - mean
        with np.errstate(over="ignore", invalid="ignore"):  # checked by the caller
            mean += delta * (n_c / total)
            m2 += m2_c + delta * delta * (n * n_c / total)
        n = total
    return Pass1Partial(n, mean, m2, df_total, nnz)


class Pass2Partial(NamedTuple):
    """Pass-2 sums over a block of documents: ``gram = X_S' X_S`` and column sums."""

    gram: NDArray[np.float64]
    sums: NDArray[np.float64]


def combine_pass2(*parts: Pass2Partial) -> Pass2Partial:
    """Add pass-2 partials of disjoint blocks of documents (inputs unchanged)."""
    if not parts:
        raise ValueError("combine_pass2 needs at least one partial")
    gram, sums = parts[0].gram.copy(), parts[0].sums.copy()
    for p in parts[1:]:
        gram += p.gram
        sums += p.sums
    return Pass2Partial(gram, sums)


#: Side of the tiles of the k x k accumulator of pass 2 (a power of two; a
#: tile of float64 fits in a core's L2 cache).
_TILE = 256


def _leading_dimension(k: int, itemsize: int = 8) -> int:
    """Row length of the k x k accumulator: ``k``, padded by one cache line when
    the rows would be a multiple of 256 bytes long (such strides make the rows
    of a tile compete for a few cache sets; measured at k = 1024: kernel 33 ->
    27 ms, symmetrisation 4.5 -> 1.4 ms)."""
    line = 64 // itemsize
    return k + line if (k * itemsize) % 256 == 0 else k


#: ... and of the int32 accumulator (a tile of 512 x 512 int32s is 1 MiB; NYT
#: sample, 1,024 candidates, one thread: kernel and symmetrisation 25.6 ms
#: against 28.4 ms with tiles of 256; float64 with tiles of 256: 33.3 ms).
_INT_TILE = 512


#: Transforms whose values are integers (for counts that are): pass 2 then
#: accumulates in int32 while its bound allows (see ``cooccurrence_add``).
_INTEGER_TRANSFORMS = ("count", "binary")


def pass2_partial(chunks: Iterable[DocumentChunk], words: NDArray[np.int64], n_words: int,
                  transform: str, normalize: str | None,
                  idf: NDArray[np.float64] | None) -> Pass2Partial:
    """Pass-2 partial (gram matrix and sums of the columns ``words``) of some chunks.

    The compiled kernel maps each chunk's word ids to candidate positions
    itself (no filtered copy of the chunk); the transform and the
    normalisation use all records of a document.  Integer values (counts,
    binary) without normalisation, candidates in word order, are
    accumulated in int32 while the kernel's bound shows the sums exact
    (half the memory of float64, so more of the accumulator stays in
    cache: NYT sample, 1,024 candidates, one thread, 33 -> 26 ms); from the
    first chunk where it does not, the sums move to a float64 accumulator.
    For integer values the Gram matrix is the one float64 accumulation
    gives, bit for bit (integer sums below ``2**53`` are exact in both);
    after a move caused by non-integer values, equal to it up to rounding
    (the int32 part is exact, the float64 part adds its terms in another
    grouping).
    """
    k = len(words)
    position = np.full(n_words, -1, dtype=np.int64)
    position[words] = np.arange(k)
    squares = np.zeros(k)
    sums = np.zeros(k)
    # products of distinct records, one triangle or the other; see cooccurrence_add
    ipairs = None
    pairs = None
    # (int32 needs increasing positions in each document: candidates in word
    # order, as a CSR matrix's sorted records then give)
    if (transform in _INTEGER_TRANSFORMS and normalize is None
            and bool(np.all(words[1:] > words[:-1]))):
        # (in the first half of the float64 k x k output, which
        # symmetrize_int_gram widens in place: no more memory than float64)
        gram = huge_empty((k, k))
        ld = _leading_dimension(k, 4)
        ipairs = gram.reshape(-1).view(np.int32)[:k * ld].reshape(k, ld)
        ipairs[...] = 0
    else:
        pairs = np.zeros((k, _leading_dimension(k)))
    for chunk in chunks:
        n_c = chunk.row_stop - chunk.row_start
        if n_c <= 0 or len(chunk.word) == 0:
            continue
        x = _values(chunk, transform, normalize, idf)
        doc, word = _indices(chunk.doc), _indices(chunk.word)
        if ipairs is not None:
            if cooccurrence_add(doc, word, x, position, ipairs, squares, sums, _INT_TILE):
                continue
            # this chunk's values do not fit the int32 bound: float64 from here on
            pairs = np.zeros((k, _leading_dimension(k)))
            pairs[:, :k] = ipairs[:, :k]
            ipairs = None
        cooccurrence_add(doc, word, x, position, pairs, squares, sums, _TILE)
    if ipairs is not None:
        symmetrize_int_gram(gram, ld, squares)
        return Pass2Partial(gram, sums)
    symmetrize_gram(pairs, squares)  # in place, dropping the padding
    gram = pairs.reshape(-1)[:k * k].reshape(k, k)
    return Pass2Partial(gram, sums)


class CentredPartial(NamedTuple):
    """Sums of a block of documents for the accurate rows of pass 2 (see
    :func:`centred_partial`): with ``y = x[:, B] - shift`` (every document,
    absent words included) and ``x`` the candidate columns,
    ``yty = y' y``, ``ytx = y' x`` and ``t = sum_d y``."""

    yty: NDArray[np.float64]
    ytx: NDArray[np.float64]
    t: NDArray[np.float64]


def combine_centred(*parts: CentredPartial) -> CentredPartial:
    """Add :class:`CentredPartial` of disjoint blocks of documents (inputs unchanged)."""
    if not parts:
        raise ValueError("combine_centred needs at least one partial")
    yty, ytx, t = parts[0].yty.copy(), parts[0].ytx.copy(), parts[0].t.copy()
    for p in parts[1:]:
        yty += p.yty
        ytx += p.ytx
        t += p.t
    return CentredPartial(yty, ytx, t)


#: Most entries of the dense block of shifted columns formed at a time (16 MB).
_CENTRED_BLOCK = 1 << 21


def centred_partial(chunks: Iterable[DocumentChunk], words: NDArray[np.int64],
                    accurate: NDArray[np.intp], shift: NDArray[np.float64], n_words: int,
                    transform: str, normalize: str | None,
                    idf: NDArray[np.float64] | None) -> CentredPartial:
    """Pass-2 sums for the candidate words ``words[accurate]``, shifted by
    ``shift`` (close to their means) before any product.

    ``x[d, a] x[d, b]`` summed over documents loses everything to rounding
    when ``x[:, a]`` is nearly constant and large (``G / D - mean mean'``
    cancels); the shifted values ``y = x - shift`` are formed exactly (also
    for the documents where the word is absent: ``y = -shift``), so their
    products keep the relative accuracy of the covariance.  Dense in the
    ``|accurate|`` columns, in blocks of documents of at most
    ``_CENTRED_BLOCK`` entries; sparse in the others.
    """
    import scipy.sparse as sp

    k, b = len(words), len(accurate)
    position = np.full(n_words, -1, dtype=np.int64)
    position[words] = np.arange(k)
    in_b = np.full(k, -1, dtype=np.int64)
    in_b[accurate] = np.arange(b)
    yty = np.zeros((b, b))
    ytx = np.zeros((b, k))
    t = np.zeros(b)
    rows = max(1, _CENTRED_BLOCK // max(b, 1))
    for chunk in chunks:
        n_c = chunk.row_stop - chunk.row_start
        if n_c <= 0:
            continue
        x = _values(chunk, transform, normalize, idf) if len(chunk.word) else np.empty(0)
        doc = np.asarray(chunk.doc, dtype=np.int64) - chunk.row_start
        pos = position[np.asarray(chunk.word, dtype=np.int64)] if len(doc) else doc
        sel = pos >= 0
        doc, pos, x = doc[sel], pos[sel], x[sel]
        for lo in range(0, n_c, rows):
            hi = min(lo + rows, n_c)
            a, z = np.searchsorted(doc, [lo, hi])
            d, p, v = doc[a:z] - lo, pos[a:z], x[a:z]
            Y = np.empty((hi - lo, b))
            Y[:] = -shift
            mine = in_b[p] >= 0
            Y[d[mine], in_b[p[mine]]] = v[mine] - shift[in_b[p[mine]]]
            yty += Y.T @ Y
            t += Y.sum(axis=0)
            X = sp.csr_array((v, (d, p)), shape=(hi - lo, k))
            ytx += (X.T @ Y).T
    return CentredPartial(yty, ytx, t)
