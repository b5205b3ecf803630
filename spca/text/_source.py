"""Corpus sources that can be streamed as chunks of whole documents.

A *source* is any of

* a path to a UCI ``docword`` file (plain or gzip), streamed and parsed;
* a path to a binary cache directory made by :func:`cache_uci_bow`
  (memory-mapped, no parsing);
* a path to a Parquet dataset, one ``.parquet`` file or a directory of
  shards (see :mod:`spca.text._parquet`; needs pyarrow);
* a scipy.sparse matrix (documents x words) already in memory;
* a :class:`~spca.text.Corpus` (its ``counts`` are used).

The sources themselves live in :mod:`spca.text._readers` (and
:mod:`spca.text._parquet`); this module only chooses one.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import scipy.sparse as sp

from ._parquet import is_parquet_dataset, open_parquet
from ._readers import (
    _CACHE_META,
    _CacheSource,
    _Source,
    _SparseSource,
    _UCIFileSource,
    cache_uci_bow,
)
from ._uci import DEFAULT_CHUNK_SIZE, DocumentChunk

__all__ = ["cache_uci_bow", "iter_document_chunks", "open_source"]


def open_source(source: Any) -> _Source:
    """Wrap ``source`` (file, cache or Parquet directory, matrix, Corpus) for streaming.

    Parameters
    ----------
    source : path-like, scipy.sparse matrix or Corpus
        See the module documentation.  A directory is a cache if it holds
        ``spca_cache.json``, otherwise a Parquet dataset.

    Returns
    -------
    source : object
        With attributes ``n_docs``, ``n_words``, ``nnz``, ``label`` and a
        method ``chunks(chunk_size)`` yielding :class:`DocumentChunk`.

    Raises
    ------
    TypeError
        If ``source`` is of none of the accepted kinds.
    FileNotFoundError
        If a path does not exist.
    ValueError
        If a directory is neither a cache nor a Parquet dataset.
    """
    if isinstance(source, _Source):
        return source
    if isinstance(source, (str, os.PathLike)):
        path = Path(source)
        if not path.exists():
            raise FileNotFoundError(f"no such file: {path}")
        if path.is_dir() and (path / _CACHE_META).exists():
            return _CacheSource(path)
        if is_parquet_dataset(path):
            return open_parquet(path)
        if path.is_dir():
            raise ValueError(
                f"{path}: neither an spca cache ({_CACHE_META}) nor a Parquet dataset "
                "(*.parquet files)"
            )
        return _UCIFileSource(path)
    if sp.issparse(source):
        return _SparseSource(source)
    counts = getattr(source, "counts", None)
    if counts is not None and sp.issparse(counts):
        return _SparseSource(counts, label=getattr(source, "name", "") or "corpus",
                             owner=_weak_key(source))
    raise TypeError(
        "source must be a path to a UCI docword file or cache directory, a scipy.sparse "
        f"matrix or a Corpus, not {type(source).__name__}"
    )


def iter_document_chunks(
    source: Any, chunk_size: int = DEFAULT_CHUNK_SIZE,
) -> Iterator[DocumentChunk]:
    """Stream any source as chunks of whole documents.

    Parameters
    ----------
    source : path-like, scipy.sparse matrix or Corpus
        A UCI ``docword`` file, a cache directory from :func:`cache_uci_bow`,
        a Parquet dataset, a sparse ``(n_docs, n_words)`` matrix, or a
        :class:`~spca.text.Corpus`.
    chunk_size : int, default 2**20
        Approximate number of nonzeros per chunk.  A document is never split.

    Yields
    ------
    chunk : DocumentChunk
        0-based ``doc``, ``word`` and ``count`` arrays of the documents
        ``row_start <= d < row_stop``; the row ranges tile ``0 .. n_docs``.

    Examples
    --------
    >>> import scipy.sparse as sp
    >>> X = sp.csr_array([[1, 0], [0, 2], [3, 4]])
    >>> [(c.row_start, c.row_stop, c.word.tolist()) for c in iter_document_chunks(X, 2)]
    [(0, 2, [0, 1]), (2, 3, [0, 1])]
    """
    if int(chunk_size) < 1:
        raise ValueError(f"chunk_size must be positive, got {chunk_size}")
    return open_source(source).chunks(int(chunk_size))


def _weak_key(source: Any) -> Any:
    """``source`` if it is a Corpus (its checks are then remembered, see
    ``_readers._CHECKED``), else None."""
    from ._corpus import Corpus

    return source if isinstance(source, Corpus) else None
