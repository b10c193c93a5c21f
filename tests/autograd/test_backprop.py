"""The backprop engine: seeding, order, shared nodes, accumulation, several roots, retain,
buffer lifetime, backward_iter, and a million-op chain."""

from __future__ import annotations

import gc
import sys
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy


def traced_identity(
    x: lampy.Variable, name: str, log: list[str], refs: dict[str, weakref.ref[np.ndarray]]
) -> lampy.Variable:
    """A custom identity op whose closure logs its call and a weak reference to its ``g``."""

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        log.append(name)
        refs[name] = weakref.ref(g)
        np.add(out, g, out=out)

    return lampy.op(name, x.value.copy(), x.zip_backward(d_x))


# --------------------------------------------------------------------- seeding


@pytest.mark.parametrize("shape", [(), (1,), (1, 1)])
def test_one_element_root_is_seeded_with_one(scope: lampy.Scope, shape: tuple[int, ...]) -> None:
    """backward() on a one-element root seeds a gradient of 1."""
    x = lampy.param(np.full(shape, 3.0))
    (x * x).backward()
    np.testing.assert_array_equal(x.grad, np.full(shape, 6.0))


@pytest.mark.parametrize("shape", [(2,), (2, 3), (0,)])
def test_non_scalar_root_without_grad_raises_naming_its_shape(
    scope: lampy.Scope, shape: tuple[int, ...]
) -> None:
    """backward() on a root of several (or zero) elements raises ShapeError naming its shape."""
    y = lampy.param(np.ones(shape)) * 2.0
    with pytest.raises(lampy.ShapeError) as excinfo:
        y.backward()
    assert isinstance(excinfo.value, ValueError)
    assert str(shape) in str(excinfo.value)
    assert "grad=" in str(excinfo.value)


@pytest.mark.parametrize(
    "g",
    [
        pytest.param(np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]), id="ndarray"),
        pytest.param([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], id="list"),
    ],
)
def test_explicit_grad_weights_the_root(scope: lampy.Scope, g: Any) -> None:
    """backward(grad) backpropagates the given cotangent."""
    x = lampy.param(np.ones((2, 3)))
    (x * 5.0).backward(g)
    np.testing.assert_array_equal(x.grad, 5.0 * np.asarray(g))


@pytest.mark.parametrize("g_shape", [(3, 2), (6,), (1, 3), ()])
def test_grad_of_the_wrong_shape_raises(scope: lampy.Scope, g_shape: tuple[int, ...]) -> None:
    """A grad whose shape differs from the root's raises ShapeError naming both shapes."""
    y = lampy.param(np.ones((2, 3))) * 2.0
    with pytest.raises(lampy.ShapeError) as excinfo:
        y.backward(np.ones(g_shape))
    assert str(g_shape) in str(excinfo.value)
    assert "(2, 3)" in str(excinfo.value)


@pytest.mark.parametrize(
    ("root_dtype", "g_dtype"),
    [(np.float64, np.float32), (np.float32, np.float64), (np.float64, np.int64)],
)
def test_grad_of_the_wrong_dtype_raises(scope: lampy.Scope, root_dtype: Any, g_dtype: Any) -> None:
    """A grad array whose dtype differs from the root's raises DTypeError naming both dtypes."""
    y = lampy.param(np.ones(3, dtype=root_dtype)) * 2.0
    with pytest.raises(lampy.DTypeError) as excinfo:
        y.backward(np.ones(3, dtype=g_dtype))
    assert isinstance(excinfo.value, TypeError)
    assert np.dtype(root_dtype).name in str(excinfo.value)
    assert np.dtype(g_dtype).name in str(excinfo.value)


def test_root_that_needs_no_gradient_raises(scope: lampy.Scope) -> None:
    """backward() on a Variable computed from constants only raises LampyError."""
    y = lampy.const([1.0, 2.0]).sum()
    with pytest.raises(lampy.LampyError, match="param"):
        y.backward()


def test_float32_graph_gives_float32_gradients(scope: lampy.Scope) -> None:
    """A float32 graph is seeded and backpropagated in float32."""
    x = lampy.param(np.array([1.0, 2.0], dtype=np.float32))
    y = lampy.tanh(x * 0.5).sum()
    y.backward()
    assert x.grad is not None
    assert x.grad.dtype == np.float32


def test_float32_param_mixed_with_float64_gets_a_float32_gradient(scope: lampy.Scope) -> None:
    """A float32 param used in a float64 computation still gets a float32 gradient."""
    x = lampy.param(np.array([1.0, 2.0], dtype=np.float32))
    y = (x * lampy.const(np.array([3.0, 4.0]))).sum()
    assert y.dtype == np.float64
    y.backward()
    assert x.grad is not None
    assert x.grad.dtype == np.float32
    np.testing.assert_array_equal(x.grad, [3.0, 4.0])


# --------------------------------------------------------------------- shared nodes


def test_diamond_gradient_is_exact(scope: lampy.Scope) -> None:
    """x feeding two branches that meet again gets the sum of both paths: d(6x^2)/dx = 12x."""
    x = lampy.param([1.0, 2.0, -3.0])
    a = x * 2.0
    b = x * 3.0
    (a * b).sum().backward()
    np.testing.assert_array_equal(x.grad, 12.0 * np.array([1.0, 2.0, -3.0]))


def test_shared_intermediate_is_processed_after_all_its_consumers(scope: lampy.Scope) -> None:
    """An intermediate used by three ops passes on the sum of all three contributions."""
    xv = np.array([0.3, -0.7])
    x = lampy.param(xv)
    h = lampy.exp(x)
    y = (h * h + h + lampy.tanh(h)).sum()
    y.backward()
    hv = np.exp(xv)
    np.testing.assert_allclose(x.grad, (2 * hv + 1 + (1 - np.tanh(hv) ** 2)) * hv, rtol=1e-14)


def test_stacked_diamonds_are_exact_and_linear_in_time(scope: lampy.Scope) -> None:
    """Sixty stacked diamonds y = y + y give exactly 2**60 (each node visited once)."""
    x = lampy.param(1.0)
    y = x
    for _ in range(60):
        y = y + y
    y.backward()
    assert x.grad == 2.0**60


def test_a_param_used_100_times(scope: lampy.Scope) -> None:
    """A param used by 100 ops accumulates all 100 contributions."""
    x = lampy.param([1.0, 2.0])
    total = lampy.const(0.0)
    for k in range(100):
        total = total + x * float(k)
    total.sum().backward()
    np.testing.assert_array_equal(x.grad, [4950.0, 4950.0])


def test_an_intermediate_used_100_times(scope: lampy.Scope) -> None:
    """An intermediate used by 100 ops passes on all 100 contributions, once."""
    xv = np.array([0.5, -1.0])
    x = lampy.param(xv)
    h = lampy.tanh(x)
    total = h * 0.0
    for k in range(1, 100):
        total = total + h * float(k)
    total.sum().backward()
    np.testing.assert_allclose(x.grad, 4950.0 * (1 - np.tanh(xv) ** 2), rtol=1e-14)


def test_the_same_input_twice_in_one_op(scope: lampy.Scope) -> None:
    """x * x gives 2x: both params of the op reach x."""
    x = lampy.param([1.5, -2.0])
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [3.0, -4.0])


def test_branches_of_different_depths(scope: lampy.Scope) -> None:
    """A node reached by a short and a long path gets both contributions."""
    x = lampy.param(2.0)
    long = x
    for _ in range(10):
        long = long * 1.0
    (long + x * 3.0).backward()
    assert x.grad == 4.0


# --------------------------------------------------------------------- accumulation


def test_repeated_backward_accumulates(scope: lampy.Scope) -> None:
    """Calling backward twice on the same graph doubles the gradient."""
    x = lampy.param([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain=True)
    y.backward()
    np.testing.assert_array_equal(x.grad, [4.0, 8.0])


def test_a_second_backward_through_a_spent_graph_raises(scope: lampy.Scope) -> None:
    """Without retain=True a pass frees the graph's closures as it goes: a second pass
    through it raises SpentGraphError naming retain=True, and changes no gradient; a
    new graph over the same params still works."""
    x = lampy.param([1.0, 2.0])
    h = x * x
    y = h.sum()
    y.backward()
    assert y.is_leaf is False and h.op is not None and h.op.params == ()
    with pytest.raises(lampy.SpentGraphError, match=r"retain=True"):
        y.backward()
    with pytest.raises(lampy.SpentGraphError, match="'multiply'"):
        (h * 2.0).sum().backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])
    np.testing.assert_array_equal(h.value, [1.0, 4.0])  # a value you hold stays readable
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [4.0, 8.0])


def test_retain_graph_is_retain_true(scope: lampy.Scope) -> None:
    """retain_graph=True (PyTorch's name) keeps the graph as retain=True does."""
    x = lampy.param([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain_graph=True)
    lampy.backward(y, retain_graph=True)
    y.backward()
    np.testing.assert_array_equal(x.grad, [6.0, 12.0])


def test_gradients_accumulate_across_graphs(scope: lampy.Scope) -> None:
    """Backward through two separate graphs adds both gradients into the param."""
    x = lampy.param([1.0, 2.0])
    (x * 3.0).sum().backward()
    (x * x).sum().backward()
    np.testing.assert_array_equal(x.grad, [5.0, 7.0])


def test_zero_grad_resets_accumulation(scope: lampy.Scope) -> None:
    """After zero_grad() the gradient is zero, and the next backward gives a fresh gradient."""
    x = lampy.param([1.0, 2.0])
    y = (x * x).sum()
    y.backward(retain=True)
    y.backward(retain=True)
    x.zero_grad()
    assert x.grad is None or not x.grad.any()
    y.backward()
    np.testing.assert_array_equal(x.grad, [2.0, 4.0])


def test_zero_grad_without_a_gradient_is_harmless(scope: lampy.Scope) -> None:
    """zero_grad() on a param that never received a gradient does nothing wrong."""
    x = lampy.param(1.0)
    x.zero_grad()
    assert x.grad is None or x.grad == 0.0
    lampy.const(1.0).zero_grad()


def test_intermediate_gradients_are_not_kept(scope: lampy.Scope) -> None:
    """After backward, intermediates and constants have no gradient; params do."""
    x = lampy.param([1.0, 2.0])
    c = lampy.const([3.0, 4.0])
    h = x * c
    y = lampy.exp(h).sum()
    y.backward()
    assert h.grad is None
    assert y.grad is None
    assert c.grad is None
    assert x.grad is not None


def test_retain_keeps_chosen_intermediate_gradients(scope: lampy.Scope) -> None:
    """retain= keeps the gradient of the named intermediates (and only those)."""
    x = lampy.param([1.0, 2.0])
    h = x * 3.0
    k = h * h
    y = k.sum()
    y.backward(retain=[h])
    np.testing.assert_array_equal(h.grad, [6.0, 12.0])
    assert k.grad is None
    np.testing.assert_array_equal(x.grad, [18.0, 36.0])


def test_retained_gradients_accumulate_and_include_the_root(scope: lampy.Scope) -> None:
    """A retained intermediate accumulates across calls; a retained root keeps its seed."""
    x = lampy.param([1.0, 2.0])
    h = x * 3.0
    y = h.sum()
    lampy.backward([y], retain=[h, y], retain_graph=True)
    lampy.backward([y], retain=[h, y])
    np.testing.assert_array_equal(h.grad, [2.0, 2.0])
    assert y.grad == 2.0


def test_retain_of_a_released_variable_raises(scope: lampy.Scope) -> None:
    """retain= naming a released Variable raises ReleasedError."""
    with lampy.Scope():
        old = lampy.param(1.0) * 2.0
    y = lampy.param(1.0) * 2.0
    with pytest.raises(lampy.ReleasedError):
        y.backward(retain=[old])


def test_intermediate_buffers_are_freed_as_soon_as_consumed(scope: lampy.Scope) -> None:
    """The gradient buffer of an intermediate is freed once its closures ran (no gc needed)."""
    log: list[str] = []
    refs: dict[str, weakref.ref[np.ndarray]] = {}
    alive_when_called: dict[str, list[str]] = {}
    x = lampy.param(np.ones(1000))
    y = x
    names = [f"id{i}" for i in range(6)]
    for name in names:
        y = traced_identity(y, name, log, refs)

        def check(g: np.ndarray, out: np.ndarray, me: str = name) -> None:
            alive_when_called[me] = [n for n, r in refs.items() if r() is not None]

        y = lampy.op("probe_" + name, y.value.copy(), y.zip_backward(check), y.zip_backward(check))
    root = y * 1.0
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        root.backward(np.ones(1000))
    finally:
        if was_enabled:
            gc.enable()
    assert log == names[::-1]
    # When the probe just above op idK runs, the buffers of id(K+1), id(K+2)... were consumed.
    for name in names:
        assert alive_when_called[name] == [], (name, alive_when_called[name])


def test_root_gradient_buffer_is_freed_once_consumed(scope: lampy.Scope) -> None:
    """The root's gradient buffer is freed as soon as the root's closures ran.

    The seed is a list, so no caller-side reference keeps the buffer alive.
    """
    root_refs: list[weakref.ref[np.ndarray]] = []
    alive: list[bool] = []

    def d_inner(g: np.ndarray, out: np.ndarray) -> None:
        alive.append(root_refs[0]() is not None)
        np.add(out, g, out=out)

    def d_root(g: np.ndarray, out: np.ndarray) -> None:
        root_refs.append(weakref.ref(g))
        np.add(out, g, out=out)

    x = lampy.param(np.ones(1000))
    h = lampy.op("inner", x.value.copy(), x.zip_backward(d_inner))
    root = lampy.op("root", h.value.copy(), h.zip_backward(d_root))
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        root.backward(np.ones(1000).tolist())
    finally:
        if was_enabled:
            gc.enable()
    assert alive == [False]


# --------------------------------------------------------------------- several roots


def test_several_roots_add_their_gradients(scope: lampy.Scope) -> None:
    """lampy.backward([y1, y2]) gives the gradient of y1 + y2."""
    x = lampy.param([1.0, 2.0])
    y1 = (x * x).sum()
    y2 = (x * 3.0).sum()
    lampy.backward([y1, y2])
    np.testing.assert_array_equal(x.grad, [5.0, 7.0])


def test_several_roots_with_grads(scope: lampy.Scope) -> None:
    """lampy.backward(roots, grads) seeds each root with its own cotangent (None seeds 1)."""
    x = lampy.param([1.0, 2.0])
    y1 = x * 2.0
    y2 = (x * x).sum()
    lampy.backward([y1, y2], [np.array([10.0, 100.0]), None])
    np.testing.assert_array_equal(x.grad, [22.0, 204.0])


def test_the_same_root_twice_counts_twice(scope: lampy.Scope) -> None:
    """Passing one root twice seeds it twice."""
    x = lampy.param([1.0, 2.0])
    y = (x * x).sum()
    lampy.backward([y, y])
    np.testing.assert_array_equal(x.grad, [4.0, 8.0])


def test_a_param_as_root(scope: lampy.Scope) -> None:
    """A param given as a root receives its seed directly."""
    x = lampy.param(3.0)
    lampy.backward([x])
    assert x.grad == 1.0
    v = lampy.param([1.0, 2.0])
    lampy.backward(v, [np.array([5.0, 6.0])])
    np.testing.assert_array_equal(v.grad, [5.0, 6.0])


def test_a_param_twice_as_root(scope: lampy.Scope) -> None:
    """A param passed twice as a root receives both seeds."""
    x = lampy.param(3.0)
    lampy.backward([x, x])
    assert x.grad == 2.0


def test_a_param_as_root_and_inside_another_root(scope: lampy.Scope) -> None:
    """A param that is a root and also an input of another root gets both gradients."""
    x = lampy.param(3.0)
    y = x * x
    lampy.backward([y, x], retain=True)
    assert x.grad == 7.0
    lampy.backward([x, y])
    assert x.grad == 14.0


def test_a_root_that_is_an_input_of_another_root(scope: lampy.Scope) -> None:
    """An intermediate given as a root adds its seed to what flows into it from a later root."""
    x = lampy.param(2.0)
    h = x * 3.0
    y = h * h
    lampy.backward([y, h], retain=True)
    assert x.grad == (2 * 6.0 + 1.0) * 3.0
    x.zero_grad()
    lampy.backward([h, y])
    assert x.grad == (2 * 6.0 + 1.0) * 3.0


def test_single_variable_root_with_a_list_of_one_grad(scope: lampy.Scope) -> None:
    """lampy.backward(y, [g]) accepts a single Variable root with a one-element grads list."""
    x = lampy.param([1.0, 2.0])
    lampy.backward(x * 2.0, [np.array([1.0, 3.0])])
    np.testing.assert_array_equal(x.grad, [2.0, 6.0])


def test_roots_and_grads_of_different_lengths_raise(scope: lampy.Scope) -> None:
    """lampy.backward with a different number of grads and roots raises LampyError."""
    x = lampy.param(1.0)
    with pytest.raises(lampy.LampyError, match="2 roots but 1 grads"):
        lampy.backward([x * 2.0, x * 3.0], [None])


def test_backward_of_released_root_raises(scope: lampy.Scope) -> None:
    """backward on a released root raises ReleasedError."""
    with lampy.Scope():
        y = lampy.param(1.0) * 2.0
    with pytest.raises(lampy.ReleasedError):
        y.backward()
    with pytest.raises(lampy.ReleasedError):
        lampy.backward([y])


# --------------------------------------------------------------------- a million ops


def test_a_million_op_chain_with_the_default_recursion_limit() -> None:
    """Backprop through a chain of 1,000,000 ops works with Python's default recursion limit."""
    previous = sys.getrecursionlimit()
    sys.setrecursionlimit(1000)
    try:
        one = np.ones(())

        def d_x(g: np.ndarray, out: np.ndarray) -> None:
            out += g

        op = lampy.op
        with lampy.Scope():
            x = lampy.param(2.0)
            y = x
            for _ in range(1_000_000):
                y = op("identity", one, y.zip_backward(d_x))
            y = y * x
            y.backward()
            assert x.grad == 3.0
    finally:
        sys.setrecursionlimit(previous)


# --------------------------------------------------------------------- backward_iter


def test_backward_iter_yields_each_param_once_with_its_gradient(scope: lampy.Scope) -> None:
    """backward_iter yields every param once, with the same gradient backward would give."""
    a = lampy.param([1.0, 2.0])
    b = lampy.param([3.0, -1.0])
    c = lampy.const([0.5, 0.5])
    y = (lampy.tanh(a * b) * c + a).sum()
    pairs = list(lampy.backward_iter(y, retain=True))
    assert sorted(id(p) for p, _ in pairs) == sorted([id(a), id(b)])
    got = {id(p): g.copy() for p, g in pairs}
    expected_a, expected_b = a.grad.copy(), b.grad.copy()  # type: ignore[union-attr]
    a.zero_grad()
    b.zero_grad()
    y.backward()
    np.testing.assert_array_equal(got[id(a)], a.grad)
    np.testing.assert_array_equal(got[id(b)], b.grad)
    np.testing.assert_array_equal(got[id(a)], expected_a)
    np.testing.assert_array_equal(got[id(b)], expected_b)


def test_backward_iter_yields_a_param_before_backprop_reaches_deeper_params(
    scope: lampy.Scope,
) -> None:
    """A param used only near the root is yielded (final) before deep ops' closures run."""
    log: list[str] = []
    refs: dict[str, weakref.ref[np.ndarray]] = {}
    deep = lampy.param([0.1, 0.2])
    late = lampy.param([2.0, 3.0])
    h = traced_identity(deep, "deep_op", log, refs)
    for _ in range(5):
        h = lampy.tanh(h)
    h = traced_identity(h, "top_op", log, refs)
    y = (h * late).sum()
    order = []
    for p, g in lampy.backward_iter(y):
        if p is late:
            log.append("yield late")
            assert deep.grad is None
            np.testing.assert_array_equal(g, h.value)
        else:
            log.append("yield deep")
        order.append(p)
    assert order[0] is late
    assert order[1] is deep
    assert log == ["yield late", "top_op", "deep_op", "yield deep"]


def test_backward_iter_yields_a_shared_param_only_when_final(scope: lampy.Scope) -> None:
    """A param used both near the root and deep down is yielded once, with its full gradient."""
    xv = np.array([0.3, -0.4])
    x = lampy.param(xv)
    other = lampy.param([1.0, 1.0])
    deep = lampy.exp(x)
    for _ in range(3):
        deep = lampy.tanh(deep)
    y = (deep * other + x * x).sum()
    snapshots = {id(p): g.copy() for p, g in lampy.backward_iter(y)}
    final = x.grad.copy()  # type: ignore[union-attr]
    np.testing.assert_array_equal(snapshots[id(x)], final)
    assert not np.allclose(final, 2 * xv)  # the deep path contributed


def test_backward_iter_of_a_param_root(scope: lampy.Scope) -> None:
    """backward_iter on a param root yields that param with gradient 1."""
    x = lampy.param(4.0)
    pairs = list(lampy.backward_iter(x))
    assert len(pairs) == 1
    assert pairs[0][0] is x
    assert pairs[0][1] == 1.0


def test_backward_iter_with_an_explicit_grad(scope: lampy.Scope) -> None:
    """backward_iter(root, grad) uses grad as the root's cotangent."""
    x = lampy.param([1.0, 2.0])
    pairs = list(lampy.backward_iter(x * 3.0, np.array([1.0, -1.0])))
    np.testing.assert_array_equal(pairs[0][1], [3.0, -3.0])


def test_backward_iter_accumulates_like_backward(scope: lampy.Scope) -> None:
    """Gradients yielded by backward_iter accumulate into .grad across calls."""
    x = lampy.param([1.0, 2.0])
    y = (x * x).sum()
    list(lampy.backward_iter(y, retain=True))
    pairs = list(lampy.backward_iter(y))
    np.testing.assert_array_equal(pairs[0][1], [4.0, 8.0])
    np.testing.assert_array_equal(x.grad, [4.0, 8.0])


def test_backward_iter_errors_like_backward(scope: lampy.Scope) -> None:
    """backward_iter raises the errors backward raises (non-scalar root without grad)."""
    y = lampy.param([1.0, 2.0]) * 2.0
    with pytest.raises(lampy.ShapeError):
        list(lampy.backward_iter(y))


def test_backward_iter_yields_params_in_order_of_readiness(scope: lampy.Scope) -> None:
    """In a chain where param k joins at depth k, params are yielded from the top down."""
    params = [lampy.param(float(k + 1)) for k in range(6)]
    y = params[0]
    for p in params[1:]:
        y = lampy.tanh(y) * p
    order = [p for p, _ in lampy.backward_iter(y)]
    assert [params.index(p) for p in order] == [5, 4, 3, 2, 1, 0]


BACKWARD_ROUTES: list[Any] = [
    pytest.param(lambda y: y.backward(), id="Variable.backward"),
    pytest.param(lambda y: lampy.backward(y), id="lampy.backward"),
    pytest.param(lambda y: list(lampy.backward_iter(y)), id="lampy.backward_iter"),
]


@pytest.mark.parametrize("route", BACKWARD_ROUTES)
def test_every_route_gives_the_same_gradient(scope: lampy.Scope, route: Callable[..., Any]) -> None:
    """Variable.backward, lampy.backward and lampy.backward_iter agree."""
    xv = np.array([[0.1, -0.2], [0.3, 0.4]])
    x = lampy.param(xv)
    w = lampy.param(np.array([[1.0], [2.0]]))
    route(lampy.tanh(x @ w).sum() + (x * x).mean())
    t = np.tanh(xv @ np.array([[1.0], [2.0]]))
    np.testing.assert_allclose(x.grad, (1 - t**2) @ np.array([[1.0, 2.0]]) + xv / 2, rtol=1e-14)
    np.testing.assert_allclose(w.grad, xv.T @ (1 - t**2), rtol=1e-14)


def test_backward_from_an_integer_root_is_a_dtype_error(scope: lampy.Scope) -> None:
    """An integer root cannot carry a gradient: a DTypeError (a TypeError) says so."""
    with pytest.raises(lampy.DTypeError, match="only floating Variables carry gradients"):
        lampy.const([1, 2]).sum().backward()
