"""Each bad input to dspca_bca gets its own clear error; nothing is modified."""

import numpy as np
import pytest
import scipy.sparse as sp

import spca

GOOD = np.array([[2.0, 0.5, 0.1], [0.5, 1.0, 0.2], [0.1, 0.2, 1.5]])


@pytest.mark.parametrize(
    "Sigma, exc, match",
    [
        (np.ones(3), ValueError, r"Sigma must be a 2-D matrix, got 1 dimension"),
        (np.ones((2, 3)), ValueError, r"Sigma must be square, got shape \(2, 3\)"),
        (np.ones((0, 0)), ValueError, r"at least one feature"),
        (np.array([[1.0, 2.0], [0.0, 1.0]]), ValueError, r"Sigma must be symmetric, but Sigma\[0, 1\] = 2\.0"),
        (np.array([[1.0, np.nan], [np.nan, 1.0]]), ValueError, r"Sigma must be finite, got nan at \(0, 1\)"),
        (np.array([[np.inf, 0.0], [0.0, 1.0]]), ValueError, r"Sigma must be finite, got inf at \(0, 0\)"),
        (np.array([[1.0, 0.0], [0.0, -1.0]]), ValueError, r"diagonal entry \(1, 1\) is negative: -1\.0"),
        (np.array([[1.0, 3.0], [3.0, 1.0]]), ValueError, r"must be positive semidefinite, but .* eigenvalue -2\.0"),
        (np.array([["a", "b"], ["c", "d"]]), TypeError, r"Sigma must hold real numbers, got dtype <U1"),
        (np.eye(2) * (1 + 1j), TypeError, r"Sigma must hold real numbers, got dtype complex128"),
    ],
)
def test_bad_sigma(Sigma, exc, match):
    with pytest.raises(exc, match=match):
        spca.dspca_bca(Sigma, 0.01)


@pytest.mark.parametrize(
    "kwargs, exc, match",
    [
        (dict(lam=-0.1), ValueError, r"lam must be >= 0, got -0\.1"),
        (dict(lam=np.nan), ValueError, r"lam must be finite, got nan"),
        (dict(lam=None), TypeError, r"lam must be a real number, got None"),
        (dict(lam=0.1, beta=0.0), ValueError, r"beta must be > 0, got 0\.0"),
        (dict(lam=0.1, beta=-1e-3), ValueError, r"beta must be > 0, got -0\.001"),
        (dict(lam=0.1, tol=0.0), ValueError, r"tol must be > 0, got 0\.0"),
        (dict(lam=0.1, tol=1.5), ValueError, r"tol is a relative duality gap and must be < 1, got 1\.5"),
        (dict(lam=0.1, max_sweeps=0), ValueError, r"max_sweeps must be >= 1, got 0"),
        (dict(lam=0.1, max_sweeps=2.5), TypeError, r"max_sweeps must be an integer, got 2\.5"),
        (dict(lam=0.1, eliminate="yes"), TypeError, r"eliminate must be True or False, got 'yes'"),
        (dict(lam=0.1, X0=np.ones((2, 2))), ValueError, r"X0 must have shape \(3, 3\) like Sigma, got \(2, 2\)"),
        (dict(lam=0.1, X0=-np.eye(3)), ValueError, r"X0 must be positive semidefinite, but X0\[0, 0\] = -1.0"),
        (dict(lam=0.1, X0=np.ones((3, 3))), ValueError, r"X0 restricted to the features solved over is not positive definite"),
        (dict(lam=0.1, X0=np.full((3, 3), np.nan)), ValueError, r"X0 must be finite"),
        (dict(lam=0.1, X0=np.ones(3)), ValueError, r"X0 must have shape \(3, 3\) like Sigma, got \(3,\)"),
        # issue 28, defect 11: was "X0 must hold real numbers, got dtype object"
        (dict(lam=0.1, X0=sp.csr_array(np.eye(3) / 3)), TypeError, r"X0 must be a dense array .*csr_array: pass X0.toarray\(\)"),
        (dict(lam=0.1, X0=sp.coo_matrix(np.eye(3) / 3)), TypeError, r"X0 must be a dense array .*coo_matrix"),
    ],
)
def test_bad_parameters(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        spca.dspca_bca(GOOD, **kwargs)


def test_slightly_asymmetric_input_is_accepted_and_not_modified():
    S = GOOD.copy()
    S[0, 1] += 1e-12
    before = S.copy()
    res = spca.dspca_bca(S, 0.1)
    assert res.converged
    np.testing.assert_array_equal(S, before)


def test_sparse_input_is_screened_before_densifying():
    # a large sparse matrix whose surviving block is tiny
    n = 20000
    S = sp.diags(np.full(n, 0.01)).tolil()
    S[0, 0], S[1, 1], S[0, 1], S[1, 0] = 2.0, 1.0, 0.8, 0.8
    res = spca.dspca_bca(S.tocsr(), 0.5)
    assert res.reduced_size == 2 and res.n_features == n
    np.testing.assert_array_equal(res.support, [0, 1])
    assert res.loadings.shape == (n,)


def test_diagonal_rounding_is_tolerated_like_eigenvalues():
    # issue 28, defect 11: a diagonal entry of -5.6e-17 was refused while an
    # eigenvalue of -1e-12 was accepted; both are rounding error next to 1
    Sigma = np.array([[1.0, 0.5, 0.0], [0.5, 1.0, 0.0], [0.0, 0.0, -5.6e-17]])
    before = Sigma.copy()
    res = spca.dspca_bca(Sigma, lam=0.1)
    assert res.converged and res.gap <= 1e-6 * max(res.objective, 1.0)
    assert res.objective == pytest.approx(1.5 - 0.1 * 2, rel=1e-6)
    np.testing.assert_array_equal(Sigma, before)
    # an eigenvalue of -1e-12 is accepted too (the same tolerance)
    rng = np.random.default_rng(0)
    Q, _ = np.linalg.qr(rng.standard_normal((4, 4)))
    S2 = (Q * np.array([2.0, 1.0, 0.5, -1e-12])) @ Q.T
    spca.dspca_bca((S2 + S2.T) / 2, lam=0.1)
    # but not a clearly negative variance, nor X0's
    Sigma[2, 2] = -1e-6
    with pytest.raises(ValueError, match=r"diagonal entry \(2, 2\) is negative: -1e-06"):
        spca.dspca_bca(Sigma, lam=0.1)
    X0 = np.diag([0.5, 0.5, -5.6e-17])
    spca.dspca_bca(before, lam=0.1, X0=X0)
    with pytest.raises(ValueError, match=r"X0\[2, 2\] = -0.001"):
        spca.dspca_bca(before, lam=0.1, X0=np.diag([0.5, 0.5, -1e-3]))


def _dense_block_reference(S, idx):
    """The readable check: the block, its finiteness, its asymmetry against
    its largest entry, then (B + B') / 2 as halves."""
    B = np.array(S.toarray() if sp.issparse(S) else S, dtype=np.float64)[np.ix_(idx, idx)]
    if not np.all(np.isfinite(B)):
        i, j = np.argwhere(~np.isfinite(B))[0]
        return f"finite, got {float(B[i, j])!r} at ({idx[i]}, {idx[j]})"
    asym = np.abs(B - B.T)
    if B.size and asym.max() > 1e-8 * max(np.abs(B).max(), np.finfo(float).tiny):
        i, j = np.unravel_index(int(np.argmax(asym)), asym.shape)
        return f"symmetric, but Sigma[{idx[i]}, {idx[j]}] = {float(B[i, j])!r}"
    return 0.5 * B + 0.5 * B.T


@pytest.mark.parametrize("n", [1, 2, 127, 128, 129, 300])
@pytest.mark.parametrize("which", ["all", "some", "shuffled"])
@pytest.mark.parametrize("defect", [None, "nan", "inf", "asymmetric", "two asymmetric"])
def test_dense_block_one_pass_check_matches_the_reference(n, which, defect):
    # the tiled check (one pass over 128 x 128 tiles and their mirrors) gives
    # the reference's block bit for bit, and the same error for the same entry
    from spca._validation import dense_block

    rng = np.random.default_rng(n)
    A = rng.standard_normal((n, n))
    S = A + A.T + 1e-13 * rng.standard_normal((n, n))  # (asymmetric within tolerance)
    if defect == "nan":
        S[n // 2, n - 1] = np.nan
    elif defect == "inf":
        S[n - 1, 0] = -np.inf
    elif defect == "asymmetric":
        S[0, n - 1] += 1e-3
    elif defect == "two asymmetric":
        S[n - 1, n // 3] += 1e-3
        S[n // 2, 0] -= 2e-3
    idx = {"all": np.arange(n), "some": np.arange(0, n, 2),
           "shuffled": rng.permutation(n)}[which]
    before = S.copy()
    for M in (S, np.asfortranarray(S), sp.csr_array(S)):
        want = _dense_block_reference(M, idx)
        if isinstance(want, str):
            with pytest.raises(ValueError) as exc:
                dense_block(M, idx)
            assert want in str(exc.value)
        else:
            got = dense_block(M, idx)
            assert got.flags.c_contiguous and got.dtype == np.float64
            assert got.tobytes() == want.tobytes()
            assert (got == got.T).all()
    np.testing.assert_array_equal(S, before)


@pytest.mark.parametrize("n", [0, 1, 127, 128, 129, 300])
@pytest.mark.parametrize("scale", [1.0, 1e-300, 1e150])
def test_symmetric_mean_is_half_the_sum_bit_for_bit(n, scale):
    from spca._validation import symmetric_mean

    rng = np.random.default_rng(n)
    B = rng.standard_normal((n, n)) * scale
    before = B.copy()
    for M in (B, np.asfortranarray(B)):
        got = symmetric_mean(M)
        assert got.flags.c_contiguous
        assert got.tobytes() == np.ascontiguousarray(0.5 * (M + M.T)).tobytes()
    np.testing.assert_array_equal(B, before)


def test_full_block_of_a_dense_covariance_is_a_plain_copy():
    from spca._variance import _MatrixCovariance

    rng = np.random.default_rng(0)
    A = rng.standard_normal((30, 40))
    cov = _MatrixCovariance(A.T @ A)
    for idx in (np.arange(40), np.arange(39), np.arange(1, 40), np.r_[0, 2:40]):
        got = cov.block(idx)
        assert got.tobytes() == np.ascontiguousarray(cov.S[np.ix_(idx, idx)]).tobytes()
        assert got.flags.c_contiguous and not np.shares_memory(got, cov.S)
