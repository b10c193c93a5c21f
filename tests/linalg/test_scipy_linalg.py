"""scipy.linalg's solve_triangular, sqrtm and solve_sylvester beyond the op table: the
unread triangle gets no gradient, options and shapes are checked, a complex square
root refuses a gradient. (Values and gradients: tests/ops/table_linalg.py.)"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

A = np.array([[2.0, 0.5, -0.3], [0.7, -1.5, 0.2], [0.1, 0.4, 1.2]])
B = np.array([[1.0, 2.0], [0.5, -1.0], [0.3, 0.2]])


@pytest.mark.parametrize("lower", [False, True])
@pytest.mark.parametrize("unit_diagonal", [False, True])
@pytest.mark.parametrize("trans", [0, 1])
def test_solve_triangular_gradient_is_zero_off_the_read_triangle(
    lower: bool, unit_diagonal: bool, trans: int
) -> None:
    """The value reads one triangle of a (without its diagonal if unit_diagonal): the
    entries it does not read get exactly 0, and the value is scipy's."""
    with lampy.Scope():
        a = lampy.param(A)
        x = la.solve_triangular(a, B, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
        expected = scipy.linalg.solve_triangular(
            A, B, trans=trans, lower=lower, unit_diagonal=unit_diagonal
        )
        np.testing.assert_allclose(x.value, expected, rtol=1e-12)
        x.sum().backward()
        unread = (np.triu(np.ones((3, 3)), 1) if lower else np.tril(np.ones((3, 3)), -1)) > 0
        if unit_diagonal:
            unread |= np.eye(3, dtype=bool)
        assert np.all(a.grad[unread] == 0)
        assert np.all(a.grad[~unread] != 0)


def test_solve_triangular_errors() -> None:
    """A bad trans is a LampyValueError, shapes that do not fit a ShapeError naming the
    function, a singular triangle scipy's (numpy's) LinAlgError."""
    with lampy.Scope():
        a = lampy.param(A)
        with pytest.raises(lampy.LampyValueError, match="trans must be"):
            la.solve_triangular(a, B, trans="X")
        with pytest.raises(lampy.ShapeError, match=r"solve_triangular.*\(3, 3\).*\(2, 2\)"):
            la.solve_triangular(a, np.ones((2, 2)))
        with pytest.raises(lampy.ShapeError, match="square"):
            la.solve_triangular(np.ones((2, 3)), np.ones(2))
        with pytest.raises(np.linalg.LinAlgError):
            la.solve_triangular(np.triu(np.ones((2, 2))) - np.eye(2), np.ones(2))


def test_sqrtm_of_a_matrix_with_a_negative_eigenvalue() -> None:
    """A matrix with a negative eigenvalue has a complex principal root: scipy's value,
    and for a real param the real part of the complex rule's gradient (PyTorch's
    convention for a real input of a complex result), checked by finite differences."""
    m = np.array([[-1.0, 0.3], [0.2, 4.0]])
    with lampy.Scope():
        out = la.sqrtm(m)
        np.testing.assert_allclose(out.value, scipy.linalg.sqrtm(m))
        assert la.sqrtm(lampy.param(m)).dtype.kind == "c"
    check_grad(la.sqrtm, m)


def test_sqrtm_squares_back_and_keeps_float32() -> None:
    """sqrtm(a) @ sqrtm(a) is a, and a float32 input gives a float32 value and gradient."""
    s = A @ A.T
    with lampy.Scope():
        a = lampy.param(s.astype(np.float32))
        x = la.sqrtm(a)
        assert x.dtype == np.float32
        np.testing.assert_allclose(x.value @ x.value, s, rtol=1e-4)
        x.sum().backward()
        assert a.grad.dtype == np.float32


def test_solve_sylvester_shapes() -> None:
    """q must be (M, N) for a (M, M) and b (N, N): a ShapeError naming all three."""
    with lampy.Scope():
        with pytest.raises(lampy.ShapeError, match=r"q of shape \(3, 3\)"):
            la.solve_sylvester(A, np.eye(2), np.ones((3, 3)))
        x = la.solve_sylvester(A, np.eye(2), B)
        np.testing.assert_allclose(
            x.value, scipy.linalg.solve_sylvester(A, np.eye(2), B), rtol=1e-12
        )


def test_batches_broadcast_and_may_be_empty() -> None:
    """Batch axes broadcast and are solved one problem at a time (scipy batches only
    from 1.16; lampy supports 1.10 on): each slice equals scipy's answer on its
    matrices, an empty batch gives an empty result of the right shape and dtype, and
    batch axes that do not broadcast raise a ShapeError."""
    rng = np.random.default_rng(0)
    a = A + 3 * np.eye(3) * rng.uniform(1, 2, (2, 1, 3, 3))
    with lampy.Scope():
        x = la.solve_triangular(a, B[None], lower=True)
        assert x.shape == (2, 1, 3, 2)
        for i in range(2):
            np.testing.assert_allclose(
                x.value[i, 0], scipy.linalg.solve_triangular(a[i, 0], B, lower=True), rtol=1e-12
            )
        v = la.solve_triangular(a, B[:, 0])
        assert v.shape == (2, 1, 3)
        np.testing.assert_allclose(
            v.value[1, 0], scipy.linalg.solve_triangular(a[1, 0], B[:, 0]), rtol=1e-12
        )
        s = la.solve_sylvester(a, np.eye(2) * np.array([1.0, 2.0])[:, None, None], B)
        assert s.shape == (2, 2, 3, 2)
        np.testing.assert_allclose(
            s.value[1, 1], scipy.linalg.solve_sylvester(a[1, 0], 2 * np.eye(2), B), rtol=1e-12
        )
        r = la.sqrtm(np.eye(3) * np.arange(1.0, 3.0)[:, None, None])
        np.testing.assert_allclose(r.value[1], np.sqrt(2) * np.eye(3), rtol=1e-12)
        empty = la.sqrtm(np.ones((0, 3, 3), np.float32))
        assert empty.shape == (0, 3, 3) and empty.dtype == np.float32
        assert la.solve_triangular(np.ones((0, 3, 3)), B).shape == (0, 3, 2)
        with pytest.raises(lampy.ShapeError, match="solve_sylvester"):
            la.solve_sylvester(np.stack([A] * 2), np.eye(2), np.ones((3, 3, 2)))
