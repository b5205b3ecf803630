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
