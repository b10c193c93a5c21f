"""Comparisons, predicates and logical ops: numpy boolean results, no gradient.

Each takes Variables (including ones that need a gradient), arrays, array-likes and
scalars, reads their values, and returns what numpy returns, except that array results
are always numpy arrays (0-d ones included, never numpy bool scalars) and
``allclose``/``array_equal`` give a Python ``bool``. Nothing is recorded in the graph:
a boolean has no gradient, so these are plain functions rather than ops.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy.opkit import Operand, broadcast_error, value_of, values_of

_asarray = np.asarray


def _binary(name: str, fn: Any, x1: Any, x2: Any, **kwargs: Any) -> np.ndarray:
    # values_of: a Python number is compared in a float32 operand's precision (numpy 2).
    a, b = (
        values_of(x1, x2, name=name)
        if not kwargs
        else (value_of(x1, name=name), value_of(x2, name=name))
    )
    try:
        return _asarray(fn(a, b, **kwargs))
    except ValueError:
        raise broadcast_error(name, a, b) from None


def equal(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise ``x1 == x2`` with numpy broadcasting, as a boolean array.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("equal", np.equal, x1, x2)


def not_equal(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise ``x1 != x2`` with numpy broadcasting, as a boolean array.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("not_equal", np.not_equal, x1, x2)


def less(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise ``x1 < x2`` with numpy broadcasting, as a boolean array.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("less", np.less, x1, x2)


def less_equal(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise ``x1 <= x2`` with numpy broadcasting, as a boolean array.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("less_equal", np.less_equal, x1, x2)


def greater(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise ``x1 > x2`` with numpy broadcasting, as a boolean array.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("greater", np.greater, x1, x2)


def greater_equal(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise ``x1 >= x2`` with numpy broadcasting, as a boolean array.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("greater_equal", np.greater_equal, x1, x2)


def isclose(
    a: Operand, b: Operand, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> np.ndarray:
    """Elementwise ``|a - b| <= atol + rtol * |b|`` with numpy broadcasting (numpy's
    ``isclose``: infinities are close only to themselves, nans only if ``equal_nan``).

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("isclose", np.isclose, a, b, rtol=rtol, atol=atol, equal_nan=equal_nan)


def allclose(
    a: Operand, b: Operand, rtol: float = 1e-05, atol: float = 1e-08, equal_nan: bool = False
) -> bool:
    """Whether :func:`isclose` holds for every element (numpy's ``allclose``).

    Gradient:
        None: the result is a Python bool.
    """
    return bool(isclose(a, b, rtol=rtol, atol=atol, equal_nan=equal_nan).all())


def array_equal(a1: Operand, a2: Operand, equal_nan: bool = False) -> bool:
    """Whether both have the same shape and elements (numpy's ``array_equal``); shapes
    that differ give False, not an error.

    Gradient:
        None: the result is a Python bool.
    """
    return bool(
        np.array_equal(
            value_of(a1, name="array_equal"), value_of(a2, name="array_equal"), equal_nan=equal_nan
        )
    )


def logical_and(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise truth-value AND with numpy broadcasting (nonzero is True).

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("logical_and", np.logical_and, x1, x2)


def logical_or(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise truth-value OR with numpy broadcasting (nonzero is True).

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("logical_or", np.logical_or, x1, x2)


def logical_xor(x1: Operand, x2: Operand) -> np.ndarray:
    """Elementwise truth-value XOR with numpy broadcasting (nonzero is True).

    Gradient:
        None: the result is a plain numpy array.
    """
    return _binary("logical_xor", np.logical_xor, x1, x2)


def logical_not(x: Operand) -> np.ndarray:
    """Elementwise truth-value NOT (zero gives True).

    Gradient:
        None: the result is a plain numpy array.
    """
    return _asarray(np.logical_not(value_of(x, name="logical_not")))


def isfinite(x: Operand) -> np.ndarray:
    """Elementwise test for finite values (neither infinite nor nan).

    Gradient:
        None: the result is a plain numpy array.
    """
    return _asarray(np.isfinite(value_of(x, name="isfinite")))


def isnan(x: Operand) -> np.ndarray:
    """Elementwise test for nan.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _asarray(np.isnan(value_of(x, name="isnan")))


def isinf(x: Operand) -> np.ndarray:
    """Elementwise test for positive or negative infinity.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _asarray(np.isinf(value_of(x, name="isinf")))


def signbit(x: Operand) -> np.ndarray:
    """Elementwise test of the sign bit: True for negatives, ``-0.0`` and negative nans.

    Gradient:
        None: the result is a plain numpy array.
    """
    return _asarray(np.signbit(value_of(x, name="signbit")))


__all__ = [
    "equal",
    "not_equal",
    "less",
    "less_equal",
    "greater",
    "greater_equal",
    "isclose",
    "allclose",
    "array_equal",
    "logical_and",
    "logical_or",
    "logical_xor",
    "logical_not",
    "isfinite",
    "isnan",
    "isinf",
    "signbit",
]
