"""Every op of ``lampy.experimental.array_api``, from one table, on every namespace of the
matrix: its value equals lampy's numpy op's, its gradient equals lampy's and central
differences' (float64), and both stay arrays of the inputs' namespace and device."""

from __future__ import annotations

import zlib
from collections.abc import Callable
from typing import Any

import attrs
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
import lampy.experimental.array_api as lx
import lampy.nn.functional as F
from lampy.testing import strategies
from tests.backends.namespaces import BACKENDS, Backend


@attrs.frozen
class Case:
    """One op of the prototype next to lampy's numpy op that computes the same.

    Attributes:
        id: The test id.
        op: The prototype's op, called with one Variable per shape (then ``constants``).
        reference: lampy's numpy op, called the same way.
        shapes: The shapes of the differentiable inputs.
        low, high: Their values are drawn uniformly from ``[low, high]``, with random signs
            when ``signed``: the op's domain, away from points without a derivative.
        constants: Non-differentiable numpy arguments after the inputs (indices, targets),
            given to the prototype in the backend's namespace.
    """

    id: str
    op: Callable[..., Any]
    reference: Callable[..., Any]
    shapes: tuple[tuple[int, ...], ...]
    low: float = -2.0
    high: float = 2.0
    signed: bool = False
    constants: tuple[Any, ...] = ()


CASES = [
    Case("add", lx.add, lampy.add, ((3, 4), (3, 4))),
    Case("add-broadcast", lx.add, lampy.add, ((2, 3, 4), (4,))),
    Case("subtract-broadcast", lx.subtract, lampy.subtract, ((3, 1), (1, 4))),
    Case("multiply-broadcast", lx.multiply, lampy.multiply, ((3, 4), (3, 1))),
    Case("divide", lx.divide, lampy.divide, ((3, 4), (4,)), 0.5, 2.0, True),
    Case("negative", lx.negative, lampy.negative, ((5,),)),
    Case("exp", lx.exp, lampy.exp, ((2, 3),)),
    Case("log", lx.log, lampy.log, ((2, 3),), 0.5, 3.0),
    Case("sqrt", lx.sqrt, lampy.sqrt, ((4,),), 0.5, 3.0),
    Case("tanh", lx.tanh, lampy.tanh, ((2, 3),)),
    Case("sum", lx.sum, lampy.sum, ((3, 4),)),
    Case(
        "sum-axes-keepdims",
        lambda x: lx.sum(x, (0, 2), keepdims=True),
        lambda x: lampy.sum(x, (0, 2), keepdims=True),
        ((2, 3, 4),),
    ),
    Case("mean-axis", lambda x: lx.mean(x, 0), lambda x: lampy.mean(x, 0), ((3, 4),)),
    Case("max-axis", lambda x: lx.max(x, axis=1), lambda x: lampy.max(x, axis=1), ((3, 5),)),
    Case("max", lx.max, lampy.max, ((2, 3),)),
    Case(
        "logsumexp-axis",
        lambda x: lx.logsumexp(x, axis=-1),
        lambda x: lampy.logsumexp(x, axis=-1),
        ((3, 4),),
    ),
    Case("matmul", lx.matmul, lampy.matmul, ((3, 4), (4, 2))),
    Case("matmul-vector-matrix", lx.matmul, lampy.matmul, ((4,), (4, 2))),
    Case("matmul-matrix-vector", lx.matmul, lampy.matmul, ((3, 4), (4,))),
    Case("matmul-vectors", lx.matmul, lampy.matmul, ((4,), (4,))),
    Case("matmul-batch-broadcast", lx.matmul, lampy.matmul, ((2, 3, 4), (4, 5))),
    Case(
        "reshape",
        lambda x: lx.reshape(x, (3, -1)),
        lambda x: lampy.reshape(x, (3, -1)),
        ((2, 6),),
    ),
    Case("transpose", lx.transpose, lampy.transpose, ((2, 3, 4),)),
    Case(
        "transpose-axes",
        lambda x: lx.transpose(x, (2, 0, 1)),
        lambda x: lampy.transpose(x, (2, 0, 1)),
        ((2, 3, 4),),
    ),
    Case(
        "getitem-slices",
        lambda x: lx.getitem(x, (slice(1, None), slice(None, None, 2))),
        lambda x: x[1:, ::2],
        ((3, 5),),
    ),
    Case("getitem-int", lambda x: lx.getitem(x, 1), lambda x: x[1], ((3, 4),)),
    Case(
        "getitem-newaxis-ellipsis",
        lambda x: lx.getitem(x, (None, Ellipsis, 2)),
        lambda x: x[None, ..., 2],
        ((2, 3, 4),),
    ),
    Case(
        "take-repeated",
        lx.take,
        lambda x, i: lampy.take(x, i, axis=0),
        ((5, 3),),
        constants=(np.array([0, 2, 2, 4, 0]),),
    ),
    Case(
        "take-axis",
        lambda x, i: lx.take(x, i, axis=1),
        lambda x, i: lampy.take(x, i, axis=1),
        ((2, 4, 3),),
        constants=(np.array([3, 1, 3]),),
    ),
    Case("linear", lx.linear, F.linear, ((4, 3), (2, 3), (2,))),
    Case("linear-no-bias-3d", lx.linear, F.linear, ((2, 2, 3), (5, 3))),
    Case("relu", lx.relu, F.relu, ((3, 4),), 0.1, 2.0, True),
    Case(
        "cross_entropy",
        lx.cross_entropy,
        F.cross_entropy,
        ((5, 3),),
        constants=(np.array([0, 2, 1, 2, 0]),),
    ),
    Case(
        "cross_entropy-sum",
        lambda z, t: lx.cross_entropy(z, t, reduction="sum"),
        lambda z, t: F.cross_entropy(z, t, reduction="sum"),
        ((4, 3),),
        constants=(np.array([1, 1, 0, 2]),),
    ),
    Case(
        "cross_entropy-none",
        lambda z, t: lx.cross_entropy(z, t, reduction="none"),
        lambda z, t: F.cross_entropy(z, t, reduction="none"),
        ((4, 3),),
        constants=(np.array([2, 0, 1, 1]),),
    ),
]


def _inputs(case: Case) -> list[np.ndarray]:
    """The case's inputs, float64, drawn from its domain (one seed per case)."""
    rng = np.random.default_rng(zlib.crc32(case.id.encode()))
    out = []
    for shape in case.shapes:
        a = rng.uniform(case.low, case.high, shape)
        if case.signed:
            a *= rng.choice([-1.0, 1.0], shape)
        out.append(a)
    return out


def _weights(shape: tuple[int, ...]) -> np.ndarray:
    """Fixed weights making a scalar loss ``sum(out * w)`` of an output of ``shape``."""
    return np.random.default_rng(1).uniform(0.5, 1.5, shape)


def _loss_lx(backend: Backend, case: Case, arrays: list[np.ndarray]) -> tuple[Any, list[Any]]:
    """The prototype's ``sum(op(*inputs) * w)`` on ``backend``, and its params."""
    params = [lx.param(backend.array(a)) for a in arrays]
    out = case.op(*params, *(backend.array(c) for c in case.constants))
    loss = lx.sum(lx.multiply(out, lx.const(backend.array(_weights(out.shape)))))
    return loss, params


def _loss_numpy(case: Case, arrays: list[np.ndarray]) -> tuple[Any, Any, list[Any]]:
    """lampy's numpy ``sum(reference(*inputs) * w)``, its output, and its params."""
    params = [lampy.param(a) for a in arrays]
    out = case.reference(*params, *case.constants)
    return lampy.sum(out * _weights(out.shape)), out, params


def _close(actual: Any, expected: Any, rtol: float = 1e-12) -> None:
    np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_value_and_gradient_equal_lampys_numpy_ops(case: Case, backend: Backend) -> None:
    """The prototype's value and gradients equal lampy's numpy op's to 1e-12 (float64),
    and are arrays of the inputs' namespace and device."""
    arrays = _inputs(case)
    with lampy.Scope():
        expected_loss, expected_out, ref_params = _loss_numpy(case, arrays)
        expected_loss.backward()
        expected_grads = [p.grad for p in ref_params]
        with lampy.Scope():
            params = [lx.param(backend.array(a)) for a in arrays]
            out = case.op(*params, *(backend.array(c) for c in case.constants))
            assert backend.holds(out.value)
            _close(backend.to_numpy(out.value), expected_out.value)
            loss = lx.sum(lx.multiply(out, lx.const(backend.array(_weights(out.shape)))))
            loss.backward()
            for p, expected in zip(params, expected_grads, strict=True):
                assert backend.holds(p.grad)
                _close(backend.to_numpy(p.grad), expected)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_gradient_equals_central_differences(case: Case, backend: Backend) -> None:
    """The prototype's gradient equals float64 central differences of its own forward
    pass on the namespace (step 1e-6)."""
    arrays = _inputs(case)
    with lampy.Scope():
        loss, params = _loss_lx(backend, case, arrays)
        loss.backward()
        grads = [backend.to_numpy(p.grad) for p in params]
    eps = 1e-6
    for k, a in enumerate(arrays):
        numeric = np.zeros_like(a)
        for i in np.ndindex(a.shape):
            sides = []
            for step in (eps, -eps):
                moved = [b.copy() for b in arrays]
                moved[k][i] += step
                with lampy.Scope(), lampy.no_grad():
                    sides.append(float(backend.to_numpy(_loss_lx(backend, case, moved)[0].value)))
            numeric[i] = (sides[0] - sides[1]) / (2 * eps)
        np.testing.assert_allclose(grads[k], numeric, rtol=1e-6, atol=1e-8)


BINARY = [
    (lx.add, lampy.add),
    (lx.subtract, lampy.subtract),
    (lx.multiply, lampy.multiply),
    (lx.divide, lampy.divide),
]
REDUCTIONS = [
    (lx.sum, lampy.sum),
    (lx.mean, lampy.mean),
    (lx.max, lampy.max),
    (lx.logsumexp, lampy.logsumexp),
]


@pytest.mark.parametrize("backend", BACKENDS[1:3])
@given(data=st.data())
def test_drawn_broadcasts_and_axes_equal_lampys_numpy_ops(backend: Backend, data: Any) -> None:
    """For drawn broadcastable shapes, a binary op then a reduction over drawn axes
    (keepdims or not) give lampy's numpy values and gradients to 1e-12."""
    (s1, s2) = data.draw(strategies.broadcastable_shapes(2, min_dims=1, max_dims=3), "shapes")
    (op, ref), (red, red_ref) = (
        data.draw(st.sampled_from(BINARY)),
        data.draw(st.sampled_from(REDUCTIONS)),
    )
    ndim = len(np.broadcast_shapes(s1, s2))
    axis = data.draw(strategies.axes(ndim), "axis")
    keepdims = data.draw(st.booleans(), "keepdims")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16), "seed"))
    a1, a2 = rng.uniform(0.5, 2.0, s1), rng.uniform(0.5, 2.0, s2)
    with lampy.Scope():
        p1, p2 = lampy.param(a1), lampy.param(a2)
        expected = red_ref(ref(p1, p2), axis, keepdims=keepdims)
        lampy.sum(expected).backward()
        q1, q2 = lx.param(backend.array(a1)), lx.param(backend.array(a2))
        got = red(op(q1, q2), axis, keepdims=keepdims)
        lx.sum(got).backward()
        _close(backend.to_numpy(got.value), expected.value)
        _close(backend.to_numpy(q1.grad), p1.grad)
        _close(backend.to_numpy(q2.grad), p2.grad)
