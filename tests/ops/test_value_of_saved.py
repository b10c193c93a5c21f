"""The operand helpers: value_of copies a writable array an op keeps, and gives a
read-only view of one it does not keep."""

from __future__ import annotations

import numpy as np

import lampy
from lampy.ops._operands import value_of


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
