"""Safe feature elimination (Theorem 1 of Zhang & El Ghaoui, 2011).

For ``Sigma = A'A`` with columns ``a_i`` of ``A``, the penalised cardinality
problem

    psi = max_{||x||_2 = 1}  x' Sigma x - lam * ||x||_0

equals ``max_{||xi||_2 = 1} sum_i ((a_i' xi)^2 - lam)_+``, and a feature can only
be in an optimal pattern if ``(a_i' xi)^2 > lam`` for some unit ``xi``.  Since
``(a_i' xi)^2 <= ||a_i||^2 = Sigma_ii``, every feature with ``Sigma_ii <= lam``
can be dropped before any covariance is formed.  Only the variances are needed,
which is what makes the method work on corpora that do not fit in memory.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike, NDArray

from ._validation import check_lam

__all__ = ["safe_feature_elimination"]


def safe_feature_elimination(variances: ArrayLike, lam: float) -> NDArray[np.intp]:
    """Indices of the features that survive Theorem 1's elimination test.

    A feature ``i`` is eliminated when its variance ``Sigma_ii <= lam``: it
    cannot belong to an optimal sparsity pattern of the penalised cardinality
    problem

        psi = max_{||x||_2 = 1}  x' Sigma x - lam * ||x||_0 .

    Parameters
    ----------
    variances : array-like of shape (n_features,)
        The diagonal of the covariance matrix (per-feature variances). Must be
        finite and non-negative.
    lam : float
        The sparsity penalty, ``lam >= 0``.

    Returns
    -------
    kept : ndarray of shape (n_kept,), dtype intp
        Sorted indices of the features with ``variances > lam``.

    Raises
    ------
    ValueError
        If ``variances`` is not 1-D, holds NaN, inf or negative values, or if
        ``lam`` is negative or not finite.

    Notes
    -----
    The test is exact (no optimal pattern is lost) for the cardinality problem.
    For the convex relaxation solved by :func:`spca.dspca_bca` it is the
    paper's pre-processing step, not an exact reduction: on some inputs the
    relaxation on all features puts a little weight on eliminated features
    (see ``eliminate`` in :func:`spca.dspca_bca`).  A variance equal to ``lam``
    is eliminated: such a feature adds ``((a_i' xi)^2 - lam)_+ = 0`` to ``psi``.

    References
    ----------
    Y. Zhang and L. El Ghaoui, "Large-Scale Sparse Principal Component Analysis
    with Application to Text Data", NIPS 2011, Theorem 1 and eq. (3).

    Examples
    --------
    >>> import spca
    >>> spca.safe_feature_elimination([4.0, 0.5, 2.0, 1.0], lam=1.0)
    array([0, 2])
    """
    lam = check_lam(lam)
    v = np.asarray(variances)
    if v.ndim != 1:
        raise ValueError(f"variances must be 1-D, got an array of shape {v.shape}")
    if not (np.issubdtype(v.dtype, np.floating) or np.issubdtype(v.dtype, np.integer)):
        raise TypeError(f"variances must be real numbers, got dtype {v.dtype}")
    v = v.astype(np.float64, copy=False)
    if not np.all(np.isfinite(v)):
        bad = int(np.flatnonzero(~np.isfinite(v))[0])
        raise ValueError(f"variances must be finite, got {float(v[bad])!r} at index {bad}")
    if v.size and v.min() < 0:
        bad = int(np.argmin(v))
        raise ValueError(f"variances must be >= 0, got {float(v[bad])!r} at index {bad}")
    return np.flatnonzero(v > lam).astype(np.intp)
