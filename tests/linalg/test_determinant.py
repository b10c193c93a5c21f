"""det and slogdet beyond what the op table draws."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

from .helpers import conditioned, grad_of


@pytest.mark.parametrize("rank", [0, 1, 2])
def test_det_gradient_at_singular_matrices(rank: int) -> None:
    """det's gradient stays exact at singular matrices: it is the cofactor matrix (zero
    when the rank is below n - 1), computed from the SVD when inv fails."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, rank)) @ rng.standard_normal((rank, 3))
    check_grad(la.det, a)
    (g,) = grad_of(la.det, a)
    if rank < 2:
        np.testing.assert_allclose(g, 0, atol=1e-12)


def test_det_cofactor_of_singular_matrix_exactly() -> None:
    """For a = [[1, 2], [2, 4]] the gradient of det is the cofactor matrix [[4, -2], [-2, 1]]."""
    (g,) = grad_of(la.det, np.array([[1.0, 2.0], [2.0, 4.0]]))
    np.testing.assert_allclose(g, [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)


def test_slogdet_returns_numpys_pair() -> None:
    """slogdet returns a named (sign, logabsdet): the sign a constant numpy array equal to
    numpy's, logabsdet a Variable keeping float32."""
    rng = np.random.default_rng(1)
    a = conditioned(rng, 3, 3, (4,)).astype(np.float32)
    with lampy.Scope():
        res = la.slogdet(lampy.param(a))
        sign, logabsdet = res
        esign, elog = np.linalg.slogdet(a)
        assert isinstance(res, la.SlogdetResult)
        assert res.sign is sign and res.logabsdet is logabsdet
        assert isinstance(sign, np.ndarray) and not isinstance(sign, lampy.Variable)
        np.testing.assert_array_equal(sign, esign)
        assert logabsdet.dtype == np.float32 and logabsdet.needs_grad
        np.testing.assert_allclose(logabsdet.value, elog, rtol=1e-6)
    check_grad(lambda v: la.slogdet(v).logabsdet, a)


def test_slogdet_of_singular_matrix() -> None:
    """A singular matrix has sign 0 and logabsdet -inf, as in numpy."""
    with lampy.Scope():
        sign, logabsdet = la.slogdet(lampy.param(np.ones((2, 2))))
        assert sign == 0 and logabsdet.value == -np.inf


def test_det_of_negative_and_batched_matrices() -> None:
    """det matches numpy for batches with negative determinants, and its gradient is
    det * inv(a)^T."""
    rng = np.random.default_rng(2)
    a = conditioned(rng, 3, 3, (2, 2))
    a[0, 1] = -a[0, 1]
    with lampy.Scope():
        np.testing.assert_allclose(la.det(lampy.param(a)).value, np.linalg.det(a), rtol=1e-12)
    (g,) = grad_of(la.det, a)
    expected = np.linalg.det(a)[..., None, None] * np.swapaxes(np.linalg.inv(a), -1, -2)
    np.testing.assert_allclose(g, expected, rtol=1e-10)


def test_det_batch_mixing_singular_and_regular() -> None:
    """A batch holding singular and regular matrices gets the exact gradient for each."""
    rng = np.random.default_rng(3)
    a = np.stack([conditioned(rng, 3, 3), np.outer([1.0, 2.0, 3.0], [1.0, -1.0, 0.5])])
    a = np.stack([a, a[::-1]])
    check_grad(la.det, a)
