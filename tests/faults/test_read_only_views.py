"""Fault cases for ``param(x, copy=False)`` (issue 23, #1.1): a read-only input is never
written, whatever kind of view it is, and neither is an array whose elements share
memory (writing it would tie elements that must differ). ``SGD.step`` and
``lampy.in_place`` raise the documented error and leave the caller's memory alone."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import lampy
from lampy import optim

REFUSED = "lampy must not write"


def _read_only(a: np.ndarray) -> np.ndarray:
    a.flags.writeable = False
    return a


# Each maker takes a writable base array (float64, shape (4, 6)) and returns the array
# given to param(copy=False).
MAKERS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "read-only slice of a writable array": lambda b: _read_only(b[:, :3]),
    "read-only full view": lambda b: _read_only(b.view()),
    "read-only transpose": lambda b: _read_only(b.T),
    "read-only reshape": lambda b: _read_only(b.reshape(6, 4)),
    "read-only view of a read-only view": lambda b: _read_only(b[1:])[::2],
    "broadcast_to of a row": lambda b: np.broadcast_to(b[0], (3, 6)),
    "sliding_window_view": lambda b: sliding_window_view(b[0], 3),
    "writable as_strided with overlapping rows": lambda b: as_strided(
        b[0], shape=(3, 4), strides=(8, 8), writeable=True
    ),
    "writable zero stride": lambda b: as_strided(
        b[0, :2], shape=(5, 2), strides=(0, 8), writeable=True
    ),
}


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS.keys())
def test_sgd_step_refuses_and_leaves_the_callers_memory_alone(
    make: Callable[[np.ndarray], np.ndarray],
) -> None:
    """SGD.step on such a param raises LampyValueError before writing anything; the
    caller's base array is unchanged (it was written, rows left tied)."""
    base = np.arange(24.0).reshape(4, 6)
    before = base.copy()
    with lampy.Scope():
        p = lampy.param(make(base), copy=False)
        (p * p).sum().backward()
        with pytest.raises(lampy.LampyValueError, match=REFUSED):
            optim.SGD([p], lr=0.1).step()
        with pytest.raises(lampy.LampyValueError, match=REFUSED), lampy.in_place([p]) as vs:
            vs[0][...] = 0.0
        assert p.version == 0
    np.testing.assert_array_equal(base, before)


def test_a_bytes_buffer_and_a_read_only_base_are_refused() -> None:
    """Memory that is read-only at its owner (bytes, a read-only array) stays refused."""
    owner = np.arange(6.0)
    owner.flags.writeable = False
    with lampy.Scope():
        for x in (np.frombuffer(bytes(48), dtype=np.float64), owner, owner[1:]):
            p = lampy.param(x, copy=False)
            with pytest.raises(lampy.LampyValueError, match=REFUSED), lampy.in_place([p]):
                pass


def test_the_value_of_a_refused_param_cannot_be_reopened() -> None:
    """The param's value cannot be made writable by numpy either (setflags raises)."""
    base = np.arange(6.0)
    view = base[:4]
    view.flags.writeable = False
    with lampy.Scope():
        p = lampy.param(view, copy=False)
        with pytest.raises(ValueError, match="WRITEABLE"):
            p.node.value.setflags(write=True)
        np.testing.assert_array_equal(p.value, [0.0, 1.0, 2.0, 3.0])


@pytest.mark.parametrize("view", ["whole", "slice", "transpose"])
def test_a_writable_input_is_still_shared_and_written(view: str) -> None:
    """copy=False of a writable, non-overlapping array keeps its promise: no copy, and the
    optimizer writes the new values into the caller's array."""
    base = np.arange(24.0).reshape(4, 6)
    x = {"whole": base, "slice": base[1:3, ::2], "transpose": base.T}[view]
    with lampy.Scope():
        p = lampy.param(x, copy=False)
        assert np.shares_memory(p.value, base)
        p.backward(np.ones(p.shape))
        optim.SGD([p], lr=1.0).step()
        np.testing.assert_array_equal(p.value, x)
    assert (base != np.arange(24.0).reshape(4, 6)).sum() == x.size
