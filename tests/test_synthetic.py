"""The synthetic corpus generator: reproducibility, shape of the statistics, planted topics."""

from __future__ import annotations

import numpy as np
import pytest

from spca.datasets import make_synthetic_corpus, write_uci
from spca.text import candidate_covariance, load_uci_bow, word_statistics


@pytest.fixture(scope="module")
def corpus():
    return make_synthetic_corpus(6000, 2000, nnz_per_doc=60, random_state=7, batch_docs=2500)


def test_reproducible_by_seed(corpus):
    again = make_synthetic_corpus(6000, 2000, nnz_per_doc=60, random_state=7, batch_docs=2500)
    assert (again.counts != corpus.counts).nnz == 0
    assert [t.tolist() for t in again.topics] == [t.tolist() for t in corpus.topics]
    other = make_synthetic_corpus(6000, 2000, nnz_per_doc=60, random_state=8, batch_docs=2500)
    assert (other.counts != corpus.counts).nnz > 0


def test_shape_and_sparsity(corpus):
    X = corpus.counts
    assert X.shape == (6000, 2000) and X.has_canonical_format
    assert X.data.min() >= 1 and np.all(X.data == np.round(X.data))
    # about nnz_per_doc background words per document (planted words add a few)
    assert 55 < X.nnz / X.shape[0] < 70
    assert len(corpus.vocabulary) == 2000
    assert corpus.vocabulary[corpus.topics[1][2]] == "topic1_2"
    planted = np.concatenate(corpus.topics)
    assert len(np.unique(planted)) == 25


def test_zipf_frequencies_and_decaying_variances(corpus):
    stats = word_statistics(corpus.counts)
    background = np.setdiff1d(np.arange(2000), np.concatenate(corpus.topics))
    freq = stats.mean[background]
    # frequency falls with rank like a power law: log-log slope near -zipf_exponent
    ranks = background + 1
    mask = (ranks > 10) & (ranks < 500)
    slope = np.polyfit(np.log(ranks[mask] + 2.7), np.log(freq[mask]), 1)[0]
    assert -1.3 < slope < -0.85
    sorted_var = np.sort(stats.variance)[::-1]
    assert sorted_var[0] > 10 * sorted_var[200] > 10 * sorted_var[1500]


def test_planted_topics_cooccur(corpus):
    X = corpus.counts.toarray()
    R = np.corrcoef(X, rowvar=False)
    for words in corpus.topics:
        block = R[np.ix_(words, words)]
        off = block[~np.eye(len(words), dtype=bool)]
        assert off.min() > 0.6
    a, b = corpus.topics[0], corpus.topics[1]
    assert np.abs(R[np.ix_(a, b)]).max() < 0.15
    rng = np.random.default_rng(0)
    background = np.setdiff1d(np.arange(2000), np.concatenate(corpus.topics))
    pairs = rng.choice(background[:300], size=(200, 2))
    pairs = pairs[pairs[:, 0] != pairs[:, 1]]
    assert np.abs(R[pairs[:, 0], pairs[:, 1]]).max() < 0.15


def test_topics_are_leading_components(corpus):
    stats = word_statistics(corpus.counts)
    kept = np.argsort(-stats.variance)[:60]
    cov = candidate_covariance(corpus.counts, kept, stats=stats)
    _, vecs = np.linalg.eigh(cov)
    lead = kept[np.argsort(-np.abs(vecs[:, -1]))[:5]]
    assert set(lead.tolist()) == set(corpus.topics[0].tolist())


def test_write_uci_roundtrip(tmp_path):
    c = make_synthetic_corpus(300, 150, nnz_per_doc=12, n_topics=2, random_state=1)
    write_uci(tmp_path / "docword.syn.txt.gz", tmp_path / "vocab.syn.txt", c.counts,
              c.vocabulary)
    back = load_uci_bow(tmp_path / "docword.syn.txt.gz", tmp_path / "vocab.syn.txt")
    assert (back.counts != c.counts).nnz == 0
    assert back.vocabulary.tolist() == c.vocabulary.tolist()


def test_argument_checks():
    with pytest.raises(ValueError, match="n_docs must be >= 1, got 0"):
        make_synthetic_corpus(0, 10)
    for bad in (10.5, 10.0, True, "10"):  # no silent rounding
        with pytest.raises(TypeError, match="n_docs must be an integer"):
            make_synthetic_corpus(bad, 100)
    with pytest.raises(TypeError, match="n_words must be an integer"):
        make_synthetic_corpus(10, 100.5)
    with pytest.raises(ValueError, match="nnz_per_doc"):
        make_synthetic_corpus(10, 10, nnz_per_doc=20)
    with pytest.raises(ValueError, match="do not fit"):
        make_synthetic_corpus(10, 30, n_topics=5, words_per_topic=5, nnz_per_doc=3)
    c = make_synthetic_corpus(50, 40, n_topics=0, nnz_per_doc=5)
    assert c.topics == () and c.counts.shape == (50, 40)


@pytest.mark.parametrize("name", ["docword.s.txt.gz", "docword.s.txt"])
def test_streamed_corpus_equals_the_in_memory_one(tmp_path, name):
    from spca.datasets import write_synthetic_corpus

    kwargs = dict(n_topics=3, words_per_topic=4, nnz_per_doc=15, batch_docs=700,
                  random_state=4)
    topics = write_synthetic_corpus(tmp_path / name, tmp_path / "vocab.s.txt", 2000, 400,
                                    **kwargs)
    ref = make_synthetic_corpus(2000, 400, **kwargs)
    got = load_uci_bow(tmp_path / name, tmp_path / "vocab.s.txt")
    assert (got.counts != ref.counts).nnz == 0
    assert list(got.vocabulary) == list(ref.vocabulary)
    for a, b in zip(topics, ref.topics, strict=True):
        np.testing.assert_array_equal(a, b)
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([name, "vocab.s.txt"])
