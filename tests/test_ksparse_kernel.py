"""The compiled secular-equation kernel against a NumPy transcription of the
same iteration (bit for bit) and against eigvalsh of the bordered matrices."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from spca import _ksparse, _ksparse_fast


def bordered_top_numpy(mu, W2, c):
    """The safeguarded Newton iteration of ``_ksparse.bordered_top``, in NumPy
    (the package's implementation before the kernel)."""
    if mu.size == 0:
        return c.astype(np.float64, copy=True)
    top = float(mu.max())
    nb2 = W2.sum(axis=0)
    lo = np.maximum(top, c)
    hi = 0.5 * (top + c + np.sqrt((top - c) ** 2 + 4.0 * nb2))
    hi = np.maximum(hi, lo)
    x = hi.copy()
    scale = max(abs(top), float(np.max(np.abs(hi))), np.finfo(float).tiny)
    mu_col = mu[:, None]
    for _ in range(_ksparse.SECULAR_ITER):
        den = x - mu_col
        open_ = x > lo
        den = np.where(den > 0, den, np.inf)
        t = W2 / den
        f = x - c - t.sum(axis=0)
        fp = 1.0 + (t / den).sum(axis=0)
        pos = f >= 0
        hi = np.where(pos, x, hi)
        lo = np.where(pos | ~open_, lo, x)
        newton = x - f / fp
        inside = (newton >= lo) & (newton <= hi)
        x_new = np.where(inside, newton, 0.5 * (lo + hi))
        step = np.abs(x_new - x)
        x = x_new
        if float(np.max(step, initial=0.0)) <= _ksparse.SECULAR_RTOL * scale:
            break
    return np.maximum(x, lo)


def bordered_problem(rng, s, m, scale=1.0, degenerate=False):
    """Eigenvalues of a random PSD block, the squared couplings of m borders in
    its eigenbasis, and the corners; the dense bordered matrices too."""
    A = rng.standard_normal((s, s + 2))
    A = scale * (A @ A.T) / (s + 2)
    B = scale * rng.standard_normal((s, m)) / np.sqrt(s)
    if degenerate:
        B[:, : m // 2] = 0.0  # borders orthogonal to the block
    c = scale * rng.uniform(0.0, 2.0, m)
    mu, U = np.linalg.eigh(A)
    W = U.T @ B
    return mu, W * W, c, A, B


@settings(max_examples=60, deadline=None)
@given(s=st.integers(1, 40), m=st.integers(1, 40), seed=st.integers(0, 2**32 - 1),
       log_scale=st.floats(-200, 150), degenerate=st.booleans())
def test_kernel_equals_the_numpy_iteration_bit_for_bit(s, m, seed, log_scale, degenerate):
    rng = np.random.default_rng(seed)
    mu, W2, c, _, _ = bordered_problem(rng, s, m, 10.0**log_scale, degenerate)
    args = (mu.copy(), W2.copy(), c.copy())
    ours = _ksparse.bordered_top(*args)
    ref = bordered_top_numpy(mu, W2, c)
    np.testing.assert_array_equal(ours, ref)
    # nothing the caller passed is modified
    np.testing.assert_array_equal(args[0], mu)
    np.testing.assert_array_equal(args[1], W2)
    np.testing.assert_array_equal(args[2], c)


@pytest.mark.parametrize("seed", range(5))
def test_roots_are_the_largest_eigenvalues_of_the_bordered_matrices(seed):
    rng = np.random.default_rng(seed)
    s, m = 12, 9
    mu, W2, c, A, B = bordered_problem(rng, s, m)
    vals = _ksparse.bordered_top(mu, W2, c)
    for j in range(m):
        M = np.block([[A, B[:, [j]]], [B[:, [j]].T, np.array([[c[j]]])]])
        assert vals[j] == pytest.approx(np.linalg.eigvalsh(M)[-1], rel=1e-11, abs=1e-13)


def test_kernel_refuses_mismatched_shapes():
    x = np.zeros(3)
    with pytest.raises(ValueError, match="shapes do not match"):
        _ksparse_fast.secular_roots(np.zeros(2), np.zeros((3, 3)), np.zeros(3), x, x.copy(),
                                    x.copy(), max_iter=5, threshold=0.0)
