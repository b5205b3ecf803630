"""
Standardised tabular data in a scikit-learn pipeline
====================================================

The breast cancer data set of scikit-learn has 569 tumours described by 30
measurements in different units (radii, areas, textures, ...). Their
variances are not comparable, so the features are standardised first and
sparse PCA works on the correlation matrix. :class:`spca.SparsePCA` is a
scikit-learn transformer and goes into a :class:`~sklearn.pipeline.Pipeline`
like :class:`~sklearn.decomposition.PCA` does.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.decomposition import PCA
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

import spca

data = load_breast_cancer()
X, y, names = data.data, data.target, data.feature_names

pipe = make_pipeline(StandardScaler(), spca.SparsePCA(n_components=2, cardinality=4))
scores = pipe.fit_transform(X)
est = pipe[-1]

for t, row in enumerate(est.components_, start=1):
    support = np.flatnonzero(row)
    print(f"component {t} (lam = {est.lambdas_[t - 1]:.3f}):")
    for j in support[np.argsort(-np.abs(row[support]))]:
        print(f"    {row[j]:+.3f}  {names[j]}")

# %%
# Sparsity costs variance. The first two ordinary principal components mix
# all 30 measurements; the two sparse ones read as "tumour size" and
# "irregularity of the contour" and explain less. ``pca_variance_ratio_`` is
# the share of what ordinary PCA explains with as many components.
pca = make_pipeline(StandardScaler(), PCA(n_components=2)).fit(X)
print("sparse PCA, cumulative explained variance ratio:",
      np.round(np.cumsum(est.explained_variance_ratio_), 3))
print("PCA,        cumulative explained variance ratio:",
      np.round(np.cumsum(pca[-1].explained_variance_ratio_), 3))
print("share of what PCA explains:", np.round(est.pca_variance_ratio_, 3))

# %%
# What is certified, and what is not. Each component comes from a search over
# ``lam`` for 4 nonzeros. The search's bracketing solves may stop before their
# gap reaches ``tol`` (at most 20 sweeps each: they only decide on which side of
# 4 the support falls); their upper bounds hold either way, and they only serve
# as cuts of the bound below (the count of such solves is printed). The solve at
# the component's own ``lam`` is checked here: ``converged`` means its relative
# duality gap is at most ``tol`` (1e-6). The 4-feature loadings are the leading
# eigenvector of the correlation matrix on the support, and
# ``certified_ratios_`` is their variance over a certified upper bound on the
# variance of *any* 4-sparse component (for the second, of the deflated matrix):
# how far from the best 4-sparse component each one can be. The support itself
# is not proven to be the best one.
for t, comp in enumerate(est.result_.components, start=1):
    search = comp.search
    early = sum(trial.gap > trial.tol for trial in search.trials)
    print(f"component {t}: solve at its lam converged: {comp.result.converged}, "
          f"gap <= 1e-6: {comp.result.gap <= 1e-6}; certified ratio "
          f"{est.certified_ratios_[t - 1]:.3f}; {early} of {len(search.trials)} "
          "search solves stopped early")
assert all(comp.result.converged for comp in est.result_.components)

# %%
# The scores on the two sparse components, which use 8 of the 30
# measurements, by diagnosis.
fig, ax = plt.subplots(figsize=(5, 4))
for label, name in enumerate(data.target_names):
    ax.scatter(*scores[y == label].T, s=8, alpha=0.6, label=name)
ax.set_xlabel("sparse component 1")
ax.set_ylabel("sparse component 2")
ax.legend()
fig.tight_layout()
plt.show()
