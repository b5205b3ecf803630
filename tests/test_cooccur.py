"""The compiled kernels of the two corpus passes against dense computations."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from spca.text._cooccur import (
    centre_gram,
    cooccurrence_add,
    normalize_documents,
    symmetrize_gram,
    word_moments,
)


def _gram(doc, word, x, position, k, block, ld):
    pairs = np.zeros((k, ld))
    squares, sums = np.zeros(k), np.zeros(k)
    cooccurrence_add(doc, word, x.astype(np.float64), position, pairs, squares, sums, block)
    assert not pairs[:, k:].any()  # the padding is never written
    symmetrize_gram(pairs, squares)
    return pairs.reshape(-1)[:k * k].reshape(k, k), sums


@settings(max_examples=80, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 30), n_words=st.integers(1, 20),
       density=st.floats(0.0, 1.0), repeats=st.booleans(), block=st.sampled_from([1, 2, 4, 256]),
       pad=st.integers(0, 3), int32=st.booleans(), ordered=st.booleans())
def test_gram_equals_dense_product(seed, n_docs, n_words, density, repeats, block, pad, int32,
                                   ordered):
    rng = np.random.default_rng(seed)
    X = sp.random_array((n_docs, n_words), density=density, rng=rng, format="coo")
    doc, word, x = X.row, X.col, X.data
    if repeats and x.size:
        # a (document, word) pair stored twice counts as the sum of its values
        extra = rng.integers(0, x.size, size=x.size // 2 + 1)
        doc, word, x = (np.concatenate([a, a[extra]]) for a in (doc, word, x))
    order = rng.permutation(n_docs)[doc]  # shuffled document order, grouped
    # within a document: words in increasing order, or shuffled
    perm = np.lexsort((word if ordered else rng.permutation(len(doc)), order))
    doc, word, x = doc[perm], word[perm], x[perm]
    itype = np.int32 if int32 else np.int64
    doc, word = doc.astype(itype), word.astype(itype)
    # a random subset of the words as candidates, at increasing or shuffled positions
    words = rng.permutation(n_words)[:rng.integers(1, n_words + 1)]
    if ordered:
        words.sort()
    k = len(words)
    position = np.full(n_words, -1, dtype=np.int64)
    position[words] = np.arange(k)
    dense = np.zeros((n_docs, n_words))
    np.add.at(dense, (doc, word), x)
    S = dense[:, words]
    gram, sums = _gram(doc, word, x, position, k, block, k + pad)
    np.testing.assert_allclose(gram, S.T @ S, rtol=1e-12, atol=1e-14)
    np.testing.assert_array_equal(gram, gram.T)
    np.testing.assert_allclose(sums, S.sum(axis=0), rtol=1e-12, atol=1e-14)


def test_bad_arguments_are_rejected():
    doc = np.zeros(2, np.int64)
    word = np.array([0, 1])
    position = np.array([0, 1, -1])
    pairs, sq, sums = np.zeros((2, 2)), np.zeros(2), np.zeros(2)
    with pytest.raises(ValueError, match="word index 3 out of range"):
        cooccurrence_add(doc, np.array([0, 3]), np.ones(2), position, pairs, sq, sums)
    with pytest.raises(ValueError, match="word index -1 out of range"):
        cooccurrence_add(doc, np.array([-1, 0]), np.ones(2), position, pairs, sq, sums)
    with pytest.raises(ValueError, match="position 2 of word 1 out of range"):
        cooccurrence_add(doc, word, np.ones(2), np.array([0, 2, -1]), pairs, sq, sums)
    with pytest.raises(ValueError, match="position -2 of word 1 out of range"):
        cooccurrence_add(doc, word, np.ones(2), np.array([0, -2, -1]), pairs, sq, sums)
    # a rejected chunk leaves the accumulators unchanged
    cooccurrence_add(doc, word, np.ones(2), position, pairs, sq, sums)
    before = pairs.copy(), sq.copy(), sums.copy()
    with pytest.raises(ValueError, match="out of range"):
        cooccurrence_add(np.array([0, 0, 1, 1]), np.array([0, 1, 0, 7]), np.ones(4), position,
                         pairs, sq, sums)
    for a, b in zip(before, (pairs, sq, sums), strict=True):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="same length"):
        cooccurrence_add(doc, np.array([0]), np.ones(2), position, pairs, sq, sums)
    with pytest.raises(ValueError, match="k x"):
        cooccurrence_add(doc, word, np.ones(2), position, np.zeros((2, 1)), sq, sums)
    with pytest.raises(ValueError, match="power of two"):
        cooccurrence_add(doc, word, np.ones(2), position, pairs, sq, sums, 3)
    with pytest.raises(ValueError, match="out of range"):
        word_moments(np.array([0, 5]), np.ones(2), 1, np.zeros(3, np.int64), np.zeros(3),
                     np.zeros(3))
    with pytest.raises(ValueError, match="positive"):
        word_moments(np.array([0, 1]), np.ones(2), 0, np.zeros(3, np.int64), np.zeros(3),
                     np.zeros(3))


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 12), n_words=st.integers(1, 8))
def test_word_moments_equal_dense(seed, n_docs, n_words):
    rng = np.random.default_rng(seed)
    X = sp.random_array((n_docs, n_words), density=0.4, rng=rng, format="coo")
    count, mean, m2 = np.empty(n_words, np.int64), np.empty(n_words), np.empty(n_words)
    word_moments(X.col.astype(np.int64), X.data, n_docs, count, mean, m2)
    dense = X.toarray()
    np.testing.assert_array_equal(count, np.count_nonzero(dense, axis=0))
    np.testing.assert_allclose(mean, dense.mean(axis=0), rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(m2, ((dense - dense.mean(axis=0)) ** 2).sum(axis=0),
                               rtol=1e-12, atol=1e-15)


def test_centre_gram():
    rng = np.random.default_rng(0)
    X = rng.random((7, 5))
    gram = X.T @ X
    gram = gram + gram.T  # exactly symmetric
    mean = rng.random(5)
    expected = gram / 7 - np.outer(mean, mean)
    centre_gram(gram, mean, 7)
    np.testing.assert_array_equal(gram, expected)
    np.testing.assert_array_equal(gram, gram.T)


@pytest.mark.parametrize("norm", [1, 2])
def test_normalize_documents(norm):
    doc = np.array([3, 3, 3, 0, 5, 5], dtype=np.int32)  # contiguous, any order
    x = np.array([1.0, -2.0, 2.0, 0.0, 0.5, 0.25])
    y = x.copy()
    normalize_documents(doc, y, norm)
    for d in (3, 0, 5):
        rows = doc == d
        n = np.linalg.norm(x[rows], ord=norm)
        np.testing.assert_allclose(y[rows], x[rows] / n if n else x[rows], rtol=1e-15)
    with pytest.raises(ValueError, match="norm"):
        normalize_documents(doc, y, 3)
    with pytest.raises(ValueError, match="same length"):
        normalize_documents(doc[:2], y, 1)
