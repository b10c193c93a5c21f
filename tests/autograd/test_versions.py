"""Version counters: an in-place write into a param after an op read it makes backprop
through that op a StaleGraphError, raised before any gradient changes."""

from __future__ import annotations

import copy
import pickle

import numpy as np
import pytest

import lampy
from lampy import nn, optim


def test_a_step_between_forward_and_backward_is_a_stale_graph_error() -> None:
    """opt.step() between a forward and its backward: StaleGraphError naming the param,
    the op, both versions and the fix; no .grad changes."""
    with lampy.Scope():
        w = lampy.param(np.ones(3))
        opt = optim.SGD([w], lr=0.1)
        (w * 2.0).sum().backward()
        before = w.grad.copy()  # type: ignore[union-attr]
        loss = (w * w).sum()
        opt.step()
        with pytest.raises(lampy.StaleGraphError) as info:
            loss.backward()
        message = str(info.value)
        assert "'multiply'" in message
        assert "version 0 then, 1 now" in message
        assert "'param', shape (3,)" in message
        assert "step after backward" in message
        np.testing.assert_array_equal(w.grad, before)  # type: ignore[arg-type]


def test_the_version_counts_in_place_writes() -> None:
    """Every in-place write lampy performs adds one: in_place, optimizer steps,
    load_state_dict."""
    with lampy.Scope():
        model = nn.Linear.init(2, 2, rng=np.random.default_rng(0))
        assert model.weight.version == 0
        with lampy.in_place([model.weight]) as (value,):
            value += 1.0
        assert model.weight.version == 1
        model.load_state_dict(model.state_dict())
        assert model.weight.version == 2
        opt = optim.Adam(model.parameters(), lr=0.1)
        with lampy.Scope():
            model(np.ones((1, 2), np.float32)).sum().backward()
        opt.step()
        assert model.weight.version == 3


def test_backward_after_the_step_and_a_new_forward_is_fine() -> None:
    """The usual loop (forward, backward, step; forward again) raises nothing."""
    with lampy.Scope():
        w = lampy.param(np.ones(3))
        opt = optim.SGD([w], lr=0.1)
        for _ in range(3):
            with lampy.Scope():
                (w * w).sum().backward()
            opt.step()
            opt.zero_grad()
        np.testing.assert_allclose(w.value, 0.8**3 * np.ones(3))


def test_load_state_dict_between_forward_and_backward_is_caught() -> None:
    """load_state_dict writes in place too: a graph built before it is stale."""
    with lampy.Scope():
        model = nn.Linear.init(3, 1, rng=np.random.default_rng(1))
        out = model(np.ones((2, 3), np.float32)).sum()
        model.load_state_dict({k: np.zeros_like(v) for k, v in model.state_dict().items()})
        with pytest.raises(lampy.StaleGraphError, match="linear"):
            out.backward()
        assert model.weight.grad is None


def test_an_op_after_the_write_is_not_stale() -> None:
    """Only ops that read the param before the write are stale; later ones are fine."""
    with lampy.Scope():
        w = lampy.param(np.ones(2))
        with lampy.in_place([w]) as (v,):
            v *= 3.0
        (w * w).sum().backward()
        np.testing.assert_array_equal(w.grad, [6.0, 6.0])  # type: ignore[arg-type]


def test_in_place_refuses_memory_lampy_does_not_own() -> None:
    """A param made with copy=False from a read-only array is never written: in_place
    (and so opt.step()) raises a clear error and the caller's array is unchanged."""
    ro = np.ones(3)
    ro.setflags(write=False)
    with lampy.Scope():
        w = lampy.param(ro, copy=False)
        opt = optim.SGD([w], lr=0.1)
        with lampy.Scope():
            w.sum().backward()
        with pytest.raises(lampy.LampyValueError, match=r"read-only memory.*lampy.param\(x\)"):
            opt.step()
        np.testing.assert_array_equal(ro, np.ones(3))
        assert not ro.flags.writeable
        assert w.version == 0


def test_in_place_refuses_frombuffer_memory() -> None:
    """np.frombuffer of bytes (read-only, not owning its memory): a clear error too."""
    buf = np.frombuffer(bytes(24), dtype=np.float64)
    with lampy.Scope():
        w = lampy.param(buf, copy=False)
        with pytest.raises(lampy.LampyValueError, match="does not own"), lampy.in_place([w]):
            pass


def test_in_place_with_a_writable_shared_array_writes_through() -> None:
    """copy=False from a writable array shares it: the write reaches the caller's array
    (as torch.from_numpy), and the array's own flags are never changed."""
    mine = np.ones(2)
    with lampy.Scope():
        w = lampy.param(mine, copy=False)
        assert not w.value.flags.writeable
        with lampy.in_place([w]) as (v,):
            v += 1.0
        assert mine.flags.writeable
        np.testing.assert_array_equal(mine, [2.0, 2.0])


def test_in_place_refuses_op_results() -> None:
    """Op results belong to a graph: writing one in place is an error."""
    with lampy.Scope():
        y = lampy.param(1.0) * 2.0
        with pytest.raises(lampy.LampyTypeError, match="only leaves"):
            lampy.in_place([y])


# ------------------------------------------------------------------ copies


def test_copies_of_a_variable_belong_to_the_current_scope() -> None:
    """copy.copy and copy.deepcopy give a new Variable of the current scope (a param's
    copy is a param), released when that scope exits: no copy escapes a scope."""
    with lampy.Scope():
        w = lampy.param(np.full(3, 2.0))
        with lampy.Scope() as inner:
            c = copy.copy(w)
            d = copy.deepcopy(w)
            e = copy.copy(w * 1.0)
            assert len(inner) == 4
            assert c.needs_grad and d.needs_grad and not e.needs_grad
            assert c is not w and not np.shares_memory(c.value, w.value)
        for v in (c, d, e):
            assert v.is_released
            with pytest.raises(lampy.ReleasedError):
                v.value


def test_copying_without_a_scope_is_an_error() -> None:
    """A copy made where no scope is open raises NoScopeError."""
    with lampy.Scope():
        w = lampy.param(1.0)
        box: list[lampy.Variable] = [w]
    with pytest.raises(lampy.ReleasedError):
        copy.copy(box[0])


def test_pickling_a_variable_is_a_clear_error() -> None:
    """pickle.dumps of a Variable says graphs are not serialisable and what to use."""
    with lampy.Scope():
        w = lampy.param(1.0)
        with pytest.raises(lampy.LampyTypeError, match=r"lampy\.save"):
            pickle.dumps(w)
