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
# Every solve behind the components is certified; the gaps are relative.
for t, comp in enumerate(est.result_.components, start=1):
    print(f"component {t}: gap {comp.result.gap:.1e}")

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
