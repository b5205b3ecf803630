"""Out-of-core word statistics and candidate covariance against dense computations."""

from __future__ import annotations

import gzip
import itertools
import tracemalloc

import numpy as np
import pytest
import scipy.sparse as sp

from spca.text import (
    TRANSFORMS,
    Corpus,
    cache_uci_bow,
    candidate_covariance,
    word_statistics,
)

NORMALIZE = (None, "l1", "l2")


def make_counts(seed: int = 0, d: int = 70, w: int = 23) -> np.ndarray:
    """Small count matrix with empty documents, an absent word, a word in every
    document and one long document (to be split by small chunks)."""
    rng = np.random.default_rng(seed)
    C = rng.poisson(0.5, size=(d, w)) * rng.integers(1, 40, size=(d, w))
    C[:, 4] = 0  # absent word
    C[:, 7] = rng.integers(1, 6, size=d)  # present in every non-empty document
    C[0] = 0  # leading empty document
    C[d // 2] = 0
    C[-2:] = 0  # trailing empty documents
    C[5] = rng.integers(1, 9, size=w)  # a long document
    C[5, 4] = 0
    return C


def dense_transform(C: np.ndarray, transform: str, normalize: str | None) -> np.ndarray:
    """Reference implementation of the documented transforms, on a dense array."""
    C = C.astype(np.float64)
    D = C.shape[0]
    if transform == "count":
        X = C.copy()
    elif transform == "binary":
        X = (C > 0).astype(np.float64)
    elif transform == "log1p":
        X = np.log(1.0 + C)
    else:
        df = np.count_nonzero(C, axis=0)
        idf = np.zeros(C.shape[1])
        idf[df > 0] = np.log(D / df[df > 0])
        X = C * idf
    if normalize is not None:
        if normalize == "l1":
            norm = np.abs(X).sum(axis=1, keepdims=True)
        else:
            norm = np.sqrt((X * X).sum(axis=1, keepdims=True))
        X = np.divide(X, norm, out=np.zeros_like(X), where=norm > 0)
    return X


def write_uci_text(path, C: np.ndarray) -> None:
    rows, cols = np.nonzero(C)
    lines = [str(C.shape[0]), str(C.shape[1]), str(len(rows))]
    lines += [f"{r + 1} {c + 1} {C[r, c]}" for r, c in zip(rows, cols, strict=True)]
    data = ("\n".join(lines) + "\n").encode()
    if str(path).endswith(".gz"):
        data = gzip.compress(data, mtime=0)
    path.write_bytes(data)


@pytest.fixture(scope="module")
def corpus_files(tmp_path_factory):
    C = make_counts()
    root = tmp_path_factory.mktemp("stats")
    plain, gz = root / "docword.s.txt", root / "docword.s.txt.gz"
    write_uci_text(plain, C)
    write_uci_text(gz, C)
    cache = cache_uci_bow(gz, root / "cache")
    return C, {"plain": plain, "gzip": gz, "cache": cache,
               "sparse": sp.csr_array(C), "corpus": Corpus(counts=sp.csr_matrix(C))}


CHUNK_SIZES = (1, 3, 8, 50, 10_000)  # 1..8 records split documents


@pytest.mark.parametrize(("transform", "normalize"),
                         list(itertools.product(TRANSFORMS, NORMALIZE)))
def test_streaming_stats_equal_in_memory(corpus_files, transform, normalize):
    C, sources = corpus_files
    X = dense_transform(C, transform, normalize)
    mean, var = X.mean(axis=0), X.var(axis=0)
    assert var[7] > 0 or transform in ("binary", "tfidf")
    for (kind, source), chunk_size in itertools.product(sources.items(), CHUNK_SIZES):
        s = word_statistics(source, transform, normalize, chunk_size=chunk_size)
        np.testing.assert_allclose(s.mean, mean, rtol=1e-12, atol=1e-15,
                                   err_msg=f"{kind} {chunk_size}")
        np.testing.assert_allclose(s.variance, var, rtol=1e-12, atol=1e-15,
                                   err_msg=f"{kind} {chunk_size}")
        assert s.n_docs == C.shape[0] and s.n_words == C.shape[1]
        assert s.nnz == np.count_nonzero(C)
        np.testing.assert_array_equal(s.document_frequency, np.count_nonzero(C, axis=0))
        assert s.transform == transform and s.normalize == normalize
    assert s.variance[4] == 0.0  # absent word


def test_tfidf_specifics(corpus_files):
    C, sources = corpus_files
    s = word_statistics(sources["plain"], "tfidf")
    df = np.count_nonzero(C, axis=0)
    np.testing.assert_allclose(s.idf[df > 0], np.log(C.shape[0] / df[df > 0]), rtol=1e-15)
    assert s.idf[4] == 0.0
    # a word present in every document has idf 0, hence zero mean and variance
    every = word_statistics(sp.csr_array(np.array([[1.0, 2.0], [3.0, 0.0], [2.0, 1.0]])),
                            "tfidf")
    assert every.idf[0] == 0.0 and every.variance[0] == 0.0 and every.mean[0] == 0.0
    assert every.idf[1] == pytest.approx(np.log(1.5))
    # supplying the document frequencies gives the same answer in one pass
    s2 = word_statistics(sources["gzip"], "tfidf", "l2", document_frequency=df, chunk_size=4)
    s3 = word_statistics(sources["gzip"], "tfidf", "l2", chunk_size=4)
    np.testing.assert_allclose(s2.variance, s3.variance, rtol=1e-13)


def test_variance_without_cancellation():
    # a word with a large, nearly constant count in every document:
    # E[x^2] - mean^2 would lose all digits of the variance
    d = 4000
    rng = np.random.default_rng(3)
    col = 1e8 + rng.integers(0, 3, size=d).astype(np.float64)
    X = sp.csr_array(np.column_stack([col, rng.poisson(1.0, size=d)]).astype(np.float64))
    dense = X.toarray()
    for chunk_size in (7, 100, 10_000):
        s = word_statistics(X, chunk_size=chunk_size)
        np.testing.assert_allclose(s.variance, dense.var(axis=0), rtol=1e-9)


@pytest.mark.parametrize(("transform", "normalize"),
                         [("count", None), ("binary", "l1"), ("log1p", "l2"), ("tfidf", None),
                          ("tfidf", "l2"), ("count", "l1")])
def test_candidate_covariance_matches_dense(corpus_files, transform, normalize):
    C, sources = corpus_files
    X = dense_transform(C, transform, normalize)
    words = np.array([9, 2, 7, 0, 15, 4])  # unsorted, includes constant and absent words
    ref = np.cov(X[:, words], rowvar=False, ddof=0)
    stats = word_statistics(sources["sparse"], "count")
    for (kind, source), chunk_size in itertools.product(sources.items(), (1, 5, 10_000)):
        cov = candidate_covariance(source, words, transform, normalize, chunk_size=chunk_size,
                                   stats=stats if chunk_size == 5 else None)
        assert cov.shape == (len(words), len(words))
        np.testing.assert_allclose(cov, ref, rtol=1e-11, atol=1e-13 * np.abs(ref).max(),
                                   err_msg=f"{kind} {chunk_size}")
        np.testing.assert_array_equal(cov, cov.T)
    full = word_statistics(sources["plain"], transform, normalize)
    np.testing.assert_allclose(np.diag(cov), full.variance[words], rtol=1e-11, atol=1e-15)


def test_candidate_covariance_argument_checks(corpus_files):
    C, sources = corpus_files
    with pytest.raises(ValueError, match="distinct"):
        candidate_covariance(sources["sparse"], [1, 1])
    with pytest.raises(ValueError, match="word indices"):
        candidate_covariance(sources["sparse"], [0, C.shape[1]])
    with pytest.raises(ValueError, match="transform"):
        word_statistics(sources["sparse"], "tf-idf")
    with pytest.raises(ValueError, match="normalize"):
        word_statistics(sources["sparse"], "count", "max")
    other = word_statistics(sp.csr_array(C[:10]))
    with pytest.raises(ValueError, match="stats describe"):
        candidate_covariance(sources["sparse"], [0, 1], stats=other)
    assert candidate_covariance(sources["sparse"], []).shape == (0, 0)


def test_screening_and_nyt_sample_pipeline():
    from spca.datasets import load_nytimes_sample

    corpus = load_nytimes_sample()
    stats = word_statistics(corpus.docword_path)
    dense_var = np.asarray(corpus.counts.power(2).mean(axis=0)) - np.asarray(
        corpus.counts.mean(axis=0)) ** 2
    np.testing.assert_allclose(stats.variance, dense_var, rtol=1e-9, atol=1e-12)
    lam = np.sort(stats.variance)[-40]
    kept = stats.screen(lam)
    assert len(kept) == 39 and np.all(stats.variance[kept] > lam)
    cov = candidate_covariance(corpus.docword_path, kept, stats=stats)
    Xk = corpus.counts[:, kept].toarray()
    np.testing.assert_allclose(cov, np.cov(Xk, rowvar=False, ddof=0), rtol=1e-10,
                               atol=1e-12 * cov.max())


def test_candidate_covariance_follows_words_order():
    # more words than a tile of the kernel's accumulator, in the caller's order
    # (neither sorted nor by frequency): rows and columns follow ``words``
    from spca.datasets import load_nytimes_sample

    corpus = load_nytimes_sample()
    stats = word_statistics(corpus)
    rng = np.random.default_rng(0)
    words = rng.permutation(np.argsort(-stats.variance)[:600])
    cov = candidate_covariance(corpus, words, stats=stats)
    Xk = corpus.counts[:, words].toarray()
    ref = np.cov(Xk, rowvar=False, ddof=0)
    np.testing.assert_allclose(cov, ref, rtol=1e-10, atol=1e-12 * np.abs(ref).max())
    np.testing.assert_array_equal(cov, cov.T)
    np.testing.assert_allclose(np.diag(cov), stats.variance[words], rtol=1e-12)
    by_id = candidate_covariance(corpus, np.sort(words), stats=stats)
    rank = np.argsort(np.argsort(words))
    np.testing.assert_allclose(cov, by_id[np.ix_(rank, rank)], rtol=1e-12,
                               atol=1e-14 * np.abs(ref).max())


@pytest.mark.parametrize("kind", ["file", "sparse"])
def test_memory_does_not_grow_with_documents(tmp_path, kind):
    # the same number of words, 8x more documents: peak memory must not grow
    from spca.text import write_uci

    def peak(n_docs):
        rng = np.random.default_rng(0)
        X = sp.random_array((n_docs, 500), density=0.02, format="csr", rng=rng,
                            data_sampler=lambda size: rng.integers(1, 5, size).astype(float))
        source = X
        if kind == "file":
            source = tmp_path / f"docword.{n_docs}.txt.gz"
            write_uci(source, None, X)
        tracemalloc.start()
        word_statistics(source, "log1p", "l2", chunk_size=2000)
        candidate_covariance(source, np.arange(0, 500, 10), "log1p", "l2", chunk_size=2000)
        _, top = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return top

    small, large = peak(2_000), peak(16_000)
    # streamed files: flat; in-memory matrices: a few bytes per row of the matrix itself
    assert large < (1.1 if kind == "file" else 1.5) * small
