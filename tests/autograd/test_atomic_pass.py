"""The atomic pass (``backward()``'s default) runs the serial loop as one plain call:
bitwise the gradients of the generator-driven loop, all or nothing, with the graph's
checks, ``retain`` and ``lampy.remat`` working as before."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
from lampy import nn
from lampy.autograd import _pass
from lampy.autograd._backprop import _propagate

DTYPES = [np.float32, np.float64]
WORKERS = [None, 4]


@pytest.fixture(params=WORKERS, ids=["serial", "workers4"])
def workers(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> int | None:
    """None (serial), or 4 with every graph, however small, taking the concurrent path."""
    if request.param is not None:
        monkeypatch.setattr(_pass, "BIG_NODE_BYTES", 0)
        monkeypatch.setattr(_pass, "CONCURRENT_MIN_BYTES", 0)
    w: int | None = request.param
    return w


def _plain_sin(x: lampy.Variable) -> lampy.Variable:
    """An op with a plain ``(g, out)`` closure."""
    a = x.value
    return lampy.op(
        "sin_plain", np.sin(a), x.zip_backward(lambda g, out: np.add(out, g * np.cos(a), out=out))
    )


def _graph(params: list[lampy.Variable]) -> lampy.Variable:
    """A loss with a shared subexpression, a Variable used many times, params used by
    several ops, a plain closure and 0-d intermediates."""
    w, b, v = params
    h = lampy.tanh(w @ v + b)  # shared below
    s = h * h + h
    for k in range(12):  # h and w used many times
        s = s + lampy.exp(h * (0.01 * k)) * w[0, 0]
    t = _plain_sin(s) @ v  # v used by a second op
    total = lampy.sum(t) + lampy.sum(b * b)  # b used by a second op; 0-d results
    return total * lampy.sum(h)  # h again, through a 0-d product


def _params(dtype: Any) -> list[lampy.Variable]:
    rng = np.random.default_rng(0)
    return [
        lampy.param(rng.normal(size=(4, 4)).astype(dtype) * 0.5),
        lampy.param(rng.normal(size=4).astype(dtype) * 0.5),
        lampy.param(rng.normal(size=4).astype(dtype) * 0.5),
    ]


Route = Callable[[lampy.Variable, Any], None]


def _atomic(loss: lampy.Variable, workers: Any) -> None:
    loss.backward(workers=workers)


def _generator(loss: lampy.Variable, workers: Any) -> None:
    """The general path: the serial loop (or the concurrent scheduler) as a generator
    driven to its end, every .grad changed at the end."""
    for _ in _propagate([loss], None, (), stream=False, workers=workers):
        pass


def _streaming(loss: lampy.Variable, workers: Any) -> None:
    loss.backward(atomic=False, workers=workers)


def _iterated(loss: lampy.Variable, workers: Any) -> None:
    for _ in lampy.backward_iter(loss, workers=workers):
        pass


def _grads(route: Route, dtype: Any, workers: Any, passes: int = 1) -> list[bytes]:
    with lampy.Scope():
        params = _params(dtype)
        for _ in range(passes):  # a second pass adds into the .grad the first one made
            with lampy.Scope():
                route(_graph(params), workers)
        return [p.grad.tobytes() for p in params]  # type: ignore[union-attr]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("passes", [1, 2])
@pytest.mark.parametrize("route", [_generator, _streaming, _iterated])
def test_the_atomic_pass_gives_the_gradients_of_every_other_route_bitwise(
    dtype: Any, passes: int, route: Route, workers: int | None
) -> None:
    """backward() gives bitwise the gradients of the generator-driven loop, of
    backward(atomic=False) and of backward_iter, serial and with workers=4."""
    assert _grads(_atomic, dtype, workers, passes) == _grads(route, dtype, workers, passes)


@pytest.mark.parametrize("dtype", DTYPES)
def test_the_atomic_pass_is_bitwise_the_same_for_any_number_of_workers(dtype: Any) -> None:
    """Serial and workers=4 (forced concurrent) give bitwise the same gradients."""
    serial = _grads(_atomic, dtype, None)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(_pass, "BIG_NODE_BYTES", 0)
        mp.setattr(_pass, "CONCURRENT_MIN_BYTES", 0)
        assert _grads(_atomic, dtype, 4) == serial


def _failing_after(x: lampy.Variable, calls: list[int]) -> lampy.Variable:
    """An identity op whose closure raises (after the closures before it ran)."""

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        calls.append(1)
        raise ValueError("boom")

    return lampy.op("failing", x.value.copy(), x.zip_backward(d_x))


def test_an_atomic_pass_that_raises_midway_changes_no_gradient(workers: int | None) -> None:
    """With atomic=True, a closure that raises after other params' gradients are final
    (w's and b's: the failing op is reached only through v) leaves every .grad as it
    was, bitwise: None where there was none, the earlier pass's where there was one."""
    with lampy.Scope():
        w, b, v = _params(np.float64)
        with lampy.Scope():
            (lampy.sum(w * w) + lampy.sum(b)).backward()
        before = {"w": w.grad.tobytes(), "b": b.grad.tobytes()}  # type: ignore[union-attr]
        calls: list[int] = []
        with lampy.Scope():
            loss = lampy.sum(w * 2.0) + lampy.sum(b * b) + lampy.sum(_failing_after(v, calls))
            with pytest.raises(lampy.BackwardError, match="'failing'") as info:
                loss.backward(workers=workers, atomic=True)
            assert isinstance(info.value.__cause__, ValueError)
            assert "no gradient was changed" in str(info.value)
        assert calls == [1]
        assert w.grad.tobytes() == before["w"]  # type: ignore[union-attr]
        assert b.grad.tobytes() == before["b"]  # type: ignore[union-attr]
        assert v.grad is None


def test_the_default_pass_that_raises_changes_no_gradient_that_was_none(
    workers: int | None,
) -> None:
    """By default a pass holds the gradients of params without a .grad to its end (they
    become their .grad at no cost) and adds accumulated ones as soon as they are final:
    a closure that raises leaves every None .grad None, and the error says how many
    accumulated .grad took this pass's gradient."""
    with lampy.Scope():
        w, b, v = _params(np.float64)
        with lampy.Scope():
            lampy.sum(w * w).backward()
        once = w.grad.copy()  # type: ignore[union-attr]
        calls: list[int] = []
        with lampy.Scope():
            loss = lampy.sum(w * 2.0) + lampy.sum(b * b) + lampy.sum(_failing_after(v, calls))
            with pytest.raises(lampy.BackwardError, match="'failing'") as info:
                loss.backward(workers=workers)
            assert "1 param whose .grad already held" in str(info.value)
        assert b.grad is None and v.grad is None
        np.testing.assert_array_equal(w.grad, once + 2.0)  # type: ignore[arg-type]


def test_a_stale_graph_raises_and_changes_no_gradient(workers: int | None) -> None:
    """A param written in place after an op read it: StaleGraphError, nothing changed."""
    with lampy.Scope():
        w, b, _ = _params(np.float64)
        with lampy.Scope():
            loss = lampy.sum(lampy.tanh(w) * 3.0) + lampy.sum(b * w[0])
            with lampy.in_place([b]) as (value,):
                value += 1.0
            with pytest.raises(lampy.StaleGraphError, match="No gradient was changed"):
                loss.backward(workers=workers)
        assert w.grad is None
        assert b.grad is None


@pytest.mark.parametrize("dtype", DTYPES)
def test_retain_keeps_the_same_intermediate_gradients(dtype: Any, workers: int | None) -> None:
    """retain= with the atomic pass: the retained gradients and the params' gradients are
    bitwise those of backward(atomic=False)."""

    def run(atomic: bool) -> list[bytes]:
        with lampy.Scope():
            w, b, v = _params(dtype)
            h = lampy.tanh(w @ v + b)
            loss = lampy.sum(h * h) * lampy.sum(h)
            loss.backward(retain=[h, loss], workers=workers, atomic=atomic)
            return [a.tobytes() for a in (h.grad, loss.grad, w.grad, b.grad, v.grad)]  # type: ignore[union-attr]

    assert run(True) == run(False)


@pytest.mark.parametrize("dtype", DTYPES)
def test_remat_inside_the_graph_gives_the_gradients_without_remat(dtype: Any) -> None:
    """lampy.remat inside the graph (its recomputation hands params' gradients over to the
    atomic pass running it): bitwise the gradients without remat, and of atomic=False."""

    def run(use_remat: bool, atomic: bool) -> list[bytes]:
        with lampy.Scope():
            rng = np.random.default_rng(1)
            layers = [nn.Linear.init(5, 5, rng=rng, dtype=dtype), nn.Tanh.init()]
            layers += [nn.Linear.init(5, 5, rng=rng, dtype=dtype)]
            params = [p for m in layers for p in m.parameters()]
            x = lampy.param(rng.normal(size=(3, 5)).astype(dtype))

            def block(y: lampy.Variable) -> lampy.Variable:
                for m in layers:
                    y = m(y)
                return y

            with lampy.Scope():
                f = lampy.remat(block) if use_remat else block
                y = f(x)
                # the first layer's weight is also used outside the rematerialised block
                (lampy.sum(y * y) + lampy.sum(params[0] * 0.5)).backward(atomic=atomic)
            return [p.grad.tobytes() for p in [x, *params]]  # type: ignore[union-attr]

    plain = run(False, True)
    assert run(True, True) == plain
    assert run(True, False) == plain


def test_a_root_that_is_a_leaf_and_several_roots() -> None:
    """Roots that are params (alone, repeated, next to an op result) take the atomic pass."""
    with lampy.Scope():
        w, b, _ = _params(np.float64)
        lampy.backward([lampy.sum(w), lampy.sum(b * b), lampy.sum(b)])
        np.testing.assert_array_equal(w.grad, np.ones((4, 4)))  # type: ignore[arg-type]
        np.testing.assert_array_equal(b.grad, 2 * b.value + 1)  # type: ignore[arg-type]
        s = lampy.param(np.float64(2.0))
        lampy.backward([s, s], [np.float64(1.0), np.float64(3.0)])
        assert s.grad == 4.0


def test_the_pass_is_running_while_its_closures_run() -> None:
    """While the atomic pass's closures run, the pass is the running one (what
    lampy.remat hands gradients over to), and only then."""
    seen: list[Any] = []

    def probe(x: lampy.Variable) -> lampy.Variable:
        def d_x(g: np.ndarray, out: np.ndarray) -> None:
            seen.append(_pass.RUNNING.get())
            np.add(out, g, out=out)

        return lampy.op("probe", x.value.copy(), x.zip_backward(d_x))

    with lampy.Scope():
        w, _, _ = _params(np.float64)
        lampy.sum(probe(w)).backward()
    assert len(seen) == 1 and isinstance(seen[0], _pass.Pass)
    assert _pass.RUNNING.get() is None
