"""
How much variance does each cardinality buy? A certified curve
==============================================================

For each number ``k`` of nonzero loadings, the best component explains some
variance ``psi_k = max x' Sigma x`` over unit ``x`` with at most ``k``
nonzeros. Computing that maximum is NP-hard, but it can be bracketed: the
component :func:`spca.cardinality_path` finds for ``k`` gives a lower bound
(its variance), and the DSPCA relaxation gives a certified upper bound (the
smallest ``phi(lam) + lam k`` over the solves made). The band between them
says how much better any other ``k``-sparse component could possibly do.

Here on Jeffers' pitprops correlation matrix, for ``k = 1, ..., 13``. With
13 variables the exact optimum can also be found by trying all 8,191
supports, which shows where in the band the truth lies.
"""

# %%
import itertools

import matplotlib.pyplot as plt
import numpy as np

import spca
from spca.datasets import load_pitprops

R = load_pitprops().correlation
ks = np.arange(1, R.shape[0] + 1)
path = spca.cardinality_path(R, ks)
print(path)

# %%
# The exact optimum by brute force (13 variables only: 2^13 supports).
exact = np.zeros(ks.size)
for size in ks:
    exact[size - 1] = max(np.linalg.eigvalsh(R[np.ix_(s, s)])[-1]
                          for s in itertools.combinations(range(13), size))
print("largest |found - exact|:", np.abs(path.variances - exact).max())

# %%
# Ordinary PCA (all 13 loadings) explains the largest eigenvalue: the curve
# reaches it at k = 13.
fig, ax = plt.subplots(figsize=(6, 4))
path.plot(ax)
ax.plot(ks, exact, "x", color="k", label="exact optimum (brute force)")
ax.axhline(np.linalg.eigvalsh(R)[-1], color="0.5", ls="--", label="ordinary PCA")
ax.legend()  # the axis labels and title are path.plot's
fig.tight_layout()
plt.show()
