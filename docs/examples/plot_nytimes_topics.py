"""
Topics of the New York Times sample
===================================

The bundled sample holds 8,447 New York Times articles as word counts over a
vocabulary of 3,012 words. Its sparse principal components are short word
lists: each explains as much of the variance of the counts as it can with
five words, and the lists are disjoint (``deflation="removal"``, the setting
of the paper's tables and of ``spca topics``).

:func:`spca.text.sparse_topics` computes the per-word variances in one pass,
keeps the words that could survive safe feature elimination, forms their
covariance only, and runs a cardinality search per component.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

from spca.datasets import load_nytimes_sample
from spca.text import sparse_topics

corpus = load_nytimes_sample()
print(f"{corpus.n_docs} documents, {corpus.n_words} words, {corpus.nnz} nonzeros")

res = sparse_topics(corpus, n_components=5, cardinality=5)
for t, topic in enumerate(res.topics, start=1):
    print(f"{t}: {', '.join(topic.words):50s} lam={topic.lam:.4f} "
          f"solved over {topic.reduced_size} words")

# %%
# Each component is certified: the solver returns a lower and an upper bound
# on the optimum of its relaxation, and stops when they agree to ``tol``.
# ``reduced_size`` above is the size of the largest problem actually solved
# after elimination and splitting, out of the 3,012-word vocabulary.
print("all converged:", all(topic.converged for topic in res.topics))
print(f"{res.n_candidates} candidate words; the components explain "
      f"{100 * res.explained_variance_ratio:.1f}% of the total variance")

# %%
# The loadings, word by word. Refitting (the default) gives each word list the
# weights of largest variance on it, so the bars are the leading eigenvector
# of the covariance restricted to the five words.
fig, axes = plt.subplots(1, len(res.topics), figsize=(12, 3), sharex=True)
for t, (ax, topic) in enumerate(zip(axes, res.topics, strict=True), start=1):
    order = np.argsort(np.abs(topic.loadings))
    ax.barh(np.array(topic.words)[order], np.abs(topic.loadings)[order], color="C0")
    ax.set_title(f"component {t}")
    ax.set_xlabel("|loading|")
fig.tight_layout()
plt.show()
