"""lampy.testing: check_grad catches wrong gradients and reports them precisely; numerical_grad
is right; the hypothesis strategies produce what they promise."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy.testing import check_grad, numerical_grad
from lampy.testing import strategies as lst

Closure = Callable[[np.ndarray, np.ndarray], None]


def square_with(d_x: Callable[[np.ndarray, np.ndarray, np.ndarray], None]) -> Any:
    """An elementwise x**2 op whose backward closure is ``d_x(g, out, x)``."""

    def f(x: lampy.Variable) -> lampy.Variable:
        a = x.value
        return lampy.op("square", a * a, x.zip_backward(lambda g, out: d_x(g, out, a)))

    return f


def right(g: np.ndarray, out: np.ndarray, a: np.ndarray) -> None:
    np.add(out, g * 2 * a, out=out)


X = np.array([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75]])


# --------------------------------------------------------------------- correct gradients pass


@pytest.mark.parametrize(
    ("f", "inputs"),
    [
        pytest.param(square_with(right), (X,), id="custom-square"),
        pytest.param(lambda x: lampy.tanh(x) * lampy.exp(x), (X,), id="tanh-exp"),
        pytest.param(lambda x, y: x @ y, (X, np.ascontiguousarray(X.T)), id="matmul"),
        pytest.param(lambda x, y: x / y, (X, X + 3.0), id="divide"),
        pytest.param(lambda x: (x * x).sum(), (X,), id="scalar-out"),
        pytest.param(lambda x: x[:, [0, 0, 2]], (X,), id="gather"),
        pytest.param(lambda x, y: x * y, (np.float64(1.5), X), id="0d-input"),
    ],
)
def test_correct_gradients_pass(f: Callable[..., lampy.Variable], inputs: tuple[Any, ...]) -> None:
    """check_grad accepts correct gradients, for any output shape."""
    check_grad(f, *inputs)


def test_correct_float32_gradients_pass_with_default_tolerances() -> None:
    """check_grad computes float32 gradients in float32 and accepts them with its defaults."""
    x = X.astype(np.float32)
    check_grad(lambda v: lampy.tanh(v) * v * 2.0, x)
    check_grad(square_with(right), x)


def test_an_input_that_does_not_reach_the_output_passes() -> None:
    """An input the output does not depend on must have a zero gradient, and does."""
    check_grad(lambda x, y: lampy.exp(x), X, X)
    check_grad(lambda x: lampy.const(np.ones(3)), X)


def test_check_grad_needs_no_open_scope_and_leaves_none() -> None:
    """check_grad opens and closes its own scopes, also inside a user's scope."""
    check_grad(lampy.exp, X)
    with lampy.Scope() as outer:
        check_grad(lampy.exp, X)
        assert lampy.Scope.current() is outer


# --------------------------------------------------------------------- wrong gradients fail


WRONG: list[Any] = [
    pytest.param(lambda g, out, a: np.add(out, g * 2.2 * a, out=out), id="scaled"),
    pytest.param(lambda g, out, a: np.subtract(out, g * 2 * a, out=out), id="sign"),
    pytest.param(lambda g, out, a: None, id="missing"),
    pytest.param(lambda g, out, a: np.add(out, g * a, out=out), id="half"),
    pytest.param(lambda g, out, a: np.add(out, 2 * a, out=out), id="ignores-g"),
    pytest.param(lambda g, out, a: np.add(out, np.nan, out=out), id="nan"),
    pytest.param(lambda g, out, a: np.add(out, np.inf, out=out), id="inf"),
    pytest.param(lambda g, out, a: np.add(out, g[::-1] * 2 * a, out=out), id="rows-swapped"),
]


@pytest.mark.parametrize("d_x", WRONG)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_wrong_gradients_are_caught(d_x: Any, dtype: Any) -> None:
    """check_grad raises AssertionError for wrong gradients: scaled, negated, missing, nan..."""
    x = X.astype(dtype)
    with pytest.raises(AssertionError, match="check_grad: gradient of input 0"):
        check_grad(square_with(d_x), x)


def test_offset_within_float32_tolerance_is_accepted_but_not_in_float64() -> None:
    """Tolerances follow the dtype: a 1e-4 offset passes in float32 and fails in float64."""
    f = square_with(lambda g, out, a: np.add(out, g * 2 * a + 1e-4, out=out))
    check_grad(f, X.astype(np.float32))
    with pytest.raises(AssertionError):
        check_grad(f, X)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_gradient_off_by_one_percent_is_caught(dtype: Any) -> None:
    """A gradient 1% too large fails, in float32 too (the numerical gradient is float64)."""
    with pytest.raises(AssertionError, match="check_grad: gradient of input 0"):
        check_grad(
            square_with(lambda g, out, a: np.add(out, g * 2.02 * a, out=out)), X.astype(dtype)
        )


def test_a_gradient_wrong_at_one_element_in_float32_only_is_caught() -> None:
    """A closure wrong by 1% at one element, and only on the float32 path, fails for a
    float32 input and names that element."""

    def d_x(g: np.ndarray, out: np.ndarray, a: np.ndarray) -> None:
        d = g * 2 * a
        if a.dtype == np.float32:
            d[1, 2] *= 1.01
        np.add(out, d, out=out)

    check_grad(square_with(d_x), X)
    with pytest.raises(AssertionError, match=r"wrong at index \(1, 2\).* 1 of 6 elements"):
        check_grad(square_with(d_x), X.astype(np.float32))


ASSIGNING: list[Any] = [
    pytest.param(lambda g, out, a: np.copyto(out, g * 2 * a), id="copyto"),
    pytest.param(lambda g, out, a: out.__setitem__(..., g * 2 * a), id="setitem"),
    pytest.param(lambda g, out, a: np.multiply(g * 2, a, out=out), id="ufunc-out"),
]


@pytest.mark.parametrize("d_x", ASSIGNING)
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_a_closure_that_assigns_into_out_is_caught(d_x: Any, dtype: Any) -> None:
    """A closure that assigns its gradient into ``out`` instead of adding it is right when
    its input has no other consumer, wrong otherwise; check_grad fails it and says why."""
    with lampy.Scope():  # right alone ...
        x = lampy.param(X.astype(dtype))
        square_with(d_x)(x).sum().backward()
        np.testing.assert_allclose(x.grad, 2 * X, rtol=1e-6)  # type: ignore[arg-type]
    with pytest.raises(AssertionError, match="assigns into `out`"):  # ... but caught
        check_grad(square_with(d_x), X.astype(dtype))


def test_a_closure_that_assigns_is_caught_for_a_0d_input_and_a_second_input() -> None:
    """The check that closures add covers 0-d inputs and every input of a binary op."""

    def mul_assigning_y(x: lampy.Variable, y: lampy.Variable) -> lampy.Variable:
        a, b = x.value, y.value

        def d_x(g: np.ndarray, out: np.ndarray) -> None:
            np.add(out, g * b, out=out)

        def d_y(g: np.ndarray, out: np.ndarray) -> None:
            out[...] = (g * a).sum()

        return lampy.op("mul", a * b, x.zip_backward(d_x), y.zip_backward(d_y))

    with pytest.raises(AssertionError, match=r"gradient of input 1 .*assigns into `out`"):
        check_grad(mul_assigning_y, X, np.float64(1.5))


def test_0d_and_empty_inputs() -> None:
    """0-d inputs are checked like any other (a wrong gradient fails); an empty input has
    no element to check and gets an empty float gradient of its dtype."""
    check_grad(square_with(right), np.float64(1.5))
    check_grad(square_with(right), np.float32(1.5))
    with pytest.raises(AssertionError, match=r"shape \(\), float32\) is wrong at index \(\)"):
        check_grad(
            square_with(lambda g, out, a: np.add(out, g * 2.1 * a, out=out)), np.float32(1.5)
        )
    check_grad(square_with(right), np.zeros((0, 3)))
    check_grad(lambda x: (x * x).sum(), np.zeros((2, 0), np.float32))


def test_points_without_a_derivative_follow_the_central_difference() -> None:
    """At a kink the numerical gradient is the central difference (the mean of the one-sided
    derivatives): |x| at 0 agrees with lampy's 0; a relu whose derivative at 0 is 0 (as
    PyTorch's) does not agree with the central difference's 1/2, and is reported."""

    def relu(x: lampy.Variable) -> lampy.Variable:
        a = x.value
        return lampy.op(
            "relu",
            np.maximum(a, 0.0),
            x.zip_backward(lambda g, out: np.add(out, g * (a > 0), out=out)),
        )

    check_grad(lampy.abs, np.array([0.0, 1.0]))
    check_grad(relu, np.array([-1.0, 1.0]))
    with pytest.raises(AssertionError, match=r"index \(0,\): lampy 0\.0, numerical -?0\.[2-7]"):
        check_grad(relu, np.array([0.0, 1.0]))


def test_explicit_tolerances_and_step_are_used() -> None:
    """atol, rtol and eps given explicitly override the defaults."""
    f = square_with(lambda g, out, a: np.add(out, g * 2 * a + 1e-4, out=out))
    check_grad(f, X, atol=1e-3)
    # A coarse step makes the central difference of exp visibly inexact (error ~ eps**2 / 6).
    with pytest.raises(AssertionError, match=r"atol 1e-09 \+ rtol 0\.0"):
        check_grad(lampy.exp, X, eps=1e-2, atol=1e-9, rtol=0.0)
    check_grad(lampy.exp, X, eps=1e-2, rtol=1e-3)


def test_report_names_the_input_the_index_and_both_values() -> None:
    """The message names the wrong input, the worst index, lampy's and the numerical value."""

    def f(x: lampy.Variable, y: lampy.Variable) -> lampy.Variable:
        a, b = x.value, y.value

        def d_y(g: np.ndarray, out: np.ndarray) -> None:
            np.add(out, g * a, out=out)
            out[1, 2] += 0.5  # wrong at one element only

        return lampy.op(
            "mul",
            a * b,
            x.zip_backward(lambda g, out: np.add(out, g * b, out=out)),
            y.zip_backward(d_y),
        )

    y = X + 1.0
    with pytest.raises(AssertionError) as excinfo:
        check_grad(f, X, y, seed=3)
    message = str(excinfo.value)
    assert "input 1 " in message
    assert "(shape (2, 3), float64)" in message
    assert "index (1, 2)" in message
    assert "1 of 6 elements fail" in message
    # Recompute the numbers the message must show, with the same cotangent.
    w = np.random.default_rng(3)
    weights = w.uniform(0.5, 1.5, size=(2, 3)) * w.choice([-1.0, 1.0], size=(2, 3))
    numerical = weights[1, 2] * X[1, 2]
    lampy_value = numerical + 0.5
    found = re.search(r"lampy (\S+), numerical (\S+),", message)
    assert found is not None, message
    assert float(found.group(1)) == pytest.approx(lampy_value, rel=1e-12)
    assert float(found.group(2)) == pytest.approx(numerical, rel=1e-7)


def test_report_picks_the_worst_index() -> None:
    """With several wrong elements, the reported index is the one with the largest excess."""

    def d_x(g: np.ndarray, out: np.ndarray, a: np.ndarray) -> None:
        np.add(out, g * 2 * a, out=out)
        out[0, 0] += 0.01
        out[1, 1] += 1.0
        out[0, 2] += 0.1

    with pytest.raises(AssertionError, match=r"index \(1, 1\).*3 of 6 elements fail"):
        check_grad(square_with(d_x), X)


def test_every_output_element_is_checked() -> None:
    """A gradient wrong only through output element 4 is caught (random cotangent)."""

    def d_x(g: np.ndarray, out: np.ndarray, a: np.ndarray) -> None:
        h = g.copy()
        h.reshape(-1)[4] = 0.0
        np.add(out, h * 2 * a, out=out)

    with pytest.raises(AssertionError, match=r"index \(1, 1\)"):
        check_grad(square_with(d_x), X)


@pytest.mark.parametrize("x", [np.array([1, 2]), np.array([True]), [1, 2]])
def test_integer_inputs_are_refused(x: Any) -> None:
    """check_grad of integer or bool inputs raises TypeError asking for float arrays."""
    with pytest.raises(TypeError, match="float"):
        check_grad(lampy.exp, x)


def test_f_must_return_a_variable() -> None:
    """check_grad of an f returning a plain array raises TypeError naming what it got."""
    with pytest.raises(TypeError, match="ndarray"):
        check_grad(lambda x: x.value * 2, X)


# --------------------------------------------------------------------- numerical_grad


def test_numerical_grad_of_a_transposed_input() -> None:
    """numerical_grad is right for a Fortran-ordered (transposed) input array."""
    (g,) = numerical_grad(lambda a: a * a, X.T)
    np.testing.assert_allclose(g, 2 * X.T, rtol=1e-7, atol=1e-8)


def test_check_grad_accepts_a_transposed_input() -> None:
    """check_grad accepts a correct gradient when an input is a transposed array."""
    check_grad(lambda x, y: x @ y, X, X.T)


def test_check_grad_catches_a_missing_gradient_for_a_transposed_input() -> None:
    """check_grad catches a missing gradient when the input is a transposed array."""
    with pytest.raises(AssertionError, match="input 0"):
        check_grad(square_with(lambda g, out, a: None), X.T)


def test_numerical_grad_of_a_strided_input() -> None:
    """numerical_grad is right for a strided (sliced) input array."""
    a = np.arange(12.0).reshape(3, 4)[:, ::2]
    (g,) = numerical_grad(lambda v: v * v, a)
    np.testing.assert_allclose(g, 2 * a, rtol=1e-7, atol=1e-8)


def test_numerical_grad_matches_known_derivatives() -> None:
    """numerical_grad of sum(x**3 * y) is 3x**2*y and x**3, to central-difference accuracy."""
    y = X + 2.0
    gx, gy = numerical_grad(lambda a, b: a * a * a * b, X, y)
    np.testing.assert_allclose(gx, 3 * X**2 * y, rtol=1e-7, atol=1e-8)
    np.testing.assert_allclose(gy, X**3, rtol=1e-7, atol=1e-8)


def test_numerical_grad_applies_the_cotangent() -> None:
    """numerical_grad weights each output element by the cotangent."""
    w = np.arange(6.0).reshape(2, 3)
    (g,) = numerical_grad(lambda a: a * 3.0, X, cotangent=w)
    np.testing.assert_allclose(g, 3.0 * w, rtol=1e-8, atol=1e-8)


def test_numerical_grad_is_float64_and_leaves_inputs_alone() -> None:
    """numerical_grad returns float64 even for float32 inputs and does not modify them."""
    x = X.astype(np.float32)
    before = x.copy()
    (g,) = numerical_grad(lampy.exp, x)
    assert g.dtype == np.float64
    np.testing.assert_array_equal(x, before)
    np.testing.assert_allclose(g, np.exp(x.astype(np.float64)), rtol=1e-6)


# --------------------------------------------------------------------- strategies


@given(st.data())
def test_float_dtypes_gives_float32_or_float64(data: st.DataObject) -> None:
    """float_dtypes() draws float32 or float64."""
    assert data.draw(lst.float_dtypes()) in (np.dtype(np.float32), np.dtype(np.float64))


@given(lst.shapes())
def test_default_shapes_stay_small(shape: tuple[int, ...]) -> None:
    """shapes() gives at most 4 dimensions of at most 5 each (0-d and empty included)."""
    assert len(shape) <= 4
    assert all(0 <= n <= 5 for n in shape)


@given(st.data(), st.integers(0, 3), st.integers(0, 3), st.integers(0, 3), st.integers(0, 4))
def test_shapes_respect_their_bounds(
    data: st.DataObject, min_dims: int, extra_dims: int, min_side: int, extra_side: int
) -> None:
    """shapes(min_dims, max_dims, min_side, max_side) stays within the bounds."""
    max_dims, max_side = min_dims + extra_dims, min_side + extra_side
    shape = data.draw(lst.shapes(min_dims, max_dims, min_side, max_side))
    assert min_dims <= len(shape) <= max_dims
    assert all(min_side <= n <= max_side for n in shape)


@given(lst.arrays())
def test_default_arrays_are_finite_float64_within_ten(a: np.ndarray) -> None:
    """arrays() gives finite float64 arrays with values in [-10, 10]."""
    assert a.dtype == np.float64
    assert a.ndim <= 4
    assert np.all(np.isfinite(a))
    assert np.all((a >= -10.0) & (a <= 10.0))


@given(
    st.data(),
    st.sampled_from([np.float32, np.float64]),
    st.floats(-100, 100),
    st.floats(0.1, 50),
)
def test_arrays_respect_dtype_and_bounds(
    data: st.DataObject, dtype: Any, low: float, width: float
) -> None:
    """arrays(shape, dtype, min_value, max_value) has that dtype, shape and value range."""
    a = data.draw(lst.arrays((3, 2), dtype, min_value=low, max_value=low + width))
    assert a.dtype == dtype
    assert a.shape == (3, 2)
    assert np.all((a >= low) & (a <= low + width))


@given(st.data(), st.sampled_from([np.float32, np.float64]))
def test_arrays_can_exclude_their_bounds(data: st.DataObject, dtype: Any) -> None:
    """exclude_min / exclude_max keep the values strictly inside (0, 1)."""
    a = data.draw(
        lst.arrays((4,), dtype, min_value=0.0, max_value=1.0, exclude_min=True, exclude_max=True)
    )
    assert np.all((a > 0.0) & (a < 1.0))


@given(st.data(), st.sampled_from([np.float32, np.float64]))
def test_arrays_avoid_the_given_points(data: st.DataObject, dtype: Any) -> None:
    """avoid= keeps every value at least `margin` away from each point (kinks, poles)."""
    a = data.draw(
        lst.arrays(
            lst.shapes(max_dims=2), dtype, min_value=-2, max_value=2, avoid=(0.0, 1.0), margin=0.1
        )
    )
    assert np.all(np.abs(a.astype(np.float64)) >= 0.1)
    assert np.all(np.abs(a.astype(np.float64) - 1.0) >= 0.1)


@given(st.data())
def test_arrays_take_a_dtype_strategy(data: st.DataObject) -> None:
    """arrays(dtype=float_dtypes()) draws the dtype too."""
    a = data.draw(lst.arrays((2,), lst.float_dtypes()))
    assert a.dtype in (np.dtype(np.float32), np.dtype(np.float64))


@given(st.data(), st.integers(1, 4))
def test_broadcastable_shapes_broadcast_together(data: st.DataObject, n: int) -> None:
    """broadcastable_shapes(n) gives n shapes numpy can broadcast together."""
    shapes = data.draw(lst.broadcastable_shapes(num_shapes=n, max_dims=3))
    assert len(shapes) == n
    np.broadcast_shapes(*shapes)
    assert all(len(s) <= 3 for s in shapes)


@given(st.data(), lst.shapes(max_dims=4, min_side=1, max_side=3))
def test_axes_are_valid_for_numpy(data: st.DataObject, shape: tuple[int, ...]) -> None:
    """axes(ndim) gives None, an int or a tuple of distinct axes valid for numpy reductions."""
    axis = data.draw(lst.axes(len(shape)))
    if isinstance(axis, tuple):
        assert len({a % len(shape) for a in axis}) == len(axis)
    np.sum(np.zeros(shape), axis=axis)


@given(st.data(), st.integers(0, 4))
def test_axes_options_can_be_turned_off(data: st.DataObject, ndim: int) -> None:
    """allow_none=False never gives None and allow_tuple=False never gives a tuple."""
    axis = data.draw(lst.axes(ndim, allow_none=False, allow_tuple=False))
    if ndim == 0:
        assert axis == ()
    else:
        assert isinstance(axis, int)
        assert -ndim <= axis < ndim


@given(st.data(), lst.shapes(max_dims=3))
def test_basic_indices_are_valid_for_numpy(data: st.DataObject, shape: tuple[int, ...]) -> None:
    """basic_indices(shape) can index an array of that shape."""
    index = data.draw(lst.basic_indices(shape))
    np.zeros(shape)[index]


@given(st.data(), lst.shapes(min_dims=1, max_dims=3, min_side=1))
def test_integer_array_indices_are_valid_for_numpy(
    data: st.DataObject, shape: tuple[int, ...]
) -> None:
    """integer_array_indices(shape) gives a tuple of integer arrays indexing that shape."""
    index = data.draw(lst.integer_array_indices(shape))
    assert isinstance(index, tuple)
    assert all(np.asarray(i).dtype.kind == "i" for i in index)
    np.zeros(shape)[index]


@given(st.data(), lst.shapes(max_dims=3))
def test_index_expressions_are_valid_for_numpy_and_lampy(
    data: st.DataObject, shape: tuple[int, ...]
) -> None:
    """index_expressions(shape) can index a numpy array and a Variable of that shape alike."""
    index = data.draw(lst.index_expressions(shape))
    a = np.arange(float(np.prod(shape))).reshape(shape)
    expected = a[index]
    with lampy.Scope():
        np.testing.assert_array_equal(lampy.param(a)[index].value, expected)
