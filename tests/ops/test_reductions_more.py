"""var, std, prod, amax/amin/max/min, argmax/argmin, logsumexp, cumsum, cumprod and
average: every axis combination, the conventions at kinks and ties checked exactly,
zeros in products, 0-d and empty inputs, keyword variants and errors."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy.ops._cumulative import cumprod, cumsum
from lampy.ops._extreme_reductions import amax, amin, argmax, argmin, logsumexp
from lampy.ops._extreme_reductions import max as lmax
from lampy.ops._extreme_reductions import min as lmin
from lampy.ops._reductions import average, prod, std, var
from lampy.testing import check_grad

SHAPE = (2, 3, 4)
ALL_AXES = (
    [None]
    + [combo for r in range(0, 4) for combo in itertools.combinations(range(3), r)]
    + [-1, -2, (0, -1), (-3, -2, -1), (2, 0)]
)
# Distinct values at least 1 apart (no ties to straddle) with both signs.
DISTINCT = np.random.default_rng(1).permutation(24).reshape(SHAPE) - 11.5
SMOOTH = np.random.default_rng(0).uniform(-2, 2, SHAPE)


def _slice_len(axis: Any) -> int:
    axes = range(3) if axis is None else (axis,) if isinstance(axis, int) else axis
    return int(np.prod([SHAPE[ax] for ax in axes]))


# name -> (lampy function, numpy reference, input)
REDUCTIONS: dict[str, tuple[Callable[..., Any], Callable[..., Any], np.ndarray]] = {
    "var": (var, np.var, SMOOTH),
    "var_ddof1": (
        lambda x, **kw: var(x, ddof=1, **kw),
        lambda x, **kw: np.var(x, ddof=1, **kw),
        SMOOTH,
    ),
    "std": (std, np.std, DISTINCT),
    "prod": (prod, np.prod, SMOOTH),
    "amax": (amax, np.amax, DISTINCT),
    "amin": (amin, np.amin, DISTINCT),
    "max": (lmax, np.max, DISTINCT),
    "min": (lmin, np.min, DISTINCT),
    "logsumexp": (
        logsumexp,
        lambda x, axis=None, keepdims=False: np.log(np.sum(np.exp(x), axis, keepdims=keepdims)),
        SMOOTH,
    ),
    "average": (average, np.average, SMOOTH),
}


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize(
    ("name", "axis"),
    [
        pytest.param(name, axis, id=f"{name}-{axis}")
        for name in REDUCTIONS
        for axis in ALL_AXES
        if name != "var_ddof1" or _slice_len(axis) > 1  # ddof=1 needs two elements
    ],
)
def test_every_axis_combination(name: str, axis: Any, keepdims: bool) -> None:
    """Each reduction matches numpy and differentiates correctly over every axis subset."""
    fn, ref, a = REDUCTIONS[name]
    with lampy.Scope():
        out = fn(lampy.param(a), axis=axis, keepdims=keepdims)
        expected = ref(a, axis=axis, keepdims=keepdims)
        assert out.shape == np.shape(expected)
        np.testing.assert_allclose(out.value, expected, rtol=1e-12)
    check_grad(lambda x: fn(x, axis=axis, keepdims=keepdims), a)


@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -2, -3])
@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
def test_cumulative_every_axis(name: str, axis: Any) -> None:
    """cumsum and cumprod match numpy (axis None flattens) and differentiate correctly."""
    fn = {"cumsum": cumsum, "cumprod": cumprod}[name]
    with lampy.Scope():
        out = fn(lampy.param(SMOOTH), axis=axis)
        np.testing.assert_allclose(out.value, getattr(np, name)(SMOOTH, axis=axis), rtol=1e-12)
    check_grad(lambda x: fn(x, axis=axis), SMOOTH)


@pytest.mark.parametrize("keepdims", [False, True])
@pytest.mark.parametrize("axis", [None, 0, 1, 2, -1, -3])
@pytest.mark.parametrize("name", ["argmax", "argmin"])
def test_arg_extremes_every_axis(name: str, axis: Any, keepdims: bool) -> None:
    """argmax/argmin equal numpy's result, as plain numpy integers, never Variables."""
    fn = {"argmax": argmax, "argmin": argmin}[name]
    with lampy.Scope():
        x = lampy.param(DISTINCT)
        got = fn(x, axis=axis, keepdims=keepdims)
    expected = getattr(np, name)(DISTINCT, axis=axis, keepdims=keepdims)
    assert not isinstance(got, lampy.Variable)
    assert type(got) is type(expected) and got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


# --------------------------------------------------------------------- ties, kinks


def _grad(fn: Callable[..., Any], a: Any, seed: Any = None) -> np.ndarray:
    with lampy.Scope():
        x = lampy.param(np.asarray(a, dtype=np.float64))
        y = fn(x)
        y.backward(None if seed is None else np.asarray(seed, dtype=y.dtype))
        assert x.grad is not None
        return x.grad.copy()


@pytest.mark.parametrize(("fn", "big"), [(amax, 3.0), (lmax, 3.0), (amin, -3.0), (lmin, -3.0)])
def test_ties_share_the_gradient_equally(fn: Callable[..., Any], big: float) -> None:
    """Tied extremes split the gradient equally: 1/2 each for two, 1/3 each for three."""
    np.testing.assert_array_equal(_grad(fn, [1.0, big, big]), [0, 0.5, 0.5])
    np.testing.assert_array_equal(
        _grad(lambda x: fn(x, axis=1), [[big, big, big], [0, big, 1]], [3.0, 2.0]),
        [[1, 1, 1], [0, 2, 0]],
    )


def test_ties_with_initial_and_where() -> None:
    """A tie with ``initial`` takes a share; a larger ``initial`` or a mask gives 0."""
    np.testing.assert_array_equal(_grad(lambda x: amax(x, initial=3.0), [3.0, 1.0]), [0.5, 0])
    np.testing.assert_array_equal(_grad(lambda x: amax(x, initial=5.0), [3.0, 1.0]), [0, 0])
    mask = np.array([[True, False], [False, False]])
    g = _grad(lambda x: amax(x, axis=1, initial=-9.0, where=mask), [[1.0, 7.0], [4.0, 2.0]], [1, 1])
    np.testing.assert_array_equal(g, [[1, 0], [0, 0]])
    with lampy.Scope():
        v = amax(lampy.param([[1.0, 7.0], [4.0, 2.0]]), axis=1, initial=-9.0, where=mask)
        np.testing.assert_array_equal(v.value, [1.0, -9.0])


def test_nan_takes_the_extreme_gradient() -> None:
    """A nan makes the maximum nan, and the nan entries share the slice's gradient."""
    g = _grad(lambda x: amax(x, axis=1), [[1.0, np.nan, 5.0], [np.nan, np.nan, 0.0]], [1, 2])
    np.testing.assert_array_equal(g, [[0, 1, 0], [1, 1, 0]])


def test_std_of_constant_slice_has_zero_gradient() -> None:
    """std is not differentiable at a constant slice; its gradient there is 0 (PyTorch)."""
    g = _grad(lambda x: std(x, axis=1), [[2.0, 2.0, 2.0], [1.0, 2.0, 3.0]], [1.0, 1.0])
    np.testing.assert_array_equal(g[0], [0, 0, 0])
    np.testing.assert_allclose(g[1], np.array([-1, 0, 1]) / np.sqrt(2 / 3) / 3)
    np.testing.assert_array_equal(_grad(lambda x: var(x), [4.0, 4.0]), [0, 0])


def test_std_with_too_few_elements_is_nan_like_numpy() -> None:
    """std with ddof >= n warns and is nan as in numpy; its gradient is nan too."""
    with lampy.Scope():
        x = lampy.param(np.array([1.0]))
        with pytest.warns(RuntimeWarning):
            y = std(x, ddof=1)
        assert np.isnan(y.item())
        y.backward()
        assert x.grad is not None and np.isnan(x.grad).all()


@pytest.mark.parametrize(
    ("a", "expected"),
    [
        ([2.0, 0.0, 3.0], [0.0, 6.0, 0.0]),
        ([2.0, 0.0, 3.0, 0.0], [0.0, 0.0, 0.0, 0.0]),
        ([0.0], [1.0]),
        ([-0.0, 4.0], [4.0, 0.0]),
    ],
)
def test_prod_gradient_with_zeros_is_exact(a: list[float], expected: list[float]) -> None:
    """prod's gradient is the product of the others at a lone zero, 0 with two zeros."""
    g = _grad(prod, a)
    np.testing.assert_array_equal(g, expected)


def test_prod_mixed_slices_with_zeros() -> None:
    """Slices with no, one and two zeros get their exact gradients side by side."""
    a = np.array([[2.0, 3.0, 4.0], [2.0, 0.0, 5.0], [0.0, 7.0, 0.0]])
    g = _grad(lambda x: prod(x, axis=1), a, [1.0, 2.0, 3.0])
    np.testing.assert_array_equal(g, [[12, 8, 6], [0, 20, 0], [0, 0, 0]])
    check_grad(lambda x: prod(x, axis=0), a)
    check_grad(lambda x: prod(x, axis=1, keepdims=True), a)


def test_cumprod_gradient_with_zeros_matches_pytorch() -> None:
    """cumprod's gradient with several zeros in a slice equals PyTorch's: [1, 22, 0, 0, 0]."""
    g = _grad(cumprod, [2.0, 0.0, 3.0, 0.0, 5.0], [1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(g, [1, 22, 0, 0, 0])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_cumprod_zeros_in_every_position(axis: Any) -> None:
    """cumprod differentiates correctly with zeros first, last, repeated and absent."""
    a = np.array(
        [[0.0, 2.0, 3.0, 0.5], [1.5, 2.0, 3.0, 0.0], [0.0, 0.0, 2.0, 3.0], [1.0, -2.0, 0.5, 3.0]]
    )
    check_grad(lambda x: cumprod(x, axis=axis), a)
    check_grad(lambda x: cumprod(x, axis=axis), a.T.copy())


def test_logsumexp_is_stable_for_large_and_infinite_inputs() -> None:
    """logsumexp does not overflow at 1000, ignores -inf entries, and is -inf or +inf
    for all -inf or any +inf; the gradient follows PyTorch's conventions there."""
    with lampy.Scope():
        x = lampy.param(np.array([1000.0, 1000.0]))
        y = logsumexp(x)
        np.testing.assert_allclose(y.item(), 1000 + np.log(2))
        y.backward()
        np.testing.assert_allclose(x.grad, [0.5, 0.5])
    ninf = -np.inf
    g = _grad(lambda v: logsumexp(v, axis=1), [[ninf, 0.0, 0.0], [ninf, ninf, ninf]], [1, 1])
    np.testing.assert_array_equal(g[0], [0, 0.5, 0.5])
    assert np.isnan(g[1]).all()
    with lampy.Scope():
        v = logsumexp(lampy.param([[ninf, ninf], [np.inf, 0.0]]), axis=1)
        np.testing.assert_array_equal(v.value, [ninf, np.inf])


def test_logsumexp_of_empty_is_minus_inf() -> None:
    """The log of an empty sum is -inf, silently, and the gradient is empty."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 3)))
        y = logsumexp(x, axis=0)
        np.testing.assert_array_equal(y.value, [-np.inf] * 3)
        assert logsumexp(x).item() == -np.inf
        y.backward(np.ones(3))
        assert x.grad is not None and x.grad.shape == (0, 3)


# -------------------------------------------------------------------- 0-d and empty

ZERO_D_OPS: dict[str, Callable[..., Any]] = {
    "var": var,
    "std": std,
    "prod": prod,
    "amax": amax,
    "amin": amin,
    "logsumexp": logsumexp,
    "cumsum": cumsum,
    "cumprod": cumprod,
    "average": average,
}


@pytest.mark.parametrize("name", list(ZERO_D_OPS))
def test_zero_d_input(name: str) -> None:
    """A 0-d float32 input works: numpy's shape and dtype, a float32 gradient."""
    fn = ZERO_D_OPS[name]
    ref = {"logsumexp": lambda a: np.log(np.exp(a))}.get(name, getattr(np, name, None))
    with lampy.Scope():
        x = lampy.param(np.float32(1.5))
        y = fn(x)
        expected = np.asarray(ref(np.float32(1.5)))
        assert y.shape == expected.shape and y.dtype == expected.dtype == np.float32
        np.testing.assert_allclose(y.value, expected)
        y.backward(np.ones(y.shape, np.float32))
        assert x.grad is not None and x.grad.dtype == np.float32
    check_grad(fn, np.float64(1.5))


@pytest.mark.parametrize("name", ["cumsum", "cumprod"])
@pytest.mark.parametrize("axis", [0, -1])
def test_cumulative_zero_d_with_axis(name: str, axis: int) -> None:
    """A 0-d input with axis 0 or -1 gives shape (1,), as numpy treats it as 1-d."""
    fn = {"cumsum": cumsum, "cumprod": cumprod}[name]
    with lampy.Scope():
        y = fn(lampy.param(2.0), axis=axis)
        assert y.shape == (1,)
    check_grad(lambda x: fn(x, axis=axis), np.float64(2.0))


@pytest.mark.parametrize("name", ["prod", "cumsum", "cumprod", "logsumexp"])
def test_empty_input(name: str) -> None:
    """Empty inputs reduce as numpy does (prod 1, empty cumulative results) and
    backpropagate an empty gradient."""
    fn = {"prod": prod, "cumsum": cumsum, "cumprod": cumprod, "logsumexp": logsumexp}[name]
    with lampy.Scope():
        x = lampy.param(np.zeros((2, 0)))
        y = fn(x, axis=1)
        if name == "prod":
            np.testing.assert_array_equal(y.value, [1.0, 1.0])
        assert y.shape == ((2, 0) if name.startswith("cum") else (2,))
        y.backward(np.ones(y.shape))
        assert x.grad is not None and x.grad.shape == (2, 0)
        np.testing.assert_array_equal(x.grad, np.zeros((2, 0)))


def test_var_of_empty_slice_warns_like_numpy() -> None:
    """var over an empty axis is nan with numpy's RuntimeWarning; backward is silent."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 2)))
        with pytest.warns(RuntimeWarning):
            y = var(x, axis=0)
        assert np.isnan(y.value).all()
        y.backward(np.ones(2))
        assert x.grad is not None and x.grad.shape == (0, 2)


@pytest.mark.parametrize("fn", [amax, amin, lmax, lmin])
def test_extreme_of_empty_is_a_shape_error(fn: Callable[..., Any]) -> None:
    """An empty slice without ``initial`` raises ShapeError naming the op (not numpy's)."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 3)))
        with pytest.raises(lampy.ShapeError, match=rf"^{fn.__name__}: cannot reduce an empty"):
            fn(x)
        with pytest.raises(lampy.ShapeError, match="pass initial="):
            fn(x, axis=0)
        assert fn(x, axis=1).shape == (0,)  # nothing to reduce into: fine, as numpy
        np.testing.assert_array_equal(fn(x, axis=0, initial=-1.0).value, [-1.0] * 3)


def test_extreme_where_without_initial_is_a_shape_error() -> None:
    """``where`` needs ``initial`` (numpy's rule); the error names the op and the fix."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 2)))
        with pytest.raises(lampy.ShapeError, match="amin: where= needs initial="):
            amin(x, axis=1, where=np.array([True, False]))


@pytest.mark.parametrize("fn", [argmax, argmin])
def test_arg_extreme_of_empty_is_a_shape_error(fn: Callable[..., Any]) -> None:
    """argmax/argmin of an empty array raise ShapeError naming the op."""
    with pytest.raises(lampy.ShapeError, match=rf"^{fn.__name__}: cannot reduce an empty"):
        fn(np.zeros((0, 3)))


def test_average_empty_and_zero_weights() -> None:
    """average of an empty array is nan with numpy's warning; weights summing to zero
    raise ZeroDivisionError naming the op."""
    with lampy.Scope():
        with pytest.warns(RuntimeWarning):
            assert np.isnan(average(lampy.param(np.zeros(0))).item())
        with pytest.raises(ZeroDivisionError, match="average: the weights sum to zero"):
            average(lampy.param([1.0, 2.0]), weights=np.array([1.0, -1.0]))


# --------------------------------------------------------------------------- average


def test_average_is_differentiable_in_values_and_weights() -> None:
    """The weighted average differentiates in both a and the weights, in every layout."""
    rng = np.random.default_rng(3)
    w_full = rng.uniform(0.5, 2, SHAPE)
    check_grad(lambda x, w: average(x, weights=w), SMOOTH, w_full)
    check_grad(lambda x, w: average(x, axis=(0, 2), weights=w, keepdims=True), SMOOTH, w_full)
    check_grad(lambda x, w: average(x, axis=1, weights=w), SMOOTH, rng.uniform(0.5, 2, 3))
    check_grad(lambda x, w: average(x, axis=(2, 0), weights=w), SMOOTH, rng.uniform(0.5, 2, (4, 2)))


def test_average_weights_follow_the_axis_order() -> None:
    """Weights for ``axis=(2, 0)`` have shape (4, 2) and match numpy's average."""
    w = np.arange(1.0, 9.0).reshape(4, 2)
    with lampy.Scope():
        got = average(lampy.param(SMOOTH), axis=(2, 0), weights=lampy.param(w))
        np.testing.assert_allclose(got.value, np.average(SMOOTH, axis=(2, 0), weights=w))


def test_average_returned() -> None:
    """returned=True gives (average, sum of weights broadcast to its shape), both
    Variables; the sum is differentiable in the weights."""
    with lampy.Scope():
        x, w = lampy.param(SMOOTH), lampy.param(np.arange(1.0, 4.0))
        avg, total = average(x, axis=1, weights=w, returned=True)
        e_avg, e_total = np.average(SMOOTH, axis=1, weights=w.value, returned=True)
        np.testing.assert_allclose(avg.value, e_avg)
        np.testing.assert_array_equal(total.value, e_total)
        _, count = average(x, axis=(0, 2), returned=True)
        _, e_count = np.average(SMOOTH, axis=(0, 2), returned=True)
        np.testing.assert_array_equal(count.value, e_count)
        assert not count.needs_grad and count.dtype == e_count.dtype
        total.backward(np.ones((2, 4)))
        np.testing.assert_array_equal(w.grad, [8.0, 8.0, 8.0])
    check_grad(lambda w: average(SMOOTH, axis=(2, 0), weights=w, returned=True)[1], np.ones((4, 2)))


def test_average_weight_shape_errors() -> None:
    """Weights fitting neither a's shape nor its shape along axis raise ShapeError."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        with pytest.raises(lampy.ShapeError, match=r"average: weights of shape \(3,\) differ"):
            average(x, weights=np.ones(3))
        with pytest.raises(lampy.ShapeError, match=r"the shape \(2,\) of a along that axis"):
            average(x, axis=0, weights=np.ones(3))


# ---------------------------------------------------------- dtypes, keywords, errors


@pytest.mark.parametrize(
    "fn",
    [var, std, prod, amax, amin, logsumexp, cumsum, cumprod, average],
    ids=lambda f: f.__name__,
)
def test_float32_in_float32_out(fn: Callable[..., Any]) -> None:
    """A float32 input gives a float32 value and a float32 gradient."""
    with lampy.Scope():
        x = lampy.param(SMOOTH.astype(np.float32))
        y = fn(x, axis=1)
        assert y.dtype == np.float32
        y.backward(np.ones(y.shape, np.float32))
        assert x.grad is not None and x.grad.dtype == np.float32
    check_grad(lambda v: fn(v, axis=1), SMOOTH.astype(np.float32))


@pytest.mark.parametrize("fn", [var, std, prod, cumsum, cumprod], ids=lambda f: f.__name__)
def test_dtype_argument(fn: Callable[..., Any]) -> None:
    """dtype=float64 on a float32 param computes in float64, the gradient stays float32."""
    a = SMOOTH.astype(np.float32)
    with lampy.Scope():
        x = lampy.param(a)
        y = fn(x, axis=1, dtype=np.float64)
        expected = getattr(np, fn.__name__)(a, axis=1, dtype=np.float64)
        assert y.dtype == np.float64
        np.testing.assert_allclose(y.value, expected, rtol=1e-12)
        y.backward(np.ones(y.shape))
        assert x.grad is not None and x.grad.dtype == np.float32
    check_grad(lambda v: fn(v, axis=1, dtype=np.float64), a)


@pytest.mark.parametrize("fn", [var, std, prod, cumsum, cumprod], ids=lambda f: f.__name__)
def test_integer_dtype_is_refused(fn: Callable[..., Any]) -> None:
    """An integer dtype= would truncate, so it raises DTypeError (a TypeError) naming the op."""
    with lampy.Scope(), pytest.raises(lampy.DTypeError, match=rf"{fn.__name__}: dtype=int64"):
        fn(lampy.param(SMOOTH), dtype=np.int64)


def test_options_after_numpys_out_are_keyword_only() -> None:
    """ddof and keepdims are keyword-only, so numpy's positional ``out`` slot cannot
    silently become ddof."""
    with lampy.Scope():
        x = lampy.param(SMOOTH)
        with pytest.raises(TypeError):
            var(x, 0, None, 1)  # type: ignore[misc]
        with pytest.raises(TypeError):
            amax(x, 0, None)  # type: ignore[misc]
        np.testing.assert_allclose(std(x, 0, ddof=1).value, np.std(SMOOTH, 0, ddof=1))


@pytest.mark.parametrize(
    "fn",
    [var, std, prod, amax, amin, logsumexp, average, cumsum, cumprod, argmax, argmin],
    ids=lambda f: f.__name__,
)
def test_bad_axis_names_the_op(fn: Callable[..., Any]) -> None:
    """An out-of-range axis raises ShapeError naming the op."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        with pytest.raises(lampy.ShapeError, match=rf"^{fn.__name__}: axis 2 is out of bounds"):
            fn(x, axis=2)


@pytest.mark.parametrize("fn", [cumsum, cumprod, argmax, argmin], ids=lambda f: f.__name__)
def test_single_axis_ops_refuse_tuples(fn: Callable[..., Any]) -> None:
    """Ops along one axis take None or an int; anything else raises a LampyError that is
    also a TypeError, naming the op."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        with pytest.raises(lampy.LampyError, match=rf"^{fn.__name__}: axis must be None or an int"):
            fn(x, axis=(0, 1))
        with pytest.raises(TypeError, match=rf"^{fn.__name__}: axis must be None or an int"):
            fn(x, axis=1.0)


@pytest.mark.parametrize("fn", [var, std, prod, amax, amin, logsumexp, average])
def test_bad_axis_type_is_a_lampy_type_error(fn: Callable[..., Any]) -> None:
    """A float or string axis raises a LampyError that is also a TypeError, naming the op."""
    with lampy.Scope():
        x = lampy.param(np.ones((2, 3)))
        for axis in (1.0, "0", (0, 1.0)):
            with pytest.raises(lampy.LampyError, match=rf"^{fn.__name__}: axis must be None"):
                fn(x, axis=axis)
            with pytest.raises(TypeError):
                fn(x, axis=axis)


def test_constants_need_no_gradient() -> None:
    """On plain arrays the reductions return Variables that need no gradient."""
    with lampy.Scope():
        for fn in (var, std, prod, amax, logsumexp, cumsum, cumprod, average):
            y = fn(SMOOTH, axis=1)
            assert not y.needs_grad
            np.testing.assert_allclose(y.value, fn(lampy.param(SMOOTH), axis=1).value)


def test_variable_used_several_times() -> None:
    """A Variable feeding several reductions (and weighting itself) gets the summed
    gradient of all uses."""

    def f(x: lampy.Variable) -> lampy.Variable:
        parts = [
            lampy.sum(amax(x, axis=0)),
            lampy.sum(prod(x, axis=1)),
            lampy.sum(cumprod(x, axis=1)),
            lampy.sum(cumsum(x)),
            logsumexp(x),
            lampy.sum(std(x, axis=1)),
            lampy.sum(var(x, axis=0, ddof=1)),
            lampy.sum(average(x, axis=1, weights=x * x + 1.0)),
        ]
        total = parts[0]
        for p in parts[1:]:
            total = total + p
        return total

    check_grad(f, DISTINCT[0] / 4)


def test_logsumexp_of_integers_is_float64() -> None:
    """logsumexp of an integer array gives float64 (and needs no gradient)."""
    with lampy.Scope():
        y = logsumexp(np.array([0, 0]))
        assert y.dtype == np.float64 and y.item() == pytest.approx(np.log(2))
