"""The in-memory corpus container shared by :mod:`spca.text` and :mod:`spca.datasets`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import scipy.sparse as sp

__all__ = ["Corpus"]


@dataclass(frozen=True, eq=False)
class Corpus:
    """A bag-of-words corpus held in memory.

    Parameters
    ----------
    counts : scipy.sparse.csr_array of shape (n_docs, n_words)
        Word counts; row ``d`` is document ``d``, column ``w`` is word ``w``
        (0-based; the UCI files are 1-based).
    vocabulary : ndarray of str of shape (n_words,), or None
        ``vocabulary[w]`` is the word of column ``w``.
    name : str
        A short name for the corpus.
    titles : ndarray of str of shape (n_docs,), or None
        Document titles, when the corpus has them.
    docword_path, vocab_path : pathlib.Path or None
        The files the corpus was read from, when it was read from files.

    Notes
    -----
    The dataclass is frozen (its fields cannot be rebound) but the arrays are
    ordinary mutable numpy/scipy objects; do not modify them in place if the
    corpus is shared.  Once a whole pass has found ``counts`` canonical,
    finite and non-negative, the readers remember it for those arrays (by
    identity, without touching the corpus) and do not check them again:
    values changed in place are not re-checked, new arrays
    (``counts.data = ...``, or a new Corpus) are.
    """

    counts: sp.csr_array
    vocabulary: np.ndarray | None = None
    name: str = ""
    titles: np.ndarray | None = None
    docword_path: Path | None = None
    vocab_path: Path | None = None

    @property
    def n_docs(self) -> int:
        """Number of documents (rows of ``counts``)."""
        return int(self.counts.shape[0])

    @property
    def n_words(self) -> int:
        """Number of words (columns of ``counts``)."""
        return int(self.counts.shape[1])

    @property
    def nnz(self) -> int:
        """Number of stored (document, word) pairs."""
        return int(self.counts.nnz)

    def __repr__(self) -> str:
        return (
            f"{type(self).__name__}(name={self.name!r}, n_docs={self.n_docs}, "
            f"n_words={self.n_words}, nnz={self.nnz})"
        )
