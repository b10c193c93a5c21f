"""The operand helpers: value_of copies a writable array an op keeps (or a read-only
view of memory still writable elsewhere), and gives a read-only view of one it does not
keep."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._memory import private_copy, reaches_writable
from lampy.opkit._operands import value_of


def test_value_of_copies_a_writable_array_that_is_saved() -> None:
    """saved=True (the default): a read-only copy; the caller's array stays writable."""
    a = np.arange(4.0)
    v = value_of(a)
    assert not np.shares_memory(v, a) and not v.flags.writeable and a.flags.writeable
    a[0] = 9.0
    assert v[0] == 0.0


def test_value_of_views_a_writable_array_that_is_not_saved() -> None:
    """saved=False: a read-only view of the same memory, no copy; the caller's array
    keeps its flags; read-only arrays, Variables and scalars are taken as they are."""
    a = np.arange(4.0)
    v = value_of(a, saved=False)
    assert np.shares_memory(v, a) and not v.flags.writeable and a.flags.writeable
    ro = np.arange(3.0)
    ro.flags.writeable = False
    assert value_of(ro, saved=False) is ro and value_of(ro) is ro
    assert value_of(2.5, saved=False) == 2.5
    with lampy.Scope():
        x = lampy.param(np.ones(2))
        assert value_of(x, saved=False) is x.value


def test_an_unsaved_view_never_becomes_a_value_that_aliases_the_caller() -> None:
    """A view taken with saved=False and returned as an op's value is copied by
    lampy.op, so a later change to the caller's array does not reach the Variable."""
    a = np.arange(4.0)
    with lampy.Scope():
        y = lampy.op("identity", value_of(a, saved=False))
        a[0] = 9.0
        assert y.value[0] == 0.0


def test_a_read_only_view_of_writable_memory_is_copied_when_saved() -> None:
    """np.broadcast_to of a writable array is read-only, but writing the array changes
    it: an op that saves it gets a private copy, so the gradient is the one of the
    forward pass. The copy is of the owner's memory (48 bytes), not of the broadcast."""
    a = np.arange(6.0)
    b = np.broadcast_to(a, (1000, 6))
    v = value_of(b)
    assert not np.shares_memory(v, a) and not v.flags.writeable
    assert v.strides == b.strides and v.base is not None and v.base.nbytes == a.nbytes
    with lampy.Scope():
        x = lampy.param(np.ones(6))
        y = (x * b).sum()
        a[:] = 100.0
        y.backward()
        np.testing.assert_array_equal(x.grad, 1000.0 * np.arange(6.0))


def test_window_and_reversed_views_are_copied_keeping_their_layout() -> None:
    """sliding_window_view (its owner sits behind numpy's stride-tricks holder) and a
    reversed, strided, read-only slice: equal values, no shared memory, no growth."""
    a = np.arange(10.0)
    w = np.lib.stride_tricks.sliding_window_view(a, 4)
    r = a[::-3]
    r.flags.writeable = False
    for view in (w, r):
        v = value_of(view)
        np.testing.assert_array_equal(v, view)
        assert not np.shares_memory(v, a) and v.base is not None and v.base.nbytes == a.nbytes
    a[:] = -1.0
    assert value_of(w)[0, 0] == -1.0  # a new call reads the array as it is now


def test_a_read_only_slice_of_a_large_array_copies_the_slice_only() -> None:
    """A batch marked read-only but sliced from a writable dataset: the copy spans the
    batch's bytes, not the dataset's."""
    data = np.arange(100_000, dtype=np.float32).reshape(1000, 100)
    batch = data[10:42]
    batch.flags.writeable = False
    v = value_of(batch)
    np.testing.assert_array_equal(v, data[10:42])
    assert v.base is not None and v.base.nbytes == batch.nbytes
    columns = data[5:9, ::-7]  # strided and reversed: the rows it spans
    columns.flags.writeable = False
    w = value_of(columns)
    np.testing.assert_array_equal(w, data[5:9, ::-7])
    assert w.base is not None and w.base.nbytes <= 4 * data.strides[0]
    data[:] = 0.0
    assert v[0, 0] == 1000.0 and w[0, 0] == 599.0


def test_memory_that_nothing_can_write_is_not_copied() -> None:
    """A read-only view of a read-only array, an array over immutable bytes: as they
    are. A read-only view over a bytearray (writable memory): copied."""
    ro = np.arange(4.0)
    ro.flags.writeable = False
    view = ro[1:]
    assert value_of(view) is view
    immutable = np.frombuffer(b"abcdefgh" * 2, dtype=np.float64)
    assert value_of(immutable) is immutable
    over = np.frombuffer(bytearray(16), dtype=np.float64).view()
    over.flags.writeable = False
    assert value_of(over) is not over
    assert value_of(over, saved=False) is over  # not kept: read now, no copy


def test_an_op_value_viewing_writable_memory_through_a_read_only_view_is_copied() -> None:
    """lampy.op's own check: a value that is a view of a read-only view of the caller's
    writable array is copied, as one of the writable array itself is."""
    a = np.arange(3.0)
    with lampy.Scope():
        y = lampy.op("identity", np.broadcast_to(a, (2, 3)))
        a[:] = 7.0
        np.testing.assert_array_equal(y.value, np.broadcast_to(np.arange(3.0), (2, 3)))


@settings(deadline=None)
@given(
    shape=st.lists(st.integers(0, 4), min_size=0, max_size=3),
    steps=st.lists(st.sampled_from([1, 2, -1, -2]), min_size=3, max_size=3),
    transpose=st.booleans(),
    order=st.sampled_from("CF"),
)
def test_private_copy_of_any_strided_view(
    shape: list[int], steps: list[int], transpose: bool, order: str
) -> None:
    """Any slice (negative steps included), transpose, of a C or F array: the private
    copy equals the view, shares no memory with it, and is no larger than the owner."""
    root = np.asarray(np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape), order=order)
    view = root[(*(slice(None, None, s) for s in steps[: root.ndim]), ...)]
    if transpose:
        view = view.T
    view.flags.writeable = False
    assert reaches_writable(view)
    mine = private_copy(view)
    np.testing.assert_array_equal(mine, view)
    assert mine.shape == view.shape and mine.dtype == view.dtype
    assert not np.shares_memory(mine, root)
    owner = mine if mine.base is None else mine.base
    assert owner.nbytes <= max(root.nbytes, view.nbytes)
    if view.size:  # no more than the bytes the view spans
        lo = sum(min(0, (n - 1) * st) for n, st in zip(view.shape, view.strides, strict=True))
        hi = sum(max(0, (n - 1) * st) for n, st in zip(view.shape, view.strides, strict=True))
        assert owner.nbytes <= hi - lo + view.itemsize
