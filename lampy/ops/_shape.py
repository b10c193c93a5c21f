"""Shape ops: reshape, transpose."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, value_of

_add = np.add


def reshape(a: Any, shape: Any, order: str = "C") -> Variable:
    """Give ``a`` a new shape with the same number of elements (one axis may be -1).

    Gradient:
        ``da = g.reshape(a.shape)`` (in the same ``order``).
    """
    x = value_of(a)
    if order not in ("C", "F"):
        raise LampyValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    try:
        value = np.reshape(x, shape, order=order)  # type: ignore[call-overload]
    except ValueError:
        raise ShapeError(
            f"reshape: cannot reshape an array of shape {np.shape(x)} ({np.size(x)} "
            f"elements) into shape {shape}; the number of elements must stay the same."
        ) from None
    in_shape = np.shape(x)

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        _add(out, g.reshape(in_shape, order=order), out=out)  # type: ignore[call-overload]

    return op("reshape", value, param_of(a, d_a))


def transpose(a: Any, axes: Any = None) -> Variable:
    """Permute the axes of ``a`` (reverse them when ``axes`` is None).

    Gradient:
        ``da = g.transpose(argsort(axes))``.
    """
    x = value_of(a)
    ndim = np.ndim(x)
    if axes is None:
        perm = tuple(range(ndim - 1, -1, -1))
    else:
        perm = tuple(int(ax) for ax in axes)
        if sorted(ax % ndim if ndim else ax for ax in perm) != list(range(ndim)) or any(
            not -ndim <= ax < ndim for ax in perm
        ):
            raise ShapeError(
                f"transpose: axes {tuple(axes)} are not a permutation of the {ndim} axes of "
                f"an array of shape {np.shape(x)}."
            )
        perm = tuple(ax % ndim for ax in perm)
    value = np.transpose(x, perm)
    inverse = tuple(np.argsort(perm).tolist())

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        _add(out, g.transpose(inverse), out=out)

    return op("transpose", value, param_of(a, d_a))


__all__ = ["reshape", "transpose"]
