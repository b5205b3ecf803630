"""The text pipeline on the bundled NYT sample."""

from __future__ import annotations

import numpy as np

from spca.datasets import load_nytimes_sample
from spca.text import candidate_covariance, sparse_topics, word_statistics


class NYTSample:
    """Corpus (in memory) to 5 sparse components of 5 words, and its two passes."""

    timeout = 300

    def setup(self):
        self.corpus = load_nytimes_sample()
        self.stats = word_statistics(self.corpus)
        self.words = np.sort(np.argsort(-self.stats.variance)[:1024])

    def time_sparse_topics(self):
        sparse_topics(self.corpus, n_components=5, cardinality=5)

    def peakmem_sparse_topics(self):
        sparse_topics(self.corpus, n_components=5, cardinality=5)

    def time_word_statistics(self):
        word_statistics(self.corpus)

    def time_candidate_covariance_1024(self):
        candidate_covariance(self.corpus, self.words, stats=self.stats)

    def track_max_reduced_size(self):
        res = sparse_topics(self.corpus, n_components=5, cardinality=5)
        return max(t.reduced_size for t in res.topics)


class SyntheticCorpus:
    """Corpus to topics on Zipf corpora with planted topics (NYTimes vocabulary size),
    against ordinary PCA of the same matrix (scikit-learn's TruncatedSVD) when installed."""

    params = [20_000, 100_000]
    param_names = ["n_docs"]
    timeout = 600

    def setup(self, n_docs):
        from spca.datasets import make_synthetic_corpus

        self.corpus = make_synthetic_corpus(n_docs, 102_660, random_state=0)

    def time_sparse_topics(self, n_docs):
        sparse_topics(self.corpus, n_components=5, cardinality=5)

    def time_truncated_svd_baseline(self, n_docs):
        try:
            from sklearn.decomposition import TruncatedSVD
        except ImportError:  # asv shows the benchmark as skipped
            raise NotImplementedError("scikit-learn is not installed") from None
        TruncatedSVD(n_components=5, random_state=0).fit(self.corpus.counts)

    def track_topics_recovered(self, n_docs):
        res = sparse_topics(self.corpus, n_components=5, cardinality=5)
        return sum(len({w.split("_")[0] for w in t.words}) == 1 for t in res.topics)
