"""Out-of-core word statistics for sparse PCA on text.

The paper's pipeline on a corpus too large for memory is two streaming passes:

1. :func:`word_statistics` -- the mean and variance of every word (column of
   the documents x words matrix) in O(W) memory; the variances feed the safe
   feature elimination of Theorem 1 (:func:`spca._screening.safe_feature_elimination`).
2. :func:`candidate_covariance` -- the dense covariance of the few surviving
   words, O(k^2) memory, accumulated document by document without ever
   centering (densifying) the corpus.

Both read any source accepted by :func:`iter_document_chunks` and process it
in chunks of whole documents, so the per-document transforms (length
normalisation, tf-idf) are exact whatever the chunk size.

Transforms
----------
With ``c[d, w]`` the count of word ``w`` in document ``d``, ``D`` the number
of documents and ``df[w]`` the number of documents containing ``w``, the
matrix analysed is ``x[d, w] = g(c[d, w])`` (zero where the count is zero):

``"count"``  ``x = c`` (the paper's setting);
``"binary"`` ``x = 1`` where ``c > 0``;
``"log1p"``  ``x = log(1 + c)``;
``"tfidf"``  ``x = c * idf[w]`` with ``idf[w] = log(D / df[w])`` (natural
             log, no smoothing; a word found in every document gets weight 0,
             a word found in none has ``idf = 0`` by convention).

Then, if ``normalize`` is ``"l1"`` or ``"l2"``, every non-empty document
(row) is divided by its l1 norm ``sum_w |x[d, w]|`` or l2 norm
``sqrt(sum_w x[d, w]^2)``, taken over *all* words of the document (not just
the selected ones).  Rows whose norm is 0 are left as zeros.  Means and
variances are over all ``D`` documents, including documents where a word is
absent (they are the column statistics of the full matrix), with the
population normalisation ``1/D``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from . import _dask
from ._cooccur import centre_gram
from ._partials import (
    CentredPartial,
    Pass1Partial,
    Pass2Partial,
    centred_partial,
    combine_pass1,
    combine_pass2,
    empty_pass1,
    idf_from_df,
    pass1_partial,
    pass2_partial,
)
from ._source import open_source
from ._uci import DEFAULT_CHUNK_SIZE

__all__ = [
    "TRANSFORMS",
    "Pass1Partial",
    "Pass2Partial",
    "WordStatistics",
    "candidate_covariance",
    "combine_pass1",
    "combine_pass2",
    "empty_pass1",
    "idf_from_df",
    "pass1_partial",
    "pass2_partial",
    "word_statistics",
]

TRANSFORMS = ("count", "binary", "log1p", "tfidf")
_NORMALIZE = (None, "l1", "l2")

Transform = Literal["count", "binary", "log1p", "tfidf"]
Normalize = Literal["l1", "l2"] | None
Backend = Literal["local", "dask"]
_BACKENDS = ("local", "dask")


@dataclass(frozen=True, eq=False)
class WordStatistics:
    """Per-word statistics of a corpus, from :func:`word_statistics`.

    Attributes
    ----------
    n_docs : int
        Number of documents ``D`` (including empty documents).
    n_words : int
        Number of words ``W``.
    nnz : int
        Number of stored (document, word) pairs.
    mean : ndarray of shape (n_words,)
        Column means of the transformed matrix, over all ``D`` documents.
    variance : ndarray of shape (n_words,)
        Population (``1/D``) column variances of the transformed matrix.
    document_frequency : ndarray of int64 of shape (n_words,)
        Number of documents containing each word (transform-independent).
    transform : str
        The transform, see :func:`word_statistics`.
    normalize : str or None
        The document normalisation.
    idf : ndarray of shape (n_words,) or None
        The ``log(D / df)`` weights used, for ``transform="tfidf"``.
    """

    n_docs: int
    n_words: int
    nnz: int
    mean: NDArray[np.float64]
    variance: NDArray[np.float64]
    document_frequency: NDArray[np.int64]
    transform: str
    normalize: str | None
    idf: NDArray[np.float64] | None = None

    def screen(self, lam: float) -> NDArray[np.intp]:
        """Words surviving safe feature elimination (Theorem 1) at penalty ``lam``.

        Parameters
        ----------
        lam : float
            The sparsity penalty.

        Returns
        -------
        kept : ndarray of intp
            Sorted indices of the words with ``variance > lam``.
        """
        from .._screening import safe_feature_elimination

        return safe_feature_elimination(self.variance, lam)


def _check_transform(transform: str, normalize: str | None) -> None:
    if transform not in TRANSFORMS:
        raise ValueError(f"transform must be one of {TRANSFORMS}, got {transform!r}")
    if normalize not in _NORMALIZE:
        raise ValueError(f"normalize must be None, 'l1' or 'l2', got {normalize!r}")


def _check_backend(backend: str, client: Any) -> str:
    if backend not in _BACKENDS:
        raise ValueError(f"backend must be one of {_BACKENDS}, got {backend!r}")
    return "dask" if client is not None else backend


def _run_pass1(src: Any, n_words: int, transform: str, normalize: str | None,
               idf: NDArray[np.float64] | None, *, chunk_size: int, progress: bool,
               backend: str, client: Any) -> Pass1Partial:
    if backend == "dask":
        return _dask.dask_pass1(src, transform, normalize, idf, chunk_size=chunk_size,
                          client=client)
    chunks = _progress(src.chunks(int(chunk_size)), src, progress)
    return pass1_partial(chunks, n_words, transform, normalize, idf)


def _run_pass2(src: Any, words: NDArray[np.int64], transform: str, normalize: str | None,
               idf: NDArray[np.float64] | None, *, chunk_size: int, progress: bool,
               backend: str, client: Any) -> Pass2Partial:
    if backend == "dask":
        return _dask.dask_pass2(src, words, transform, normalize, idf, chunk_size=chunk_size,
                          client=client)
    chunks = _progress(src.chunks(int(chunk_size)), src, progress)
    return pass2_partial(chunks, words, src.n_words, transform, normalize, idf)


def word_statistics(
    source: Any,
    transform: Transform = "count",
    normalize: Normalize = None,
    *,
    document_frequency: ArrayLike | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = False,
    backend: Backend = "local",
    client: Any = None,
) -> WordStatistics:
    """Per-word mean and variance of a corpus, streamed in O(W) memory.

    Pass 1 of the paper's pipeline: the variances are the diagonal of the
    covariance matrix, all that safe feature elimination needs.

    Parameters
    ----------
    source : path-like, scipy.sparse matrix or Corpus
        A UCI ``docword`` file (plain or gzip), a cache directory from
        :func:`cache_uci_bow`, a Parquet dataset (a file or a directory of
        shards, see :func:`~spca.text.open_parquet`), a sparse
        ``(n_docs, n_words)`` count matrix, or a :class:`~spca.text.Corpus`.
        Never modified.
    transform : {"count", "binary", "log1p", "tfidf"}, default "count"
        The per-entry transform, see Notes.
    normalize : {None, "l1", "l2"}, default None
        Per-document length normalisation applied after the transform.
    document_frequency : array-like of int of shape (n_words,), optional
        Known document frequencies, used for ``"tfidf"`` (saves the extra
        pass needed when ``transform="tfidf"`` and ``normalize`` is set).
    chunk_size : int, default 2**20
        Approximate number of nonzeros per chunk; memory is
        ``O(chunk_size + n_words)`` whatever the number of documents.
    progress : bool, default False
        Show a progress bar (tqdm) on stderr (local backend only).
    backend : {"local", "dask"}, default "local"
        Where the pass runs.  ``"dask"`` computes one partial result per
        shard on the workers of a ``dask.distributed`` cluster (each worker
        reads its shard from ``source``, which must then be a path the
        workers can read: a Parquet dataset or a cache directory) and
        combines them by a tree reduction; the results equal the local
        ones (integers exactly, floats to rounding).  Needs
        ``pip install "spca[dask]"``.
    client : dask.distributed.Client, optional
        The cluster to use; giving it implies ``backend="dask"``.  With
        ``backend="dask"`` and no client, the current default client
        (``distributed.default_client()``) is used.

    Returns
    -------
    stats : WordStatistics
        ``mean``, ``variance`` (population, ``1/D``, over all documents
        including those where the word is absent), ``document_frequency``,
        ``n_docs``, ``nnz`` and, for tf-idf, ``idf``.

    Raises
    ------
    ValueError
        For an unknown transform/normalisation, or a malformed source (a
        :class:`~spca.text.UCIFormatError` for files).
    TypeError
        If ``source`` is not an accepted kind.
    ImportError
        If ``backend="dask"`` (or a Parquet source) is used without the
        optional dependencies.

    Notes
    -----
    Transforms (``c`` the count, ``D`` documents, ``df[w]`` documents
    containing word ``w``): ``"count"`` ``x = c``; ``"binary"`` ``x = 1``
    where ``c > 0``; ``"log1p"`` ``x = log(1 + c)``; ``"tfidf"``
    ``x = c * log(D / df[w])`` (natural log, unsmoothed).  ``normalize``
    then divides each non-empty document by the l1 or l2 norm of its
    transformed row (over all its words).

    Each chunk's mean and sum of squared deviations from that mean are
    computed exactly from its nonzeros (absent entries contribute
    ``(0 - mean)^2`` each), then merged with Chan et al.'s pairwise update,
    which avoids the cancellation of ``E[x^2] - mean^2``.

    ``tfidf`` without normalisation is one pass (the statistics of ``c`` are
    scaled by ``idf`` and ``idf^2``); with normalisation it needs the
    document frequencies first, which costs one more pass unless
    ``document_frequency`` is given.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_array([[1.0, 0.0], [3.0, 2.0]])
    >>> s = word_statistics(X)
    >>> s.mean.tolist(), s.variance.tolist(), s.document_frequency.tolist()
    ([2.0, 1.0], [1.0, 1.0], [2, 1])
    """
    _check_transform(transform, normalize)
    backend = _check_backend(backend, client)
    src = open_source(source)
    D, W = src.n_docs, src.n_words
    idf = None
    if transform == "tfidf":
        if document_frequency is not None:
            df = np.asarray(document_frequency)
            if df.shape != (W,):
                raise ValueError(f"document_frequency must have shape ({W},), got {df.shape}")
            idf = idf_from_df(df, D)
        elif normalize is None:
            base = word_statistics(src, "count", chunk_size=chunk_size, progress=progress,
                                   backend=backend, client=client)
            idf = idf_from_df(base.document_frequency, D)
            return WordStatistics(
                n_docs=D, n_words=W, nnz=base.nnz, mean=base.mean * idf,
                variance=base.variance * idf * idf,
                document_frequency=base.document_frequency, transform="tfidf",
                normalize=None, idf=idf,
            )
        else:
            base = word_statistics(src, "binary", chunk_size=chunk_size, progress=progress,
                                   backend=backend, client=client)
            idf = idf_from_df(base.document_frequency, D)

    part = _run_pass1(src, W, transform, normalize, idf, chunk_size=chunk_size,
                      progress=progress, backend=backend, client=client)
    if part.n_docs != D:  # pragma: no cover - sources tile 0..D
        raise RuntimeError(f"internal error: streamed {part.n_docs} documents, expected {D}")
    mean, m2, df_total, nnz = part.mean, part.m2, part.document_frequency, part.nnz
    finite = np.isfinite(mean) & np.isfinite(m2)
    if not finite.all():
        raise ValueError(
            f"{src.label}: the values of word(s) {_some(np.flatnonzero(~finite))} are too "
            "large: their statistics overflow float64"
        )
    variance = np.maximum(m2 / D, 0.0)
    return WordStatistics(n_docs=D, n_words=W, nnz=nnz, mean=mean, variance=variance,
                          document_frequency=df_total, transform=transform,
                          normalize=normalize, idf=idf)


def candidate_covariance(
    source: Any,
    words: ArrayLike,
    transform: Transform = "count",
    normalize: Normalize = None,
    *,
    stats: WordStatistics | None = None,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    progress: bool = False,
    backend: Backend = "local",
    client: Any = None,
) -> NDArray[np.float64]:
    """Dense covariance of a few chosen words, streamed in O(k^2) memory.

    Pass 2 of the paper's pipeline: after safe feature elimination keeps
    ``k`` words, their ``k x k`` covariance is accumulated as
    ``G = X_S' X_S`` by a compiled loop over the pairs of selected words of
    each document (cost ``sum_d m_d^2 / 2`` for ``m_d`` selected words in
    document ``d``), then centred implicitly,
    ``Sigma = G / D - mean mean'``; the corpus is never densified.  The
    loop runs on all cores (OpenMP, over tiles of ``G``; the result does
    not depend on the number of threads); ``OMP_NUM_THREADS`` or
    ``threadpoolctl.threadpool_limits(n, user_api="openmp")`` limits it.
    Integer values (``"count"`` or ``"binary"`` without normalisation, for
    ``words`` in increasing order) are summed in int32 while a bound shows
    every sum exact, else in float64: the same matrix either way.

    Parameters
    ----------
    source : path-like, scipy.sparse matrix or Corpus
        As for :func:`word_statistics`.
    words : array-like of int of shape (k,)
        Distinct 0-based word (column) indices; the output follows this
        order.
    transform, normalize :
        As for :func:`word_statistics` (normalisation uses all words of a
        document, not only the chosen ones).
    stats : WordStatistics, optional
        Pass-1 statistics of the same source (any transform).  Only its
        ``document_frequency`` is used, for ``"tfidf"``; without it a
        ``"tfidf"`` covariance costs one extra pass.
    chunk_size : int, default 2**20
        Approximate number of nonzeros per chunk.
    progress : bool, default False
        Show a progress bar (tqdm) on stderr (local backend only).
    backend : {"local", "dask"}, default "local"
        As for :func:`word_statistics`.
    client : dask.distributed.Client, optional
        As for :func:`word_statistics`.

    Returns
    -------
    cov : ndarray of shape (k, k)
        The population (``1/D``) covariance of the chosen columns of the
        transformed matrix, symmetric; its diagonal agrees with
        ``word_statistics(...).variance[words]``.

    Raises
    ------
    ValueError
        If ``words`` has duplicates or out-of-range indices, if ``stats``
        does not describe a corpus of the same shape, for a malformed
        source, or when values are so large that their products overflow
        (naming the words).

    Notes
    -----
    The subtraction ``G / D - mean mean'`` loses relative accuracy of about
    ``eps * E[x_i^2] / Var(x_i)``, which is harmless for text (a word is
    absent from most documents) but large for a word with a nearly constant
    value in nearly every document (counts of ``1e8 + b``).  The rows and
    columns of the words whose computed variance is below ``1e-6 E[x_i^2]``
    are therefore computed again, in one more pass, from the values shifted
    by the words' means (formed exactly, absent entries included), which
    keeps every entry accurate to about ``1e-10 sqrt(Var(x_i) Var(x_j))``.

    Examples
    --------
    >>> import numpy as np, scipy.sparse as sp
    >>> X = sp.csr_array([[1.0, 0.0, 2.0], [3.0, 2.0, 0.0]])
    >>> candidate_covariance(X, [0, 2]).tolist()
    [[1.0, -1.0], [-1.0, 1.0]]
    """
    return _candidate_covariance(source, words, transform, normalize, stats=stats,
                                 chunk_size=chunk_size, progress=progress, backend=backend,
                                 client=client)[0]


def _candidate_covariance(source: Any, words: ArrayLike, transform: Transform = "count",
                          normalize: Normalize = None, *, stats: WordStatistics | None = None,
                          chunk_size: int = DEFAULT_CHUNK_SIZE, progress: bool = False,
                          backend: Backend = "local", client: Any = None
                          ) -> tuple[NDArray[np.float64], NDArray[np.float64] | None]:
    """:func:`candidate_covariance` and, for the local backend, the
    off-diagonal row maxima of ``|cov|`` (``spca._variance.offdiag_rowmax``)
    from the centring sweep (``None`` otherwise)."""
    _check_transform(transform, normalize)
    backend = _check_backend(backend, client)
    src = open_source(source)
    D, W = src.n_docs, src.n_words
    words = np.asarray(words)
    if words.ndim != 1 or (words.size and not np.issubdtype(words.dtype, np.integer)):
        raise ValueError("words must be a 1-D array of integer word indices")
    words = words.astype(np.int64)
    k = len(words)
    if k and (words.min() < 0 or words.max() >= W):
        raise ValueError(f"word indices must be in 0..{W - 1}")
    if len(np.unique(words)) != k:
        raise ValueError("words must be distinct")
    if stats is not None and (stats.n_docs != D or stats.n_words != W):
        raise ValueError(
            f"stats describe a {stats.n_docs} x {stats.n_words} corpus, source is {D} x {W}"
        )
    if k == 0:
        return np.zeros((0, 0)), None
    idf = None
    if transform == "tfidf":
        if stats is None:
            stats = word_statistics(src, "binary", chunk_size=chunk_size, progress=progress,
                                    backend=backend, client=client)
        idf = idf_from_df(stats.document_frequency, D)

    gram, sums = _run_pass2(src, words, transform, normalize, idf, chunk_size=chunk_size,
                            progress=progress, backend=backend, client=client)
    second = np.diagonal(gram) / D  # E[x^2], accurate (a sum of positive terms)
    if not (np.all(np.isfinite(second)) and np.all(np.isfinite(sums))):
        bad = words[~(np.isfinite(second) & np.isfinite(sums))]
        raise ValueError(
            f"{src.label}: the values of word(s) {_some(bad)} are too large: their products "
            "overflow float64 in the covariance"
        )
    mean = sums / D
    # gram / D - outer(mean, mean) in place: the local gram is ours, a dask
    # result may still be referenced by an in-process worker
    cov = np.array(gram, order="C") if backend == "dask" else gram
    rowmax = None if backend == "dask" else np.empty(k)
    centre_gram(cov, mean, D, rowmax)  # exactly symmetric, as gram is
    # Words whose variance is tiny next to E[x^2] lost their digits to the
    # subtraction: their rows and columns are computed again, shifted.
    accurate = np.flatnonzero((second > 0) & (np.diagonal(cov) <= _CANCELLATION * second))
    if accurate.size:
        part = _run_centred(src, words, accurate, mean[accurate], transform, normalize, idf,
                            chunk_size=chunk_size, progress=progress, backend=backend,
                            client=client)
        rows = (part.ytx - np.outer(part.t, sums) / D) / D
        rows[:, accurate] = (part.yty - np.outer(part.t, part.t) / D) / D
        rows[:, accurate] = 0.5 * (rows[:, accurate] + rows[:, accurate].T)
        cov[accurate, :] = rows
        cov[:, accurate] = rows.T
        rowmax = None  # (rows changed after the centring sweep)
    return cov, rowmax


#: A word is recomputed shifted when its computed variance is at most this
#: fraction of its ``E[x^2]``: elsewhere ``G / D - mean mean'`` keeps a relative
#: accuracy of about ``eps / _CANCELLATION`` (2e-10), per entry relative to
#: ``sqrt(var_a var_b)``.
_CANCELLATION = 1e-6


def _some(words: NDArray[np.int64], n: int = 5) -> str:
    shown = ", ".join(str(int(w)) for w in words[:n])
    return shown + (f" and {len(words) - n} more" if len(words) > n else "")


def _run_centred(src: Any, words: NDArray[np.int64], accurate: NDArray[np.intp],
                 shift: NDArray[np.float64], transform: str, normalize: str | None,
                 idf: NDArray[np.float64] | None, *, chunk_size: int, progress: bool,
                 backend: str, client: Any) -> CentredPartial:
    if backend == "dask":
        return _dask.dask_centred(src, words, accurate, shift, transform, normalize, idf,
                                  chunk_size=chunk_size, client=client)
    chunks = _progress(src.chunks(int(chunk_size)), src, progress)
    return centred_partial(chunks, words, accurate, shift, src.n_words, transform, normalize,
                           idf)


def _progress(chunks, src, enabled: bool):
    if not enabled:
        return chunks
    try:
        from tqdm.auto import tqdm
    except ImportError:  # tqdm is optional
        return chunks
    return tqdm(chunks, desc=f"{getattr(src, 'label', 'corpus')}", unit="chunk")
