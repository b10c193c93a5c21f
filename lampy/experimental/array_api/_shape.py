"""Shape and indexing ops over any array namespace: reshape, transpose, getitem, take.

``getitem``'s gradient writes ``g`` into zeros (``out[key] = g``) and ``take``'s sums
the rows an index repeats with a one-hot matrix product: the standard has in-place
``__setitem__`` (optional for libraries without in-place updates, JAX's ``.at[].set``)
but no scatter-add (``numpy.add.at``).
"""

from __future__ import annotations

from types import EllipsisType
from typing import Any

from lampy._errors import LampyTypeError
from lampy._namespaces import namespace_of
from lampy.experimental.array_api._operands import device_of, operands, shape_of
from lampy.opkit import Variable, contrib_of, contrib_with, namespace_op, one_axis

Operand = Any


def reshape(x: Operand, shape: tuple[int, ...]) -> Variable:
    """``x`` with the same elements in ``shape`` (one length may be -1).

    Gradient:
        ``dx = reshape(g, x.shape)``.
    """
    xp, (a,) = operands("reshape", x, keep=False)
    value = xp.reshape(a, tuple(shape))
    return namespace_op("reshape", value, contrib_with(x, _reshaped, shape_of(a), False))


def _reshaped(g: Any, shape: tuple[int, ...]) -> Any:
    return namespace_of(g).reshape(g, shape)


def transpose(x: Operand, axes: tuple[int, ...] | None = None) -> Variable:
    """``x`` with its axes permuted (reversed by default), as ``numpy.transpose`` (the
    standard's ``permute_dims``).

    Gradient:
        ``dx = g`` with the inverse permutation.
    """
    xp, (a,) = operands("transpose", x, keep=False)
    ndim = len(shape_of(a))
    order = tuple(range(ndim))[::-1] if axes is None else tuple(axes)
    if sorted(order) != list(range(ndim)):
        raise LampyTypeError(
            f"transpose: axes {axes!r} is not a permutation of the {ndim} axes of an array "
            f"of shape {shape_of(a)}."
        )
    inverse = tuple(order.index(i) for i in range(ndim))
    value = xp.permute_dims(a, order)
    return namespace_op(
        "transpose", value, contrib_of(x, lambda g: xp.permute_dims(g, inverse), False)
    )  # a view of g: not fresh


_BASIC = (int, slice, type(None), EllipsisType)


def getitem(x: Operand, key: Any) -> Variable:
    """``x[key]`` for a basic index: ints, slices, None and Ellipsis (a tuple of them),
    with numpy's meaning (axes the key leaves out are taken whole). Integer arrays:
    ``take``.

    Gradient:
        ``dx`` is zeros with ``g`` written at ``key`` (``dx[key] = g``).

    Raises:
        LampyTypeError: ``key`` holds an array or a list (advanced indexing).
    """
    xp, (a,) = operands("getitem", x, keep=False)
    parts = key if type(key) is tuple else (key,)
    if not all(isinstance(k, _BASIC) and not isinstance(k, bool) for k in parts):
        raise LampyTypeError(
            f"getitem: the index {key!r} is not basic (ints, slices, None, Ellipsis); "
            "lampy.experimental.array_api takes integer arrays through take(x, indices, axis)."
        )
    # numpy's implicit trailing axes, spelled out (the standard wants them)
    key = parts if any(k is Ellipsis for k in parts) else (*parts, Ellipsis)
    value = a[key]
    shape, dtype = shape_of(a), a.dtype
    # __setitem__ takes no None: the gradient is written without the new axes
    written = tuple(k for k in key if k is not None)
    target = shape_of(a[written]) if len(written) < len(key) else None

    def d_x(g: Any) -> Any:
        out = xp.zeros(shape, dtype=dtype, device=device_of(a))
        out[written] = g if target is None else xp.reshape(g, target)
        return out

    return namespace_op("getitem", value, contrib_of(x, d_x))


def take(x: Operand, indices: Any, axis: int = 0) -> Variable:
    """Elements of ``x`` at the 1-d integer ``indices`` along ``axis`` (of ``x``'s
    namespace and device), as ``numpy.take``; indices may repeat.

    Gradient:
        ``dx`` sums ``g``'s slices into the positions they were taken from: a one-hot
        matrix (indices by positions) transposed times ``g``, since the standard has no
        scatter-add (``numpy.add.at``).
    """
    xp, (a, idx) = operands("take", x, indices)
    shape = shape_of(a)
    ax = one_axis("take", axis, len(shape))
    value = xp.take(a, idx, axis=ax)

    def d_x(g: Any) -> Any:
        hot = xp.astype(
            xp.reshape(idx, (-1, 1))
            == xp.reshape(xp.arange(shape[ax], device=device_of(a)), (1, -1)),
            a.dtype,
        )
        rows = xp.reshape(xp.moveaxis(g, ax, 0), (shape_of(idx)[0], -1))
        d = xp.matmul(xp.matrix_transpose(hot), rows)
        moved = (shape[ax], *shape[:ax], *shape[ax + 1 :])
        return xp.moveaxis(xp.reshape(d, moved), 0, ax)

    return namespace_op("take", value, contrib_of(x, d_x))


__all__ = ["getitem", "reshape", "take", "transpose"]
