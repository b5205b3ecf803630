"""Argument checks shared by every public entry point.

Each check either returns a clean value (a Python float, a new float64 array)
or raises with a message that names the argument and repeats the bad value.
Nothing here modifies what the caller passed.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
import scipy.linalg as sla
import scipy.sparse as sp

from . import _bca_fast

# Relative tolerance for asymmetry, |S - S'| <= SYM_RTOL * max|S|.
SYM_RTOL = 1e-8
# Relative tolerance for negative eigenvalues, lambda_min >= -PSD_RTOL * max|S|.
PSD_RTOL = 1e-8


def _real_scalar(value: Any, name: str) -> float:
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {value!r}")
    out = float(value)
    if not np.isfinite(out):
        raise ValueError(f"{name} must be finite, got {value!r}")
    return out


def check_lam(lam: Any) -> float:
    """Return ``lam`` as a float, checking ``0 <= lam < inf``."""
    out = _real_scalar(lam, "lam")
    if out < 0:
        raise ValueError(f"lam must be >= 0, got {lam!r}")
    return out


def check_positive(value: Any, name: str) -> float:
    """Return ``value`` as a float, checking ``0 < value < inf``."""
    out = _real_scalar(value, name)
    if out <= 0:
        raise ValueError(f"{name} must be > 0, got {value!r}")
    return out


#: Smallest relative duality gap accepted: below it the gap is rounding error
#: of the bounds themselves (double precision), and the barrier parameter it
#: implies makes the iterate lose definiteness.
MIN_TOL = 1e-12
#: Smallest barrier parameter accepted, relative to the squared largest variance.
MIN_BETA = 1e-20
#: Largest variances handled: the solvers square them (barrier parameter) and
#: add entries together; beyond these the result would overflow or underflow.
MAX_SCALE = 1e150
MIN_SCALE = 1e-290


def check_tol(tol: Any) -> float:
    """Return ``tol`` as a float, checking ``MIN_TOL <= tol < 1``."""
    out = check_positive(tol, "tol")
    if out >= 1:
        raise ValueError(f"tol is a relative duality gap and must be < 1, got {tol!r}")
    if out < MIN_TOL:
        raise ValueError(
            f"tol must be >= {MIN_TOL:g} (a relative duality gap below it is rounding error "
            f"in double precision), got {tol!r}"
        )
    return out


def check_bool(value: Any, name: str) -> bool:
    """Return ``value`` as a bool, checking that it is ``True`` or ``False``."""
    if not isinstance(value, bool | np.bool_):
        raise TypeError(f"{name} must be True or False, got {value!r}")
    return bool(value)


def check_scale(diag: np.ndarray, name: str = "Sigma") -> None:
    """Refuse a covariance whose largest variance is too large or too small
    for double precision (see ``MAX_SCALE``), saying how to rescale it."""
    top = float(diag.max()) if diag.size else 0.0
    if top > MAX_SCALE or 0.0 < top < MIN_SCALE:
        raise ValueError(
            f"{name}'s largest variance {top!r} is outside [{MIN_SCALE:g}, {MAX_SCALE:g}]: "
            f"multiply {name} and lam by the same power of two to bring it near 1 (Z does "
            "not change; the objective and the bounds scale alike)"
        )


def check_int(value: Any, name: str, minimum: int = 1) -> int:
    """Return ``value`` as an int, checking ``value >= minimum``."""
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {value!r}")
    if value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return int(value)


def _as_real_dense(A: Any, name: str) -> np.ndarray:
    arr = np.asarray(A)
    if arr.dtype == object or not (
        np.issubdtype(arr.dtype, np.floating) or np.issubdtype(arr.dtype, np.integer)
    ):
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    return arr


def check_covariance_shape(Sigma: Any, name: str = "Sigma") -> tuple[Any, np.ndarray]:
    """Check that ``Sigma`` is a square 2-D matrix; return it and its diagonal.

    Dense input comes back as an ndarray (not copied); a scipy.sparse matrix
    is kept sparse, so that a large covariance can be screened by its diagonal
    before any dense block is formed.  The diagonal is a float64 copy and must
    be finite and non-negative.
    """
    if sp.issparse(Sigma):
        if Sigma.dtype == object or not (
            np.issubdtype(Sigma.dtype, np.floating) or np.issubdtype(Sigma.dtype, np.integer)
        ):
            raise TypeError(f"{name} must hold real numbers, got dtype {Sigma.dtype}")
        S = Sigma
    else:
        S = _as_real_dense(Sigma, name)
    if S.ndim != 2:
        raise ValueError(f"{name} must be a 2-D matrix, got {S.ndim} dimension(s)")
    n, m = S.shape
    if n != m:
        raise ValueError(f"{name} must be square, got shape {S.shape}")
    if n == 0:
        raise ValueError(f"{name} must have at least one feature, got shape {S.shape}")
    diag = np.asarray(S.diagonal(), dtype=np.float64).copy()
    if not np.all(np.isfinite(diag)):
        i = int(np.flatnonzero(~np.isfinite(diag))[0])
        raise ValueError(f"{name} must be finite, got {float(diag[i])!r} at ({i}, {i})")
    # the tolerance of check_psd (a PSD matrix's largest entry is on its
    # diagonal): -5.6e-17 next to variances of 1 is rounding error, as is an
    # eigenvalue of -1e-12; what is kept is a variance of 0
    if diag.min() < -_psd_shift(float(np.abs(diag).max()), n):
        i = int(np.argmin(diag))
        raise ValueError(
            f"{name} must be positive semidefinite, but its diagonal entry ({i}, {i}) "
            f"is negative: {float(diag[i])!r}"
        )
    np.maximum(diag, 0.0, out=diag)
    return S, diag


def _psd_shift(scale: float, n: int) -> float:
    """How far below 0 an eigenvalue (or a diagonal entry) of a PSD matrix with
    ``n`` features and largest entry ``scale`` may fall by rounding."""
    return PSD_RTOL * max(scale, np.finfo(float).tiny) * max(1, n)


# Tile of the one-pass symmetry check and symmetrisation of dense_block:
# 128 x 128 float64 tiles (128 KiB each) keep a tile and its mirror in cache,
# where B - B.T over the whole matrix reads one of them a column at a time.
SYM_TILE = 128


def dense_block(S: Any, idx: np.ndarray, name: str = "Sigma") -> np.ndarray:
    """Return ``S[idx][:, idx]`` as a new symmetric C-contiguous float64 array.

    Checks finiteness and symmetry (to ``SYM_RTOL`` relative to the largest
    entry) and returns the symmetrised block ``(B + B') / 2``.
    """
    if sp.issparse(S):
        B = S.tocsr()[idx][:, idx].toarray()
        B = np.array(B, dtype=np.float64, order="C", copy=True)
    elif (S.ndim == 2 and isinstance(idx, np.ndarray) and idx.dtype.kind in "iu"
          and idx.size == S.shape[0] == S.shape[1]
          and (idx.size == 0 or (idx[0] == 0 and np.array_equal(idx, np.arange(idx.size))))):
        # (every feature in order: one copy, no fancy indexing)
        B = np.array(S, dtype=np.float64, order="C", copy=True)
    else:
        B = np.array(S[np.ix_(idx, idx)], dtype=np.float64, order="C", copy=True)
    # finiteness and the scale in one pass (a NaN or an inf makes the maximum
    # one), then the symmetry check and the symmetrisation tile by tile, both
    # compiled (no temporaries; the numbers of np.abs(B).max() and of
    # 0.5 * B + 0.5 * B.T: a 500 x 500 block 0.80 -> 0.31 ms)
    scale = _bca_fast.abs_max(B) if B.size else 0.0
    if not np.isfinite(scale) or not _bca_fast.symmetrise_within(
            B, SYM_RTOL * max(scale, np.finfo(float).tiny), SYM_TILE):
        _block_error(S, idx, name)
    return B


def symmetric_mean(B: np.ndarray) -> np.ndarray:
    """``0.5 * (B + B.T)`` of the square ``B`` as a new C-contiguous array,
    the same arithmetic tile by tile (a tile and its mirror in cache, where
    ``B + B.T`` reads one of them a column at a time)."""
    n = B.shape[0]
    out = np.empty((n, n))
    T = SYM_TILE
    for i0 in range(0, n, T):
        rows = slice(i0, min(i0 + T, n))
        for j0 in range(i0, n, T):
            cols = slice(j0, min(j0 + T, n))
            tile = B[rows, cols] + B[cols, rows].T
            tile *= 0.5
            out[rows, cols] = tile
            out[cols, rows] = tile.T
    return out


def _abs_max(B: np.ndarray) -> float:
    """``np.abs(B).max()`` (0 when empty; NaN when some entry is) without
    the temporary ``np.abs(B)``: one compiled read of a C- or
    Fortran-contiguous float64 ``B`` (the NYT counts, 8,447 x 500 in Fortran
    order, cold: 2.2 -> 1.8 ms), else from its largest and smallest entries
    (a non-finite ``B`` takes the copy's way)."""
    if not B.size:
        return 0.0
    if B.dtype == np.float64 and B.ndim == 2 and B.flags.c_contiguous:
        return float(_bca_fast.abs_max(B))
    if B.dtype == np.float64 and B.ndim == 2 and B.flags.f_contiguous:
        return float(_bca_fast.abs_max(B.T))
    hi, lo = float(B.max()), float(B.min())
    if np.isfinite(hi) and np.isfinite(lo):
        return max(hi, -lo)
    return float(np.abs(B).max())


def _block_error(S: Any, idx: np.ndarray, name: str) -> None:
    """Raise the error of a block that is not finite or not symmetric, naming
    the first offending entry."""
    if sp.issparse(S):
        B = S.tocsr()[idx][:, idx].toarray()
    else:
        B = S[np.ix_(idx, idx)]
    B = np.array(B, dtype=np.float64, order="C", copy=True)
    if not np.all(np.isfinite(B)):
        i, j = np.argwhere(~np.isfinite(B))[0]
        raise ValueError(
            f"{name} must be finite, got {float(B[i, j])!r} at ({idx[i]}, {idx[j]})"
        )
    asym = np.abs(B - B.T)
    i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
    raise ValueError(
        f"{name} must be symmetric, but {name}[{idx[i]}, {idx[j]}] = {float(B[i, j])!r} "
        f"and {name}[{idx[j]}, {idx[i]}] = {float(B[j, i])!r}"
    )


def check_psd(B: np.ndarray, idx: np.ndarray, name: str = "Sigma") -> None:
    """Check that the symmetric block ``B`` is PSD up to ``PSD_RTOL``.

    A Cholesky factorisation of ``B + PSD_RTOL * max|B| * n * I`` succeeds for
    every PSD ``B`` (and fails for a clearly indefinite one); only when it
    fails are the eigenvalues computed, for the message.
    """
    n = B.shape[0]
    if n == 0:
        return  # (an empty block, e.g. no feature above a lam: nothing to check)
    scale = max(_abs_max(B), np.finfo(float).tiny)
    shift = _psd_shift(scale, n)
    # (B + shift I without forming I: a copy with its diagonal shifted)
    C = np.array(B, dtype=np.float64, order="F", copy=True)
    C.flat[:: n + 1] += shift
    _, info = sla.lapack.dpotrf(C, lower=True, clean=False, overwrite_a=True)
    if info == 0:
        return
    evals = np.linalg.eigvalsh(B)
    if evals[0] < -shift:
        raise ValueError(
            f"{name} must be positive semidefinite, but the block of the {len(idx)} "
            f"features solved over has eigenvalue {float(evals[0])!r} "
            f"(largest entry {scale!r})"
        )


def check_start(X0: Any, n: int) -> None:
    """Check a warm start ``X0`` of a problem with ``n`` features.

    A result of an earlier solve must have ``n`` features; an array must be
    a real, finite, symmetric ``n x n`` positive semidefinite matrix (an
    indefinite ``X0`` could end up, on features the solver leaves alone, in
    the result's ``X``).  ``X0`` is not modified.
    """
    if hasattr(X0, "X_reduced") and hasattr(X0, "n_features"):
        if X0.n_features != n:
            raise ValueError(f"X0 is a result with {X0.n_features} features, Sigma has {n}")
        return
    if sp.issparse(X0):
        raise TypeError(
            f"X0 must be a dense array (or the result of an earlier solve), got a "
            f"scipy.sparse {type(X0).__name__}: pass X0.toarray()"
        )
    arr = np.asarray(X0)
    if np.iscomplexobj(arr):
        raise TypeError(f"X0 must hold real numbers, got dtype {arr.dtype}")
    arr = _as_real_dense(arr, "X0")
    if arr.shape != (n, n):
        raise ValueError(f"X0 must have shape ({n}, {n}) like Sigma, got {arr.shape}")
    B = np.asarray(arr, dtype=np.float64)
    if not np.all(np.isfinite(B)):
        raise ValueError("X0 must be finite, got NaN or inf entries")
    scale = max(float(np.abs(B).max()), np.finfo(float).tiny)
    asym = np.abs(B - B.T)
    if asym.max() > SYM_RTOL * scale:
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        raise ValueError(f"X0 must be symmetric, but X0[{i}, {j}] = {float(B[i, j])!r} and "
                         f"X0[{j}, {i}] = {float(B[j, i])!r}")
    d = np.diag(B)
    if d.min() < -_psd_shift(scale, n):  # the eigenvalues' tolerance
        i = int(np.argmin(d))
        raise ValueError(f"X0 must be positive semidefinite, but X0[{i}, {i}] = {float(d[i])!r}")
    low = float(np.linalg.eigvalsh(0.5 * B + 0.5 * B.T)[0])
    if low < -_psd_shift(scale, n):
        raise ValueError(f"X0 must be positive semidefinite, but has eigenvalue {low!r}")
