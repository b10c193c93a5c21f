"""Turning op arguments into numpy values, and pairing Variables with closures."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import shape_mismatch
from lampy.autograd._unbroadcast import Contribution
from lampy.autograd._variable import Backward, Param, Variable

_ndarray = np.ndarray
_PY_NUMBERS = (int, float)


def value_of(x: Any) -> Any:
    """The numpy value of an op argument: a Variable's value, or ``x`` as a constant.

    A writable numpy array is copied (into a read-only array), as ``lampy.const`` does:
    closures keep what they need for backward, so a later change to the caller's array
    must not reach the gradient. A read-only array is used as it is, without a copy.
    Python and numpy scalars are returned unchanged.
    """
    if type(x) is Variable:
        return x.value
    if isinstance(x, _ndarray):
        if type(x) is not _ndarray:  # a subclass (matrix, masked array...): plain data
            x = np.asarray(x).view(_ndarray)
        if x.flags.writeable:
            x = x.copy()
            x.flags.writeable = False
        return x
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return x
    return np.asarray(x)


def values_of(x1: Any, x2: Any) -> tuple[Any, Any]:
    """The values of a binary op's two arguments, numpy-promoted the way numpy 2 does.

    A Python int or float next to a float array takes that array's dtype, so a Python
    number never turns float32 into float64 (also with numpy 1.x and for 0-d values).
    """
    a = value_of(x1)
    b = value_of(x2)
    ta, tb = type(a), type(b)
    if ta in _PY_NUMBERS and tb is _ndarray and b.dtype.kind == "f":
        a = b.dtype.type(a)
    elif tb in _PY_NUMBERS and ta is _ndarray and a.dtype.kind == "f":
        b = a.dtype.type(b)
    return a, b


def apply_binary(name: str, ufunc: Any, x1: Any, x2: Any) -> tuple[Any, Any, Any]:
    """``values_of(x1, x2)`` and ``ufunc`` applied to them; a broadcasting failure is a
    ShapeError naming ``name`` and both shapes, raised before anything is recorded.

    Returns:
        ``(a, b, value)``: the two operand values and the result.
    """
    a, b = values_of(x1, x2)
    try:
        return a, b, ufunc(a, b)
    except ValueError:
        raise broadcast_error(name, a, b) from None


def param_of(x: Any, fn: Backward) -> Param | None:
    """``x.zip_backward(fn)`` if ``x`` is a Variable that needs a gradient, else None."""
    if type(x) is Variable:
        node = x.node
        if node.needs_grad:
            return (node, fn)
    return None


def contrib_of(x: Any, fn: Callable[[np.ndarray], Any], fresh: bool = True) -> Param | None:
    """``x.zip_backward(contribution(fn, fresh=fresh))`` if ``x`` is a Variable that needs
    a gradient, else None (and no closure object is built)."""
    if type(x) is Variable:
        node = x.node
        if node.needs_grad:
            return (node, Contribution(fn, fresh))
    return None


def needs_grad(x: Any) -> bool:
    """Whether ``x`` is a Variable that needs a gradient."""
    return type(x) is Variable and x.node.needs_grad


def broadcast_error(name: str, a: Any, b: Any) -> Exception:
    return shape_mismatch(
        name,
        np.asarray(a),
        np.asarray(b),
        detail="Numpy broadcasting needs each pair of trailing dimensions to be equal or 1; "
        "reshape or expand_dims one of them so that they line up.",
    )
