"""Matrix structure: trace, diagonal, diag, tril, triu (numpy's semantics, batched as
numpy batches them).

Gradients that land on a diagonal are added through a writeable strided view of the
gradient buffer onto that diagonal, so nothing of the input's size is allocated.
"""

from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lampy._errors import DTypeError, ShapeError
from lampy.opkit import (
    Operand,
    Variable,
    accumulate,
    contrib_of,
    normalize_axis,
    op,
    param_of,
    real_result,
    value_of,
)
from lampy.ops._shape import broadcast_to, reshape

_add = np.add


def _diagonal_view(x: np.ndarray, offset: int = 0, axis1: int = 0, axis2: int = 1) -> np.ndarray:
    """A view of ``x``'s diagonals laid out as ``numpy.diagonal`` lays them out (the two
    axes removed, the diagonal appended last), writeable if ``x`` is.

    ``axis1`` and ``axis2`` must be distinct, non-negative and in range.
    """
    y = np.moveaxis(x, (axis1, axis2), (-2, -1))
    y = y[..., :, offset:] if offset >= 0 else y[..., -offset:, :]
    n = min(y.shape[-2], y.shape[-1])
    s1, s2 = y.strides[-2:]
    return as_strided(
        y, (*y.shape[:-2], n), (*y.strides[:-2], s1 + s2), writeable=x.flags.writeable
    )


def _axes(name: str, a: Any, axis1: Any, axis2: Any) -> tuple[int, int]:
    nd = np.ndim(a)
    if nd < 2:
        raise ShapeError(
            f"{name}: needs an array of at least 2 dimensions to take a diagonal of, got "
            f"shape {np.shape(a)}."
        )
    (ax1,) = normalize_axis(name, operator.index(axis1), nd)
    (ax2,) = normalize_axis(name, operator.index(axis2), nd)
    if ax1 == ax2:
        raise ShapeError(
            f"{name}: axis1 and axis2 are both axis {ax1}; a diagonal needs two distinct axes."
        )
    return ax1, ax2


def diagonal(a: Operand, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
    """``numpy.diagonal``: the diagonal ``a[..., i, i + offset]`` of the 2-d sub-arrays
    spanned by ``axis1`` and ``axis2``; those axes are removed and the diagonal appended
    as the last axis.

    Gradient:
        ``da`` is ``g`` on that diagonal and zero elsewhere.
    """
    x = value_of(a, name="diagonal")
    ax1, ax2 = _axes("diagonal", x, axis1, axis2)
    k = operator.index(offset)
    value = np.diagonal(x, k, ax1, ax2)

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        view = _diagonal_view(out, k, ax1, ax2)
        _add(view, g, out=view)

    shape, dtype = np.shape(x), np.result_type(x)

    def vjp(g: Any, out: Any) -> Any:
        return _on_diagonal(g, shape, dtype, k, ax1, ax2)

    return op("diagonal", value, param_of(a, d_a, vjp=vjp))


def _on_diagonal(g: Any, shape: tuple[int, ...], dtype: Any, k: int, ax1: int, ax2: int) -> Any:
    """The transpose of ``diagonal(x, k, ax1, ax2)`` (``x`` of ``shape``) for a vjp: ``g``
    on that diagonal of zeros, as an op whose gradient is the diagonal again."""
    value = np.zeros(shape, dtype)
    view = _diagonal_view(value, k, ax1, ax2)
    _add(view, value_of(g, name="diagonal_scatter"), out=view)
    if type(g) is not Variable:
        return value
    return op(
        "diagonal_scatter",
        value,
        contrib_of(
            g,
            lambda h: np.diagonal(h, k, ax1, ax2),
            fresh=False,
            vjp=lambda h, out: diagonal(h, k, ax1, ax2),
        ),
    )


def trace(
    a: Operand, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None
) -> Variable:
    """``numpy.trace``: the sum along the diagonal (see :func:`diagonal` for ``offset``,
    ``axis1`` and ``axis2``); a 2-d ``a`` gives a 0-d result.

    Gradient:
        ``da`` is ``g`` (broadcast along the diagonal) on the diagonal and zero elsewhere.
    """
    x = value_of(a, name="trace")
    ax1, ax2 = _axes("trace", x, axis1, axis2)
    k = operator.index(offset)
    if dtype is not None and np.dtype(dtype).kind not in "fc":
        raise DTypeError(
            f"trace: dtype={np.dtype(dtype)} would truncate; pass a float dtype (or None)."
        )
    value = np.trace(x, k, ax1, ax2, dtype=dtype)
    real_result("trace", value, a)

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        view = _diagonal_view(out, k, ax1, ax2)
        _add(view, g[..., None], out=view)

    shape, dtype = np.shape(x), np.result_type(value)

    def vjp(g: Any, out: Any) -> Any:
        rows, cols = shape[ax1], shape[ax2]
        n = max(0, min(rows, cols - k) if k >= 0 else min(rows + k, cols))
        batch = np.shape(value)
        along = broadcast_to(reshape(g, (*batch, 1)), (*batch, n))
        return _on_diagonal(along, shape, dtype, k, ax1, ax2)

    return op("trace", value, param_of(a, d_a, vjp=vjp))


def diag(v: Operand, k: int = 0) -> Variable:
    """``numpy.diag``: from a 1-d ``v``, the 2-d array with ``v`` on its ``k``-th diagonal;
    from a 2-d ``v``, its ``k``-th diagonal (positive ``k`` above the main one).

    Gradient:
        1-d ``v``: ``dv = diagonal(g, k)``; 2-d ``v``: ``dv`` is ``g`` on the ``k``-th
        diagonal and zero elsewhere.
    """
    x = value_of(v, name="diag")
    k = operator.index(k)
    nd = np.ndim(x)
    if nd == 1:
        value = np.diag(x, k)
        return op(
            "diag",
            value,
            contrib_of(
                v, lambda g: np.diagonal(g, k), fresh=False, vjp=lambda g, out: diagonal(g, k)
            ),
        )
    if nd != 2:
        raise ShapeError(
            f"diag: takes a 1-d array (to build a matrix) or a 2-d array (to take its "
            f"diagonal), got shape {np.shape(x)}; use diagonal() for more dimensions."
        )

    def d_v(g: np.ndarray, out: np.ndarray) -> None:
        view = _diagonal_view(out, k)
        _add(view, g, out=view)

    shape, dtype = np.shape(x), np.result_type(x)
    return op(
        "diag",
        np.diagonal(x, k),
        param_of(v, d_v, vjp=lambda g, out: _on_diagonal(g, shape, dtype, k, 0, 1)),
    )


def _triangle(name: str, m: Any, k: Any, upper: bool) -> Variable:
    x = value_of(m, name=name)
    shape = np.shape(x)
    if not shape:
        raise ShapeError(f"{name}: takes an array of at least 1 dimension, got a 0-d array.")
    rows, cols = shape[-2:] if len(shape) > 1 else (shape[0], shape[0])  # 1-d: square rows
    k = operator.index(k)
    mask = np.tri(rows, cols, k - 1 if upper else k, dtype=np.bool_)
    if upper:
        mask = ~mask
    value = np.where(mask, x, np.zeros(1, np.result_type(x)))

    def d_m(g: np.ndarray, out: np.ndarray) -> None:
        if g.shape == out.shape:
            _add(out, g, out=out, where=mask)
        else:
            accumulate(out, np.where(mask, g, g.dtype.type(0)))

    # the vjp: the same triangle of g (the pass sums the rows of a 1-d m)
    return op(name, value, param_of(m, d_m, vjp=lambda g, out: _triangle(name, g, k, upper)))


def tril(m: Operand, k: int = 0) -> Variable:
    """``numpy.tril``: the lower triangle of the last two axes (elements above the
    ``k``-th diagonal zeroed); a 1-d ``m`` is taken as the rows of a square matrix.

    Gradient:
        ``dm = tril(g, k)`` (summed over the rows for a 1-d ``m``).
    """
    return _triangle("tril", m, k, upper=False)


def triu(m: Operand, k: int = 0) -> Variable:
    """``numpy.triu``: the upper triangle of the last two axes (elements below the
    ``k``-th diagonal zeroed); a 1-d ``m`` is taken as the rows of a square matrix.

    Gradient:
        ``dm = triu(g, k)`` (summed over the rows for a 1-d ``m``).
    """
    return _triangle("triu", m, k, upper=True)


__all__ = ["diag", "diagonal", "trace", "tril", "triu"]
