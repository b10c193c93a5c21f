"""Gradients of 0-d Variables, which flow between Contribution closures as numpy scalars:
bitwise what the array path gives, ndarrays wherever one is promised (plain closures,
``.grad``, ``retain``, ``backward_iter``), the input's dtype kept."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import lampy
from lampy.autograd import SharedInBackward, _pass
from lampy.testing import check_grad

CONST = np.array([0.5, -1.25, 2.0])


def _plain_sin(x: lampy.Variable) -> lampy.Variable:
    """An op with a plain (g, out) closure."""
    a = x.value
    return lampy.op(
        "sin_plain", np.sin(a), x.zip_backward(lambda g, out: np.add(out, g * np.cos(a), out=out))
    )


def _spread_sum(x: lampy.Variable) -> lampy.Variable:
    """Broadcast against a (3,) constant of x's dtype (a float64 one would promote a
    float32 graph) and sum back: a (3,) contribution reaches x."""
    return lampy.sum(lampy.tanh(x * CONST.astype(x.dtype)), axis=-1, keepdims=x.ndim == 1)


UNARY: dict[str, Callable[[Any], Any]] = {
    "tanh": lampy.tanh,
    "exp_small": lambda x: lampy.exp(x * 0.1),
    "square": lambda x: x * x,
    "abs": lampy.abs,
    "sin_plain": _plain_sin,
    "spread_sum": _spread_sum,
    "scale_add": lambda x: x * 0.9 + 0.1,
}
BINARY: dict[str, Callable[[Any, Any], Any]] = {
    "add": lambda a, b: a + b,
    "mul": lambda a, b: a * b,
    "sub": lambda a, b: a - b,
    "div": lambda a, b: a / (b * b + 1.0),
    "maximum": lampy.maximum,
}

steps = st.lists(
    st.one_of(
        st.tuples(st.sampled_from(sorted(UNARY)), st.integers(0, 100)),
        st.tuples(st.sampled_from(sorted(BINARY)), st.integers(0, 100), st.integers(0, 100)),
    ),
    min_size=1,
    max_size=14,
)


def _run(
    program: list[Any], inputs: list[np.ndarray], workers: int, retain: bool = False
) -> list[np.ndarray]:
    """Gradients of the params (and, with ``retain``, of every op result) of a program."""
    with lampy.Scope():
        params = [lampy.param(a) for a in inputs]
        nodes: list[Any] = list(params)
        for step in program:
            if len(step) == 2:
                nodes.append(UNARY[step[0]](nodes[step[1] % len(nodes)]))
            else:
                a, b = nodes[step[1] % len(nodes)], nodes[step[2] % len(nodes)]
                nodes.append(BINARY[step[0]](a, b))
        kept = [n for n in nodes[len(params) :] if n.needs_grad] if retain else []
        lampy.backward([lampy.sum(nodes[-1]), lampy.sum(nodes[len(nodes) // 2])], workers=workers)
        grads = []
        for v in [*params, *kept]:
            g = v.grad
            assert g is None or type(g) is np.ndarray
            grads.append(np.zeros_like(v.value) if g is None else g.copy())
        return grads


@settings(max_examples=40, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    program=steps,
    seed=st.integers(0, 2**16),
    dtype=st.sampled_from([np.float64, np.float32]),
    retain=st.booleans(),
)
def test_0d_graphs_are_bitwise_equal_to_the_array_path_and_to_concurrent(
    monkeypatch: pytest.MonkeyPatch, program: list[Any], seed: int, dtype: Any, retain: bool
) -> None:
    """Random DAGs over 0-d params: the gradients equal, bit for bit, those of the same
    graph over shape-(1,) params (ndarray buffers throughout) and those of the concurrent
    engine, with float32 kept float32."""
    rng = np.random.default_rng(seed)
    inputs = [rng.normal(size=()).astype(dtype) for _ in range(3)]
    serial = _run(program, inputs, 1, retain)
    arrays = _run(program, [a.reshape(1) for a in inputs], 1, retain)
    monkeypatch.setattr(_pass, "BIG_NODE_BYTES", 0)
    monkeypatch.setattr(_pass, "CONCURRENT_MIN_BYTES", 0)
    concurrent = _run(program, inputs, 2, retain)
    for s, a, c in zip(serial, arrays, concurrent, strict=True):
        assert s.shape == c.shape == () and a.shape == (1,)
        assert s.dtype == a.dtype == c.dtype == dtype
        assert s.tobytes() == a.tobytes() == c.tobytes()


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
def test_a_0d_chain_keeps_its_dtype_in_every_gradient(dtype: Any) -> None:
    """``.grad``, retained gradients and ``backward_iter``'s are ndarrays of the dtype."""
    with lampy.Scope():
        x = lampy.param(np.asarray(0.5, dtype))
        h = lampy.tanh(x * 0.9 + 0.1)
        y = h * h + x
        y.backward(retain=[h], retain_graph=True)
        assert type(x.grad) is np.ndarray and type(h.grad) is np.ndarray
        assert x.grad.dtype == h.grad.dtype == dtype and x.grad.shape == ()
        assert x.grad.flags.writeable
        first = x.grad.copy()
        y.backward(retain=True)  # accumulates into the ndarray
        assert type(x.grad) is np.ndarray and x.grad == first + first
        for v, g in lampy.backward_iter(y):
            assert v is x and type(g) is np.ndarray and g.dtype == dtype


def test_plain_closures_of_a_0d_op_get_one_ndarray() -> None:
    """A plain closure is promised an ndarray ``g``; every closure of an op with one gets
    the same object."""
    seen: list[Any] = []

    def pair(x: lampy.Variable, y: lampy.Variable) -> lampy.Variable:
        def d_x(g: np.ndarray, out: np.ndarray) -> None:
            seen.append(g)
            np.add(out, g * y.value, out=out)

        def d_y(g: Any) -> Any:
            seen.append(g)
            return g * x.value

        return lampy.op(
            "pair", x.value * y.value, x.zip_backward(d_x), y.zip_backward(lampy.contribution(d_y))
        )

    with lampy.Scope():
        x, y = lampy.param(2.0), lampy.param(3.0)
        z = pair(lampy.tanh(x) * 1.5, y * y)  # g of pair is a scalar made by multiply
        (z * 2.0).backward()
        assert len(seen) == 2 and seen[0] is seen[1] and type(seen[0]) is np.ndarray
        check_grad(lambda a, b: pair(lampy.tanh(a) * 1.5, b * b) * 2.0, 2.0, 3.0)


def test_a_plain_closure_adds_into_a_scalar_buffer() -> None:
    """A 0-d input whose first contribution was a scalar, then a plain closure's."""
    with lampy.Scope():
        x = lampy.param(0.7)
        y = x * 3.0  # multiply: served after _plain_sin (its consumer comes later)
        z = _plain_sin(y) + y * y
        z.backward()
        want = (np.cos(2.1) + 2 * 2.1) * 3.0
        np.testing.assert_allclose(x.grad, want, rtol=1e-15)
    check_grad(lambda v: _plain_sin(v * 3.0) + (v * 3.0) * (v * 3.0), 0.7)


def test_contributions_of_other_types_are_cast_to_the_0d_input() -> None:
    """A float64 contribution (scalar, 0-d or broadcast array) to a float32 0-d input
    becomes float32, first or added, bit for bit as the array path casts."""

    def op_with(fn: Callable[[Any], Any], x: lampy.Variable) -> lampy.Variable:
        return lampy.op("custom", x.value * 1, x.zip_backward(lampy.contribution(fn, fresh=False)))

    makers: list[Callable[[Any], Any]] = [
        lambda g: np.float64(g) / 3.0,
        lambda g: np.asarray(g, np.float64) / 3.0,
        lambda g: np.full((2, 2), g, np.float64) / 7.0,  # broadcast: summed down to 0-d
    ]
    for fn in makers:
        with lampy.Scope():
            x = lampy.param(np.float32(1.0))
            (op_with(fn, x) + op_with(fn, x) * 2.0).backward()
            assert x.grad is not None and x.grad.dtype == np.float32
            with lampy.Scope():
                x1 = lampy.param(np.ones(1, np.float32))
                (op_with(fn, x1) + op_with(fn, x1) * 2.0).sum().backward()
                assert x1.grad is not None
                assert x.grad.tobytes() == x1.grad.tobytes()


def test_a_scalar_contribution_for_a_size_1_input_is_spread_to_its_shape() -> None:
    """A 0-d op of a (1, 1) input whose closure returns ``g`` (a scalar) or ``g * 2``."""

    def squeeze(x: lampy.Variable, fn: Callable[[Any], Any]) -> lampy.Variable:
        return lampy.op("squeeze", x.value.reshape(()), x.zip_backward(lampy.contribution(fn)))

    for fn in (lambda g: g, lambda g: g * 2.0):
        with lampy.Scope():
            x = lampy.param(np.ones((1, 1)))
            (squeeze(x, fn) * 3.0).backward()
            assert x.grad is not None and x.grad.shape == (1, 1)
            np.testing.assert_array_equal(x.grad, fn(np.float64(3.0)) * np.ones((1, 1)))


def test_shared_in_backward_and_remat_take_a_scalar_g() -> None:
    """Helpers that recognise ``g`` by identity accept the numpy scalar of a 0-d op."""

    def scaled(x: lampy.Variable, y: lampy.Variable) -> lampy.Variable:
        twice = SharedInBackward(lambda g: g * 2.0, users=2)
        return lampy.op(
            "scaled",
            2.0 * (x.value + y.value),
            x.zip_backward(lampy.contribution(twice)),
            y.zip_backward(lampy.contribution(twice)),
        )

    with lampy.Scope():
        x, y = lampy.param(1.0), lampy.param(2.0)
        (scaled(x * 1.0, y * 1.0) * 3.0).backward()
        assert x.grad == 6.0 and y.grad == 6.0
    check_grad(lambda a, b: scaled(a * a, b) * 3.0, 1.5, 2.0)

    loss = lampy.remat(lambda v, w: lampy.tanh(v * w).sum() * w)
    check_grad(lambda v, w: loss(v, w) * 2.0 + loss(v, w * w), np.linspace(0, 1, 5), 0.7)
