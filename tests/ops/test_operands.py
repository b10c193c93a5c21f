"""Operands that are not numbers (strings, None, objects, dates) are refused by every op
with a LampyTypeError naming the op, before anything is recorded (issue 16 #5: they gave
numpy's bare TypeError / UFuncTypeError, or computed on Python objects)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F

STR3 = np.array(["a", "b", "c"])
OBJ3 = np.array([1.0, 2.0, 3.0], dtype=object)

# (op name in the message, call on x, a float64 param of shape (3,))
BAD: list[tuple[str, Callable[[lampy.Variable], Any]]] = [
    ("add", lambda x: lampy.add(x, "abc")),
    ("add", lambda x: x + None),
    ("add", lambda x: x + object()),
    ("add", lambda x: lampy.add(x, [1, None, 2])),
    ("add", lambda x: x + b"ab"),
    ("add", lambda x: x + np.datetime64("2020-01-01")),
    ("add", lambda x: x + np.str_("a")),
    ("multiply", lambda x: x * STR3),
    ("multiply", lambda x: OBJ3 * x),
    ("exp", lambda x: lampy.exp(OBJ3)),
    ("tanh", lambda x: lampy.tanh(OBJ3)),
    ("sum", lambda x: lampy.sum("abc")),
    ("maximum", lambda x: lampy.maximum(x, "a")),
    ("clip", lambda x: lampy.clip(x, "a", 1.0)),
    ("where", lambda x: lampy.where(x > 0, x, "a")),
    ("concatenate", lambda x: lampy.concatenate([x, STR3])),
    ("matmul", lambda x: lampy.matmul(x, "abc")),
    ("einsum", lambda x: lampy.einsum("i,i->", x, STR3)),
    ("take", lambda x: lampy.take(x, np.array(["a"]))),
    ("equal", lambda x: x == "a"),
    ("inv", lambda x: lampy.linalg.inv(np.array([["a"]]))),
    ("relu", lambda x: F.relu("abc")),
    ("cross_entropy", lambda x: F.cross_entropy(np.ones((1, 3)), np.array(["a"]))),
    ("linear", lambda x: F.linear(STR3[None], np.ones((2, 3)))),
]


@pytest.mark.parametrize(("name", "call"), BAD, ids=[f"{i}-{n}" for i, (n, _) in enumerate(BAD)])
def test_non_numeric_operands_are_a_lampy_type_error_naming_the_op(
    name: str, call: Callable[[lampy.Variable], Any]
) -> None:
    """The message names the op and says what to do; nothing is added to the scope."""
    with lampy.Scope() as scope:
        x = lampy.param([1.0, 2.0, 3.0])
        before = len(scope)
        with pytest.raises(lampy.LampyTypeError, match=rf"^{name}: an operand is .*numbers"):
            call(x)
        assert len(scope) == before


def test_a_module_forward_names_the_op_it_runs() -> None:
    """A module called on strings: the error names the functional op its forward runs."""
    with lampy.Scope():
        layer = lampy.nn.Linear.init(3, 2, rng=np.random.default_rng(0))
        with pytest.raises(lampy.LampyTypeError, match=r"^linear: an operand is array\(\[\['a'"):
            layer(STR3[None])


def test_a_ragged_list_is_a_lampy_value_error() -> None:
    """A nested list of unequal lengths is a LampyValueError naming the op."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        with pytest.raises(lampy.LampyValueError, match=r"^add: an operand could not be made"):
            lampy.add(x, [[1.0], [1.0, 2.0]])


def test_numbers_of_every_kind_are_still_taken() -> None:
    """bool, int, float and complex operands (Python, numpy scalars, arrays) keep working."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        for other in (True, 2, 2.0, np.int8(2), np.float32(2.0), np.array([1, 2]), [True, False]):
            assert (x * other).shape == (2,)
        assert (x + 1j).dtype == np.complex128  # add takes complex values
        with pytest.raises(lampy.DTypeError, match="complex"):  # an ordering op does not
            lampy.maximum(x, 1j)
        with lampy.no_grad():
            assert (x + 1j).dtype == np.complex128


def test_astype_refuses_non_numeric_dtypes() -> None:
    """Casting a Variable to a string or object dtype is a DTypeError (it made a Variable of
    strings that every later op refused)."""
    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        for dtype in ("U3", object, "M8[D]"):
            with pytest.raises(lampy.DTypeError, match="astype: cannot cast to"):
                lampy.astype(x, dtype)
        assert lampy.astype(x, np.float32).dtype == np.float32
