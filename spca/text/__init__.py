"""Text corpora for sparse PCA: UCI bag-of-words I/O and out-of-core statistics.

Reading and writing
    :func:`iter_uci_docword`, :func:`load_uci_bow`, :func:`read_uci_header`,
    :func:`read_uci_vocabulary`, :func:`write_uci`, :func:`cache_uci_bow`.
Streaming
    :func:`iter_document_chunks` turns a file, a cache directory, a sparse
    matrix or a :class:`Corpus` into chunks of whole documents.
Statistics (the paper's two passes)
    :func:`word_statistics` (per-word mean/variance, O(W) memory) and
    :func:`candidate_covariance` (dense covariance of the words kept by safe
    feature elimination, O(k^2) memory).
Topics
    :func:`sparse_topics`: from a corpus to its top sparse components as
    ranked word lists (the paper's Tables 1 and 2).
"""

from ._corpus import Corpus
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
    "DocumentChunk",
    "UCIFormatError",
    "UCIHeader",
    "WordStatistics",
    "cache_uci_bow",
    "candidate_covariance",
    "idf_from_df",
    "iter_document_chunks",
    "iter_uci_docword",
    "load_uci_bow",
    "open_source",
    "read_uci_header",
    "read_uci_vocabulary",
    "sparse_topics",
    "Topic",
    "Topics",
    "word_statistics",
    "write_uci",
]
