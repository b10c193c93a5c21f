"""The functional API: lampy.grad and lampy.value_and_grad, numpy in and numpy out."""

from __future__ import annotations

import gc
import weakref
from collections import namedtuple
from typing import Any

import numpy as np
import pytest

import lampy


def f_xy(x: lampy.Variable, y: lampy.Variable) -> lampy.Variable:
    """sum(x * y + x**2); d/dx = y + 2x, d/dy = x."""
    return (x * y + x * x).sum()


X = np.array([1.0, 2.0, 3.0])
Y = np.array([-1.0, 0.5, 4.0])


# --------------------------------------------------------------------- argnums


def test_grad_defaults_to_the_first_argument() -> None:
    """lampy.grad(f) differentiates with respect to the first argument, returning an ndarray."""
    g = lampy.grad(f_xy)(X, Y)
    assert type(g) is np.ndarray
    np.testing.assert_array_equal(g, Y + 2 * X)


@pytest.mark.parametrize(("argnums", "index"), [(0, 0), (1, 1), (-1, 1), (-2, 0)])
def test_grad_with_an_int_argnums(argnums: int, index: int) -> None:
    """An int argnums (negative counts from the end) gives one array for that argument."""
    expected = [Y + 2 * X, X][index]
    g = lampy.grad(f_xy, argnums=argnums)(X, Y)
    assert type(g) is np.ndarray
    np.testing.assert_array_equal(g, expected)


@pytest.mark.parametrize(
    ("argnums", "indices"), [((0, 1), (0, 1)), ((1, 0), (1, 0)), ((1,), (1,)), ((-1, 0), (1, 0))]
)
def test_grad_with_a_tuple_argnums(argnums: tuple[int, ...], indices: tuple[int, ...]) -> None:
    """A tuple argnums gives a tuple of arrays, in the order asked for."""
    expected = [Y + 2 * X, X]
    grads = lampy.grad(f_xy, argnums=argnums)(X, Y)
    assert isinstance(grads, tuple)
    assert len(grads) == len(indices)
    for g, i in zip(grads, indices, strict=True):
        assert type(g) is np.ndarray
        np.testing.assert_array_equal(g, expected[i])


def test_grad_with_a_repeated_argnum_gives_the_gradient_each_time() -> None:
    """argnums=(0, 0) gives the gradient of argument 0 twice (as JAX does)."""
    g0, g1 = lampy.grad(f_xy, argnums=(0, 0))(X, Y)
    np.testing.assert_array_equal(g0, Y + 2 * X)
    np.testing.assert_array_equal(g1, Y + 2 * X)


@pytest.mark.parametrize("argnums", [2, -3, (0, 2)])
def test_grad_with_argnums_out_of_range_raises(argnums: Any) -> None:
    """argnums beyond the positional arguments raises LampyError naming argnums."""
    with pytest.raises(lampy.LampyError, match="argnums"):
        lampy.grad(f_xy, argnums=argnums)(X, Y)


def test_other_arguments_are_passed_through_unchanged() -> None:
    """Arguments not in argnums reach f as given (arrays, ints, strings, anything)."""
    seen: dict[str, Any] = {}
    marker = object()

    def f(x: lampy.Variable, k: int, name: str, obj: object, arr: np.ndarray) -> lampy.Variable:
        seen.update(k=k, name=name, obj=obj, arr=arr)
        return (x * float(k)).sum()

    arr = np.ones(2)
    g = lampy.grad(f)(X, 3, "name", marker, arr)
    np.testing.assert_array_equal(g, [3.0, 3.0, 3.0])
    assert seen["k"] == 3
    assert seen["name"] == "name"
    assert seen["obj"] is marker
    assert seen["arr"] is arr


def test_differentiated_arguments_arrive_as_params() -> None:
    """The arguments at argnums reach f as params (Variables that need a gradient)."""
    seen: list[Any] = []

    def f(x: Any, y: Any) -> lampy.Variable:
        seen.extend([x, y])
        return (x * y).sum()

    lampy.grad(f)(X, Y)
    assert isinstance(seen[0], lampy.Variable)
    assert seen[0].op is None
    assert seen[0].needs_grad
    assert seen[1] is Y


@pytest.mark.parametrize(
    ("x", "expected"),
    [(2.0, 4.0), ([1.0, 2.0], [2.0, 4.0]), (np.float32(3.0), np.float32(6.0))],
)
def test_grad_takes_python_scalars_and_lists(x: Any, expected: Any) -> None:
    """Python floats, lists and numpy scalars are accepted and give arrays."""
    g = lampy.grad(lambda v: (v * v).sum())(x)
    assert isinstance(g, np.ndarray)
    np.testing.assert_array_equal(g, expected)


def test_grad_of_an_integer_argument_raises_dtype_error() -> None:
    """Differentiating with respect to an integer array raises DTypeError (a TypeError)."""
    with pytest.raises(lampy.DTypeError):
        lampy.grad(lambda v: v.sum())(np.array([1, 2]))


def test_input_arrays_are_not_modified() -> None:
    """grad leaves its input arrays untouched and writable."""
    x = X.copy()
    lampy.grad(lambda v: (v * v).sum())(x)
    np.testing.assert_array_equal(x, X)
    assert x.flags.writeable


# --------------------------------------------------------------------- outputs


def test_value_and_grad_returns_value_and_gradient() -> None:
    """value_and_grad gives (value, gradient); value is an ndarray of the output's shape."""
    value, g = lampy.value_and_grad(f_xy)(X, Y)
    assert type(value) is np.ndarray
    assert value.shape == ()
    assert value == np.sum(X * Y + X * X)
    np.testing.assert_array_equal(g, Y + 2 * X)


def test_value_and_grad_with_a_tuple_argnums() -> None:
    """value_and_grad(argnums=(0, 1)) gives (value, (dx, dy))."""
    value, (dx, dy) = lampy.value_and_grad(f_xy, argnums=(0, 1))(X, Y)
    assert value == np.sum(X * Y + X * X)
    np.testing.assert_array_equal(dx, Y + 2 * X)
    np.testing.assert_array_equal(dy, X)


def test_value_of_a_one_element_output_keeps_its_shape() -> None:
    """A one-element output of shape (1, 1) gives a value of shape (1, 1)."""
    value, g = lampy.value_and_grad(lambda v: v.sum(keepdims=True))(np.ones((2, 3)))
    assert value.shape == (1, 1)
    np.testing.assert_array_equal(g, np.ones((2, 3)))


def test_has_aux_returns_aux_as_numpy() -> None:
    """has_aux=True gives ((value, aux), grad); Variables in aux become arrays, the rest stays."""
    Pair = namedtuple("Pair", ["first", "second"])

    def f(x: lampy.Variable) -> tuple[lampy.Variable, Any]:
        sq = x * x
        aux = {"sq": sq, "nest": [sq.sum(), (x, "label")], "pair": Pair(x, 7), "n": 3}
        return sq.sum(), aux

    (value, aux), g = lampy.value_and_grad(f, has_aux=True)(X)
    assert value == np.sum(X * X)
    np.testing.assert_array_equal(g, 2 * X)
    assert type(aux["sq"]) is np.ndarray
    np.testing.assert_array_equal(aux["sq"], X * X)
    assert type(aux["nest"]) is list
    assert aux["nest"][0] == np.sum(X * X)
    assert type(aux["nest"][1]) is tuple
    np.testing.assert_array_equal(aux["nest"][1][0], X)
    assert aux["nest"][1][1] == "label"
    assert type(aux["pair"]) is Pair
    np.testing.assert_array_equal(aux["pair"].first, X)
    assert aux["pair"].second == 7
    assert aux["n"] == 3


def test_has_aux_requires_a_pair() -> None:
    """has_aux=True with f returning a lone Variable raises LampyError asking for a pair."""
    with pytest.raises(lampy.LampyError, match="pair"):
        lampy.value_and_grad(lambda v: v.sum(), has_aux=True)(X)


@pytest.mark.parametrize(
    "f",
    [
        pytest.param(lambda v: v * 2.0, id="non-scalar"),
        pytest.param(lambda v: 3.0, id="float"),
        pytest.param(lambda v: v.value.sum(), id="ndarray"),
    ],
)
def test_output_must_be_a_scalar_variable(f: Any) -> None:
    """f returning a non-scalar or a non-Variable raises LampyError suggesting a reduction."""
    with pytest.raises(lampy.LampyError, match="scalar"):
        lampy.grad(f)(X)


def test_returned_arrays_are_writable_and_owned() -> None:
    """The value, gradients and aux arrays are writable and own their memory."""

    def f(x: lampy.Variable, y: lampy.Variable) -> tuple[lampy.Variable, Any]:
        out = (x * y).sum()
        return out, {"x": x, "reshaped": x.reshape(3, 1), "sliced": x[1:]}

    (value, aux), (dx, dy) = lampy.value_and_grad(f, argnums=(0, 1), has_aux=True)(X, Y)
    for arr in (value, dx, dy, aux["x"], aux["reshaped"], aux["sliced"]):
        assert arr.flags.writeable
        assert arr.flags.owndata
        arr[...] = 0.0


def test_output_that_is_the_param_itself() -> None:
    """f returning its (scalar) argument gives gradient 1, as an owned writable array."""
    value, g = lampy.value_and_grad(lambda v: v)(2.0)
    assert value == 2.0
    assert g == 1.0
    assert g.flags.writeable
    assert g.flags.owndata


@pytest.mark.parametrize(
    "f",
    [
        pytest.param(lambda x, y: lampy.const(3.0), id="const"),
        pytest.param(lambda x, y: (lampy.const(y) * 2.0).sum(), id="ignores-x"),
        pytest.param(lambda x, y: (x * 0.0 + lampy.const(1.0)).sum() * 0.0, id="zero-path"),
    ],
)
def test_constant_output_gives_zero_gradients(f: Any) -> None:
    """An output that does not depend on an argument gives zeros of its shape and dtype."""
    x = np.ones((2, 3), dtype=np.float32)
    g = lampy.grad(f)(x, np.ones(2))
    assert g.shape == (2, 3)
    assert g.dtype == np.float32
    assert not g.any()
    assert g.flags.writeable


def test_float32_inputs_give_float32_outputs() -> None:
    """float32 arguments give a float32 value and float32 gradients."""
    x = np.array([1.0, 2.0], dtype=np.float32)
    value, (dx, dy) = lampy.value_and_grad(lambda a, b: (a * b * 0.5).sum(), argnums=(0, 1))(x, x)
    assert value.dtype == np.float32
    assert dx.dtype == np.float32
    assert dy.dtype == np.float32


# --------------------------------------------------------------------- scope


def test_everything_made_inside_f_is_released_afterwards() -> None:
    """After grad returns, every Variable f made (params included) is released and freed."""
    made: list[lampy.Variable] = []
    refs: list[weakref.ref[np.ndarray]] = []

    def f(x: lampy.Variable) -> lampy.Variable:
        h = lampy.exp(x)
        out = (h * h).sum()
        made.extend([x, h, out])
        refs.extend(weakref.ref(v.value) for v in (x, h, out))
        return out

    was_enabled = gc.isenabled()
    gc.disable()
    try:
        lampy.grad(f)(X)
        assert all(r() is None for r in refs)
    finally:
        if was_enabled:
            gc.enable()
    for v in made:
        with pytest.raises(lampy.ReleasedError):
            v.value


def test_grad_inside_an_open_scope_leaves_it_alone() -> None:
    """grad called inside a scope releases its own Variables and leaves the scope's alive."""
    with lampy.Scope() as outer:
        w = lampy.const([1.0, 2.0, 3.0])
        made: list[lampy.Variable] = []

        def f(x: lampy.Variable) -> lampy.Variable:
            h = x * w
            made.append(h)
            return h.sum()

        g = lampy.grad(f)(X)
        np.testing.assert_array_equal(g, [1.0, 2.0, 3.0])
        assert lampy.Scope.current() is outer
        with pytest.raises(lampy.ReleasedError):
            made[0].value
        np.testing.assert_array_equal(w.value, [1.0, 2.0, 3.0])


def test_an_exception_in_f_propagates_and_releases() -> None:
    """An exception raised by f propagates and everything f made is released."""
    made: list[lampy.Variable] = []

    def f(x: lampy.Variable) -> lampy.Variable:
        made.append(x * 2.0)
        raise KeyError("inside f")

    with pytest.raises(KeyError, match="inside f"):
        lampy.grad(f)(X)
    with pytest.raises(lampy.ReleasedError):
        made[0].value


def test_grad_can_be_called_repeatedly() -> None:
    """A grad function can be called many times; each call is independent (no accumulation)."""
    df = lampy.grad(lambda v: (v * v).sum())
    for _ in range(3):
        np.testing.assert_array_equal(df(X), 2 * X)


def test_grad_called_under_no_grad_still_differentiates() -> None:
    """grad is a function transform: called inside lampy.no_grad() it still gives the gradient."""
    with lampy.no_grad():
        g = lampy.grad(lambda v: (v * v).sum())(X)
    np.testing.assert_array_equal(g, 2 * X)


def test_grad_leaves_gradients_of_closed_over_params_alone() -> None:
    """grad has no side effects: a param of an outer scope used inside f keeps its gradient."""
    with lampy.Scope(), lampy.no_grad():
        w = lampy.param([1.0, 2.0, 3.0])
        g = lampy.grad(lambda v: (v * w).sum())(X)
        np.testing.assert_array_equal(g, [1.0, 2.0, 3.0])
        assert w.grad is None
