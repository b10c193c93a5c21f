"""norm and matrix_rank beyond what the op table draws: conventions at kinks and ties,
keyword variants, dtypes and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

from .helpers import grad_of

INF = np.inf
VECTOR_ORDS = [None, 2, 1, INF, -INF, 0, 3, 0.5, -1.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, INF, -INF, 2, -2]


@pytest.mark.parametrize("ord_", VECTOR_ORDS, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize(("shape", "axis"), [((4,), None), ((2, 3), 0), ((2, 3, 2), -1)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_vector_norms_match_numpy(
    ord_: Any, dtype: type, shape: tuple[int, ...], axis: Any, keepdims: bool
) -> None:
    """Every vector ord gives numpy's value, shape and dtype, axis and keepdims included."""
    a = np.random.default_rng(0).standard_normal(shape).astype(dtype)
    if axis is None and len(shape) > 1:
        return
    with lampy.Scope():
        out = la.norm(lampy.param(a), ord_, axis=axis, keepdims=keepdims)
        want = np.asarray(np.linalg.norm(a, ord_, axis=axis, keepdims=keepdims))
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out.value, want, rtol=1e-6)


@pytest.mark.parametrize("ord_", MATRIX_ORDS, ids=str)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("axis", [None, (0, 1), (1, 0), (-1, 0), (2, 0)], ids=str)
@pytest.mark.parametrize("keepdims", [False, True])
def test_matrix_norms_match_numpy(ord_: Any, dtype: type, axis: Any, keepdims: bool) -> None:
    """Every matrix ord gives numpy's value, shape and dtype, for any pair of axes."""
    shape = (3, 4) if axis is None else (3, 4, 2)
    a = np.random.default_rng(1).standard_normal(shape).astype(dtype)
    with lampy.Scope():
        out = la.norm(lampy.param(a), ord_, axis=axis, keepdims=keepdims)
        want = np.asarray(np.linalg.norm(a, ord_, axis=axis, keepdims=keepdims))
        assert out.shape == want.shape and out.dtype == want.dtype
        np.testing.assert_allclose(out.value, want, rtol=1e-5)
    if dtype == np.float64 and axis is not None:
        check_grad(lambda v: la.norm(v, ord_, axis=axis, keepdims=keepdims), a)


@pytest.mark.parametrize("ord_", [None, 2, 3, 1.5], ids=str)
def test_norm_gradient_at_zero_is_zero(ord_: Any) -> None:
    """At x = 0 the norm's gradient is 0 (PyTorch's convention), default and along an axis."""
    zero = np.zeros((2, 3))
    for kwargs in ({"axis": 1}, {"axis": (0, 1)} if ord_ is None else {"axis": 0}):
        (g,) = grad_of(lambda v: la.norm(v, ord_, **kwargs), zero)
        np.testing.assert_array_equal(g, 0)
    (g,) = grad_of(la.norm, zero)
    np.testing.assert_array_equal(g, 0)


def test_norm_small_p_zero_entries_get_zero() -> None:
    """For p < 1, entries equal to 0 get a zero gradient and the others the formula
    (matches PyTorch: [2.4142, 0, -1.7071] for [1, 0, -2] and p = 0.5)."""
    (g,) = grad_of(lambda v: la.norm(v, 0.5), np.array([1.0, 0.0, -2.0]))
    np.testing.assert_allclose(g, [1 + np.sqrt(2), 0.0, -(1 + np.sqrt(2)) / np.sqrt(2)])
    with pytest.warns(RuntimeWarning, match="divide by zero"):  # numpy's forward warns too
        (g,) = grad_of(lambda v: la.norm(v, -1), np.array([1.0, 0.0, -2.0]))
    np.testing.assert_array_equal(g, 0)


def test_norm_ties_share_the_gradient() -> None:
    """Ties for the max / min share the gradient equally (inf, -inf, matrix 1 and inf,
    and the largest singular value of a multiple of the identity)."""
    (g,) = grad_of(lambda v: la.norm(v, INF), np.array([1.0, -1.0, 0.5]))
    np.testing.assert_array_equal(g, [0.5, -0.5, 0.0])
    (g,) = grad_of(lambda v: la.norm(v, -INF), np.array([1.0, -1.0, 2.0]))
    np.testing.assert_array_equal(g, [0.5, -0.5, 0.0])
    (g,) = grad_of(lambda v: la.norm(v, 1), np.array([[1.0, -1.0], [1.0, 1.0]]))
    np.testing.assert_array_equal(g, [[0.5, -0.5], [0.5, 0.5]])
    (g,) = grad_of(lambda v: la.norm(v, INF), np.array([[1.0, -1.0], [1.0, 1.0]]))
    np.testing.assert_array_equal(g, [[0.5, -0.5], [0.5, 0.5]])
    (g,) = grad_of(lambda v: la.norm(v, 2), 2 * np.eye(2))
    np.testing.assert_allclose(g, 0.5 * np.eye(2), atol=1e-15)


def test_norm_zero_ord_counts_without_gradient() -> None:
    """ord=0 counts the nonzero entries as a float, with a zero gradient."""
    with lampy.Scope():
        x = lampy.param(np.array([[0.0, 2.0, -1.0], [0.0, 0.0, 3.0]], np.float32))
        out = la.norm(x, 0, axis=1)
        assert out.dtype == np.float32
        np.testing.assert_array_equal(out.value, [2.0, 1.0])
        lampy.sum(out).backward()
        np.testing.assert_array_equal(x.grad, 0)


def test_norm_errors() -> None:
    """Invalid ords and axes raise numpy's error types with the op named."""
    with lampy.Scope():
        v, m = lampy.param(np.ones(3)), lampy.param(np.ones((2, 3, 4)))
        with pytest.raises(ValueError, match="invalid norm order 'fro' for vectors"):
            la.norm(v, "fro")
        with pytest.raises(ValueError, match="invalid norm order 3 for matrices"):
            la.norm(m, 3, axis=(0, 1))
        with pytest.raises(ValueError, match="duplicate axes"):
            la.norm(m, axis=(1, -2))
        with pytest.raises(lampy.ShapeError, match="improper number of dimensions"):
            la.norm(m, 2)
        with pytest.raises(lampy.ShapeError, match="axis 3 is out of bounds"):
            la.norm(m, axis=3)
        with pytest.raises(TypeError, match="axis"):
            la.norm(m, axis=1.0)


def test_norm_of_integers_and_constants() -> None:
    """Integer input is cast to float64 as numpy does and gives a constant."""
    with lampy.Scope():
        out = la.norm(np.array([3, 4]))
        assert out.dtype == np.float64 and out.item() == 5.0 and not out.needs_grad
        assert la.norm(lampy.const(np.arange(6).reshape(2, 3)), "nuc").dtype == np.float64


def test_norm_of_a_variable_used_twice() -> None:
    """A Variable used in two norms gets both contributions."""
    a = np.random.default_rng(2).standard_normal((3, 3))
    check_grad(lambda v: la.norm(v, "nuc") * la.norm(v, 3, axis=0), a)


def test_matrix_rank_is_a_constant() -> None:
    """matrix_rank returns numpy's integer result (not a Variable), with tol, rtol and
    hermitian passed through."""
    a = np.diag([1.0, 1e-3, 0.0])
    with lampy.Scope():
        x = lampy.param(a)
        r = la.matrix_rank(x)
        assert not isinstance(r, lampy.Variable) and r == np.linalg.matrix_rank(a) == 2
        assert la.matrix_rank(x, tol=1e-2) == 1
        assert la.matrix_rank(x, rtol=1e-2) == 1
        assert la.matrix_rank(x, hermitian=True) == 2
        np.testing.assert_array_equal(
            la.matrix_rank(np.stack([a, np.eye(3)])),
            np.linalg.matrix_rank(np.stack([a, np.eye(3)])),
        )
