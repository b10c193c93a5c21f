"""Casting and converting: astype, copy, and array / asarray (numpy's, which also stack
nested lists of Variables into one differentiable Variable)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import DTypeError, LampyValueError
from lampy.opkit import Operand, Variable, array_of, const, contrib_of, op, real_result, value_of

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


def astype(x: Operand, dtype: DTypeLike, /, *, copy: bool = True) -> Variable:
    """``x`` cast to ``dtype`` (numpy 2's ``numpy.astype``).

    Casting to a float dtype keeps the gradient; casting to an integer or boolean dtype
    gives a constant (no gradient), as with any non-float result.

    Raises:
        DTypeError: if ``dtype`` is complex (or object) and ``x`` needs a gradient:
            lampy's gradients are real, so the gradient would be lost.

    Gradient:
        ``dx = g`` cast back to ``x``'s dtype.

    Raises:
        DTypeError: ``dtype`` is not numeric (a string, object or date dtype).
    """
    a = value_of(x, name="astype")
    target = np.dtype(dtype)
    if target.kind not in "biufc":
        raise DTypeError(
            f"astype: cannot cast to {target} ({dtype!r}): lampy values are numbers (bool, "
            "integer, float or complex dtypes). Copy the data out first: "
            "`x.value.astype(...)`."
        )
    value = np.asarray(a).astype(target, copy=True)
    del copy  # a Variable's value is never shared writable memory, so a copy is always taken
    real_result("astype", value, x)
    return op("astype", value, contrib_of(x, lambda g: g, False, _same))


def copy(a: Operand) -> Variable:
    """A new Variable with the same value (numpy's ``copy``).

    Gradient:
        ``da = g``.
    """
    x = value_of(a, name="copy")
    return op("copy", np.array(x, copy=True), contrib_of(a, lambda g: g, False, _same))


_copy = copy  # ``array``'s argument ``copy`` shadows the op


def _same(g: Any, out: Any) -> Any:
    """The vjp of an op whose gradient is ``g`` itself (the engine casts it back)."""
    return g


def array(
    object: Any, dtype: DTypeLike | None = None, *, copy: bool = True, ndmin: int = 0
) -> Variable:
    """A Variable from an array-like, as ``numpy.array``: a (nested) list or tuple of
    numbers, arrays and Variables is stacked into one Variable (``np.array([v1, v2])``,
    HIPS autograd's idiom), and gradients reach every Variable in it; a Variable is
    copied (its gradient flows through the copy); plain data becomes a constant of the
    current scope.

    Args:
        object: A Variable, an array-like, or a nested sequence holding Variables.
        dtype: The result's dtype (None: numpy's promotion); a float dtype keeps the
            gradient, an integer one makes the result a constant (``astype``).
        copy: False returns a Variable of the right dtype itself (``asarray``).
        ndmin: The least number of axes; length-1 axes are put in front.

    Raises:
        ShapeError: if a nested sequence is ragged.
        LampyValueError: if ``ndmin`` is negative.

    Gradient:
        Each Variable in ``object`` gets the part of ``g`` at its place in the result
        (summed where one appears several times).

    Examples:
        >>> import lampy
        >>> with lampy.Scope():
        ...     a, b = lampy.param(1.0), lampy.param(2.0)
        ...     m = lampy.array([[a, b], [b, 3.0]])
        ...     (m * m).sum().backward()
        ...     print(m.shape, a.grad, b.grad)
        (2, 2) 2.0 8.0
    """
    if ndmin < 0:
        raise LampyValueError(f"array: ndmin must be >= 0, got {ndmin}.")
    x = array_of("array", object)
    if type(x) is Variable:
        made = x is not object  # a sequence stacked into a new Variable
        if dtype is not None and np.dtype(dtype) != x.dtype:
            v = astype(x, dtype)
        else:
            v = _copy(x) if copy and not made else x
    else:
        v = const(np.array(x, dtype=dtype, copy=True))
    if v.ndim < ndmin:
        v = v.reshape((1,) * (ndmin - v.ndim) + v.shape)
    return v


def asarray(a: Any, dtype: DTypeLike | None = None) -> Variable:
    """``array(a, dtype, copy=False)``, as ``numpy.asarray``: a Variable of the right
    dtype comes back itself; nested sequences of Variables are stacked."""
    return array(a, dtype, copy=False)


__all__ = ["array", "asarray", "astype", "copy"]
