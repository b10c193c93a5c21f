"""Linear algebra: matmul."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import shape_mismatch
from lampy.autograd._unbroadcast import unbroadcast
from lampy.autograd._variable import Variable, op
from lampy.ops._operands import param_of, value_of

_matmul, _add = np.matmul, np.add


def matmul(x1: Any, x2: Any) -> Variable:
    """Matrix product with numpy's rules: 1-d operands are promoted to a row (left) or a
    column (right) and the added axis removed; leading axes broadcast as a batch.

    Gradient:
        ``dx1 = g @ x2^T`` and ``dx2 = x1^T @ g`` (transposing the last two axes),
        summed over broadcast batch axes.
    """
    a, b = value_of(x1), value_of(x2)
    a_nd, b_nd = np.ndim(a), np.ndim(b)
    if a_nd == 0 or b_nd == 0:
        raise shape_mismatch(
            "matmul",
            np.asarray(a),
            np.asarray(b),
            detail="matmul does not take 0-d operands; use multiply (`*`) for scalars.",
        )
    try:
        value = _matmul(a, b)
    except ValueError:
        raise shape_mismatch(
            "matmul",
            a,
            b,
            detail="The last axis of x1 must equal the second-to-last of x2 (the only axis "
            "of a 1-d operand), and leading (batch) axes must broadcast.",
        ) from None

    if a_nd == 2 and b_nd == 2:  # the common case, without promotion
        return op(
            "matmul",
            value,
            param_of(x1, lambda g, out: _add(out, _matmul(g, b.T), out=out)),
            param_of(x2, lambda g, out: _add(out, _matmul(a.T, g), out=out)),
        )

    # Promote 1-d operands as numpy does, and put their axes back into g.
    a2 = a[None, :] if a_nd == 1 else a
    b2 = b[:, None] if b_nd == 1 else b

    def g2(g: np.ndarray) -> np.ndarray:
        if a_nd == 1:
            g = np.expand_dims(g, -2 if b_nd > 1 else -1)
        if b_nd == 1:
            g = np.expand_dims(g, -1)
        return g

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        d = _matmul(g2(g), np.swapaxes(b2, -1, -2))
        _add(out, unbroadcast(d, a2.shape).reshape(out.shape), out=out)

    def d_b(g: np.ndarray, out: np.ndarray) -> None:
        d = _matmul(np.swapaxes(a2, -1, -2), g2(g))
        _add(out, unbroadcast(d, b2.shape).reshape(out.shape), out=out)

    return op("matmul", value, param_of(x1, d_a), param_of(x2, d_b))


__all__ = ["matmul"]
