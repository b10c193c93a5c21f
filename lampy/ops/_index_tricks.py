"""``lampy.r_`` and ``lampy.c_``: numpy's index tricks that join arrays, Variables among
them, into one differentiable Variable (``lampy.r_[x, 0.0, y]``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyTypeError
from lampy.opkit import Variable, value_of
from lampy.ops._join import concatenate
from lampy.ops._shape import reshape


def _piece(name: str, item: Any) -> Any:
    """One item as numpy's ``r_``/``c_`` reads it: a slice is numpy's ``arange`` (or, with
    a complex step, ``linspace`` with that many points); anything else is an operand."""
    if isinstance(item, slice):
        start = 0 if item.start is None else item.start
        step = 1 if item.step is None else item.step
        if isinstance(step, complex):
            return np.linspace(start, item.stop, int(abs(step)))
        return np.arange(start, item.stop, step)
    if isinstance(item, str):
        raise LampyTypeError(
            f"lampy.{name}: string directives ({item!r}) are not supported; join with "
            "lampy.concatenate(..., axis=...) or lampy.stack for other axes."
        )
    if isinstance(item, Variable):
        return item
    value_of(item, False, f"lampy.{name}")  # refuses strings, objects, ragged lists
    return np.asarray(item)


_COLUMN = {0: (1, 1), 1: (-1, 1)}  # c_'s shapes for a number and a vector


class _Joiner:
    """``obj[a, b, ...]`` joins its items (Variables, arrays, numbers, slices)."""

    def __init__(self, name: str, column: bool) -> None:
        self._name, self._column = name, column

    def __getitem__(self, key: Any) -> Variable:
        items = key if isinstance(key, tuple) else (key,)
        pieces = [_piece(self._name, item) for item in items]
        if self._column:  # numpy's '-1,2,0': 1-d items become columns, 0-d ones (1, 1)
            pieces = [
                reshape(p, (-1, 1))
                if np.ndim(p) == 1
                else reshape(p, (1, 1))
                if np.ndim(p) == 0
                else p
                for p in pieces
            ]
            return concatenate(pieces, axis=-1)
        pieces = [reshape(p, (1,)) if np.ndim(p) == 0 else p for p in pieces]
        return concatenate(pieces, axis=0)

    def __repr__(self) -> str:
        return f"lampy.{self._name}"


r_ = _Joiner("r_", column=False)
"""``lampy.r_[a, b, ...]``: the items joined along the first axis, as ``numpy.r_``
(numbers become 1-element arrays; ``start:stop:step`` is ``arange``, a complex step
``n * 1j`` is ``linspace`` with ``n`` points). A differentiable Variable: each item
that is a Variable gets its slice of the gradient. String directives (``'0,2'``) are
not supported.

Gradient:
    That of ``concatenate``: each item gets its part of ``g``.
"""

c_ = _Joiner("c_", column=True)
"""``lampy.c_[a, b, ...]``: the items joined along the last axis, 1-d items as columns
and numbers as 1x1 arrays, as ``numpy.c_``. A differentiable Variable.

Gradient:
    That of ``concatenate``: each item gets its part of ``g``.
"""

__all__ = ["c_", "r_"]
