"""Text corpora for sparse PCA: UCI bag-of-words I/O and out-of-core statistics.

Reading and writing
    :func:`iter_uci_docword`, :func:`load_uci_bow`, :func:`read_uci_header`,
    :func:`read_uci_vocabulary`, :func:`write_uci`, :func:`cache_uci_bow`.
Streaming
    :func:`iter_document_chunks` turns a file, a cache directory, a Parquet
    dataset, a sparse matrix or a :class:`Corpus` into chunks of whole
    documents.
Sharded corpora (optional, ``pip install "spca[dask]"``)
    :func:`convert_uci_to_parquet` / :func:`write_parquet` write a corpus as
    Parquet shards that keep each document whole; :func:`open_parquet` reads
    one.  ``backend="dask"`` (or ``client=``) runs both passes on a
    ``dask.distributed`` cluster, one task per shard.
Statistics (the paper's two passes)
    :func:`word_statistics` (per-word mean/variance, O(W) memory) and
    :func:`candidate_covariance` (dense covariance of the words kept by safe
    feature elimination, O(k^2) memory).
Topics
    :func:`sparse_topics`: from a corpus to its top sparse components as
    ranked word lists (the paper's Tables 1 and 2).
"""

from ._convert import convert_uci_to_parquet, write_parquet
from ._corpus import Corpus
from ._parquet import PARQUET_MANIFEST, open_parquet
from ._source import cache_uci_bow, iter_document_chunks, open_source
from ._stats import (
    TRANSFORMS,
    WordStatistics,
    candidate_covariance,
    idf_from_df,
    word_statistics,
)
from ._topics import Topic, Topics, sparse_topics
from ._uci import (
    DocumentChunk,
    UCIFormatError,
    UCIHeader,
    iter_uci_docword,
    load_uci_bow,
    read_uci_header,
    read_uci_vocabulary,
    write_uci,
)

__all__ = [
    "TRANSFORMS",
    "Corpus",
    "PARQUET_MANIFEST",
    "DocumentChunk",
    "UCIFormatError",
    "UCIHeader",
    "WordStatistics",
    "cache_uci_bow",
    "candidate_covariance",
    "convert_uci_to_parquet",
    "idf_from_df",
    "iter_document_chunks",
    "iter_uci_docword",
    "load_uci_bow",
    "open_parquet",
    "open_source",
    "read_uci_header",
    "read_uci_vocabulary",
    "sparse_topics",
    "Topic",
    "Topics",
    "word_statistics",
    "write_parquet",
    "write_uci",
]
