"""The compiled kernels of the two corpus passes against dense computations."""

import os
import re
import subprocess
import sys

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given, settings
from hypothesis import strategies as st
from spca.text._cooccur import (
    _OPENMP,
    _default_threads,
    centre_gram,
    cooccurrence_add,
    normalize_documents,
    symmetrize_gram,
    symmetrize_int_gram,
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


@pytest.mark.parametrize("k", [1, 2, 5, 130])
def test_centre_gram_row_maxima_are_offdiag_rowmax(k):
    from spca._variance import offdiag_rowmax

    rng = np.random.default_rng(k)
    X = rng.standard_normal((9, k))
    gram = X.T @ X
    gram = gram + gram.T
    mean = rng.standard_normal(k)
    rowmax = np.full(k, np.nan)
    centre_gram(gram, mean, 9, rowmax)
    np.testing.assert_array_equal(rowmax, offdiag_rowmax(gram))
    with pytest.raises(ValueError, match=f"rowmax must have length {k}, got {k + 1}"):
        centre_gram(gram, mean, 9, np.empty(k + 1))


def test_topics_covariance_keeps_the_row_maxima_of_its_matrix():
    """sparse_topics' covariance operator gets the row maxima of the matrix
    it wraps from the centring sweep, equal to offdiag_rowmax's; and none
    when rows are recomputed after that sweep (the accurate rows)."""
    from spca._variance import offdiag_rowmax
    from spca.datasets import load_nytimes_sample
    from spca.text import word_statistics
    from spca.text._stats import _candidate_covariance

    corpus = load_nytimes_sample()
    stats = word_statistics(corpus)
    words = np.sort(np.argsort(-stats.variance)[:300])
    C, rowmax = _candidate_covariance(corpus, words, stats=stats)
    np.testing.assert_array_equal(rowmax, offdiag_rowmax(C))
    # a word nearly constant in every document: its row is computed again
    X = sp.csr_array(np.column_stack([np.full(50, 1e8) + np.arange(50) % 3,
                                      np.arange(50) % 2 + 1.0]))
    C2, rowmax2 = _candidate_covariance(X, [0, 1])
    assert rowmax2 is None


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


# --------------------------------------------------------------------------
# threads (OpenMP): cooccurrence_add groups runs of documents and adds the
# tile pairs in parallel; symmetrize_gram and centre_gram split their rows
# --------------------------------------------------------------------------


def _positions(rng, n_words, k, *, ordered):
    """Positions of ``k`` random candidate words (shuffled, unless ``ordered``)."""
    cand = rng.permutation(n_words)[:k]
    if ordered:
        cand.sort()
    position = np.full(n_words, -1, dtype=np.int64)
    position[cand] = np.arange(k)
    return position


def _random_chunk(rng, n_docs, position, words_per_doc, *, ordered, itype=np.int64):
    """Records of ``n_docs`` documents (contiguous, in shuffled order, with
    repeated (document, word) pairs) and the candidate positions.  The word
    frequencies are Zipf-like, so the tile rows carry unequal work; with
    ``ordered``, the words of a document are sorted."""
    n_words = len(position)
    p = 1.0 / np.arange(1, n_words + 1) ** 1.1
    p /= p.sum()
    docs, words = [np.zeros(0, np.int64)], [np.zeros(0, np.int64)]
    for d in rng.permutation(n_docs):
        w = rng.choice(n_words, size=rng.integers(0, 2 * words_per_doc + 1), p=p)
        if ordered:
            w.sort()
        docs.append(np.full(len(w), d))
        words.append(w)
    doc = np.concatenate(docs).astype(itype)
    word = np.concatenate(words).astype(itype)
    x = rng.random(len(doc)) * rng.integers(1, 5, size=len(doc))
    return doc, word, x, position


def _accumulate(chunks, k, block, n_threads, pad=8):
    pairs = np.zeros((k, k + pad))
    squares, sums = np.zeros(k), np.zeros(k)
    for doc, word, x, position in chunks:
        cooccurrence_add(doc, word, x, position, pairs, squares, sums, block,
                         n_threads=n_threads)
    return pairs, squares, sums


@pytest.mark.parametrize("k, block", [
    (1, 256), (7, 256), (100, 256),  # one tile, k < tile
    (256, 256), (300, 256), (700, 256), (1024, 256), (1100, 256),  # 1 to 5 tile rows
    (37, 4), (64, 8),  # many small tiles (55 and 36 tile pairs)
])
@pytest.mark.parametrize("ordered", [True, False])
def test_threads_give_bit_identical_results(k, block, ordered):
    rng = np.random.default_rng([k, block, ordered])
    n_words = k + 200
    position = _positions(rng, n_words, k, ordered=ordered)
    # two chunks accumulated into the same arrays, the second with int32 indices
    chunks = [_random_chunk(rng, 150, position, 60, ordered=ordered),
              _random_chunk(rng, 80, position, 60, ordered=ordered, itype=np.int32)]
    expected = _accumulate(chunks, k, block, n_threads=1)
    assert expected[0].any() or k == 1
    for n_threads in (2, 3, 4, None, 0, -1, np.int64(2), 10**30):
        got = _accumulate(chunks, k, block, n_threads)
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"n_threads={n_threads!r}")
    # the Gram matrix, for good measure
    pairs, squares, _ = expected
    symmetrize_gram(pairs, squares)
    gram = pairs.reshape(-1)[:k * k].reshape(k, k)
    dense = np.zeros((230, n_words))
    for i, (doc, word, x, _) in enumerate(chunks):
        np.add.at(dense, (doc.astype(np.int64) + 150 * i, word), x)
    S = np.zeros((230, k))
    S[:, position[position >= 0]] = dense[:, position >= 0]
    np.testing.assert_allclose(gram, S.T @ S, rtol=1e-12)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 40), n_words=st.integers(1, 40),
       words_per_doc=st.integers(0, 30), block=st.sampled_from([1, 2, 4, 8, 256]),
       ordered=st.booleans(), n_threads=st.integers(2, 5))
def test_threads_give_bit_identical_results_random(seed, n_docs, n_words, words_per_doc, block,
                                                   ordered, n_threads):
    rng = np.random.default_rng(seed)
    position = _positions(rng, n_words, int(rng.integers(1, n_words + 1)), ordered=ordered)
    k = int(position.max()) + 1
    chunk = _random_chunk(rng, n_docs, position, words_per_doc, ordered=ordered)
    expected = _accumulate([chunk], k, block, n_threads=1, pad=0)
    got = _accumulate([chunk], k, block, n_threads=n_threads, pad=0)
    for a, b in zip(expected, got, strict=True):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("bad", [1.5, 2.0, "2", True, False, [2], np.float64(2.0)])
def test_invalid_n_threads_is_rejected(bad):
    doc = np.zeros(2, np.int64)
    word = np.array([0, 1])
    position = np.array([0, 1])
    pairs, sq, sums = np.zeros((2, 2)), np.zeros(2), np.zeros(2)
    message = re.escape(f"n_threads must be None or an integer, got {bad!r}")
    with pytest.raises(ValueError, match=message):
        cooccurrence_add(doc, word, np.ones(2), position, pairs, sq, sums, n_threads=bad)
    with pytest.raises(TypeError):  # keyword only
        cooccurrence_add(doc, word, np.ones(2), position, pairs, sq, sums, 256, 2)
    # checked before anything is written, also for an empty chunk
    assert not pairs.any() and not sq.any() and not sums.any()
    empty = np.zeros(0, np.int64)
    with pytest.raises(ValueError, match="n_threads"):
        cooccurrence_add(empty, empty, np.zeros(0), position, pairs, sq, sums, n_threads=bad)


def test_symmetrize_and_centre_do_not_depend_on_threads():
    threadpoolctl = pytest.importorskip("threadpoolctl")
    rng = np.random.default_rng(3)
    k, ld = 300, 308
    pairs = rng.random((k, ld))
    pairs[:, k:] = 0.0
    squares, mean = rng.random(k), rng.random(k)
    results = []
    for limit in (1, None):
        with threadpoolctl.threadpool_limits(limits=limit, user_api="openmp"):
            p = pairs.copy()
            symmetrize_gram(p, squares)
            gram = p.reshape(-1)[:k * k].reshape(k, k)
            cov = gram.copy()
            centre_gram(cov, mean, 7.0)
            results.append((gram, cov))
    (g1, c1), (g2, c2) = results
    expected = pairs[:, :k] + pairs[:, :k].T + np.diag(squares)
    np.testing.assert_array_equal(g1, expected)
    np.testing.assert_array_equal(g1, g2)
    np.testing.assert_array_equal(c1, expected / 7.0 - np.outer(mean, mean))
    np.testing.assert_array_equal(c1, c2)


def test_default_threads_follow_openmp_settings(tmp_path):
    threadpoolctl = pytest.importorskip("threadpoolctl")
    with threadpoolctl.threadpool_limits(limits=1, user_api="openmp"):
        assert _default_threads() == 1
    code = "from spca.text import _cooccur; print(_cooccur._default_threads())"
    env = dict(os.environ, OMP_NUM_THREADS="3")
    # (run outside the source tree, whose spca/ has no compiled kernels)
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert int(out.stdout) == (3 if _OPENMP else 1)


def _big_chunk(rng, k, *, ordered, huge=0):
    """About 70,000 records (several threads' worth of step 1), optionally with
    one document of ``huge`` records in the middle (300 of them candidates)."""
    position = _positions(rng, 2 * k, k, ordered=ordered)
    doc, word, x, _ = _random_chunk(rng, 1800, position, 20, ordered=ordered)
    if huge:
        others = np.flatnonzero(position < 0)
        w = others[rng.integers(0, len(others), size=huge)]
        w[rng.integers(0, huge, size=300)] = rng.choice(np.flatnonzero(position >= 0), 300)
        if ordered:
            w.sort()
        mid = np.searchsorted(np.cumsum(np.diff(doc, prepend=doc[0]) != 0), 900)
        doc = np.concatenate([doc[:mid], np.full(huge, 10**6), doc[mid:]])
        word = np.concatenate([word[:mid], w, word[mid:]])
        x = np.concatenate([x[:mid], rng.random(huge), x[mid:]])
    return doc, word, x, position


@pytest.mark.parametrize("huge", [0, 50_000, 200_000])
@pytest.mark.parametrize("ordered", [True, False])
def test_threads_group_documents_bit_identically(huge, ordered):
    # enough records for step 1 (grouping by tile row) to run on up to 4
    # threads, each a run of whole documents; a huge document takes the cut
    # of several threads (which then get no document)
    rng = np.random.default_rng([huge, ordered])
    k = 700
    chunk = _big_chunk(rng, k, ordered=ordered, huge=huge)
    expected = _accumulate([chunk], k, 256, n_threads=1)
    for n_threads in (2, 3, 4, 8):
        got = _accumulate([chunk], k, 256, n_threads)
        for a, b in zip(expected, got, strict=True):
            np.testing.assert_array_equal(a, b, err_msg=f"n_threads={n_threads}")


@pytest.mark.parametrize("n_threads", [1, 2, 4])
def test_threads_report_the_first_bad_record(n_threads):
    rng = np.random.default_rng(7)
    k = 300
    doc, word, x, position = _big_chunk(rng, k, ordered=False)
    r = len(doc)
    pairs, sq, sums = np.zeros((k, k)), np.zeros(k), np.zeros(k)
    bad = word.copy()
    bad[[r // 2, r - 3]] = 2 * k + 5, 2 * k + 9  # in the second half, and at the end
    with pytest.raises(ValueError, match=f"word index {2 * k + 5} out of range"):
        cooccurrence_add(doc, bad, x, position, pairs, sq, sums, n_threads=n_threads)
    bad[3 * r // 4] = -1  # before the end, after the first
    with pytest.raises(ValueError, match=f"word index {2 * k + 5} out of range"):
        cooccurrence_add(doc, bad, x, position, pairs, sq, sums, n_threads=n_threads)
    bad_position = position.copy()
    bad_position[word[r - 10]] = k  # a candidate's position out of range
    with pytest.raises(ValueError, match=f"position {k} of word {word[r - 10]} out of range"):
        cooccurrence_add(doc, word, x, bad_position, pairs, sq, sums, n_threads=n_threads)
    assert not pairs.any() and not sq.any() and not sums.any()


# --------------------------------------------------------------------------
# the int32 accumulator: integer values whose sums provably fit
# --------------------------------------------------------------------------


def _int_chunk(rng, n_docs, n_words, density, top):
    """Records of a CSR count matrix (sorted words in each document)."""
    X = sp.random_array((n_docs, n_words), density=density, rng=rng, format="csr",
                        data_sampler=lambda size: rng.integers(1, top + 1, size=size))
    X.sum_duplicates()
    doc = np.repeat(np.arange(n_docs), np.diff(X.indptr)).astype(np.int64)
    return doc, X.indices.astype(np.int64), X.data.astype(np.float64), X.toarray()


def _int_pairs(k, ld):
    """A zeroed k x ld int32 accumulator at the start of a k x k float64 buffer
    (whose other bytes are NaN), as pass 2 lays them out."""
    gram = np.full((k, k), np.nan)
    pairs = gram.reshape(-1).view(np.int32)[:k * ld].reshape(k, ld)
    pairs[...] = 0
    return gram, pairs


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 40), n_words=st.integers(1, 90),
       density=st.floats(0.0, 1.0), block=st.sampled_from([1, 2, 4, 512]),
       pad=st.integers(0, 3), top=st.sampled_from([1, 3, 1000]), n_threads=st.integers(1, 3))
def test_int32_gram_is_the_float64_gram_bit_for_bit(seed, n_docs, n_words, density, block, pad,
                                                    top, n_threads):
    rng = np.random.default_rng(seed)
    doc, word, x, dense = _int_chunk(rng, n_docs, n_words, density, top)
    words = np.sort(rng.permutation(n_words)[:rng.integers(1, n_words + 1)])
    k = len(words)
    position = np.full(n_words, -1, dtype=np.int64)
    position[words] = np.arange(k)
    half = np.searchsorted(doc, n_docs // 2)  # two chunks into the same accumulator
    chunks = [(doc[:half], word[:half], x[:half]), (doc[half:], word[half:], x[half:])]
    ld = min(k + pad, 2 * k)
    gram, pairs = _int_pairs(k, ld)
    squares, sums = np.zeros(k), np.zeros(k)
    for c in chunks:
        assert cooccurrence_add(*c, position, pairs, squares, sums, block,
                                n_threads=n_threads) is True
    assert not pairs[:, k:].any()  # the padding is never written
    symmetrize_int_gram(gram, ld, squares)
    fgram, fsums = _gram(doc, word, x, position, k, 256, k + pad)
    np.testing.assert_array_equal(gram, fgram)
    np.testing.assert_array_equal(sums, fsums)
    S = dense[:, words]
    np.testing.assert_array_equal(gram, S.T @ S)  # integers: exact in any order
    np.testing.assert_array_equal(sums, S.sum(axis=0))


def _refused(doc, word, x, position, k, squares=None):
    """cooccurrence_add into an int32 accumulator returns False and writes nothing."""
    pairs = np.full((k, k), 7, dtype=np.int32)
    squares = np.zeros(k) if squares is None else squares
    sq0, sums = squares.copy(), np.full(k, 3.0)
    assert cooccurrence_add(doc, word, x, position, pairs, squares, sums) is False
    assert (pairs == 7).all() and (sums == 3.0).all()
    np.testing.assert_array_equal(squares, sq0)


def test_int32_refuses_what_it_cannot_sum_exactly():
    doc = np.array([0, 0, 1, 1], np.int64)
    word = np.array([0, 2, 1, 2], np.int64)
    position = np.array([0, 1, 2], np.int64)
    ones = np.ones(4)
    _refused(doc, word, np.array([1.0, 2.5, 1.0, 1.0]), position, 3)  # not an integer
    _refused(doc, word, np.array([1.0, np.nan, 1.0, 1.0]), position, 3)
    _refused(doc, word, np.array([1.0, 1.0, 46341.0, 1.0]), position, 3)  # square >= 2**31
    _refused(doc, word, np.array([1.0, 1.0, -1e300, 1.0]), position, 3)
    _refused(doc, np.array([0, 0, 1, 2]), ones, position, 3)  # a word twice in a document
    _refused(doc, np.array([2, 0, 1, 2]), ones, position, 3)  # decreasing positions
    _refused(doc, word, ones, np.array([2, 1, 0]), 3)
    # the bound counts the squares already accumulated (word 2, at position 2)
    big = np.array([1.0, 46340.0, 1.0, 1.0])
    pairs = np.zeros((3, 3), dtype=np.int32)
    squares, sums = np.zeros(3), np.zeros(3)
    assert cooccurrence_add(doc, word, big, position, pairs, squares, sums) is True
    assert squares[2] == 46340.0**2 + 1 < 2**31
    # 46340**2 + 1 + 297**2 + 1 >= 2**31 > 46340**2 + 1 + 296**2 + 1
    _refused(doc, word, np.array([1.0, 297.0, 1.0, 1.0]), position, 3, squares.copy())
    assert cooccurrence_add(doc, word, np.array([1.0, 296.0, 1.0, 1.0]), position, pairs,
                            squares, sums) is True
    assert squares[2] == 46340.0**2 + 296.0**2 + 2
    gram, ipairs = _int_pairs(3, 3)
    ipairs[...] = pairs
    symmetrize_int_gram(gram, 3, squares)
    S = np.array([[1.0, 0, 46340.0], [0, 1, 1], [1.0, 0, 296.0], [0, 1, 1]])
    np.testing.assert_array_equal(gram, S.T @ S)
    # bad words are still errors, not refusals
    with pytest.raises(ValueError, match="word index 5 out of range"):
        cooccurrence_add(doc, np.array([0, 5, 1, 2]), ones, position,
                         np.zeros((3, 3), np.int32), np.zeros(3), np.zeros(3))


def test_symmetrize_int_gram_checks_shapes():
    with pytest.raises(ValueError, match="k x k"):
        symmetrize_int_gram(np.zeros((3, 2)), 3, np.zeros(3))
    with pytest.raises(ValueError, match="k x k"):
        symmetrize_int_gram(np.zeros((3, 3)), 3, np.zeros(2))
    with pytest.raises(ValueError, match=r"ld must be in k \.\. 2k \(3 \.\. 6\), got 7"):
        symmetrize_int_gram(np.zeros((3, 3)), 7, np.zeros(3))
    with pytest.raises(ValueError, match="got 2"):
        symmetrize_int_gram(np.zeros((3, 3)), 2, np.zeros(3))


@pytest.mark.parametrize("k, ld", [(1, 1), (1, 2), (5, 5), (5, 10), (64, 80), (200, 216),
                                   (1024, 1040)])
def test_symmetrize_int_gram_widens_in_place(k, ld):
    """Every ld from k to 2k: the widened rows never overwrite int32 rows still
    to be read (random int32 entries, each sum of a pair below 2**31)."""
    rng = np.random.default_rng([k, ld])
    P = rng.integers(-2**29, 2**29, size=(k, ld), dtype=np.int32)
    squares = rng.integers(0, 2**31, size=k).astype(np.float64)
    gram, pairs = _int_pairs(k, ld)
    pairs[...] = P
    symmetrize_int_gram(gram, ld, squares)
    Q = P[:, :k].astype(np.int64)
    expected = (Q + Q.T).astype(np.float64)
    expected[np.diag_indices(k)] += squares
    np.testing.assert_array_equal(gram, expected)


def _spy_kernel(monkeypatch):
    """The (accumulator dtype, return value) of every call of pass 2's kernel,
    in order, by a spy that calls the kernel itself."""
    import spca.text._partials as partials

    calls = []
    kernel = partials.cooccurrence_add

    def spy(*args, **kwargs):
        out = kernel(*args, **kwargs)
        calls.append((args[4].dtype, out))
        return out

    monkeypatch.setattr(partials, "cooccurrence_add", spy)
    return calls


@pytest.mark.parametrize("transform", ["count", "binary", "log1p"])
def test_pass2_falls_back_to_float64_mid_corpus(transform, monkeypatch):
    """A chunk whose counts break the int32 bound moves the sums so far to a
    float64 accumulator: the Gram matrix is the float64 one, bit for bit,
    and the dense product."""
    import spca.text._partials as partials
    from spca.text._partials import pass2_partial
    from spca.text._uci import DocumentChunk

    calls = _spy_kernel(monkeypatch)

    rng = np.random.default_rng(5)
    n_words = 12
    parts = []
    # (the third chunk: each value below 46,341, but their squares sum past 2**31)
    for start, top in ((0, 5), (30, 5), (60, 40000), (90, 5)):
        doc, word, x, dense = _int_chunk(rng, 30, n_words, 0.4, top)
        parts.append((DocumentChunk(doc=doc + start, word=word, count=x.astype(np.int64),
                                    row_start=start, row_stop=start + 30), dense))
    chunks = [c for c, _ in parts]
    words = np.array([0, 2, 3, 5, 6, 7, 8, 11])
    gram, sums = pass2_partial(chunks, words, n_words, transform, None, None)
    expected = {"count": [(np.int32, True)] * 2 + [(np.int32, False)] + [(np.float64, True)] * 2,
                "binary": [(np.int32, True)] * 4, "log1p": [(np.float64, True)] * 4}
    assert calls == expected[transform]
    dense = np.vstack([d for _, d in parts])
    if transform == "binary":
        dense = (dense > 0).astype(np.float64)
    elif transform == "log1p":
        dense = np.log1p(dense)
    S = dense[:, words]
    monkeypatch.setattr(partials, "_INTEGER_TRANSFORMS", ())
    fgram, fsums = pass2_partial(chunks, words, n_words, transform, None, None)
    np.testing.assert_array_equal(gram, fgram)
    np.testing.assert_array_equal(sums, fsums)
    np.testing.assert_allclose(gram, S.T @ S, rtol=1e-13)
    if transform != "log1p":
        np.testing.assert_array_equal(gram, S.T @ S)


def test_nyt_candidate_covariance_int32_is_float64_bit_for_bit(monkeypatch):
    import spca.text._partials as partials
    from spca.datasets import load_nytimes_sample
    from spca.text import candidate_covariance, word_statistics

    nyt = load_nytimes_sample()
    var = word_statistics(nyt).variance
    words = np.sort(np.argsort(-var, kind="stable")[:600])
    calls = _spy_kernel(monkeypatch)
    C = candidate_covariance(nyt, words)
    assert calls and all(c == (np.int32, True) for c in calls)  # the int32 path, throughout
    monkeypatch.setattr(partials, "_INTEGER_TRANSFORMS", ())
    calls.clear()
    F = candidate_covariance(nyt, words)
    assert calls and all(c[0] == np.float64 for c in calls)
    np.testing.assert_array_equal(C, F)


def test_pass2_falls_back_on_non_integer_values_mid_corpus():
    """Counts, then a chunk of non-integer values: the int32 sums so far move to
    float64; the Gram matrix is the dense product's, up to rounding."""
    from spca.text._partials import pass2_partial
    from spca.text._uci import DocumentChunk

    rng = np.random.default_rng(11)
    chunks, dense = [], []
    for start, scale in ((0, 1.0), (25, 1.0), (50, 0.37), (75, 1.0)):
        doc, word, x, D = _int_chunk(rng, 25, 10, 0.5, 6)
        chunks.append(DocumentChunk(doc=doc + start, word=word, count=x * scale,
                                    row_start=start, row_stop=start + 25))
        dense.append(D * scale)
    words = np.array([0, 1, 3, 4, 6, 9])
    gram, sums = pass2_partial(chunks, words, 10, "count", None, None)
    S = np.vstack(dense)[:, words]
    np.testing.assert_allclose(gram, S.T @ S, rtol=1e-13)
    np.testing.assert_array_equal(gram, gram.T)
    np.testing.assert_allclose(sums, S.sum(axis=0), rtol=1e-13)


@settings(max_examples=60, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n_docs=st.integers(1, 40), density=st.floats(0.0, 1.0),
       int64=st.booleans(), data=st.data())
def test_document_ids_equal_repeat(seed, n_docs, density, int64, data):
    from spca.text._cooccur import document_ids

    X = sp.random(n_docs, 7, density=density, format="csr", random_state=seed)
    indptr = X.indptr.astype(np.int64 if int64 else np.int32)
    row = data.draw(st.integers(0, n_docs))
    stop = data.draw(st.integers(row, n_docs))
    out = np.full(int(indptr[stop] - indptr[row]), -1, dtype=np.int64)
    document_ids(indptr, row, stop, out)
    expected = np.repeat(np.arange(row, stop), np.diff(indptr[row:stop + 1]))
    np.testing.assert_array_equal(out, expected)


def test_document_ids_rejects_bad_arguments():
    from spca.text._cooccur import document_ids

    indptr = np.array([0, 2, 2, 5], dtype=np.int32)
    with pytest.raises(ValueError, match=r"rows 2\.\.4 out of range 0\.\.3"):
        document_ids(indptr, 2, 4, np.empty(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"rows 2\.\.1 out of range"):
        document_ids(indptr, 2, 1, np.empty(0, dtype=np.int64))
    with pytest.raises(ValueError, match="out must have length 5, got 4"):
        document_ids(indptr, 0, 3, np.empty(4, dtype=np.int64))
    with pytest.raises(ValueError, match="indptr decreases at row 1"):
        document_ids(np.array([0, 3, 1, 4], dtype=np.int64), 0, 3, np.empty(4, dtype=np.int64))


@pytest.mark.parametrize("shape", [7, (3, 5), 1 << 18, (1024, 1024), (3, 1 << 19)])
@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.uint8])
def test_huge_empty_is_empty_aligned_for_huge_pages(shape, dtype):
    from spca.text._memory import HUGE_PAGE, huge_empty

    a = huge_empty(shape, dtype)
    assert a.shape == ((shape,) if isinstance(shape, int) else shape)
    assert a.dtype == np.dtype(dtype) and a.flags.c_contiguous and a.flags.writeable
    if a.nbytes >= HUGE_PAGE:
        assert a.ctypes.data % HUGE_PAGE == 0
    a[...] = 1  # every byte is the caller's
    assert a.sum() == a.size
