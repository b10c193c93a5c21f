"""The matrix product over any array namespace."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import shape_mismatch
from lampy.experimental.array_api._operands import operands, shape_of, sum_to
from lampy.opkit import Variable, contrib_of, namespace_op

Operand = Any


def matmul(x1: Operand, x2: Operand) -> Variable:
    """Matrix product with numpy's (and the standard's) rules: a 1-d operand is a row
    (left) or a column (right) whose added axis is removed; leading axes broadcast as a
    batch.

    Gradient:
        ``dx1 = g @ x2^T`` and ``dx2 = x1^T @ g`` (the last two axes transposed), summed
        over broadcast batch axes.

    Raises:
        ShapeError: a 0-d operand, or shapes that do not fit.
    """
    xp, (a, b) = operands("matmul", x1, x2)
    sa, sb = shape_of(a), shape_of(b)
    if not sa or not sb:
        raise shape_mismatch("matmul", a, b, detail="matmul takes no 0-d operand; use multiply.")
    try:
        value = xp.matmul(a, b)
    except ValueError:
        raise shape_mismatch(
            "matmul",
            a,
            b,
            detail="The last axis of x1 must equal the second-to-last of x2 (the only axis "
            "of a 1-d operand), and leading (batch) axes must broadcast.",
        ) from None
    # as matrices: a 1-d x1 is a row (1, k), a 1-d x2 a column (k, 1)
    ma = sa if len(sa) > 1 else (1, *sa)
    mb = sb if len(sb) > 1 else (*sb, 1)
    mg = (*np.broadcast_shapes(ma[:-2], mb[:-2]), ma[-2], mb[-1])

    def d_x1(g: Any) -> Any:
        d = xp.matmul(xp.reshape(g, mg), xp.matrix_transpose(xp.reshape(b, mb)))
        return xp.reshape(sum_to(d, ma), sa)

    def d_x2(g: Any) -> Any:
        d = xp.matmul(xp.matrix_transpose(xp.reshape(a, ma)), xp.reshape(g, mg))
        return xp.reshape(sum_to(d, mb), sb)

    return namespace_op("matmul", value, contrib_of(x1, d_x1), contrib_of(x2, d_x2))


__all__ = ["matmul"]
