"""linear and bilinear: forward against plain-numpy loops, gradients against finite
differences, leading dimensions (none, several, zero-size), dtypes and errors."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import ShapeError
from lampy.nn.functional._linear import bilinear, linear
from lampy.testing import check_grad

lead_shapes = st.lists(st.integers(0, 3), max_size=3).map(tuple)
sizes = st.integers(1, 4)


def _forward(f: Any, *args: Any) -> Any:
    with lampy.Scope():
        return f(*args).value.copy()


def _ref_linear(x: np.ndarray, w: np.ndarray, b: np.ndarray | None) -> np.ndarray:
    """y[..., o] = sum_i x[..., i] w[o, i] + b[o], by a loop over output features."""
    out = np.zeros((*x.shape[:-1], w.shape[0]))
    for o in range(w.shape[0]):
        out[..., o] = (x.astype(np.float64) * w[o]).sum(axis=-1) + (0 if b is None else b[o])
    return out


def _ref_bilinear(x1: np.ndarray, x2: np.ndarray, w: np.ndarray, b: Any) -> np.ndarray:
    """y[..., k] = sum_ij x1[..., i] w[k, i, j] x2[..., j] + b[k], by loops over k, i, j."""
    out = np.zeros((*x1.shape[:-1], w.shape[0]))
    for k in range(w.shape[0]):
        for i in range(w.shape[1]):
            for j in range(w.shape[2]):
                out[..., k] += x1[..., i] * w[k, i, j] * x2[..., j]
        out[..., k] += 0 if b is None else b[k]
    return out


linear_cases = given(
    seed=st.integers(0, 2**32 - 1),
    lead=lead_shapes,
    n_in=sizes,
    n_out=sizes,
    with_bias=st.booleans(),
)


@linear_cases
@settings(max_examples=30)
def test_linear_forward(
    seed: int, lead: tuple[int, ...], n_in: int, n_out: int, with_bias: bool
) -> None:
    """linear equals x @ W.T + b over any leading dims, in float64 and float32."""
    rng = np.random.default_rng(seed)
    for dtype, tol in [(np.float64, 1e-12), (np.float32, 1e-5)]:
        x = rng.normal(size=(*lead, n_in)).astype(dtype)
        w = rng.normal(size=(n_out, n_in)).astype(dtype)
        b = rng.normal(size=n_out).astype(dtype) if with_bias else None
        got = _forward(linear, x, w, b)
        assert got.dtype == dtype and got.shape == (*lead, n_out)
        np.testing.assert_allclose(got, _ref_linear(x, w, b), rtol=tol, atol=tol)


@linear_cases
@settings(max_examples=20)
def test_linear_gradients(
    seed: int, lead: tuple[int, ...], n_in: int, n_out: int, with_bias: bool
) -> None:
    """linear's gradients for input, weight and bias match finite differences."""
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(*lead, n_in))
    w = rng.normal(size=(n_out, n_in))
    if with_bias:
        check_grad(linear, x, w, rng.normal(size=n_out))
    else:
        check_grad(linear, x, w)


def test_linear_float32_gradients() -> None:
    """The float32 path keeps float32 gradients that match finite differences."""
    rng = np.random.default_rng(0)
    x, w, b = (rng.normal(size=s).astype(np.float32) for s in [(2, 3, 4), (5, 4), (5,)])
    check_grad(linear, x, w, b)


def test_linear_one_dim_weight_and_int_input() -> None:
    """A 1-d weight gives (*) outputs; an integer input takes the weight's dtype."""
    rng = np.random.default_rng(1)
    check_grad(linear, rng.normal(size=(3, 4)), rng.normal(size=4), rng.normal(size=()))
    w = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = _forward(linear, np.array([[1, 2, 3]]), w)
    assert got.dtype == np.float32 and got.tolist() == [[8.0, 26.0]]


def test_linear_zero_batch_gradients_are_zero() -> None:
    """A zero-size batch gives a (0, out) output and zero weight and bias gradients."""
    with lampy.Scope():
        w = lampy.param(np.ones((3, 2)))
        b = lampy.param(np.ones(3))
        y = linear(np.zeros((0, 2)), w, b)
        y.backward(np.zeros((0, 3)))
        assert y.shape == (0, 3)
        assert w.grad is not None and b.grad is not None
        assert not w.grad.any() and not b.grad.any()


@given(
    seed=st.integers(0, 2**32 - 1),
    lead=lead_shapes,
    n1=sizes,
    n2=sizes,
    n_out=sizes,
    with_bias=st.booleans(),
)
@settings(max_examples=20)
def test_bilinear_forward_and_gradients(
    seed: int, lead: tuple[int, ...], n1: int, n2: int, n_out: int, with_bias: bool
) -> None:
    """bilinear equals x1^T W_k x2 + b_k, and its four gradients match finite differences."""
    rng = np.random.default_rng(seed)
    x1 = rng.normal(size=(*lead, n1))
    x2 = rng.normal(size=(*lead, n2))
    w = rng.normal(size=(n_out, n1, n2))
    b = rng.normal(size=n_out) if with_bias else None
    np.testing.assert_allclose(
        _forward(bilinear, x1, x2, w, b), _ref_bilinear(x1, x2, w, b), rtol=1e-12, atol=1e-12
    )
    got32 = _forward(bilinear, *(a.astype(np.float32) for a in (x1, x2, w)))
    assert got32.dtype == np.float32
    np.testing.assert_allclose(got32, _ref_bilinear(x1, x2, w, None), rtol=1e-4, atol=1e-4)
    if b is None:
        check_grad(bilinear, x1, x2, w)
    else:
        check_grad(bilinear, x1, x2, w, b)


@pytest.mark.parametrize(
    ("args", "match"),
    [
        (
            (np.ones((2, 3)), np.ones((4, 5))),
            r"linear: shapes \(2, 3\) and \(4, 5\).*in_features = 5",
        ),
        ((np.ones((2, 3)), np.ones((2, 4, 3))), "linear.*weight must be"),
        ((np.ones((2, 3)), np.ones((4, 3)), np.ones(5)), r"linear.*bias must have shape \(4,\)"),
        ((np.ones(()), np.ones((4, 3))), "linear.*input must have shape"),
    ],
)
def test_linear_errors(args: tuple[Any, ...], match: str) -> None:
    """linear names itself, both shapes and the expected layout on a mismatch."""
    with lampy.Scope(), pytest.raises(ShapeError, match=match):
        linear(*args)


@pytest.mark.parametrize(
    ("shapes", "match"),
    [
        (((2, 3), (3, 4), (5, 3, 4)), "bilinear.*same leading dimensions"),
        (((2, 3), (2, 4), (5, 4, 4)), r"bilinear.*input1's last axis must be 4"),
        (((2, 3), (2, 4), (5, 3)), "bilinear.*weight must be"),
    ],
)
def test_bilinear_errors(shapes: tuple[tuple[int, ...], ...], match: str) -> None:
    """bilinear names itself and the shapes when inputs and weight do not fit."""
    with lampy.Scope(), pytest.raises(ShapeError, match=match):
        bilinear(*(np.ones(s) for s in shapes))


def test_linear_reads_a_read_only_batch_and_makes_its_result_without_copies() -> None:
    """A read-only batch is not copied even though d_weight keeps it, and the result of a
    batch with leading dimensions is the matrix product's own array (reshaped, not
    copied): the traced peak stays under the result's size plus a small margin."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(20, 50, 30))
    x.setflags(write=False)
    w = rng.normal(size=(400, 30))
    out_bytes = 20 * 50 * 400 * 8
    with lampy.Scope():
        pw = lampy.param(w)
        tracemalloc.start()
        try:
            y = linear(x, pw, np.zeros(400))
            peak = tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()
        assert y.shape == (20, 50, 400)
        assert out_bytes <= peak < out_bytes + x.nbytes // 2
        np.testing.assert_allclose(y.value, x @ w.T)


def test_linear_batch_is_copied_only_when_a_closure_keeps_it() -> None:
    """A writable numpy batch is copied when the weight needs a gradient (d_weight keeps
    it), so changing the batch after the forward pass does not change the gradient; with
    a constant weight the batch is read in place (a read-only view, no copy)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=(5, 3))
    w = rng.normal(size=(2, 3))
    expected = np.ones((5, 2)).T @ x
    with lampy.Scope():
        pw = lampy.param(w)
        y = linear(x, pw)
        x_before = x.copy()
        x[...] = 100.0  # the caller reuses its batch buffer before backward
        y.sum().backward()
        np.testing.assert_allclose(pw.grad, expected)
        x[...] = x_before
    assert x.flags.writeable  # the caller's array keeps its flags
    with lampy.Scope():
        px = lampy.param(rng.normal(size=(5, 3)))
        y = linear(px, w)  # the weight is a writable constant kept by d_input
        w_before = w.copy()
        w[...] = 0.0
        y.sum().backward()
        np.testing.assert_allclose(px.grad, np.ones((5, 2)) @ w_before)
        w[...] = w_before
    with lampy.Scope():
        y = linear(x, w, np.zeros(2))  # nothing needs a gradient: a constant result
        assert not y.needs_grad
        np.testing.assert_allclose(y.value, x @ w.T)
