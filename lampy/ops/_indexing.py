"""Indexing: ``x[index]`` with basic and advanced indices."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import BadIndexError
from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, value_of


def _plain_index(index: Any) -> tuple[Any, bool]:
    """The index with Variables replaced by their values, and whether it is advanced."""
    if not isinstance(index, tuple):
        index = (index,)
    items = []
    advanced = False
    for item in index:
        if type(item) is Variable:
            item = item.value
        if isinstance(item, (list, np.ndarray)):
            item = np.asarray(item)
            if item.dtype.kind not in "iub":
                raise BadIndexError(
                    f"getitem: index arrays must hold integers or booleans, got dtype "
                    f"{item.dtype}; cast with `.astype(int)`."
                )
            advanced = True
        elif isinstance(item, (bool, np.bool_)):
            advanced = True  # a scalar boolean is an advanced index in numpy
        items.append(item)
    return tuple(items), advanced


def getitem(x: Any, index: Any) -> Variable:
    """``x[index]`` as numpy does it: ints, slices (with steps), ``...``, ``None``, boolean
    masks and integer arrays, in any combination numpy allows.

    Gradient:
        ``dx[index] += g``; repeated integer indices accumulate (``numpy.add.at``).
    """
    a = value_of(x)
    idx, advanced = _plain_index(index)
    try:
        value = a[idx]
    except (IndexError, TypeError, ValueError) as e:
        raise BadIndexError(
            f"getitem: index {index!r} does not fit an array of shape {np.shape(a)}: {e}. "
            "Valid indices are ints, slices, ..., None, boolean masks and integer arrays, "
            "within the bounds of each axis."
        ) from None
    if not advanced:
        value = value.copy() if value.base is not None and value.size * 4 < np.size(a) else value

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        if advanced:
            np.add.at(out, idx, g)
        else:
            out[idx] += g

    return op("getitem", value, param_of(x, d_x))


__all__ = ["getitem"]
