"""Per-scope memory accounting (Scope.memory) and budgets (Scope(budget=...))."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy import nn


def owned_bytes(*scopes: lampy.Scope) -> tuple[int, int]:
    """Sum of nbytes of the values (arrays that own their memory: not views, nor the
    numpy scalars 0-d op results are held as) and gradients the scopes own, and how many
    of those arrays hold bytes."""
    total = arrays = 0
    for s in scopes:
        for node in s.owned_nodes():
            if type(node.value) is np.ndarray and node.value.base is None:
                total += node.value.nbytes
                arrays += node.value.nbytes > 0
            if node.grad is not None:
                total += node.grad.nbytes
                arrays += node.grad.nbytes > 0
    return total, arrays


@given(
    shapes=st.lists(st.tuples(st.integers(0, 5), st.integers(1, 4)), min_size=1, max_size=6),
    dtype=st.sampled_from([np.float32, np.float64]),
)
def test_live_bytes_equal_the_sum_of_nbytes_owned(shapes, dtype):
    """While every Variable is held, live_bytes and arrays are exactly the nbytes owned,
    children included, and return to the earlier values when the child exits."""
    with lampy.Scope() as outer:
        xs = [lampy.param(np.ones(s, dtype)) for s in shapes]
        before = outer.memory
        assert (before.live_bytes, before.arrays) == owned_bytes(outer)
        with lampy.Scope() as inner:
            ys = [x * 2 for x in xs]
            views = [y.reshape(-1) for y in ys]  # views: 0 bytes
            total = sum(z.sum() for z in views)
            total.backward()
            assert (inner.memory.live_bytes, inner.memory.arrays) == owned_bytes(inner)
            assert outer.memory.live_bytes == owned_bytes(outer, inner)[0]
            assert outer.memory.peak_bytes >= outer.memory.live_bytes
        after = outer.memory
        assert after.live_bytes == owned_bytes(outer)[0]
        # only the params' new gradient buffers remain from the child's work
        assert after.live_bytes == before.live_bytes + sum(x.value.nbytes for x in xs)


def test_value_nothing_saved_is_refunded_at_once():
    """An intermediate whose Variable is gone and that no closure saved is refunded."""
    with lampy.Scope() as s:
        x = lampy.param(np.ones(1000))
        base = s.memory.live_bytes
        y = lampy.exp(x)  # exp's closure saves its output y
        z = -y  # negative saves nothing
        del z
        assert s.memory.live_bytes == base + 8000  # y stays (held and saved)
        del y
        assert s.memory.live_bytes == base + 8000  # saved by exp's closure: still charged
        w = x + 1.0  # add saves nothing
        del w
        assert s.memory.live_bytes == base + 8000


def test_peak_includes_children_and_kept_values_move_to_the_parent():
    with lampy.Scope() as outer:
        with lampy.Scope() as inner:
            a = lampy.const(np.zeros(100))
            b = lampy.const(np.zeros(50))
            inner.keep(b)
            assert outer.memory.live_bytes == 1200
        assert outer.memory.live_bytes == 400
        assert outer.memory.peak_bytes == 1200
        del a
        outer.reset_peak()
        assert outer.memory.peak_bytes == 400


def test_optimizer_steps_keep_live_bytes_flat():
    rng = np.random.default_rng(0)
    with lampy.Scope() as run:
        model = nn.Linear.init(4, 3, rng=rng)
        opt = lampy.optim.SGD(model.parameters(), lr=0.1)
        seen = []
        for _ in range(3):
            with lampy.Scope():
                (model(np.ones((2, 4), np.float32)) ** 2).sum().backward()
            opt.step()
            opt.zero_grad()
            seen.append(run.memory.live_bytes)
        assert seen[0] == seen[1] == seen[2]


@pytest.mark.parametrize("set_to_none", [True, False])
@pytest.mark.parametrize("via", ["model", "optimizer"])
def test_batched_gradient_counts_are_exact_per_scope(set_to_none, via):
    """A backward pass commits the gradients of params owned by two scopes (an outer
    one and the model's, with the step scope open below them), and zero_grad resets
    them: each scope's count is the sum of nbytes it owns after each, the peak noted."""
    rng = np.random.default_rng(1)
    with lampy.Scope() as outer:
        extra = lampy.param(np.ones(3, np.float32))
        with lampy.Scope() as models:
            model = nn.Sequential(nn.Linear.init(4, 5, rng=rng), nn.Linear.init(5, 3, rng=rng))
            params = [*model.parameters(), extra]
            opt = lampy.optim.SGD(params, lr=0.1)
            base = models.memory.live_bytes
            with lampy.Scope():
                ((model(np.ones((2, 4), np.float32)) * extra) ** 2).sum().backward()
            grads = sum(p.grad.nbytes for p in model.parameters())
            assert models.memory.live_bytes == base + grads
            assert (models.memory.live_bytes, models.memory.arrays) == owned_bytes(models)
            assert (outer.memory.live_bytes, outer.memory.arrays) == tuple(
                map(sum, zip(owned_bytes(outer), owned_bytes(models), strict=True))
            )
            peak = models.memory.peak_bytes
            if via == "model":
                model.zero_grad(set_to_none)
                extra.zero_grad(set_to_none)
            else:
                opt.zero_grad(set_to_none)
            expected = base if set_to_none else base + grads
            assert models.memory.live_bytes == expected
            assert models.memory.peak_bytes == peak
            assert (outer.memory.live_bytes, outer.memory.arrays) == tuple(
                map(sum, zip(owned_bytes(outer), owned_bytes(models), strict=True))
            )
            assert all((p.grad is None) == set_to_none for p in params)


def test_zero_grad_of_a_released_param_changes_nothing():
    """Optimizer.zero_grad with a param whose scope exited raises before any .grad is
    reset (it used to reset the params listed before it)."""
    with lampy.Scope():
        kept = lampy.param(np.ones(2))
        with lampy.Scope():
            gone = lampy.param(np.ones(2))
            opt = lampy.optim.SGD([kept, gone], lr=0.1)
            (kept * gone).sum().backward()
        with pytest.raises(lampy.ReleasedError):
            opt.zero_grad()
        assert kept.grad is not None


@pytest.mark.parametrize(
    ("budget", "expected"),
    [(1000, 1000), ("2 KiB", 2048), ("1.5 GiB", 3 * 2**29), ("200MB", 200 * 10**6), ("64k", 65536)],
)
def test_budget_units(budget, expected):
    assert lampy.Scope(budget=budget).memory.budget == expected


@pytest.mark.parametrize("budget", [0, -5, "0 MB", "1.5 parsecs", "lots", 1.5, True])
def test_bad_budgets_are_clear_errors(budget):
    with pytest.raises(lampy.LampyError, match="budget"):
        lampy.Scope(budget=budget)


def test_budget_error_before_allocating_leaves_the_scope_intact():
    """A binary op whose output would pass the budget raises before computing it; the
    message names the op, the sizes and the largest owner; the scope still works."""
    with lampy.Scope(budget="100 KiB") as s:
        x = lampy.param(np.ones((100, 100)))  # 80,000 bytes
        before = (s.memory.live_bytes, len(s))
        with pytest.raises(lampy.MemoryBudgetError) as info:
            x * 2.0
        message = str(info.value)
        for part in ("'multiply'", "78.12 KiB", "100.00 KiB", "'param', shape (100, 100)", "remat"):
            assert part in message
        assert (s.memory.live_bytes, len(s)) == before
        y = (x[:10] * 2.0).sum()  # small ops still fit
        # x's gradient buffer (80,000 bytes) does not: the pass checks it before
        # allocating it, and no .grad changes
        with pytest.raises(lampy.MemoryBudgetError, match=r"'backward'.*78.12 KiB"):
            y.backward()
        assert x.grad is None
    assert lampy.autograd.current_or_none() is None


def test_a_budget_bounds_the_gradient_buffers_of_a_step():
    """The gradient buffers a backward pass makes count in its scope's budget: a step
    that fits with them passes, and the count after it holds the new .grad."""
    with lampy.Scope(budget="200 KiB") as s:
        x = lampy.param(np.ones((100, 100)))  # 80,000 bytes
        (x[:10] * 2.0).sum().backward()
        assert x.grad is not None
        assert s.memory.live_bytes == 160_000


def test_budget_error_after_allocating_for_other_ops():
    """An op that does not know its size in advance is checked right after: the new
    array is dropped and the scope keeps what it had."""
    with lampy.Scope() as outer:
        with lampy.Scope(budget=10_000) as s:
            x = lampy.const(np.ones(1000))
            with pytest.raises(lampy.MemoryBudgetError, match="'exp'"):
                lampy.exp(x)
            assert s.memory.live_bytes == 8000
            assert len(s) == 1
        assert outer.memory.live_bytes == 0


def test_budget_of_an_enclosing_scope_bounds_its_children():
    with lampy.Scope(budget=20_000):
        a = lampy.const(np.ones(1000))
        with lampy.Scope(), pytest.raises(lampy.MemoryBudgetError):
            a + a + a  # the second sum passes the outer budget
        assert float(a.value.sum()) == 1000.0


def test_enclosing_peaks_are_exact_with_nested_scopes():
    """An op charges its own scope's ledger only; the enclosing ones take the changes in
    when read, with the peak their total reached in between (not only the total now)."""
    with lampy.Scope() as outer:
        w = lampy.param(np.zeros(1000))  # 8,000 bytes in the outer scope
        with lampy.Scope() as step:
            x = lampy.const(np.zeros(2000))  # 16,000: the outer total is 24,000
            del x  # freed at once (nothing saved it)
            y = lampy.const(np.zeros(500))  # 4,000
            assert outer.memory.live_bytes == 12_000
            assert outer.memory.peak_bytes == 24_000
            with lampy.Scope() as inner:
                z = lampy.const(np.zeros(3000))  # 24,000: the outer total is 36,000
                del z
                assert inner.memory.live_bytes == 0 and inner.memory.peak_bytes == 24_000
            assert step.memory.peak_bytes == 28_000  # its own 4,000 and the inner 24,000
            assert outer.memory.peak_bytes == 36_000
            loss = (w * y[0]).sum()
            loss.backward()  # w.grad (8,000) is charged to the outer scope meanwhile
            # w, y and w.grad; y[0] and the loss are 0-d, held as numpy scalars: not counted
            assert outer.memory.live_bytes == 8_000 + 4_000 + 8_000
        assert outer.memory.live_bytes == 16_000  # w and its gradient
        assert outer.memory.peak_bytes == 36_000
        assert outer.memory.arrays == 2
