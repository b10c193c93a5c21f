"""diff and gradient: numpy's keyword arguments, 0-d, empty and short inputs, errors, and
gradients checked exactly against the transpose of the difference operator."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.ops._differences import diff, gradient
from lampy.testing import check_grad

RNG = np.random.default_rng(15)
A = RNG.normal(size=(3, 5))


def _operator(fn: Any, n: int) -> np.ndarray:
    """The matrix of the linear map ``fn`` on vectors of length ``n`` (numpy applied to
    the basis vectors), so that its transpose is the exact gradient."""
    return np.stack([np.asarray(fn(e)) for e in np.eye(n)], axis=1)


# ----------------------------------------------------------------------------- diff
@pytest.mark.parametrize("n", [0, 1, 2, 3, 5, 6, 8])
@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_diff_matches_numpy_for_every_order_and_axis(n: int, axis: int) -> None:
    """diff(a, n, axis) has numpy's value; orders at or past the axis length give an
    empty axis, whose gradient is exactly zero."""
    expected = np.diff(A, n=n, axis=axis)
    with lampy.Scope():
        x = lampy.param(A)
        y = diff(x, n=n, axis=axis)
        np.testing.assert_array_equal(y.value, expected)
        (y * 2.0).sum().backward()
        if expected.size == 0:
            np.testing.assert_array_equal(x.grad, np.zeros_like(A))
    check_grad(lambda v: diff(v, n=n, axis=axis), A)


def test_diff_gradient_is_the_transpose_of_the_difference_operator() -> None:
    """For a vector, the gradient of sum(w * diff(x, n)) is exactly D^T w, D being
    numpy's n-th difference matrix."""
    x0 = RNG.normal(size=6)
    for n in range(1, 5):
        w = RNG.normal(size=6 - n)
        with lampy.Scope():
            x = lampy.param(x0)
            (diff(x, n) * w).sum().backward()
            np.testing.assert_allclose(
                x.grad, _operator(lambda e, n=n: np.diff(e, n), 6).T @ w, atol=1e-12
            )


def test_diff_order_zero_returns_its_input() -> None:
    """n=0 returns a itself, as numpy does (prepend and append are then ignored)."""
    with lampy.Scope():
        x = lampy.param(A)
        assert diff(x, 0, prepend=1.0) is x
        c = diff(A, 0)
        assert isinstance(c, lampy.Variable)
        np.testing.assert_array_equal(c.value, A)


@pytest.mark.parametrize(
    ("prepend", "append"),
    [
        (0.5, None),
        (None, -1.5),
        (np.ones((3, 2)), None),
        (np.arange(3.0).reshape(3, 1), np.full((3, 3), 2.0)),
    ],
)
def test_diff_prepend_and_append_match_numpy(prepend: Any, append: Any) -> None:
    """Scalars are repeated across the other axes, arrays joined as they are."""
    kwargs = {k: v for k, v in (("prepend", prepend), ("append", append)) if v is not None}
    with lampy.Scope():
        y = diff(lampy.param(A), 2, axis=1, **kwargs)
        np.testing.assert_array_equal(y.value, np.diff(A, 2, axis=1, **kwargs))


def test_diff_prepend_and_append_params_get_gradients() -> None:
    """A Variable prepend or append is differentiated too (a scalar one gets the sum of
    its slice)."""
    check_grad(
        lambda a, p, q: diff(a, 3, axis=0, prepend=p, append=q),
        A,
        np.array(0.7),
        RNG.normal(size=(2, 5)),
    )
    with lampy.Scope():
        p = lampy.param(2.0)
        diff(lampy.const([1.0, 4.0, 9.0]), prepend=p).sum().backward()
        assert p.grad == -1.0  # sum of diff = last - first; p is first


@pytest.mark.parametrize("shape", [(0,), (2, 0), (0, 3)])
def test_diff_of_empty_arrays(shape: tuple[int, ...]) -> None:
    """Empty inputs give numpy's (empty) result and a zero gradient of their shape."""
    a = np.zeros(shape)
    with lampy.Scope():
        x = lampy.param(a)
        y = diff(x)
        assert y.shape == np.diff(a).shape
        y.sum().backward()
        assert x.grad is not None
        assert x.grad.shape == shape


def test_diff_keeps_float32_and_gives_constants_for_integers_and_bools() -> None:
    """float32 stays float32 (and its gradient too); integer and bool inputs give numpy's
    integer and bool differences, as constants."""
    a32 = A.astype(np.float32)
    check_grad(lambda v: diff(v, 2), a32)
    with lampy.Scope():
        assert diff(lampy.param(a32)).dtype == np.float32
        ints = diff(np.array([1, 4, 9]))
        np.testing.assert_array_equal(ints.value, [3, 5])
        assert not ints.needs_grad
        flags = diff(np.array([True, True, False]))
        np.testing.assert_array_equal(flags.value, np.diff(np.array([True, True, False])))


def test_diff_errors_name_the_op() -> None:
    """0-d inputs, negative orders, bad axes and misfitting prepend raise lampy errors
    before anything is recorded."""
    with lampy.Scope() as scope:
        x = lampy.param(A)
        with pytest.raises(ShapeError, match="diff: needs an array of at least 1"):
            diff(lampy.param(1.0))
        with pytest.raises(LampyValueError, match="diff: the order n must be >= 0"):
            diff(x, -1)
        with pytest.raises(ShapeError, match="diff: axis 2 is out of bounds"):
            diff(x, axis=2)
        with pytest.raises(ShapeError, match="diff: prepend/append"):
            diff(x, prepend=np.ones((2, 2)))
        assert len(scope) == 2


# ------------------------------------------------------------------------- gradient
COORDS = np.array([0.0, 0.5, 1.7, 2.0, 3.5])


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize(
    "varargs",
    [(), (0.5,), (2.0, 0.25), (np.array([0.0, 1.0, 3.0]), COORDS), (0.3, COORDS)],
    ids=["unit", "one-scalar", "scalars", "coordinates", "mixed"],
)
def test_gradient_matches_numpy(edge_order: int, varargs: tuple[Any, ...]) -> None:
    """Both axes of a 2-d array, with every spelling of the spacing: numpy's values, a
    tuple of Variables (numpy 2), and gradients that pass the finite-difference check."""
    expected = np.gradient(A, *varargs, edge_order=edge_order)
    with lampy.Scope():
        out = gradient(lampy.param(A), *varargs, edge_order=edge_order)
        assert isinstance(out, tuple)
        assert len(out) == 2
        for o, e in zip(out, expected, strict=True):
            np.testing.assert_allclose(o.value, e, rtol=1e-13)
    for k in range(2):
        check_grad(lambda v, k=k: gradient(v, *varargs, edge_order=edge_order)[k], A)


@pytest.mark.parametrize("edge_order", [1, 2])
@pytest.mark.parametrize("spacing", [1.0, 0.4, COORDS], ids=["unit", "scalar", "coordinates"])
def test_gradient_backward_is_the_transpose_of_numpys_stencil(
    edge_order: int, spacing: Any
) -> None:
    """For a vector, x.grad is exactly M^T w, M being numpy's gradient matrix (numpy
    applied to the basis vectors): edges and interior alike."""
    w = RNG.normal(size=5)
    expected = _operator(lambda e: np.gradient(e, spacing, edge_order=edge_order), 5).T @ w
    with lampy.Scope():
        x = lampy.param(RNG.normal(size=5))
        y = gradient(x, spacing, edge_order=edge_order)
        assert isinstance(y, lampy.Variable)  # one axis: one Variable, as numpy
        (y * w).sum().backward()
        np.testing.assert_allclose(x.grad, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("axis", [0, -1, (1,), (1, 0)])
def test_gradient_axis_argument(axis: Any) -> None:
    """axis as an int (one Variable) or a tuple (a tuple, in that order), as numpy."""
    expected = np.gradient(A, axis=axis)
    with lampy.Scope():
        out = gradient(lampy.param(A), axis=axis)
        if isinstance(expected, np.ndarray):
            assert isinstance(out, lampy.Variable)
            np.testing.assert_allclose(out.value, expected)
        else:
            assert isinstance(out, tuple)
            for o, e in zip(out, expected, strict=True):
                np.testing.assert_allclose(o.value, e)


def test_gradient_shortest_axes_and_float32() -> None:
    """Two samples are enough for edge_order=1, three for 2; float32 stays float32."""
    check_grad(lambda v: gradient(v), np.array([1.0, 3.0]))
    check_grad(lambda v: gradient(v, edge_order=2), np.array([1.0, 3.0, -2.0]))
    check_grad(lambda v: gradient(v, 0.5)[0], A.astype(np.float32))
    with lampy.Scope():
        assert gradient(lampy.param(np.float32([1, 2]))).dtype == np.float32


def test_gradient_errors() -> None:
    """Too few samples, a wrong number of spacings, coordinates of the wrong length and a
    spacing that needs a gradient raise lampy errors naming gradient."""
    with lampy.Scope():
        x = lampy.param(A)
        with pytest.raises(ShapeError, match="gradient: Shape of array too small"):
            gradient(lampy.param([1.0, 2.0]), edge_order=2)
        with pytest.raises(LampyTypeError, match=r"gradient: .*3 spacings"):
            gradient(x, 1.0, 2.0, 3.0)
        with pytest.raises(ShapeError, match=r"gradient: .*distances must match"):
            gradient(lampy.param(np.ones(3)), np.ones(4))
        with pytest.raises(LampyTypeError, match="gradient: the spacing is not differentiable"):
            gradient(x, lampy.param(0.5))
        out = gradient(x, lampy.const(0.5), axis=0)  # a constant Variable is a spacing
        np.testing.assert_allclose(out.value, np.gradient(A, 0.5, axis=0))
