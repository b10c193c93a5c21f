"""Elementwise selection: ``where(condition, x, y)``."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import shape_mismatch
from lampy.autograd._unbroadcast import accumulate
from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, real_result, value_of, values_of

_where = np.where


def where(condition: Any, x: Any, y: Any) -> Variable:
    """Elementwise ``x`` where ``condition`` holds, else ``y``, with numpy broadcasting
    of all three (numpy's three-argument ``where``).

    Args:
        condition: A boolean array, array-like or Variable; other dtypes are taken by
            truth value (nonzero is True), as numpy does. It carries no gradient.
        x: The values taken where ``condition`` holds: a Variable, an array or a
            scalar. A Python number next to a float32 array stays float32.
        y: The values taken elsewhere, of the same kinds as ``x``.

    Returns:
        A Variable of the broadcast shape of the three and numpy's result dtype of ``x``
        and ``y``.

    Raises:
        ShapeError: if the three shapes do not broadcast together.

    Gradient:
        ``dx = g`` where ``condition``, else 0; ``dy = g`` where not ``condition``, else
        0 (each summed over its broadcast axes).
    """
    c = value_of(condition)
    a, b = values_of(x, y)
    try:
        value = _where(c, a, b)
    except ValueError:
        raise shape_mismatch(
            "where",
            np.asarray(c),
            np.asarray(a),
            np.asarray(b),
            detail="condition, x and y must broadcast together: numpy broadcasting needs "
            "each set of trailing dimensions to be equal or 1.",
        ) from None
    real_result("where", value, x, y)

    def d_x(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, _where(np.asarray(c, dtype=bool), g, g.dtype.type(0)))

    def d_y(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, _where(np.asarray(c, dtype=bool), g.dtype.type(0), g))

    return op("where", value, param_of(x, d_x), param_of(y, d_y))


__all__ = ["where"]
