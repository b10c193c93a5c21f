"""Activation functions: forward against plain numpy, gradients against finite
differences, PyTorch's conventions at kinks, and stability of softmax/log_softmax."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
import lampy.nn.functional as F
from lampy.nn.functional._activations import (
    celu,
    elu,
    gelu,
    glu,
    hardsigmoid,
    hardswish,
    hardtanh,
    leaky_relu,
    log_sigmoid,
    log_softmax,
    mish,
    relu,
    relu6,
    selu,
    sigmoid,
    silu,
    softmax,
    softplus,
    softsign,
)
from lampy.testing import check_grad
from lampy.testing import strategies as ls

_ALPHA = 1.6732632423543772848170429916717
_SCALE = 1.0507009873554804934193349852946
_erf = np.vectorize(math.erf, otypes=[np.float64])


def _sig(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


# name, lampy function, plain-numpy reference (float64), kinks to keep away from
ELEMENTWISE: list[tuple[str, Callable[[Any], Any], Callable[[np.ndarray], Any], tuple]] = [
    ("relu", relu, lambda x: np.maximum(x, 0), (0.0,)),
    ("relu6", relu6, lambda x: np.clip(x, 0, 6), (0.0, 6.0)),
    ("leaky_relu", leaky_relu, lambda x: np.where(x > 0, x, 0.01 * x), (0.0,)),
    (
        "leaky_relu_0.2",
        lambda v: leaky_relu(v, negative_slope=0.2),
        lambda x: np.where(x > 0, x, 0.2 * x),
        (0.0,),
    ),
    ("elu", elu, lambda x: np.where(x > 0, x, np.expm1(x)), (0.0,)),
    (
        "elu_1.5",
        lambda v: elu(v, alpha=1.5),
        lambda x: np.where(x > 0, x, 1.5 * np.expm1(x)),
        (0.0,),
    ),
    ("selu", selu, lambda x: _SCALE * np.where(x > 0, x, _ALPHA * np.expm1(x)), (0.0,)),
    ("celu", celu, lambda x: np.maximum(0, x) + np.minimum(0, np.expm1(x)), (0.0,)),
    (
        "celu_2",
        lambda v: celu(v, alpha=2.0),
        lambda x: np.maximum(0, x) + np.minimum(0, 2 * np.expm1(x / 2)),
        (0.0,),
    ),
    ("gelu", gelu, lambda x: 0.5 * x * (1 + _erf(x / math.sqrt(2))), ()),
    (
        "gelu_tanh",
        lambda v: gelu(v, approximate="tanh"),
        lambda x: 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
        (),
    ),
    ("silu", silu, lambda x: x / (1 + np.exp(-x)), ()),
    ("mish", mish, lambda x: x * np.tanh(np.log1p(np.exp(x))), ()),
    ("softplus", softplus, lambda x: np.log1p(np.exp(x)), ()),
    (
        "softplus_b2_t5",
        lambda v: softplus(v, beta=2.0, threshold=5.0),
        lambda x: np.where(2 * x > 5, x, np.log1p(np.exp(2 * x)) / 2),
        (2.5,),
    ),
    ("sigmoid", sigmoid, _sig, ()),
    ("log_sigmoid", log_sigmoid, lambda x: np.log(_sig(x)), ()),
    ("hardtanh", hardtanh, lambda x: np.clip(x, -1, 1), (-1.0, 1.0)),
    (
        "hardtanh_-2_3",
        lambda v: hardtanh(v, min_val=-2.0, max_val=3.0),
        lambda x: np.clip(x, -2, 3),
        (-2.0, 3.0),
    ),
    ("hardsigmoid", hardsigmoid, lambda x: np.clip(x / 6 + 0.5, 0, 1), (-3.0, 3.0)),
    ("hardswish", hardswish, lambda x: x * np.clip(x + 3, 0, 6) / 6, (-3.0, 3.0)),
    ("softsign", softsign, lambda x: x / (1 + np.abs(x)), ()),
]
CASES = [
    pytest.param(fn, ref, kinks, np.dtype(dt), id=f"{name}-{np.dtype(dt)}")
    for name, fn, ref, kinks in ELEMENTWISE
    for dt in (np.float64, np.float32)
]
_SMALL = ls.shapes(max_dims=3, max_side=3)


@pytest.mark.parametrize(("fn", "ref", "kinks", "dtype"), CASES)
@given(data=st.data())
def test_forward_matches_numpy(fn: Any, ref: Any, kinks: tuple, dtype: np.dtype, data: Any) -> None:
    """The value matches a plain-numpy reference, with the input's shape and dtype."""
    x = data.draw(ls.arrays(dtype=dtype, min_value=-8.0, max_value=8.0), label="x")
    with lampy.Scope():
        out = fn(lampy.param(x))
        assert out.shape == x.shape
        assert out.dtype == dtype
        tol = 1e-5 if dtype == np.float32 else 1e-13
        np.testing.assert_allclose(out.value, ref(x.astype(np.float64)), rtol=tol, atol=tol)


@pytest.mark.parametrize(("fn", "ref", "kinks", "dtype"), CASES)
@given(data=st.data())
def test_gradient_matches_finite_differences(
    fn: Any, ref: Any, kinks: tuple, dtype: np.dtype, data: Any
) -> None:
    """The gradient matches float64 central differences away from kinks, in the input's dtype."""
    x = data.draw(
        ls.arrays(_SMALL, dtype=dtype, min_value=-8.0, max_value=8.0, avoid=kinks, margin=1e-2),
        label="x",
    )
    check_grad(fn, x)


def _dims(min_dims: int = 1) -> st.SearchStrategy[tuple[tuple[int, ...], int]]:
    return _SMALL.filter(lambda s: len(s) >= min_dims).flatmap(
        lambda s: st.tuples(st.just(s), st.integers(-len(s), len(s) - 1))
    )


def _ref_log_softmax(x: np.ndarray, dim: int) -> np.ndarray:
    if x.size == 0:
        return x.copy()
    m = np.max(x, axis=dim, keepdims=True)
    return x - m - np.log(np.sum(np.exp(x - m), axis=dim, keepdims=True))


@pytest.mark.parametrize("dtype", [np.dtype(np.float64), np.dtype(np.float32)], ids=str)
@pytest.mark.parametrize("which", ["softmax", "log_softmax"])
@given(data=st.data())
def test_softmax_family(which: str, dtype: np.dtype, data: Any) -> None:
    """softmax/log_softmax match numpy along any dim and pass the gradient check."""
    shape, dim = data.draw(_dims(), label="shape_dim")
    x = data.draw(ls.arrays(shape, dtype=dtype), label="x")
    fn = softmax if which == "softmax" else log_softmax
    expected = _ref_log_softmax(x.astype(np.float64), dim)
    if which == "softmax":
        expected = np.exp(expected)
    positional = data.draw(st.booleans(), label="positional")
    with lampy.Scope():
        out = fn(lampy.param(x), dim) if positional else fn(lampy.param(x), dim=dim)
        assert out.dtype == dtype and out.shape == x.shape
        tol = 1e-5 if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out.value, expected, rtol=tol, atol=tol)
    check_grad(lambda v: fn(v, dim=dim), x)


@pytest.mark.parametrize("dtype", [np.dtype(np.float64), np.dtype(np.float32)], ids=str)
@given(data=st.data())
def test_glu(dtype: np.dtype, data: Any) -> None:
    """glu is first-half * sigmoid(second-half) along dim, with a correct gradient."""
    shape, dim = data.draw(_dims(), label="shape_dim")
    shape = tuple(2 * s if i == dim % len(shape) else s for i, s in enumerate(shape))
    x = data.draw(ls.arrays(shape, dtype=dtype), label="x")
    a, b = np.split(x.astype(np.float64), 2, axis=dim)
    with lampy.Scope():
        out = glu(lampy.param(x), dim=dim)
        assert out.dtype == dtype
        np.testing.assert_allclose(out.value, a * _sig(b), rtol=1e-5, atol=1e-6)
    check_grad(lambda v: glu(v, dim), x)


def _grad(fn: Callable[[Any], Any], x: Any) -> np.ndarray:
    with lampy.Scope():
        p = lampy.param(np.asarray(x, dtype=np.float64))
        out = fn(p)
        lampy.backward(out, [np.ones(out.shape)])
        assert p.grad is not None
        return p.grad.copy()


# PyTorch autograd's values (torch 2.x, float64) at the kinks.
KINKS = [
    ("relu", relu, [0.0], [0.0]),
    ("relu6", relu6, [0.0, 6.0], [0.0, 0.0]),
    ("leaky_relu", lambda v: leaky_relu(v, 0.2), [0.0], [0.2]),
    ("elu", lambda v: elu(v, 2.0), [0.0], [2.0]),
    ("selu", selu, [0.0], [_SCALE * _ALPHA]),
    ("celu", lambda v: celu(v, 2.0), [0.0], [1.0]),
    ("hardtanh", hardtanh, [-1.0, 1.0], [0.0, 0.0]),
    ("hardsigmoid", hardsigmoid, [-3.0, 3.0], [0.0, 0.0]),
    ("hardswish", hardswish, [-3.0, 3.0], [0.0, 1.0]),
    ("softplus", lambda v: softplus(v, 2.0, 10.0), [5.0], [_sig(np.float64(10.0))]),
]


@pytest.mark.parametrize(("fn", "x", "expected"), [k[1:] for k in KINKS], ids=[k[0] for k in KINKS])
def test_kink_conventions(fn: Any, x: list, expected: list) -> None:
    """At the kinks, the gradient equals PyTorch autograd's exactly."""
    np.testing.assert_array_equal(_grad(fn, x), np.array(expected))


def test_huge_inputs_are_stable() -> None:
    """softmax, log_softmax and the sigmoid family stay finite and exact at |x| = 1000."""
    x = np.array([1000.0, 0.0, -1000.0])
    with lampy.Scope():
        np.testing.assert_array_equal(softmax(x, dim=0).value, [1.0, 0.0, 0.0])
        np.testing.assert_array_equal(log_softmax(x, dim=0).value, [0.0, -1000.0, -2000.0])
        np.testing.assert_array_equal(sigmoid(x).value, [1.0, 0.5, 0.0])
        np.testing.assert_array_equal(log_sigmoid(x).value, [0.0, -math.log(2), -1000.0])
        np.testing.assert_array_equal(softplus(x).value, [1000.0, math.log(2), 0.0])
        np.testing.assert_array_equal(silu(x).value, [1000.0, 0.0, -0.0])
        assert np.all(np.isfinite(mish(x).value))
    g = _grad(lambda v: log_softmax(v, 0), x)
    np.testing.assert_allclose(g, [-2.0, 1.0, 1.0])
    np.testing.assert_array_equal(_grad(log_sigmoid, x), [0.0, 0.5, 1.0])


def test_softmax_0d_and_empty() -> None:
    """softmax of a 0-d input is 1 (dim 0 or -1) and an empty input stays empty."""
    with lampy.Scope():
        assert softmax(np.float64(3.0), dim=-1).value == 1.0
        assert log_softmax(np.float64(3.0), 0).value == 0.0
        assert softmax(np.zeros((0, 3)), dim=1).shape == (0, 3)
        assert log_softmax(np.zeros((2, 0)), dim=1).shape == (2, 0)


def test_errors() -> None:
    """Bad dims, odd glu sizes and unknown gelu approximations raise lampy errors."""
    with lampy.Scope():
        with pytest.raises(lampy.ShapeError, match="glu"):
            glu(np.zeros((2, 3)))
        with pytest.raises(lampy.ShapeError, match="softmax"):
            softmax(np.zeros(3), dim=1)
        with pytest.raises(lampy.LampyValueError, match="dim is required"):
            softmax(np.zeros(3), None)  # type: ignore[arg-type]
        with pytest.raises(lampy.LampyValueError, match="approximate"):
            gelu(np.zeros(3), approximate="erf")


def test_variable_used_twice_and_constants() -> None:
    """A Variable used by two activations accumulates both gradients; a plain array is a
    constant giving a value without a gradient."""
    x = np.array([-1.5, 0.5, 2.0])
    g = _grad(lambda v: relu(v) + sigmoid(v), x)
    s = _sig(x)
    np.testing.assert_allclose(g, (x > 0) + s * (1 - s), rtol=1e-15)
    with lampy.Scope():
        out = gelu(x)
        assert not out.needs_grad


@pytest.mark.parametrize(
    "name",
    [
        "relu",
        "relu6",
        "leaky_relu",
        "elu",
        "selu",
        "celu",
        "hardtanh",
        "hardsigmoid",
        "hardswish",
        "silu",
        "mish",
    ],
)
def test_inplace_flag_is_accepted_and_changes_nothing(name: str) -> None:
    """PyTorch's inplace=True runs, returns a new Variable and leaves the input as it was."""
    x = np.array([-1.5, 0.25, 2.0])
    with lampy.Scope():
        v = lampy.param(x)
        out = getattr(F, name)(v, inplace=True)
        np.testing.assert_array_equal(out.value, getattr(F, name)(v).value)
        np.testing.assert_array_equal(v.value, x)


def test_hardtanh_rejects_min_above_max() -> None:
    """min_val > max_val is an error, as in PyTorch."""
    with lampy.Scope(), pytest.raises(lampy.LampyValueError, match=r"min_val \(0.5\) must not"):
        F.hardtanh(np.zeros(3), min_val=0.5, max_val=0.0)
