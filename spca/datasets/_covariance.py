"""Seeded covariance matrices: the two families of the paper's Figure 1 and a hard one."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int, check_positive


def make_gaussian_covariance(
    n_features: int, n_samples: int | None = None, *, random_state: int | None = 0
) -> NDArray[np.float64]:
    """Sample covariance ``Sigma = F'F / m`` of a Gaussian matrix ``F``.

    Parameters
    ----------
    n_features : int
        Size ``n`` of ``Sigma``.
    n_samples : int, optional
        Number of rows ``m`` of ``F`` (default ``n_features``).
    random_state : int or None, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    Sigma : ndarray of shape (n_features, n_features)
        Symmetric positive semidefinite.

    Examples
    --------
    >>> from spca.datasets import make_gaussian_covariance
    >>> make_gaussian_covariance(4).shape
    (4, 4)
    """
    n = check_int(n_features, "n_features")
    m = n if n_samples is None else check_int(n_samples, "n_samples")
    rng = np.random.default_rng(random_state)
    F = rng.standard_normal((m, n))
    Sigma = F.T @ F / m
    return 0.5 * (Sigma + Sigma.T)


def make_spiked_covariance(
    n_features: int,
    n_samples: int | None = None,
    *,
    cardinality: int | None = None,
    strength: float = 1.0,
    random_state: int | None = 0,
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """Spiked model ``Sigma = strength * u u' + V V' / m`` with a sparse unit ``u``.

    ``u`` has ``cardinality`` nonzero entries (default ``max(1, n // 10)``, the
    paper's ``0.1 n``) drawn from a standard normal and is normalised; ``V`` is
    ``n x m`` with standard normal entries (the noise of ``m`` observations).

    Parameters
    ----------
    n_features : int
        Size ``n`` of ``Sigma``.
    n_samples : int, optional
        Number of observations ``m`` (default ``n_features``).
    cardinality : int, optional
        Number of nonzero entries of ``u``.
    strength : float, default=1.0
        Multiplier of ``u u'`` (the paper uses 1).
    random_state : int or None, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    Sigma : ndarray of shape (n_features, n_features)
    u : ndarray of shape (n_features,)
        The planted sparse direction.

    Examples
    --------
    >>> from spca.datasets import make_spiked_covariance
    >>> Sigma, u = make_spiked_covariance(20, cardinality=2)
    >>> int((u != 0).sum())
    2
    """
    n = check_int(n_features, "n_features")
    m = n if n_samples is None else check_int(n_samples, "n_samples")
    k = max(1, n // 10) if cardinality is None else check_int(cardinality, "cardinality")
    if k > n:
        raise ValueError(f"cardinality must be <= n_features = {n}, got {k}")
    rng = np.random.default_rng(random_state)
    u = np.zeros(n)
    idx = rng.choice(n, size=k, replace=False)
    u[idx] = rng.standard_normal(k)
    u /= np.linalg.norm(u)
    V = rng.standard_normal((n, m))
    Sigma = float(strength) * np.outer(u, u) + V @ V.T / m
    return 0.5 * (Sigma + Sigma.T), u


def make_correlation_few_samples(
    n_features: int,
    n_samples: int = 64,
    *,
    rank: int = 5,
    module_size: int | None = None,
    noise: float = 1.0,
    random_state: int | None = 0,
) -> NDArray[np.float64]:
    """Correlation matrix of low-rank-plus-noise data with few samples (gene-expression like).

    ``m = n_samples`` observations of ``n = n_features`` variables are drawn
    as ``X = Z W' + noise * E``: ``rank`` latent factors ``Z`` (``m x rank``,
    standard normal), each loading on its own random module of
    ``module_size`` features with standard normal weights ``W`` (a feature
    may belong to several modules), and standard normal noise ``E``. The
    result is the sample correlation matrix of ``X``: unit diagonal, rank at
    most ``m - 1``. With ``m`` much smaller than ``n`` this is the regime of
    expression data (tens of samples, thousands of genes), where safe
    feature elimination removes nothing (every ``Sigma_ii = 1``) and the
    off-diagonal noise is about ``1 / sqrt(m)``.

    Parameters
    ----------
    n_features : int
        Size ``n`` of the matrix.
    n_samples : int, default=64
        Number of observations ``m`` (at least 2).
    rank : int, default=5
        Number of latent factors (0 for pure noise).
    module_size : int, optional
        Features driven by each factor (default ``max(1, n_features // 20)``).
    noise : float, default=1.0
        Standard deviation of the noise (positive).
    random_state : int or None, default=0
        Seed of ``numpy.random.default_rng``.

    Returns
    -------
    R : ndarray of shape (n_features, n_features)
        Symmetric positive semidefinite, with unit diagonal.

    Raises
    ------
    ValueError
        For ``n_samples < 2``, a negative ``rank``, a ``module_size`` outside
        ``1 .. n_features`` or a non-positive ``noise``.

    Examples
    --------
    >>> import numpy as np
    >>> from spca.datasets import make_correlation_few_samples
    >>> R = make_correlation_few_samples(200, random_state=0)
    >>> R.shape, bool(abs(R.diagonal() - 1).max() < 1e-12), int(np.linalg.matrix_rank(R))
    ((200, 200), True, 63)
    """
    n = check_int(n_features, "n_features")
    m = check_int(n_samples, "n_samples", minimum=2)
    r = check_int(rank, "rank", minimum=0)
    size = max(1, n // 20) if module_size is None else check_int(module_size, "module_size")
    if size > n:
        raise ValueError(f"module_size must be <= n_features = {n}, got {size}")
    sd = check_positive(noise, "noise")
    rng = np.random.default_rng(random_state)
    Z = rng.standard_normal((m, r))
    W = np.zeros((n, r))
    for j in range(r):
        W[rng.choice(n, size=size, replace=False), j] = rng.standard_normal(size)
    X = Z @ W.T + sd * rng.standard_normal((m, n))
    X -= X.mean(axis=0)
    X /= np.linalg.norm(X, axis=0)
    R = X.T @ X
    R = 0.5 * (R + R.T)
    np.fill_diagonal(R, 1.0)
    return R
