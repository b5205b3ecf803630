"""Seeded covariance matrices of the two families used in the paper's Figure 1."""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .._validation import check_int


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
