"""Every op in the table: forward value against numpy, gradient against finite differences."""

from __future__ import annotations

import contextlib
import warnings

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import lampy
from lampy.testing import check_grad
from lampy.testing import strategies as ls

from .op_table import BINARY_ELEMENTWISE, OPS, OpSpec

CASES = [
    pytest.param(spec, np.dtype(dtype), id=f"{spec.name}-{dtype}")
    for spec in OPS
    for dtype in spec.dtypes
]


@pytest.mark.parametrize(("spec", "dtype"), CASES)
@given(data=st.data())
def test_forward_matches_numpy(spec: OpSpec, dtype: np.dtype, data: st.DataObject) -> None:
    """The op's value equals numpy's, with numpy's result dtype and shape."""
    arrays, kwargs = data.draw(spec.inputs(dtype), label="inputs")
    expected = np.asarray(spec.ref(*arrays, **kwargs))
    with lampy.Scope():
        out = spec.fn(*[lampy.param(a) for a in arrays], **kwargs)
        assert out.shape == expected.shape
        assert out.dtype == expected.dtype
        rtol = (spec.forward_rtol or 1e-5) if dtype == np.float32 else 1e-12
        np.testing.assert_allclose(out.value, expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize(("spec", "dtype"), CASES)
@given(data=st.data())
def test_gradient_matches_finite_differences(
    spec: OpSpec, dtype: np.dtype, data: st.DataObject
) -> None:
    """The op's gradient w.r.t. every input matches float64 central differences, in the
    input's dtype."""
    arrays, kwargs = data.draw(spec.inputs(dtype), label="inputs")
    check_grad(
        lambda *vs: spec.fn(*vs, **kwargs), *arrays, atol=spec.grad_atol, rtol=spec.grad_rtol
    )


@pytest.mark.parametrize("spec", BINARY_ELEMENTWISE, ids=repr)
@given(data=st.data(), left=st.booleans(), dtype=ls.float_dtypes())
def test_binary_with_constant_operand(
    spec: OpSpec, data: st.DataObject, left: bool, dtype: np.dtype
) -> None:
    """A binary op with a numpy array or Python number as one operand differentiates the
    other operand, keeps its dtype, and matches numpy."""
    arrays, _ = data.draw(spec.inputs(dtype), label="inputs")
    a, b = arrays
    as_scalar = data.draw(st.booleans(), label="scalar")
    if left:
        const = float(a.reshape(-1)[0]) if as_scalar and a.size else a
        check_grad(lambda v: spec.fn(const, v), b)
        expected = np.asarray(spec.ref(np.asarray(const, b.dtype) if as_scalar else const, b))
        with lampy.Scope():
            out = spec.fn(const, lampy.param(b))
            np.testing.assert_allclose(out.value, expected, rtol=1e-5)
            assert out.dtype == expected.dtype
    else:
        const = float(b.reshape(-1)[0]) if as_scalar and b.size else b
        check_grad(lambda v: spec.fn(v, const), a)
        expected = np.asarray(spec.ref(a, np.asarray(const, a.dtype) if as_scalar else const))
        with lampy.Scope():
            out = spec.fn(lampy.param(a), const)
            np.testing.assert_allclose(out.value, expected, rtol=1e-5)
            assert out.dtype == expected.dtype


# The second-order column: every op of the table has a differentiable backward rule,
# checked by check_grad(order=2) (PyTorch's gradgradcheck: central differences of the
# first-order gradient), or is listed here: then a differentiable pass through it raises
# NoSecondOrderError naming it (or, for inputs where its result comes from ops that have
# rules, gives the right answer): never a silently wrong second derivative.
FIRST_ORDER_ONLY: frozenset[str] = frozenset(
    {
        "linalg.eig",
        "linalg.eigvals",
        "linalg.qr",
        "linalg.svd",
    }
)

# Inputs where the second-order check is ill-posed: power's first-order gradient takes
# 0 at a zero exponent by convention (PyTorch's too), a jump finite differences see.
SECOND_ORDER_SKIP = {"power": lambda arrays: bool(np.any(np.asarray(arrays[1]) == 0))}


@pytest.mark.parametrize("spec", OPS, ids=repr)
@settings(max_examples=6)
@given(data=st.data())
def test_second_order_matches_finite_differences(spec: OpSpec, data: st.DataObject) -> None:
    """The gradient of the op's recorded gradient (float64) matches central differences
    of its first-order gradient; an op without a differentiable rule says so by name."""
    arrays, kwargs = data.draw(spec.inputs(np.dtype(np.float64)), label="inputs")
    skip = SECOND_ORDER_SKIP.get(spec.name)
    assume(skip is None or not skip(arrays))
    f = lambda *vs: spec.fn(*vs, **kwargs)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        if spec.name in FIRST_ORDER_ONLY:
            with contextlib.suppress(lampy.NoSecondOrderError):  # named in its message
                check_grad(f, *arrays, atol=spec.grad_atol, rtol=spec.grad_rtol, order=2)
            return
        check_grad(f, *arrays, atol=spec.grad_atol, rtol=spec.grad_rtol, order=2)
