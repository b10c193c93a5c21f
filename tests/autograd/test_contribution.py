"""The Contribution fast path: first contributions kept as buffers, never aliased."""

from __future__ import annotations

import numpy as np
import pytest

import lampy
from lampy.autograd import Contribution
from lampy.testing import check_grad


def test_contribution_called_as_closure_adds_into_out() -> None:
    """A Contribution used as a plain (g, out) closure adds its unbroadcast result."""
    c = lampy.contribution(lambda g: g * 2.0)
    out = np.ones((2, 3))
    c(np.ones((4, 2, 3)), out)
    np.testing.assert_array_equal(out, np.full((2, 3), 9.0))
    assert isinstance(c, Contribution)


def test_sibling_inputs_get_separate_buffers() -> None:
    """In a + b both leaves receive g; their gradient buffers never share memory."""
    with lampy.Scope():
        a, b = lampy.param(np.ones(5)), lampy.param(np.ones(5))
        (a + b).backward(np.arange(5.0))
        assert a.grad is not None and b.grad is not None
        assert not np.shares_memory(a.grad, b.grad)
        a.grad[:] = -1.0
        np.testing.assert_array_equal(b.grad, np.arange(5.0))


def test_seed_is_never_aliased_or_modified() -> None:
    """The caller's seed array is read only: no .grad shares its memory, it is unchanged."""
    seed = np.arange(6.0).reshape(2, 3)
    keep = seed.copy()
    with lampy.Scope():
        x = lampy.param(np.ones(6))
        y = x.reshape(2, 3)
        z = lampy.param(np.ones((2, 3)))
        (y + z).backward(seed, retain=True)
        assert x.grad is not None and z.grad is not None
        assert not np.shares_memory(x.grad, seed)
        assert not np.shares_memory(z.grad, seed)
        x.grad[:] = 7.0
        z.grad[:] = 7.0
        np.testing.assert_array_equal(seed, keep)
        (y + z).backward(seed)  # accumulates into the existing buffers
        np.testing.assert_array_equal(z.grad, 7.0 + keep)


def test_leaf_root_copies_the_seed() -> None:
    """Backward from a param itself stores a copy of the seed, not the caller's array."""
    seed = np.ones(3)
    with lampy.Scope():
        x = lampy.param(np.zeros(3))
        x.backward(seed)
        assert x.grad is not None and not np.shares_memory(x.grad, seed)


def test_retained_intermediate_is_not_given_away() -> None:
    """A retained node's gradient stays its own when its input takes a view of g."""
    with lampy.Scope():
        x = lampy.param(np.ones(4))
        h = x * 3.0
        y = h.reshape(2, 2)
        (y * 1.0).backward(np.ones((2, 2)), retain=[y])
        assert y.grad is not None and h.grad is None
        assert x.grad is not None
        assert not np.shares_memory(y.grad, x.grad)
        np.testing.assert_array_equal(x.grad, np.full(4, 3.0))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_first_contribution_takes_the_input_dtype(dtype: type) -> None:
    """A float64 contribution to a float32 input is cast to float32 when kept as buffer."""
    with lampy.Scope():
        x = lampy.param(np.ones(3, dtype))
        w = lampy.param(np.full(3, 2.0, np.float64))
        (x * w).sum().backward()
        assert x.grad is not None and x.grad.dtype == dtype
        np.testing.assert_array_equal(x.grad, np.full(3, 2.0))


def test_same_input_twice_accumulates() -> None:
    """x + x and x * x: the second contribution adds into the buffer the first created."""
    check_grad(lambda v: v + v, np.arange(3.0))
    check_grad(lambda v: v * v - v, np.arange(3.0))
    with lampy.Scope():
        x = lampy.param(np.arange(3.0))
        (x + x).sum().backward()
        np.testing.assert_array_equal(x.grad, np.full(3, 2.0))


def test_custom_contribution_with_broadcasting() -> None:
    """A user op written with lampy.contribution unbroadcasts like accumulate does."""

    def scale_rows(x: lampy.Variable, w: lampy.Variable) -> lampy.Variable:
        a, b = x.value, w.value
        return lampy.op(
            "scale_rows",
            a * b,
            x.zip_backward(lampy.contribution(lambda g: g * b)),
            w.zip_backward(lampy.contribution(lambda g: g * a)),
        )

    check_grad(scale_rows, np.arange(6.0).reshape(2, 3), np.array([1.0, -2.0, 0.5]))


def test_captured_array_is_never_kept_as_a_buffer() -> None:
    """A contribution returning an array the op captured (fresh=False) is copied."""
    captured = np.arange(3.0)

    def leak(x: lampy.Variable) -> lampy.Variable:
        return lampy.op(
            "leak",
            x.value.copy(),
            x.zip_backward(lampy.contribution(lambda g: captured, fresh=False)),
        )

    with lampy.Scope():
        x = lampy.param(np.ones(3))
        leak(x).backward(np.ones(3))
        assert x.grad is not None and not np.shares_memory(x.grad, captured)
        x.grad[:] = -5.0
        np.testing.assert_array_equal(captured, np.arange(3.0))


def test_view_of_captured_array_is_copied() -> None:
    """A reshaped view of a captured array is not kept as a buffer either."""
    captured = np.arange(4.0)

    def leak(x: lampy.Variable) -> lampy.Variable:
        return lampy.op(
            "leak",
            x.value.copy(),
            x.zip_backward(lampy.contribution(lambda g: captured.reshape(2, 2), fresh=False)),
        )

    with lampy.Scope():
        x = lampy.param(np.ones((2, 2)))
        leak(x).backward(np.ones((2, 2)))
        assert x.grad is not None and not np.shares_memory(x.grad, captured)


def test_contribution_smaller_than_the_input_is_spread() -> None:
    """A contribution constant along an axis (shape 1 there) is broadcast up to the input."""

    def total(x: lampy.Variable) -> lampy.Variable:
        return lampy.op(
            "total",
            np.asarray(x.value.sum()),
            x.zip_backward(lampy.contribution(lambda g: np.reshape(g, (1,)), fresh=False)),
        )

    check_grad(total, np.arange(3.0))
    with lampy.Scope():
        x = lampy.param(np.arange(3.0))
        (total(x) + total(x)).backward()
        np.testing.assert_array_equal(x.grad, np.full(3, 2.0))
        assert x.grad is not None and x.grad.flags.writeable
