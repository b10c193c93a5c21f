"""lampy's engine with values of another array namespace: scopes release them, the
ledger counts them (checked against tracemalloc), backprop keeps its rules (spent and
stale graphs, retained graphs, seeds, budgets), and what cannot work is refused with a
clear error (mixed namespaces or devices, plain closures)."""

from __future__ import annotations

import gc
import tracemalloc
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.experimental.array_api as lx
from lampy.opkit import namespace_op, param_of, replace_values
from tests.backends.namespaces import BACKENDS, FOREIGN, Backend

strict = pytest.importorskip("array_api_strict")
CPU = strict.Device("CPU_DEVICE")
DEVICE1 = strict.Device("device1")


def _ones(n: int, device: Any = CPU) -> Any:
    return strict.asarray(np.linspace(-1.0, 1.0, n), device=device)


# ----------------------------------------------------------------- refusals


def test_mixed_namespaces_are_refused_naming_the_op_and_both() -> None:
    """An op given a numpy and an array_api_strict operand raises a ``LampyTypeError``
    naming the op, both namespaces and the fix, before computing anything."""
    with lampy.Scope():
        a = lx.param(np.ones(3))
        b = lx.param(_ones(3))
        with pytest.raises(
            lampy.LampyTypeError, match=r"^add: .*numpy and array_api_strict.*asarray"
        ):
            lx.add(a, b)
        with pytest.raises(lampy.LampyTypeError, match=r"^matmul: .*array_api_strict and numpy"):
            lx.matmul(b, np.ones(3))
        logits = lx.param(strict.reshape(_ones(6), (2, 3)))
        with pytest.raises(lampy.LampyTypeError, match=r"^cross_entropy: .*numpy"):
            lx.cross_entropy(logits, np.array([0, 2]))


def test_two_devices_of_one_namespace_are_refused() -> None:
    """Operands of one namespace on two devices raise a ``LampyTypeError`` naming both
    devices (lampy moves nothing between devices on its own)."""
    with lampy.Scope():
        a = lx.param(_ones(3, CPU))
        b = lx.param(_ones(3, DEVICE1))
        with pytest.raises(lampy.LampyTypeError, match=r"^multiply: .*two devices.*device1"):
            lx.multiply(a, b)


def test_a_plain_closure_over_another_namespace_is_a_clear_error() -> None:
    """A plain ``(g, out)`` closure, which adds into a numpy buffer in place, meeting a
    gradient of another namespace stops the pass with a ``BackwardError`` whose cause
    says to give contributions."""
    with lampy.Scope():
        x = lx.param(_ones(3))
        y = namespace_op("twice", 2 * x.value, param_of(x, lambda g, out: None))
        with pytest.raises(lampy.BackwardError, match="twice") as info:
            lx.sum(y).backward()
        assert isinstance(info.value.__cause__, lampy.LampyTypeError)
        assert "contrib_of" in str(info.value.__cause__)


def test_a_seed_must_be_of_the_roots_namespace() -> None:
    """``backward(grad=...)`` takes an array of the root's namespace and device (a numpy
    seed is refused); a correct seed scales the gradient."""
    with lampy.Scope():
        x = lx.param(_ones(3))
        y = lx.multiply(x, 3.0)
        with pytest.raises(lampy.LampyTypeError, match="array_api_strict"):
            y.backward(np.ones(3))
        y.backward(strict.asarray([1.0, 2.0, 3.0]))
        np.testing.assert_array_equal(np.asarray(x.grad), [3.0, 6.0, 9.0])


def test_a_complex_result_that_needs_a_gradient_is_refused() -> None:
    """As ``lampy.op``, a complex value with an input needing a gradient is a
    ``DTypeError`` (the gradient would be lost)."""
    with lampy.Scope():
        x = lx.param(_ones(2))
        z = strict.astype(x.value, strict.complex128)
        with pytest.raises(lampy.DTypeError, match="complex128"):
            namespace_op("to_complex", z, param_of(x, lambda g, out: None))


# ----------------------------------------------------------------- the engine's rules


@pytest.mark.parametrize("backend", FOREIGN)
def test_scope_exit_releases_the_values_and_the_ledger_returns_to_zero(backend: Backend) -> None:
    """On exit every value is released (``ReleasedError`` after) and the scope's ledger,
    which counted values and gradients, is back to 0."""
    with lampy.Scope() as outer:
        with lampy.Scope() as inner:
            x = lx.param(backend.array(np.ones(100)))
            y = lx.tanh(x)
            lx.sum(y).backward()  # the sum, which no Variable holds, is freed at once
            assert inner.memory.live_bytes == 100 * 8 * 3  # x, y, x.grad
        assert inner.memory.live_bytes == 0 and outer.memory.live_bytes == 0
        with pytest.raises(lampy.ReleasedError):
            y.value


def test_the_ledger_counts_values_saved_arrays_and_grads_as_they_come_and_go() -> None:
    """Byte counts along a graph's life: a value while it can be read or a closure holds
    it, the ``.grad`` once committed, nothing of what a spent op saved."""
    n = 1000 * 8
    with lampy.Scope() as s:
        x = lx.param(_ones(1000))
        y = lx.tanh(x)  # its closure saves its own value
        z = lx.multiply(y, x)  # saves both operands: graph values, not counted twice
        assert s.memory.live_bytes == 3 * n
        del y  # still held by the closures: still counted
        gc.collect()
        assert s.memory.live_bytes == 3 * n
        lx.sum(z).backward()  # the spent closures free y
        assert s.memory.live_bytes == 3 * n  # x, z, x.grad
        x.zero_grad()
        assert s.memory.live_bytes == 2 * n


@pytest.mark.parametrize("seed", range(4))
def test_the_ledger_agrees_with_tracemalloc_over_random_programs(seed: int) -> None:
    """On array_api_strict (numpy's memory underneath, which tracemalloc sees), the
    scope's live bytes equal the memory actually held, within the Python objects'
    overhead, after the forward pass, after backward and after dropping Variables."""
    rng = np.random.default_rng(seed)
    n = 20_000  # 160 KB arrays: Python objects are noise beside them
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]

        def check(s: lampy.Scope) -> None:
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - base
            assert abs(s.memory.live_bytes - held) < 32_000, (s.memory.live_bytes, held)

        with lampy.Scope() as s:
            w = lx.param(strict.asarray(rng.uniform(-1, 1, n)))
            v = lx.param(strict.asarray(rng.uniform(-1, 1, n)))
            h, kept = w, []
            steps = [
                lx.tanh,
                lambda h: lx.multiply(h, v),
                lambda h: lx.add(h, 0.5),
                lx.relu,
                lambda h: lx.exp(lx.tanh(h)),
                lambda h: lx.subtract(v, h),
            ]
            for k in rng.integers(0, len(steps), 8):
                h = steps[k](h)
                if rng.random() < 0.4:
                    kept.append(h)
            loss = lx.mean(h)
            check(s)
            loss.backward()
            check(s)
            del h, loss
            kept.clear()
            check(s)
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_second_pass_through_a_spent_graph_raises(backend: Backend) -> None:
    """The first pass frees the closures as it goes: a second one is a
    ``SpentGraphError``, as on the numpy path."""
    with lampy.Scope():
        x = lx.param(backend.array(np.ones(3)))
        y = lx.sum(lx.tanh(x))
        y.backward()
        with pytest.raises(lampy.SpentGraphError):
            y.backward()


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_step_makes_the_graph_that_read_the_params_stale(backend: Backend) -> None:
    """``SGD.step`` bumps each param's version (``replace_values``), so backprop through
    a graph built before it raises ``StaleGraphError``."""
    with lampy.Scope():
        x = lx.param(backend.array(np.ones(3)))
        opt = lx.SGD([x], lr=0.5)
        y = lx.sum(lx.multiply(x, x))
        y.backward(retain=True)
        opt.step()
        assert x.version == 1
        with pytest.raises(lampy.StaleGraphError):
            y.backward()


@pytest.mark.parametrize("backend", FOREIGN)
def test_a_retained_graph_accumulates_without_writing_into_the_first_grad(
    backend: Backend,
) -> None:
    """A second pass adds into ``.grad`` out of place: the sum is a new array and the
    first gradient array is left as it was (the engine writes into no array of another
    namespace)."""
    with lampy.Scope():
        x = lx.param(backend.array(np.array([1.0, 2.0])))
        y = lx.sum(lx.multiply(x, x))
        y.backward(retain=True)
        first = x.grad
        y.backward()
        assert x.grad is not first
        np.testing.assert_array_equal(backend.to_numpy(first), [2.0, 4.0])
        np.testing.assert_array_equal(backend.to_numpy(x.grad), [4.0, 8.0])


@pytest.mark.parametrize("backend", FOREIGN)
def test_zero_grad_without_none_leaves_zeros_of_the_namespace(backend: Backend) -> None:
    """``zero_grad(set_to_none=False)`` gives ``.grad`` zeros of the param's namespace
    and device (a new array)."""
    with lampy.Scope():
        x = lx.param(backend.array(np.ones(2)))
        lx.sum(x).backward()
        x.zero_grad(set_to_none=False)
        assert backend.holds(x.grad)
        np.testing.assert_array_equal(backend.to_numpy(x.grad), [0.0, 0.0])
        lampy.autograd.zero_grads([x], set_to_none=False)
        assert backend.holds(x.grad)


def test_a_budget_refuses_a_value_past_it() -> None:
    """A scope's budget counts values of another namespace: the op that passes it raises
    ``MemoryBudgetError`` naming the op, and the scope is intact."""
    with lampy.Scope(budget=20_000) as s:
        x = lx.param(_ones(1000))
        y = lx.tanh(x)
        with pytest.raises(lampy.MemoryBudgetError, match=r"'exp'.*float64"):
            lx.exp(y)
        assert s.memory.live_bytes == 16_000


def test_no_grad_records_no_op() -> None:
    """Under ``no_grad`` a result needs no gradient and has no op."""
    with lampy.Scope(), lampy.no_grad():
        y = lx.tanh(lx.param(_ones(3)))
        assert not y.needs_grad and y.op is None


def test_replace_values_checks_every_value_before_changing_any() -> None:
    """A wrong shape for the second param leaves the first unchanged (version 0)."""
    with lampy.Scope():
        a, b = lx.param(_ones(2)), lx.param(_ones(3))
        with pytest.raises(lampy.ShapeError, match="shape"):
            replace_values([a, b], [_ones(2), _ones(2)])
        assert a.version == 0 and b.version == 0
        with pytest.raises(lampy.LampyTypeError, match="device"):
            replace_values([a], [_ones(2, DEVICE1)])


def test_values_are_the_namespaces_arrays() -> None:
    """``.value`` is the array itself, on its device; ``repr`` shows it; the
    prototype's leaves of numpy arrays are lampy's own."""
    with lampy.Scope():
        x = lx.param(_ones(3, DEVICE1))
        assert x.value.device == DEVICE1 and x.dtype == strict.float64
        assert "Array(" in repr(x)
        assert type(lx.param(np.ones(2)).value) is np.ndarray
