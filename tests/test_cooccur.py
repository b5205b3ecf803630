"""The compiled kernels of the two corpus passes against dense computations."""

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from spca.text._cooccur import cooccurrence_add, word_moments


def _gram(doc, col, x, k):
    pairs = np.zeros((k, k))
    squares = np.zeros(k)
    cooccurrence_add(doc.astype(np.int64), col.astype(np.int64), x.astype(np.float64),
                     pairs, squares)
    return pairs + pairs.T + np.diag(squares)


@settings(max_examples=50)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 30), k=st.integers(1, 12),
       density=st.floats(0.0, 1.0), repeats=st.booleans())
def test_gram_equals_dense_product(seed, n_docs, k, density, repeats):
    rng = np.random.default_rng(seed)
    X = sp.random_array((n_docs, k), density=density, rng=rng, format="coo")
    doc, col, x = X.row, X.col, X.data
    if repeats and x.size:
        # a (document, word) pair stored twice counts as the sum of its values
        extra = rng.integers(0, x.size, size=x.size // 2 + 1)
        doc, col, x = (np.concatenate([a, a[extra]]) for a in (doc, col, x))
    order = rng.permutation(n_docs)[doc]  # shuffled document order, grouped
    perm = np.argsort(order, kind="stable")
    doc, col, x = doc[perm], col[perm], x[perm]
    dense = np.zeros((n_docs, k))
    np.add.at(dense, (doc, col), x)
    np.testing.assert_allclose(_gram(doc, col, x, k), dense.T @ dense, rtol=1e-12, atol=1e-14)


def test_bad_arguments_are_rejected():
    doc = np.zeros(2, np.int64)
    with pytest.raises(ValueError, match="out of range"):
        cooccurrence_add(doc, np.array([0, 3]), np.ones(2), np.zeros((3, 3)), np.zeros(3))
    with pytest.raises(ValueError, match="same length"):
        cooccurrence_add(doc, np.array([0]), np.ones(2), np.zeros((3, 3)), np.zeros(3))
    with pytest.raises(ValueError, match="k x k"):
        cooccurrence_add(doc, np.array([0, 1]), np.ones(2), np.zeros((3, 2)), np.zeros(3))
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

