"""Synthetic bag-of-words corpora with planted topics, at the paper's scale."""

from __future__ import annotations

import gzip
import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import scipy.sparse as sp
from numpy.typing import NDArray

from .._validation import check_int
from ..text._corpus import Corpus

__all__ = ["SyntheticCorpus", "make_synthetic_corpus"]


@dataclass(frozen=True, eq=False, repr=False)
class SyntheticCorpus(Corpus):
    """A :class:`~spca.text.Corpus` from :func:`make_synthetic_corpus`, with its truth.

    Attributes
    ----------
    topics : tuple of ndarray of int
        ``topics[t]`` holds the (sorted) word indices planted in topic ``t``;
        topics are disjoint and ordered by decreasing strength.
    word_probabilities : ndarray of shape (n_words,)
        The Zipf background distribution of word tokens.
    topic_rates : ndarray of shape (n_topics,)
        Probability that a document is about topic ``t``.
    topic_mean_count : float
        Mean count (Poisson) of each topic word in a document about the topic.
    """

    topics: tuple[NDArray[np.intp], ...] = ()
    word_probabilities: NDArray[np.float64] | None = None
    topic_rates: NDArray[np.float64] | None = None
    topic_mean_count: float = 0.0


def _tokens_for_distinct(p: NDArray[np.float64], target: float) -> float:
    """Mean document length n with sum_w (1 - exp(-n p_w)) == target distinct words."""
    lo, hi = target, target
    distinct = lambda n: float(np.sum(-np.expm1(-n * p)))  # noqa: E731
    while distinct(hi) < target:
        hi *= 2.0
        if hi > 1e12:  # pragma: no cover - target >= n_words is rejected earlier
            break
    for _ in range(60):
        mid = 0.5 * (lo + hi)
        if distinct(mid) < target:
            lo = mid
        else:
            hi = mid
    return 0.5 * (lo + hi)


def make_synthetic_corpus(
    n_docs: int,
    n_words: int,
    *,
    n_topics: int = 5,
    words_per_topic: int = 5,
    nnz_per_doc: float | None = None,
    zipf_exponent: float = 1.07,
    topic_rate: float = 0.05,
    topic_decay: float = 0.85,
    topic_strength: float = 2.0,
    batch_docs: int = 65536,
    random_state: int | np.random.Generator | None = 0,
) -> SyntheticCorpus:
    """Generate a word-count corpus with Zipf background and planted topics.

    Background: the word tokens of document ``d`` are ``Poisson(n)`` draws
    from a Zipf law ``p_w ∝ (w + 2.7)^(-zipf_exponent)`` (word 0 is the most
    frequent), so each background count is an independent
    ``Poisson(n p_w)`` and the word variances ``n p_w`` decay like a power of
    the frequency rank, as in the paper's Figure 2.  ``n`` is set so that a
    document has ``nnz_per_doc`` distinct words on average.

    Topics: ``n_topics`` disjoint groups of ``words_per_topic``
    mid-frequency words.  Each document is about topic ``t`` independently
    with probability ``topic_rate * topic_decay**t``; such a document gets
    ``Poisson(mu)`` extra occurrences of each word of the topic.  The words
    of a topic therefore co-occur (their correlation is high) and the
    topics, ordered by decreasing strength, are the sparse principal
    components that sparse PCA should recover.  ``mu`` is chosen so that the
    variance planted in a word of topic 0 is ``topic_strength`` times the
    largest background variance ``n p_0``.

    Parameters
    ----------
    n_docs, n_words : int
        Corpus size (the paper's NYTimes: 300,000 x 102,660).
    n_topics : int, default 5
        Number of planted topics (may be 0).
    words_per_topic : int, default 5
        Words per topic.
    nnz_per_doc : float, optional
        Mean number of distinct background words per document; default
        ``min(232, n_words / 4)`` (NYTimes has 232 on average).
    zipf_exponent : float, default 1.07
        Exponent of the Zipf law.
    topic_rate : float, default 0.05
        Probability that a document is about topic 0.
    topic_decay : float, default 0.85
        Ratio of the rates of successive topics.
    topic_strength : float, default 2.0
        Planted variance of a topic-0 word, relative to the largest
        background word variance.
    batch_docs : int, default 65536
        Documents generated per vectorised batch (memory/speed only; the
        result depends on it).
    random_state : int, Generator or None, default 0
        Seed; equal seeds (and arguments) give identical corpora.

    Returns
    -------
    corpus : SyntheticCorpus
        ``counts`` (canonical ``scipy.sparse.csr_array`` of float64 counts,
        documents x words), ``vocabulary`` (``"w<index>"``, and
        ``"topic<t>_<j>"`` for planted words), ``topics``,
        ``word_probabilities``, ``topic_rates``, ``topic_mean_count``.

    Raises
    ------
    ValueError
        For non-positive sizes, or more topic words than fit among the
        mid-frequency words.

    Examples
    --------
    >>> c = make_synthetic_corpus(1000, 300, nnz_per_doc=20, random_state=1)
    >>> c.counts.shape, len(c.topics), c.topics[0].shape
    ((1000, 300), 5, (5,))
    """
    n_docs, n_words = check_int(n_docs, "n_docs"), check_int(n_words, "n_words")
    n_topics = check_int(n_topics, "n_topics", minimum=0)
    words_per_topic = check_int(words_per_topic, "words_per_topic")
    batch_docs = check_int(batch_docs, "batch_docs")
    if n_topics < 0 or words_per_topic < 1:
        raise ValueError("n_topics must be >= 0 and words_per_topic >= 1")
    if nnz_per_doc is None:
        nnz_per_doc = min(232.0, n_words / 4.0)
    if not 0 < nnz_per_doc < n_words:
        raise ValueError(f"nnz_per_doc must be in (0, n_words), got {nnz_per_doc}")
    if not 0 < topic_rate < 1 or not 0 < topic_decay <= 1 or topic_strength <= 0:
        raise ValueError("need 0 < topic_rate < 1, 0 < topic_decay <= 1, topic_strength > 0")
    rng, p, cdf, mean_len, topics, rates, mu = _plan(
        n_words, n_topics, words_per_topic, float(nnz_per_doc), zipf_exponent=zipf_exponent,
        topic_rate=topic_rate, topic_decay=topic_decay, topic_strength=topic_strength,
        random_state=random_state)

    pieces = []
    for start in range(0, n_docs, int(batch_docs)):
        stop = min(start + int(batch_docs), n_docs)
        pieces.append(_background_batch(rng, stop - start, n_words, cdf, mean_len))
        if n_topics:
            pieces[-1] = pieces[-1] + _topic_batch(rng, stop - start, n_words, topics, rates, mu)
    counts = sp.vstack(pieces, format="csr") if len(pieces) > 1 else pieces[0]
    counts = sp.csr_array(counts)
    counts.sum_duplicates()
    counts.sort_indices()

    vocabulary = np.array([f"w{i}" for i in range(n_words)], dtype=object)
    for t, words in enumerate(topics):
        for j, w in enumerate(words):
            vocabulary[w] = f"topic{t}_{j}"
    return SyntheticCorpus(
        counts=counts, vocabulary=vocabulary.astype(str), name="synthetic",
        topics=topics, word_probabilities=p, topic_rates=rates, topic_mean_count=float(mu),
    )



def _plan(n_words: int, n_topics: int, words_per_topic: int, nnz_per_doc: float, *,
          zipf_exponent: float, topic_rate: float, topic_decay: float, topic_strength: float,
          random_state: Any) -> tuple:
    """Word law, planted topics and rates of a synthetic corpus (shared set-up)."""
    rng = np.random.default_rng(random_state)

    ranks = np.arange(n_words, dtype=np.float64)
    p = (ranks + 2.7) ** (-float(zipf_exponent))
    p /= p.sum()
    cdf = np.cumsum(p)
    cdf /= cdf[-1]
    mean_len = _tokens_for_distinct(p, float(nnz_per_doc))

    # planted topics among mid-frequency words
    n_planted = n_topics * words_per_topic
    lo = max(1, n_words // 200)
    hi = max(n_words // 5, lo + 2 * n_planted)
    if hi > n_words:
        raise ValueError(
            f"{n_planted} topic words do not fit among the {n_words - lo} mid-frequency words"
        )
    chosen = rng.choice(np.arange(lo, hi), size=n_planted, replace=False)
    topics = tuple(np.sort(chosen[t * words_per_topic:(t + 1) * words_per_topic]).astype(np.intp)
                   for t in range(n_topics))
    rates = topic_rate * topic_decay ** np.arange(n_topics, dtype=np.float64)
    target = topic_strength * mean_len * p[0]
    a = topic_rate * (1.0 - topic_rate)
    mu = (-topic_rate + np.sqrt(topic_rate**2 + 4.0 * a * target)) / (2.0 * a)

    return rng, p, cdf, mean_len, topics, rates, mu

def _background_batch(rng: np.random.Generator, n: int, n_words: int,
                      cdf: NDArray[np.float64], mean_len: float) -> sp.csr_array:
    """Zipf token counts of ``n`` documents, generated sorted (no sort needed).

    Sorted uniforms per document come from normalised cumulative sums of
    exponential spacings; mapping them through the inverse CDF gives each
    document's tokens in non-decreasing word order, so equal words are
    adjacent and counting them is a run-length encoding.
    """
    lengths = rng.poisson(mean_len, size=n).astype(np.int64)
    total = int(lengths.sum())
    if total == 0:
        return sp.csr_array((n, n_words))
    # one extra spacing per document: its sum normalises the document's uniforms
    spans = lengths + 1
    ends = np.cumsum(spans)
    starts = ends - spans
    e = rng.standard_exponential(int(ends[-1]))
    c = np.cumsum(e)
    base = np.where(starts > 0, c[starts - 1], 0.0)
    scale = c[ends - 1] - base
    token_mask = np.ones(int(ends[-1]), dtype=bool)
    token_mask[ends - 1] = False
    doc_of = np.repeat(np.arange(n, dtype=np.int64), lengths)
    u = (c[token_mask] - base[doc_of]) / scale[doc_of]
    del c, e, token_mask
    words = np.searchsorted(cdf, u, side="right")
    np.minimum(words, n_words - 1, out=words)
    key = doc_of * n_words + words
    new = np.empty(len(key), dtype=bool)
    new[0] = True
    np.not_equal(key[1:], key[:-1], out=new[1:])
    first = np.flatnonzero(new)
    run = np.diff(np.append(first, len(key))).astype(np.float64)
    rows = doc_of[first]
    indptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(rows, minlength=n), out=indptr[1:])
    X = sp.csr_array((run, words[first].astype(np.int32), indptr), shape=(n, n_words))
    X.has_canonical_format = True
    return X


def _topic_batch(rng: np.random.Generator, n: int, n_words: int,
                 topics: tuple[NDArray[np.intp], ...], rates: NDArray[np.float64],
                 mu: float) -> sp.csr_array:
    """Planted topic counts of ``n`` documents (disjoint topics, Poisson(mu) per word)."""
    rows, cols, vals = [], [], []
    for words, rate in zip(topics, rates, strict=True):
        docs = np.flatnonzero(rng.random(n) < rate)
        k = len(words)
        cnt = rng.poisson(mu, size=(len(docs), k)).astype(np.float64)
        rows.append(np.repeat(docs, k))
        cols.append(np.tile(words, len(docs)))
        vals.append(cnt.ravel())
    row = np.concatenate(rows)
    col = np.concatenate(cols)
    val = np.concatenate(vals)
    keep = val > 0
    X = sp.coo_array((val[keep], (row[keep], col[keep])), shape=(n, n_words)).tocsr()
    X.sum_duplicates()
    return X


def write_synthetic_corpus(
    path_docword: str | os.PathLike,
    path_vocab: str | os.PathLike,
    n_docs: int,
    n_words: int,
    *,
    n_topics: int = 5,
    words_per_topic: int = 5,
    nnz_per_doc: float | None = None,
    zipf_exponent: float = 1.07,
    topic_rate: float = 0.05,
    topic_decay: float = 0.85,
    topic_strength: float = 2.0,
    batch_docs: int = 65536,
    compresslevel: int = 1,
    random_state: int | np.random.Generator | None = 0,
) -> tuple[NDArray[np.intp], ...]:
    """Stream a synthetic corpus to UCI files, never holding it in memory.

    The corpus is the one :func:`make_synthetic_corpus` would return for the
    same arguments (same seed, same batches), written batch by batch, so a
    corpus of PubMed size (8.2 million documents, 480 million nonzeros) can be
    written with the memory of one batch. The docword body goes to a
    temporary gzip member first; the header (which needs the final NNZ) is
    written as a first member and the body appended (a multi-member gzip file
    is a valid gzip file), then the file is moved into place atomically.

    Parameters
    ----------
    path_docword, path_vocab : path-like
        Output files; ``path_docword`` is gzip-compressed if it ends in
        ``.gz``.
    n_docs, n_words, n_topics, words_per_topic, nnz_per_doc, zipf_exponent, \
topic_rate, topic_decay, topic_strength, batch_docs, random_state :
        As for :func:`make_synthetic_corpus`.
    compresslevel : int, default=1
        gzip level (speed over size).

    Returns
    -------
    topics : tuple of ndarray
        The planted topics (0-based word indices).

    Examples
    --------
    >>> import os, tempfile
    >>> d = tempfile.mkdtemp()
    >>> topics = write_synthetic_corpus(os.path.join(d, "docword.s.txt.gz"),
    ...                                 os.path.join(d, "vocab.s.txt"), 500, 200,
    ...                                 nnz_per_doc=10)
    >>> len(topics)
    5
    """
    from ..text._uci import _format_records

    n_docs, n_words = check_int(n_docs, "n_docs"), check_int(n_words, "n_words")
    if nnz_per_doc is None:
        nnz_per_doc = min(232.0, n_words / 4.0)
    rng, p, cdf, mean_len, topics, rates, mu = _plan(
        n_words, n_topics, words_per_topic, float(nnz_per_doc), zipf_exponent=zipf_exponent,
        topic_rate=topic_rate, topic_decay=topic_decay, topic_strength=topic_strength,
        random_state=random_state)
    out = Path(path_docword)
    gz = out.suffix == ".gz"
    body = out.with_name(f".{out.name}.body.tmp")
    tmp = out.with_name(f".{out.name}.tmp")
    nnz = 0
    try:
        with open(body, "wb") as raw:
            fh = gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=compresslevel) if gz else raw
            for start in range(0, n_docs, int(batch_docs)):
                stop = min(start + int(batch_docs), n_docs)
                X = _background_batch(rng, stop - start, n_words, cdf, mean_len)
                if n_topics:
                    X = X + _topic_batch(rng, stop - start, n_words, topics, rates, mu)
                X = sp.csr_array(X)
                X.sum_duplicates()
                X.sort_indices()
                rows = np.repeat(np.arange(stop - start), np.diff(X.indptr)) + start + 1
                fh.write(_format_records(rows, X.indices + 1, X.data))
                nnz += X.nnz
            if gz:
                fh.close()
        header = f"{n_docs}\n{n_words}\n{nnz}\n".encode("ascii")
        with open(tmp, "wb") as raw:
            raw.write(gzip.compress(header, compresslevel) if gz else header)
            with open(body, "rb") as src:
                shutil.copyfileobj(src, raw, 1 << 24)
        os.replace(tmp, out)
    finally:
        body.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    vocabulary = [f"w{i}" for i in range(n_words)]
    for t, words in enumerate(topics):
        for j, w in enumerate(words):
            vocabulary[w] = f"topic{t}_{j}"
    vtmp = Path(path_vocab).with_name(f".{Path(path_vocab).name}.tmp")
    vtmp.write_text("\n".join(vocabulary) + "\n", encoding="utf-8")
    os.replace(vtmp, path_vocab)
    return topics
