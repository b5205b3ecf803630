"""
How much variance does each cardinality buy? A certified curve
==============================================================

.. note::

   Pending: this example uses ``spca.cardinality_path``, which is not
   released yet. It is listed in ``PENDING_EXAMPLES`` in ``docs/conf.py`` and
   is neither run nor shown until it is removed from that list (check the
   names of the call and of the attributes below against the released API
   first).

For each number ``k`` of nonzero loadings, the best component explains some
variance ``max x' Sigma x`` over unit ``x`` with at most ``k`` nonzeros. Nobody
can compute that maximum exactly at scale, but it can be bracketed: the
component found for ``k`` gives a lower bound (its explained variance), and
the DSPCA relaxation gives a certified upper bound. The band between them
says how much better any other ``k``-sparse component could possibly do.

Here on Jeffers' pitprops correlation matrix, for ``k = 1, ..., 13``.
"""

# %%
import matplotlib.pyplot as plt
import numpy as np

import spca
from spca.datasets import load_pitprops

R = load_pitprops().correlation
ks = np.arange(1, R.shape[0] + 1)
path = spca.cardinality_path(R, ks)

lower = np.array([res.explained_variance for res in path])
upper = np.array([res.variance_upper_bound for res in path])
for k, lo, up in zip(ks, lower, upper, strict=True):
    print(f"k = {k:2d}: {lo:.3f} <= best {k}-sparse variance <= {up:.3f}")

# %%
# Ordinary PCA (all 13 loadings) explains the largest eigenvalue: the curve
# reaches it at k = 13.
lam_max = np.linalg.eigvalsh(R)[-1]
fig, ax = plt.subplots(figsize=(6, 4))
ax.fill_between(ks, lower, upper, color="C0", alpha=0.25, label="certified band")
ax.plot(ks, lower, "o-", color="C0", label="found component")
ax.axhline(lam_max, color="0.5", ls="--", label="ordinary PCA")
ax.set_xlabel("number of nonzero loadings k")
ax.set_ylabel("explained variance")
ax.legend()
fig.tight_layout()
plt.show()
