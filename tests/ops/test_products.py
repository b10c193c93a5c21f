"""dot, vdot, inner, outer, tensordot, kron, cross, trace, diagonal, diag, tril and triu beyond
what the op table draws: keyword variants, scalars, constants, reuse, exact conventions
and errors."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import ShapeError
from lampy.ops._diagonal import diag, diagonal, trace, tril, triu
from lampy.ops._products import cross, dot, inner, kron, matmul, outer, tensordot, vdot
from lampy.testing import check_grad

RNG = np.random.default_rng(7)


def _r(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


DOT_SHAPES = [
    ((), ()),
    ((), (2, 3)),
    ((3, 2), ()),
    ((3,), (3,)),
    ((2, 3), (3, 4)),
    ((4, 2, 3), (3,)),
    ((3,), (2, 3, 4)),
    ((4, 2, 3), (3, 5)),
    ((5, 2, 3), (4, 3, 6)),  # N-d . M-d keeps both leading axes
    ((2, 3), (4, 3, 2)),
    ((0, 3), (3, 2)),
    ((2, 0), (5, 0, 3)),
]


@pytest.mark.parametrize(("s1", "s2"), DOT_SHAPES, ids=str)
def test_dot_numpy_rules(s1: tuple[int, ...], s2: tuple[int, ...]) -> None:
    """dot follows numpy.dot for scalars, vectors, matrices, N-d with M-d and empty axes."""
    a, b = _r(*s1), _r(*s2)
    with lampy.Scope():
        out = dot(lampy.param(a), lampy.param(b))
        assert out.shape == np.dot(a, b).shape
        np.testing.assert_allclose(out.value, np.dot(a, b), atol=1e-12)
    check_grad(dot, a, b)


def test_dot_is_not_matmul_for_batches() -> None:
    """dot keeps both operands' leading axes where matmul broadcasts them."""
    a, b = _r(2, 2, 3), _r(2, 3, 4)
    with lampy.Scope():
        x, y = lampy.param(a), lampy.param(b)
        assert dot(x, y).shape == (2, 2, 2, 4)
        assert matmul(x, y).shape == (2, 2, 4)


@pytest.mark.parametrize(
    ("fn", "ref"),
    [(dot, np.dot), (inner, np.inner), (outer, np.outer), (kron, np.kron)],
    ids=["dot", "inner", "outer", "kron"],
)
def test_python_number_keeps_float32(fn: Callable[..., Any], ref: Callable[..., Any]) -> None:
    """A Python number next to a float32 operand keeps float32, value and gradient."""
    a = _r(3).astype(np.float32)
    with lampy.Scope():
        x = lampy.param(a)
        for out, expected in ((fn(x, 2.0), ref(a, 2.0)), (fn(2.0, x), ref(2.0, a))):
            assert out.dtype == np.float32
            np.testing.assert_allclose(out.value, expected, rtol=1e-6)
    check_grad(lambda v: fn(v, 2.0), a)


@pytest.mark.parametrize(
    "fn",
    [dot, inner, outer, kron, vdot, lambda a, b: tensordot(a, b, axes=1)],
    ids=["dot", "inner", "outer", "kron", "vdot", "tensordot"],
)
def test_constant_operand_and_reuse(fn: Callable[..., Any]) -> None:
    """With a numpy constant on either side only the Variable is differentiated, and a
    Variable used as both operands gets both contributions."""
    a, b = _r(3, 3), _r(3, 3)
    check_grad(lambda v: fn(v, b), a)
    check_grad(lambda v: fn(b, v), a)
    check_grad(lambda v: fn(v, v), a)


def test_integer_operands_are_constants() -> None:
    """Products of integer operands are constant Variables with numpy's integer result."""
    a = np.arange(6).reshape(2, 3)
    with lampy.Scope():
        out = dot(lampy.const(a), a.T)
        assert out.dtype == np.dot(a, a.T).dtype and not out.needs_grad
        np.testing.assert_array_equal(out.value, a @ a.T)


def test_vdot_flattens() -> None:
    """vdot flattens operands of different shapes with the same size; the result is 0-d."""
    a, b = _r(2, 3), _r(3, 2)
    with lampy.Scope():
        out = vdot(lampy.param(a), lampy.param(b))
        assert out.shape == ()
        np.testing.assert_allclose(out.value, np.vdot(a, b))
    check_grad(vdot, a, b)


@pytest.mark.parametrize(
    "axes", [0, 1, 2, (1, 0), ([1], [0]), ([-1], [0]), [[0, 1], [1, 0]], np.int64(1)], ids=str
)
def test_tensordot_axes_spellings(axes: object) -> None:
    """tensordot takes an int, a pair of ints and a pair of lists (negatives too)."""
    a = _r(3, 3)
    b = _r(3, 3)
    expected = np.tensordot(a, b, axes=axes)
    with lampy.Scope():
        out = tensordot(lampy.param(a), lampy.param(b), axes=axes)
        np.testing.assert_allclose(out.value, expected, atol=1e-12)
    check_grad(lambda u, v: tensordot(u, v, axes=axes), a, b)


def test_kron_of_different_ranks() -> None:
    """kron gives the operand with fewer axes leading length-1 axes, as numpy does."""
    a, b = _r(2, 3), _r(4, 1, 2)
    with lampy.Scope():
        np.testing.assert_allclose(kron(lampy.param(a), lampy.param(b)).value, np.kron(a, b))
    check_grad(kron, a, b)
    check_grad(kron, b, a)


def _case_id(v: object) -> str:
    """A test id that is the same in every process (a function's repr holds its address)."""
    return getattr(v, "__name__", None) or str(v)


PRODUCT_ERRORS = [
    (dot, (2, 3), (4,), r"dot: shapes \(2, 3\) and \(4,\)"),
    (dot, (2, 3), (2, 4, 5), r"dot: shapes"),
    (inner, (2, 3), (3, 2), r"inner: shapes"),
    (vdot, (2,), (3,), r"vdot: .* same number of elements"),
    (lambda a, b: tensordot(a, b, axes=3), (2, 3), (3, 2), r"tensordot: axis -3 is out of bounds"),
    (lambda a, b: tensordot(a, b, axes=([0], [0])), (2, 3), (3, 2), r"tensordot: shapes"),
    (lambda a, b: tensordot(a, b, axes=([0, 1], [0])), (2, 3), (2, 3), r"pair 2 axes .* 1"),
    (lambda a, b: tensordot(a, b, axes=([0, 0], [0, 1])), (2, 3), (2, 2), r"repeat an axis"),
    (matmul, (), (2,), r"matmul: .*0-d"),
]


@pytest.mark.parametrize(("fn", "s1", "s2", "message"), PRODUCT_ERRORS, ids=_case_id)
def test_product_errors(
    fn: Callable[..., Any], s1: tuple[int, ...], s2: tuple[int, ...], message: str
) -> None:
    """Operands that do not fit raise a ShapeError naming the op and the shapes."""
    with lampy.Scope(), pytest.raises(lampy.ShapeError, match=message):
        fn(lampy.param(np.ones(s1)), lampy.param(np.ones(s2)))


def test_tensordot_bad_axes_argument() -> None:
    """A tensordot axes argument that is neither an int nor a pair is a clear error."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 2)))
        with pytest.raises(
            lampy.LampyValueError, match=r"tensordot: axes must be an int or a pair"
        ):
            tensordot(x, x, axes=[1, 0, 1])
        with pytest.raises(TypeError, match=r"integer"):  # operator.index, as numpy
            tensordot(x, x, axes=1.5)


def test_diagonal_gradient_is_exact() -> None:
    """diagonal/diag/trace put g on the diagonal and exact zeros elsewhere."""
    with lampy.Scope():
        x = lampy.param(np.ones((3, 4)))
        diagonal(x, offset=1).backward(np.array([1.0, 2.0, 3.0]))
        np.testing.assert_array_equal(x.grad, np.diag([1.0, 2.0, 3.0], 1)[:3])
        y = lampy.param(np.ones((3, 3), np.float32))
        trace(y, -1).backward()
        assert y.grad.dtype == np.float32
        np.testing.assert_array_equal(y.grad, np.eye(3, k=-1))
        z = lampy.param(np.ones((2, 2)))
        diag(z).backward(np.array([5.0, 6.0]))
        np.testing.assert_array_equal(z.grad, np.diag([5.0, 6.0]))


def test_trace_and_diagonal_keywords() -> None:
    """trace and diagonal take numpy's offset, axis1, axis2 (negatives too) and trace dtype."""
    a = _r(2, 3, 4)
    with lampy.Scope():
        x = lampy.param(a)
        np.testing.assert_allclose(
            trace(x, offset=-1, axis1=-1, axis2=0).value, np.trace(a, -1, -1, 0)
        )
        np.testing.assert_allclose(
            diagonal(x, offset=2, axis1=2, axis2=1).value, np.diagonal(a, 2, 2, 1)
        )
        t32 = trace(lampy.param(a.astype(np.float32)), dtype=np.float64, axis1=1, axis2=2)
        assert t32.dtype == np.float64
    check_grad(lambda v: trace(v, offset=-1, axis1=-1, axis2=0), a)
    check_grad(lambda v: trace(v, axis1=1, axis2=2, dtype=np.float64), a.astype(np.float32))


def test_diag_builds_and_extracts() -> None:
    """diag of a 1-d array builds a matrix, of a 2-d array takes a diagonal, both with k."""
    v, m = _r(3), _r(3, 4)
    with lampy.Scope():
        assert diag(lampy.param(v), k=-2).shape == (5, 5)
        np.testing.assert_array_equal(diag(lampy.param(m), k=1).value, np.diag(m, 1))
        assert diag(lampy.param(m), k=9).shape == (0,)
    check_grad(lambda x: diag(x, k=2), v)
    check_grad(lambda x: diag(x, k=-1), m)


@pytest.mark.parametrize("fn", [tril, triu], ids=["tril", "triu"])
def test_triangles_batched_and_1d(fn: Callable[..., Any]) -> None:
    """tril/triu act on the last two axes of a batch, and take a 1-d array as the rows of
    a square (its gradient sums over those rows)."""
    ref = getattr(np, fn.__name__)
    for shape, k in [((2, 3, 4), 1), ((2, 3, 4), -2), ((3,), 0), ((4,), -1), ((0, 2), 0)]:
        a = _r(*shape)
        with lampy.Scope():
            np.testing.assert_array_equal(fn(lampy.param(a), k=k).value, ref(a, k=k))
        check_grad(lambda x: fn(x, k=k), a)


STRUCTURE_ERRORS = [
    (lambda x: trace(x), (3,), r"trace: needs an array of at least 2 dimensions"),
    (lambda x: diagonal(x, axis1=1, axis2=-1), (2, 3), r"diagonal: axis1 and axis2 are both"),
    (lambda x: trace(x, axis2=2), (2, 3), r"trace: axis 2 is out of bounds"),
    (lambda x: diag(x), (2, 2, 2), r"diag: takes a 1-d array .* shape \(2, 2, 2\)"),
    (lambda x: diag(x), (), r"diag: takes a 1-d"),
    (lambda x: tril(x), (), r"tril: takes an array of at least 1 dimension"),
    (lambda x: triu(x), (), r"triu: takes an array of at least 1 dimension"),
]


@pytest.mark.parametrize(("fn", "shape", "message"), STRUCTURE_ERRORS, ids=_case_id)
def test_structure_errors(fn: Callable[..., Any], shape: tuple[int, ...], message: str) -> None:
    """Arrays of the wrong rank or clashing axes raise a ShapeError naming the op."""
    with lampy.Scope(), pytest.raises(lampy.ShapeError, match=message):
        fn(lampy.param(np.ones(shape)))


def test_trace_rejects_integer_dtype() -> None:
    """trace with an integer dtype= would truncate and is refused."""
    with lampy.Scope(), pytest.raises(lampy.DTypeError, match=r"trace: dtype=int64 would truncate"):
        trace(lampy.param(np.ones((2, 2))), dtype=np.int64)


# ---------------------------------------------------------------------------------- cross
def test_cross_of_3_vectors_is_exact() -> None:
    """e_x x e_y = e_z; the gradients are b x g and g x a."""
    with lampy.Scope():
        a, b = lampy.param([1.0, 0.0, 0.0]), lampy.param([0.0, 1.0, 0.0])
        c = cross(a, b)
        np.testing.assert_array_equal(c.value, [0.0, 0.0, 1.0])
        g = np.array([1.0, 2.0, 3.0])
        c.backward(g)
        np.testing.assert_array_equal(a.grad, np.cross(b.value, g))
        np.testing.assert_array_equal(b.grad, np.cross(g, a.value))


@pytest.mark.parametrize(
    ("sa", "sb", "kwargs"),
    [
        ((3,), (4, 3), {}),
        ((3, 2), (2, 3), {"axisa": 0}),
        ((3, 4), (4, 3), {"axisa": 0, "axisb": -1, "axisc": 0}),
        ((2, 3, 4), (1, 3, 4), {"axis": 1}),
        ((3, 2, 1), (5, 3), {"axisa": 0, "axisc": 1}),
    ],
)
def test_cross_axes_and_broadcasting(sa: tuple[int, ...], sb: tuple[int, ...], kwargs: Any) -> None:
    """axisa, axisb, axisc and axis place the vectors as numpy does; batch axes
    broadcast and the gradients are summed back."""
    a, b = _r(*sa), _r(*sb)
    with lampy.Scope():
        np.testing.assert_allclose(
            cross(lampy.param(a), b, **kwargs).value, np.cross(a, b, **kwargs)
        )
    check_grad(lambda x, y: cross(x, y, **kwargs), a, b)


def test_cross_of_2_vectors() -> None:
    """2-vectors (deprecated by numpy 2, which warns) give the z-component (both 2-d) or
    a 3-vector (with a 3-vector), taking a zero third component; gradients as for 3-d."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        for sa, sb in [((2,), (2,)), ((4, 2), (2,)), ((2,), (3, 3)), ((3,), (2,))]:
            a, b = _r(*sa), _r(*sb)
            with lampy.Scope():
                np.testing.assert_allclose(cross(lampy.param(a), b).value, np.cross(a, b))
            check_grad(cross, a, b)
            check_grad(cross, a.astype(np.float32), b.astype(np.float32))


def test_cross_errors() -> None:
    """Vectors of other lengths, bad axes and batch axes that do not broadcast raise
    ShapeError naming cross."""
    with lampy.Scope():
        x = lampy.param(_r(2, 3))
        with pytest.raises(ShapeError, match=r"cross: the vectors of a .* have 4 components"):
            cross(_r(4), x)
        with pytest.raises(ShapeError, match="cross: axisb 2 is out of bounds"):
            cross(x, x, axisb=2)
        with pytest.raises(ShapeError, match="cross: axisc 2 is out of bounds"):
            cross(x, x, axisc=2)
        with pytest.raises(ShapeError, match="cross: the vectors' other axes"):
            cross(x, _r(3, 3))
        with pytest.raises(ShapeError, match="cross: a must hold vectors"):
            cross(1.0, x)
