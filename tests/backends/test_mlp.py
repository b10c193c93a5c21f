"""One training step of an MLP through ``lampy.experimental.array_api`` on every namespace
of the matrix equals the same step through lampy's numpy path (``lampy.nn.functional``
and ``lampy.optim.SGD``) to 1e-12 in float64: loss, gradients and updated weights."""

from __future__ import annotations

import itertools
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.experimental.array_api as lx
import lampy.nn.functional as F
from tests.backends.namespaces import BACKENDS, Backend

SIZES = (6, 8, 5, 3)
BATCH = 7
LR = 0.1


def _data() -> tuple[list[np.ndarray], np.ndarray, np.ndarray]:
    """Weights (out, in) and biases of the MLP, a batch and its class targets."""
    rng = np.random.default_rng(29)
    weights: list[np.ndarray] = []
    for n_in, n_out in itertools.pairwise(SIZES):
        bound = 1 / np.sqrt(n_in)
        weights += [rng.uniform(-bound, bound, (n_out, n_in)), rng.uniform(-bound, bound, n_out)]
    return weights, rng.normal(size=(BATCH, SIZES[0])), rng.integers(0, SIZES[-1], BATCH)


def _step(params: list[Any], x: Any, y: Any, ops: Any, optimizer: Any) -> Any:
    """zero_grad, forward (linear, relu, linear, tanh, linear, cross_entropy), backward
    and the optimizer's step, in a scope of its own; returns the loss's value."""
    linear, relu, tanh, cross_entropy = ops
    optimizer.zero_grad()
    with lampy.Scope():
        h = relu(linear(x, params[0], params[1]))
        h = tanh(linear(h, params[2], params[3]))
        loss = cross_entropy(linear(h, params[4], params[5]), y)
        loss.backward()
        value = loss.value
    optimizer.step()
    return value


def _close(actual: np.ndarray, expected: np.ndarray) -> None:
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-14)


@pytest.mark.parametrize("backend", BACKENDS)
def test_one_mlp_step_equals_the_numpy_path(backend: Backend) -> None:
    """Loss, gradients and the weights after one SGD step agree with lampy's numpy path
    to 1e-12, and stay arrays of the backend's namespace and device."""
    weights, x, y = _data()
    with lampy.Scope():
        ref = [lampy.param(w) for w in weights]
        ref_loss = _step(
            ref, x, y, (F.linear, F.relu, lampy.tanh, F.cross_entropy), lampy.optim.SGD(ref, LR)
        )
        with lampy.Scope():
            params = [lx.param(backend.array(w)) for w in weights]
            loss = _step(
                params,
                backend.array(x),
                backend.array(y),
                (lx.linear, lx.relu, lx.tanh, lx.cross_entropy),
                lx.SGD(params, LR),
            )
            np.testing.assert_allclose(backend.to_numpy(loss), ref_loss, rtol=1e-12)
            for p, r in zip(params, ref, strict=True):
                assert backend.holds(p.value) and backend.holds(p.grad)
                assert p.version == 1
                _close(backend.to_numpy(p.grad), r.grad)
                _close(backend.to_numpy(p.value), r.value)


@pytest.mark.parametrize("backend", BACKENDS)
def test_the_mlp_trains_over_steps_as_the_numpy_path(backend: Backend) -> None:
    """Five steps in a row (a scope per step, zero_grad before each) keep agreeing with
    the numpy path to 1e-12, and the loss goes down."""
    weights, x, y = _data()
    with lampy.Scope():
        ref = [lampy.param(w) for w in weights]
        ref_opt = lampy.optim.SGD(ref, LR)
        params = [lx.param(backend.array(w)) for w in weights]
        opt = lx.SGD(params, LR)
        xs, ys = backend.array(x), backend.array(y)
        losses = []
        for _ in range(5):
            expected = _step(ref, x, y, (F.linear, F.relu, lampy.tanh, F.cross_entropy), ref_opt)
            got = _step(params, xs, ys, (lx.linear, lx.relu, lx.tanh, lx.cross_entropy), opt)
            np.testing.assert_allclose(backend.to_numpy(got), expected, rtol=1e-12)
            losses.append(float(expected))
        for p, r in zip(params, ref, strict=True):
            _close(backend.to_numpy(p.value), r.value)
    assert losses[-1] < losses[0]
