"""inv, pinv, solve, lstsq, matrix_power and multi_dot beyond what the op table draws."""

from __future__ import annotations

import re

import numpy as np
import pytest

import lampy
from lampy import linalg as la
from lampy.testing import check_grad

from .helpers import conditioned, grad_of, sym, symmetric


@pytest.mark.parametrize(
    "fn",
    [la.inv, la.det, la.cholesky, la.eigh, la.eigvalsh, lambda a: la.matrix_power(a, 2)],
    ids=["inv", "det", "cholesky", "eigh", "eigvalsh", "matrix_power"],
)
def test_square_ops_reject_non_square(fn: object) -> None:
    """Ops on square matrices raise a ShapeError naming the op and the shape, for 1-d
    and for non-square input."""
    with lampy.Scope():
        for shape in [(3,), (2, 3), (4, 2, 3)]:
            with pytest.raises(lampy.ShapeError, match=rf"^\w+: .*{re.escape(str(shape))}"):
                fn(lampy.param(np.ones(shape)))  # type: ignore[operator]


def test_inv_singular_raises_linalg_error() -> None:
    """A singular matrix raises numpy's LinAlgError, re-exported as lampy.linalg.LinAlgError."""
    assert la.LinAlgError is np.linalg.LinAlgError
    with lampy.Scope(), pytest.raises(la.LinAlgError):
        la.inv(lampy.param(np.ones((2, 2))))


def test_inv_of_a_variable_used_twice() -> None:
    """a @ inv(a) and inv(a) @ a have zero gradient (they are the identity)."""
    a = conditioned(np.random.default_rng(0), 3, 3, (2,))
    check_grad(lambda v: v @ la.inv(v) + la.inv(v) @ v, a)
    (g,) = grad_of(lambda v: v @ la.inv(v), a)
    np.testing.assert_allclose(g, 0, atol=1e-12)


@pytest.mark.parametrize(
    ("a_shape", "b_shape"),
    [
        ((3, 3), (3,)),
        ((4, 3, 3), (3,)),
        ((3, 3), (3, 2)),
        ((2, 1, 3, 3), (5, 3, 1)),
        ((3, 3), (2, 3, 4)),
        ((2, 3, 3), (2, 3, 1)),
    ],
    ids=str,
)
def test_solve_shapes_follow_numpy(a_shape: tuple[int, ...], b_shape: tuple[int, ...]) -> None:
    """solve gives numpy's shapes and values (b a vector only when 1-d; batch axes
    broadcast both ways) and the gradients of both operands check out."""
    rng = np.random.default_rng(1)
    a = conditioned(rng, 3, 3, a_shape[:-2])
    b = rng.standard_normal(b_shape)
    with lampy.Scope():
        x = la.solve(lampy.param(a), lampy.param(b))
        np.testing.assert_allclose(x.value, np.linalg.solve(a, b), rtol=1e-12)
    check_grad(la.solve, a, b)


def test_solve_stack_of_vectors_needs_a_trailing_axis() -> None:
    """numpy 2's rule: a 2-d b is a matrix, so b of shape (2, 3) against a (2, 3, 3) is a
    shape error that explains how to pass a stack of vectors."""
    with lampy.Scope():
        a = lampy.param(np.tile(np.eye(3), (2, 1, 1)))
        with pytest.raises(lampy.ShapeError, match=r"solve: .*b\[\.\.\., None\]"):
            la.solve(a, np.ones((2, 3)))
        with pytest.raises(lampy.ShapeError, match="solve: a has shape"):
            la.solve(a, np.ones(4))
        with pytest.raises(lampy.ShapeError, match="do not broadcast"):
            la.solve(a, np.ones((3, 3, 1)))


def test_solve_with_constant_operands() -> None:
    """solve differentiates either operand when the other is a plain array, and keeps
    float32."""
    rng = np.random.default_rng(2)
    a = conditioned(rng, 3, 3).astype(np.float32)
    b = rng.standard_normal((3, 2)).astype(np.float32)
    check_grad(lambda v: la.solve(v, b), a)
    check_grad(lambda v: la.solve(a, v), b)
    with lampy.Scope():
        assert la.solve(lampy.param(a), b).dtype == np.float32


@pytest.mark.parametrize(("m", "n"), [(5, 3), (3, 3), (2, 4)])
@pytest.mark.parametrize("b_shape", ["vector", "matrix"])
def test_lstsq_returns_numpy_extras(m: int, n: int, b_shape: str) -> None:
    """lstsq returns (x, residuals, rank, s) as numpy does, x a Variable with gradients."""
    rng = np.random.default_rng(3)
    a = conditioned(rng, m, n)
    b = rng.standard_normal((m,) if b_shape == "vector" else (m, 2))
    with lampy.Scope():
        x, res, rank, s = la.lstsq(lampy.param(a), b)
        ex, eres, erank, es = np.linalg.lstsq(a, b)
        np.testing.assert_allclose(x.value, ex, rtol=1e-10)
        np.testing.assert_allclose(res, eres, rtol=1e-10)
        assert rank == erank
        np.testing.assert_allclose(s, es)
        assert isinstance(res, np.ndarray) and isinstance(s, np.ndarray)
    check_grad(lambda u, v: la.lstsq(u, v)[0], a, b)


def test_lstsq_rank_deficient_follows_the_pseudo_inverse() -> None:
    """For a rank-deficient a, x is the minimum-norm solution and its gradient is that of
    pinv(a) @ b along perturbations that keep the rank (a = B C)."""
    rng = np.random.default_rng(4)
    bm, cm = rng.standard_normal((5, 2)), rng.standard_normal((2, 3))
    y = rng.standard_normal((5, 2))
    with lampy.Scope():
        x, _, rank, _ = la.lstsq(lampy.param(bm @ cm), y)
        assert rank == 2
        np.testing.assert_allclose(x.value, np.linalg.pinv(bm @ cm) @ y, atol=1e-12)
    check_grad(lambda u, v, w: la.lstsq(u @ v, w)[0], bm, cm, y)


def test_lstsq_rejects_batches() -> None:
    """lstsq takes a 2-d a, as numpy's does, and says so."""
    with lampy.Scope(), pytest.raises(lampy.ShapeError, match=r"lstsq: .*not batched"):
        la.lstsq(lampy.param(np.ones((2, 3, 3))), np.ones((2, 3)))


def test_pinv_rank_deficient_gradient() -> None:
    """pinv's gradient of a rank-deficient matrix (all three Golub-Pereyra terms) matches
    finite differences along rank-preserving perturbations a = B C."""
    rng = np.random.default_rng(5)
    for m, r, n in [(4, 2, 3), (3, 1, 5), (2, 2, 4)]:
        check_grad(
            lambda u, v: la.pinv(u @ v), rng.standard_normal((m, r)), rng.standard_normal((r, n))
        )


def test_pinv_cutoffs_follow_numpy() -> None:
    """pinv's rcond / rtol defaults and errors are numpy's."""
    a = np.diag([1.0, 1e-10, 0.0])
    with lampy.Scope():
        x = lampy.param(a)
        np.testing.assert_allclose(la.pinv(x).value, np.linalg.pinv(a))
        np.testing.assert_allclose(la.pinv(x, rtol=None).value, np.linalg.pinv(a, rtol=None))
        np.testing.assert_allclose(la.pinv(x, rcond=1e-5).value, np.linalg.pinv(a, rcond=1e-5))
        np.testing.assert_allclose(
            la.pinv(x, rtol=np.array(1e-12)).value, np.linalg.pinv(a, rtol=np.array(1e-12))
        )
        with pytest.raises(ValueError, match="can't be both set"):
            la.pinv(x, rcond=1e-5, rtol=1e-5)


def test_pinv_hermitian_gradient_is_symmetric() -> None:
    """pinv(hermitian=True) reads one triangle; its gradient is the symmetric one."""
    a = symmetric(np.random.default_rng(6), [-2.0, 0.5, 3.0])
    (g,) = grad_of(lambda v: la.pinv(v, hermitian=True) * np.arange(9.0).reshape(3, 3), a)
    (gs,) = grad_of(lambda v: la.pinv(sym(v), hermitian=True) * np.arange(9.0).reshape(3, 3), a)
    np.testing.assert_allclose(g, g.T, atol=1e-12)
    np.testing.assert_allclose(g, gs, atol=1e-12)


@pytest.mark.parametrize("n", [0, 1, 2, 3, 4, 7, 10, -1, -2, -5])
def test_matrix_power_exponents(n: int) -> None:
    """matrix_power matches numpy bit for bit (same order of products) and its gradient
    checks out for small, large and negative exponents."""
    a = 0.8 * conditioned(np.random.default_rng(7), 3, 3, (2,)) / 2
    with lampy.Scope():
        out = la.matrix_power(lampy.param(a), n)
        np.testing.assert_array_equal(out.value, np.linalg.matrix_power(a, n))
    check_grad(lambda v: la.matrix_power(v, n), a)


def test_matrix_power_zero_and_errors() -> None:
    """n = 0 gives identities with a zero gradient; a non-integer exponent is a TypeError;
    integer matrices stay integer."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3, 3), np.float32))
        y = la.matrix_power(x, 0)
        assert y.dtype == np.float32
        np.testing.assert_array_equal(y.value, np.broadcast_to(np.eye(3), (2, 3, 3)))
        lampy.sum(y).backward()
        np.testing.assert_array_equal(x.grad, np.zeros((2, 3, 3)))
        with pytest.raises(TypeError, match="integer"):
            la.matrix_power(x, 1.5)
        k = la.matrix_power(np.arange(4).reshape(2, 2), 3)
        assert k.dtype == np.arange(1).dtype
        np.testing.assert_array_equal(
            k.value, np.linalg.matrix_power(np.arange(4).reshape(2, 2), 3)
        )


@pytest.mark.parametrize(
    "shapes",
    [[(3,), (3, 4)], [(2, 3), (3,)], [(3,), (3, 2), (2,)], [(2, 5), (5, 1), (1, 4), (4, 3)]],
    ids=str,
)
def test_multi_dot_matches_numpy(shapes: list[tuple[int, ...]]) -> None:
    """multi_dot matches numpy's value and shape (1-d ends, a scalar for two 1-d ends)."""
    rng = np.random.default_rng(8)
    arrays = [rng.standard_normal(s) for s in shapes]
    with lampy.Scope():
        out = la.multi_dot([lampy.param(a) for a in arrays])
        expected = np.linalg.multi_dot(arrays)
        assert out.shape == np.shape(expected)
        np.testing.assert_allclose(out.value, expected, rtol=1e-12)
    check_grad(lambda *vs: la.multi_dot(vs), *arrays)


def test_multi_dot_errors() -> None:
    """multi_dot needs two or more arrays that chain, 2-d except the ends."""
    with lampy.Scope():
        with pytest.raises(ValueError, match="at least two"):
            la.multi_dot([lampy.param(np.ones((2, 2)))])
        with pytest.raises(lampy.ShapeError, match="do not chain"):
            la.multi_dot([np.ones((2, 3)), np.ones((2, 3)), np.ones((3, 3))])
        with pytest.raises(lampy.ShapeError, match="2-d"):
            la.multi_dot([np.ones((2, 3)), np.ones(3), np.ones((3, 3))])


def test_solve_with_one_variable_as_both_operands() -> None:
    """solve(a, a) is the identity: both closures (sharing one solve) cancel exactly."""
    a = conditioned(np.random.default_rng(10), 3, 3, (2,))
    check_grad(la.solve, a, a[..., :2])
    (g,) = grad_of(lambda v: la.solve(v, v), a)
    np.testing.assert_allclose(g, 0, atol=1e-12)
