"""Unary elementwise ops: conventions at kinks and domain edges, clip's arguments and
ties, dtypes, 0-d and empty inputs, constants and broadcasting."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy._errors import ShapeError
from lampy.ops._exp_log import exp2, expm1, log1p, log2, log10
from lampy.ops._hyperbolic import arccosh, arcsinh, arctanh, cosh, sinh
from lampy.ops._magnitude import abs, absolute, clip, positive
from lampy.ops._powers_roots import cbrt, reciprocal, sqrt, square
from lampy.ops._rounding import around, ceil, floor, round, sign, trunc
from lampy.ops._trig import arccos, arcsin, arctan, cos, sin, tan
from lampy.testing import check_grad

# (lampy op, numpy reference, a point inside the domain)
UNARY: list[tuple[Callable[..., Any], Callable[..., Any], float]] = [
    (positive, np.positive, 0.5),
    (abs, np.abs, 0.5),
    (sign, np.sign, 0.5),
    (sqrt, np.sqrt, 0.5),
    (cbrt, np.cbrt, 0.5),
    (square, np.square, 0.5),
    (reciprocal, np.reciprocal, 0.5),
    (exp2, np.exp2, 0.5),
    (expm1, np.expm1, 0.5),
    (log2, np.log2, 0.5),
    (log10, np.log10, 0.5),
    (log1p, np.log1p, 0.5),
    (sin, np.sin, 0.5),
    (cos, np.cos, 0.5),
    (tan, np.tan, 0.5),
    (arcsin, np.arcsin, 0.5),
    (arccos, np.arccos, 0.5),
    (arctan, np.arctan, 0.5),
    (sinh, np.sinh, 0.5),
    (cosh, np.cosh, 0.5),
    (arcsinh, np.arcsinh, 0.5),
    (arccosh, np.arccosh, 1.5),
    (arctanh, np.arctanh, 0.5),
    (floor, np.floor, 0.5),
    (ceil, np.ceil, 0.5),
    (round, np.round, 0.25),
    (trunc, np.trunc, 0.5),
    (lambda x: clip(x, 0.0, 1.0), lambda a: np.clip(a, 0.0, 1.0), 0.5),
]
UNARY_IDS = [fn.__name__ for fn, _, _ in UNARY[:-1]] + ["clip"]
PIECEWISE_CONSTANT = [sign, floor, ceil, round, trunc]


@pytest.mark.parametrize(("fn", "ref", "point"), UNARY, ids=UNARY_IDS)
@pytest.mark.parametrize("shape", [(), (0,), (2, 0), (3,)])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_dtype_and_shape_kept(
    fn: Callable[..., Any], ref: Callable[..., Any], point: float, shape: tuple, dtype: type
) -> None:
    """0-d, empty and 1-d inputs of either float dtype give numpy's value, dtype and
    shape, and a gradient of the input's dtype and shape."""
    a = np.full(shape, point, dtype)
    with lampy.Scope():
        x = lampy.param(a)
        y = fn(x)
        expected = np.asarray(ref(a))
        assert y.dtype == expected.dtype == dtype
        assert y.shape == expected.shape
        np.testing.assert_array_equal(y.value, expected)
        y.backward(np.ones(shape, dtype))
        assert x.grad is not None and x.grad.dtype == dtype and x.grad.shape == shape


@pytest.mark.parametrize("fn", PIECEWISE_CONSTANT, ids=lambda f: f.__name__)
def test_piecewise_constant_gradient_is_exactly_zero(fn: Callable[..., Any]) -> None:
    """sign, floor, ceil, round and trunc record an op whose gradient is exactly 0,
    at their jumps (0, integers, halves) too."""
    a = np.array([-1.5, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.5], np.float32)
    with lampy.Scope():
        x = lampy.param(a)
        y = fn(x)
        assert y.needs_grad and y.op is not None and y.op.name == fn.__name__
        y.backward(np.full(a.shape, 3.0, np.float32))
        np.testing.assert_array_equal(x.grad, np.zeros_like(a))
        assert x.grad is not None and x.grad.dtype == np.float32


@pytest.mark.parametrize("fn", PIECEWISE_CONSTANT, ids=lambda f: f.__name__)
def test_piecewise_constant_leaves_other_paths_intact(fn: Callable[..., Any]) -> None:
    """``fn(x) * x`` differentiates to ``fn(x)``: the zero path adds nothing to the other."""
    a = np.array([-1.7, -0.2, 0.3, 2.6])
    with lampy.Scope():
        x = lampy.param(a)
        y = fn(x) * x
        y.sum().backward()
        np.testing.assert_array_equal(x.grad, getattr(np, fn.__name__)(a))


def test_abs_gradient_at_zero_is_zero() -> None:
    """abs'(x) is sign(x): -1, 0 at both zeros, 1."""
    with lampy.Scope():
        x = lampy.param([-2.0, -0.0, 0.0, 3.0])
        abs(x).sum().backward()
        np.testing.assert_array_equal(x.grad, [-1.0, 0.0, 0.0, 1.0])


def test_aliases_are_the_same_functions() -> None:
    """absolute is abs and around is round, as in numpy."""
    assert absolute is abs
    assert around is round


# (op, input, gradient with a unit seed) at the edges of the domains
EDGES: list[tuple[Callable[..., Any], float, float]] = [
    (sqrt, 0.0, np.inf),
    (sqrt, -1.0, np.nan),
    (cbrt, 0.0, np.inf),
    (reciprocal, 0.0, -np.inf),
    (log2, 0.0, np.inf),
    (log10, 0.0, np.inf),
    (log1p, -1.0, np.inf),
    (arcsin, 1.0, np.inf),
    (arcsin, -1.0, np.inf),
    (arcsin, 2.0, np.nan),
    (arccos, 1.0, -np.inf),
    (arccos, -1.0, -np.inf),
    (arccosh, 1.0, np.inf),
    (arccosh, 0.5, np.nan),
    (arctanh, 1.0, np.inf),
    (arctanh, -1.0, np.inf),
]


@pytest.mark.parametrize(
    ("fn", "point", "grad"), EDGES, ids=lambda v: str(getattr(v, "__name__", v))
)
def test_domain_edges_follow_numpy(fn: Callable[..., Any], point: float, grad: float) -> None:
    """At a domain edge the value and its warnings are numpy's, and backward gives
    inf or nan without raising (even under np.errstate(all='raise'))."""
    with warnings.catch_warnings(record=True) as numpy_warned:
        warnings.simplefilter("always")
        expected = getattr(np, fn.__name__)(np.float64(point))
    with lampy.Scope():
        x = lampy.param(point)
        with warnings.catch_warnings(record=True) as lampy_warned:
            warnings.simplefilter("always")
            y = fn(x)
        assert [w.category for w in lampy_warned] == [w.category for w in numpy_warned]
        np.testing.assert_array_equal(y.value, expected)
        with np.errstate(all="raise"):
            y.backward()
        np.testing.assert_array_equal(x.grad, grad)


def test_same_variable_used_several_times() -> None:
    """A Variable feeding several unary ops gets the sum of their gradients."""
    a = np.array([0.3, -0.7, 0.9])
    check_grad(lambda x: sin(x) * cos(x) + square(x) * tan(x) - arctan(x) / cosh(x), a)
    check_grad(lambda x: sqrt(square(x) + 1.0) + clip(x, -0.5, 0.5) * abs(x), a)


def test_constant_inputs_give_constants() -> None:
    """Arrays, Python numbers and integer Variables give Variables that need no gradient,
    with numpy's dtypes; the caller's array stays writable."""
    a = np.array([1.0, 4.0])
    with lampy.Scope():
        for y in (positive(a), sqrt(a), clip(a, None, None), clip(a, 0.0, 2.0), round(a)):
            assert not y.needs_grad
        a[0] = 2.0  # the ops copied, never took ownership of the caller's array
        s = sin(0.5)
        assert s.shape == () and s.dtype == np.float64 and not s.needs_grad
        k = lampy.const(np.array([1, 4, -3]))
        assert sqrt(abs(k)).dtype == np.float64 and not sqrt(abs(k)).needs_grad
        assert floor(k).dtype == np.floor(np.array([1, 4, -3])).dtype
        np.testing.assert_array_equal(reciprocal(lampy.const([1, 2])).value, [1, 0])
        np.testing.assert_array_equal(abs(k).value, [1, 4, 3])


def test_round_decimals_spellings() -> None:
    """round takes decimals positionally or by keyword, negative ones too, as numpy."""
    a = np.array([1.234, -15.0, 26.5, 0.05])
    with lampy.Scope():
        x = lampy.param(a)
        np.testing.assert_array_equal(round(x, 1).value, np.round(a, 1))
        np.testing.assert_array_equal(round(x, decimals=2).value, np.round(a, decimals=2))
        np.testing.assert_array_equal(around(x, -1).value, np.around(a, -1))
        np.testing.assert_array_equal(round(x).value, np.round(a))


# ------------------------------------------------------------------------------ clip
def _clip_grads(x: Any, lo: Any, hi: Any) -> tuple[Any, ...]:
    """Value and gradients (None for a non-Variable) of clip with a unit seed."""
    with lampy.Scope():
        vs = [lampy.param(v) if isinstance(v, list) else v for v in (x, lo, hi)]
        y = clip(*vs)
        expected = np.clip(
            *[np.asarray(v, float) if isinstance(v, list) else v for v in (x, lo, hi)]
        )
        np.testing.assert_array_equal(y.value, expected)
        y.backward(np.ones(y.shape))
        return tuple(v.grad.copy() if isinstance(v, lampy.Variable) else None for v in vs)


def test_clip_constant_bounds_closed_interval() -> None:
    """With number bounds the gradient reaches x on the closed interval [a_min, a_max]."""
    gx, _, _ = _clip_grads([0.0, 1.0, 1.5, 2.0, 3.0], 1.0, 2.0)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0, 1.0, 0.0])


def test_clip_ties_between_value_and_bounds() -> None:
    """Each element's gradient goes to exactly one operand: x on ties with a bound, the
    bound x crossed on a degenerate interval, a_max on an empty interval, none for nan."""
    nan = np.nan
    # x == lo < hi, lo < x == hi, x == lo == hi, x < lo == hi, x > lo == hi,
    # then lo > hi with x below, between, above and equal to each, then nans
    x = [1.0, 2.0, 1.0, 0.0, 2.0, 0.0, 1.5, 3.0, 1.0, 2.0, nan, 1.0, 1.0]
    lo = [1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 2.0, 2.0, 1.0, nan, 0.0]
    hi = [2.0, 2.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 2.0, 2.0, nan]
    gx, glo, ghi = _clip_grads(x, lo, hi)
    np.testing.assert_array_equal(gx, [1, 1, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(glo, [0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0])
    np.testing.assert_array_equal(ghi, [0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 0, 0, 0])


def test_clip_one_sided_bounds() -> None:
    """A None bound is no bound: the other bound alone decides, ties going to x."""
    gx, glo, _ = _clip_grads([0.0, 1.0, 2.0], [1.0, 1.0, 1.0], None)
    np.testing.assert_array_equal(gx, [0.0, 1.0, 1.0])
    np.testing.assert_array_equal(glo, [1.0, 0.0, 0.0])
    gx, _, ghi = _clip_grads([0.0, 1.0, 2.0], None, [1.0, 1.0, 1.0])
    np.testing.assert_array_equal(gx, [1.0, 1.0, 0.0])
    np.testing.assert_array_equal(ghi, [0.0, 0.0, 1.0])
    gx, _, _ = _clip_grads([0.0, 5.0], None, None)
    np.testing.assert_array_equal(gx, [1.0, 1.0])


def test_clip_keyword_spellings() -> None:
    """min=/max= keywords work alone or together and equal the positional spelling."""
    a = np.array([-2.0, 0.5, 3.0])
    with lampy.Scope():
        x = lampy.param(a)
        np.testing.assert_array_equal(clip(x, min=0.0).value, np.clip(a, min=0.0))
        np.testing.assert_array_equal(clip(x, max=1.0).value, np.clip(a, max=1.0))
        both = clip(x, min=0.0, max=1.0)
        np.testing.assert_array_equal(both.value, clip(x, 0.0, 1.0).value)
        np.testing.assert_array_equal(clip(x, a_min=0.0, a_max=None).value, np.clip(a, 0.0, None))
        both.sum().backward()
        np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0])


def test_clip_argument_errors_match_numpy() -> None:
    """A single positional bound is a TypeError; positional and keyword bounds together
    are a ValueError; both record nothing."""
    with lampy.Scope() as s:
        x = lampy.param([1.0, 2.0])
        before = len(s)
        with pytest.raises(TypeError, match="clip: missing the positional argument 'a_max'"):
            clip(x, 0.0)
        with pytest.raises(TypeError, match="'a_min'"):
            clip(x, a_max=1.0)
        with pytest.raises(ValueError, match="clip: min= or max= was given"):
            clip(x, 0.0, 1.0, min=0.0)
        assert len(s) == before


def test_clip_broadcasts_both_ways() -> None:
    """Bounds may broadcast x up, and x may broadcast the bounds up; each gradient is
    summed back to its operand's shape."""
    with lampy.Scope():
        x = lampy.param([[0.0], [1.5], [3.0]])  # (3, 1)
        lo = lampy.param([1.0, 2.0])  # (2,)
        y = clip(x, lo, 2.5)
        assert y.shape == (3, 2)
        y.sum().backward()
        np.testing.assert_array_equal(x.grad, [[0.0], [1.0], [0.0]])
        np.testing.assert_array_equal(lo.grad, [1.0, 2.0])
    check_grad(
        lambda x, lo: clip(x, lo, 2.5), np.array([[0.1], [1.6], [3.0]]), np.array([1.0, 2.0])
    )
    check_grad(
        lambda x, hi: clip(x, -1.0, hi),
        np.array([[0.3, -2.0, 1.2], [2.0, 0.5, -0.4]]),
        np.array([[0.8], [0.1]]),
    )


def test_clip_shape_mismatch_names_op_and_shapes() -> None:
    """Bounds that do not broadcast with x raise a ShapeError naming clip and the shapes,
    recording nothing."""
    with lampy.Scope() as s:
        x = lampy.param(np.ones((2, 3)))
        hi = lampy.param([1.0, 2.0])
        before = len(s)
        with pytest.raises(ShapeError, match=r"clip: shapes \(2, 3\) and \(4,\)"):
            clip(x, np.zeros(4), None)
        with pytest.raises(ShapeError, match=r"clip: shapes \(2, 3\) and \(\) and \(2,\)"):
            clip(x, 0.0, hi)
        assert len(s) == before


def test_clip_dtypes() -> None:
    """Python-number bounds keep float32; an integer x with float Variable bounds gives
    numpy's float result and gradients only to the bounds."""
    with lampy.Scope():
        x = lampy.param(np.array([0.5, 2.0], np.float32))
        y = clip(x, 0.0, 1.0)
        assert y.dtype == np.float32
        y.sum().backward()
        assert x.grad is not None and x.grad.dtype == np.float32
        k = lampy.const(np.array([0, 1, 3]))
        lo = lampy.param(0.5)
        hi = lampy.param(2.0)
        z = clip(k, lo, hi)
        assert z.dtype == np.clip(np.array([0, 1, 3]), 0.5, 2.0).dtype
        z.sum().backward()
        assert lo.grad == 1.0 and hi.grad == 1.0


def test_clip_masked_gradient_is_exactly_zero_for_infinite_upstream() -> None:
    """Where an operand takes no gradient it gets exactly 0, even from an inf or nan g."""
    with lampy.Scope():
        x = lampy.param([-1.0, 0.5, 2.0, 3.0])
        lo = lampy.param(0.0)
        y = clip(x, lo, 1.0)
        y.backward(np.array([np.inf, 1.0, np.nan, 2.0]))
        np.testing.assert_array_equal(x.grad, [0.0, 1.0, 0.0, 0.0])
        assert np.isinf(lo.grad)
