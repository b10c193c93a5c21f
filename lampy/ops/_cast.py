"""Casting between dtypes: astype, and copy."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from lampy._errors import DTypeError
from lampy.opkit import Operand, Variable, contrib_of, op, real_result, value_of

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
    a = value_of(x)
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
    return op("astype", value, contrib_of(x, lambda g: g, fresh=False))


def copy(a: Operand) -> Variable:
    """A new Variable with the same value (numpy's ``copy``).

    Gradient:
        ``da = g``.
    """
    x = value_of(a)
    return op("copy", np.array(x, copy=True), contrib_of(a, lambda g: g, fresh=False))


__all__ = ["astype", "copy"]
