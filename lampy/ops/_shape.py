"""Shape ops: views of the same elements under another shape or axis order.

reshape, ravel, transpose, permute_dims, matrix_transpose, swapaxes, moveaxis, rollaxis,
squeeze, expand_dims, broadcast_to and atleast_1d/2d/3d, with numpy's names and signatures.

Every one of them only rearranges (or, for ``broadcast_to``, repeats) elements, so each
gradient is the inverse rearrangement of ``g`` (summed over broadcast axes). The forward
values are numpy views of the input where numpy gives a view; the gradients are views of
``g`` handed to the engine as contributions (:func:`lampy.autograd._unbroadcast.contribution`),
so an input's first gradient needs no zero-filled buffer: the engine keeps the view when
nothing else reads ``g``, and copies it otherwise.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.opkit import (
    Axis,
    Operand,
    Variable,
    contrib_of,
    contribution,
    normalize_axis,
    one_axis,
    op,
    param_of,
    value_of,
)
from lampy.ops._torch_names import axis_or_dim


def _axis_list(name: str, axes: Any, ndim: int, what: str) -> list[int]:
    """An int or a sequence of ints as non-negative axes, in the given order, distinct."""
    items = [axes] if isinstance(axes, (int, np.integer)) else list(axes)
    result = [one_axis(name, ax, ndim, what) for ax in items]
    if len(set(result)) != len(result):
        raise ShapeError(f"{name}: {what} {axes!r} repeats an axis.")
    return result


def _rearranged(name: str, a: Any, value: Any, back: Callable[[np.ndarray], Any]) -> Variable:
    """Record a rearrangement of ``a``: ``back(g)`` is ``a``'s gradient (a view of ``g``).

    ``back`` uses only methods that Variables share with arrays (``reshape``,
    ``transpose``), so it is its own vjp. It keeps shapes and axes, no array: declared
    (``keeps=()``), so memory accounting does not look into it."""
    return op(name, value, contrib_of(a, back, False, lambda g, out: back(g)), keeps=())


def _reshaped(name: str, a: Any, value: Any, shape: tuple[int, ...]) -> Variable:
    """Record ``value``, a C-order reshape of ``a`` (of shape ``shape``)."""
    return _rearranged(name, a, value, lambda g: g.reshape(shape))


def reshape(a: Operand, shape: int | Sequence[int], order: str = "C") -> Variable:
    """Give ``a`` a new shape with the same number of elements (one axis may be -1).

    Gradient:
        ``da = g.reshape(a.shape)`` (in the same ``order``).
    """
    x = value_of(a, name="reshape")
    if order not in ("C", "F"):
        raise LampyValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    try:
        if type(x) is np.ndarray:  # the method: numpy's function is a Python layer over it
            value = x.reshape(shape, order=order)  # type: ignore[call-overload]
        else:
            value = np.reshape(x, shape, order=order)  # type: ignore[call-overload]
    except ValueError:
        raise ShapeError(
            f"reshape: cannot reshape an array of shape {np.shape(x)} ({np.size(x)} "
            f"elements) into shape {shape}; the number of elements must stay the same."
        ) from None
    in_shape = np.shape(x)
    layout: Any = order
    return _rearranged("reshape", a, value, lambda g: g.reshape(in_shape, order=layout))


def ravel(a: Operand, order: str = "C") -> Variable:
    """The elements of ``a`` as a 1-d array, read in ``order``, as ``numpy.ravel``.

    Args:
        a: The array.
        order: ``'C'`` (row-major), ``'F'`` (column-major), ``'A'`` (``'F'`` if ``a`` is
            Fortran-contiguous and not C-contiguous, else ``'C'``) or ``'K'`` (the order
            of the elements in memory, as numpy reads it).

    Gradient:
        ``da = g.reshape(a.shape, order)``; for ``'K'`` on an array that is neither C-
        nor Fortran-contiguous, ``g`` is put back through the permutation numpy read.
    """
    # No closure keeps x; and a constant ndarray must keep its caller's layout, which
    # 'A' and 'K' read (value_of's saved copy of a writable array is C-ordered). A
    # Variable's value is read as kept: the result may be a view of it.
    x = np.asarray(value_of(a, type(a) is Variable, "ravel"))
    if order not in ("C", "F", "A", "K"):
        raise LampyValueError(f"ravel: order must be 'C', 'F', 'A' or 'K', got {order!r}")
    value = np.ravel(x, order)  # type: ignore[call-overload]
    shape = x.shape
    c, f = x.flags.c_contiguous, x.flags.f_contiguous
    if order == "A":
        order = "F" if f and not c else "C"
    elif order == "K":
        if not (c or f):
            # An index array laid out like x is read by numpy in the same order.
            index = np.empty_like(x, dtype=np.intp)
            index[...] = np.arange(x.size).reshape(shape)
            read = np.ravel(index, "K")

            def back(g: np.ndarray) -> np.ndarray:
                d = np.empty_like(g)
                d[read] = g
                return d.reshape(shape)

            return op("ravel", value, param_of(a, contribution(back)))
        order = "C" if c else "F"
    layout: Any = order
    return _rearranged("ravel", a, value, lambda g: g.reshape(shape, order=layout))


def _permuted(name: str, a: Any, x: Any, perm: tuple[int, ...]) -> Variable:
    """Record ``x.transpose(perm)`` (``perm`` a validated permutation) as op ``name``."""
    value = x.transpose(perm) if type(x) is np.ndarray else np.transpose(x, perm)
    where = [0] * len(perm)
    for i, ax in enumerate(perm):
        where[ax] = i
    inverse = tuple(where)
    return _rearranged(name, a, value, lambda g: g.transpose(inverse))


def _permutation(name: str, x: Any, axes: Any) -> tuple[int, ...]:
    ndim = np.ndim(x)
    if axes is None:
        return tuple(range(ndim - 1, -1, -1))
    perm = tuple(operator.index(ax) for ax in axes)
    if sorted(ax % ndim if ndim else ax for ax in perm) != list(range(ndim)) or any(
        not -ndim <= ax < ndim for ax in perm
    ):
        raise ShapeError(
            f"{name}: axes {tuple(axes)} are not a permutation of the {ndim} axes of "
            f"an array of shape {np.shape(x)}."
        )
    return tuple(ax % ndim for ax in perm)


def transpose(a: Operand, axes: Sequence[int] | None = None) -> Variable:
    """Permute the axes of ``a`` (reverse them when ``axes`` is None).

    Gradient:
        ``da = g.transpose(argsort(axes))``.
    """
    x = value_of(a, name="transpose")
    return _permuted("transpose", a, x, _permutation("transpose", x, axes))


def permute_dims(a: Operand, axes: Sequence[int] | None = None) -> Variable:
    """The array-API name of ``lampy.transpose``: permute the axes of ``a``.

    Gradient:
        ``da = g.transpose(argsort(axes))``.
    """
    x = value_of(a, name="permute_dims")
    return _permuted("permute_dims", a, x, _permutation("permute_dims", x, axes))


def matrix_transpose(x: Operand, /) -> Variable:
    """Swap the last two axes of ``x`` (a stack of matrices), as ``numpy.matrix_transpose``.

    Raises:
        ShapeError: if ``x`` has fewer than 2 dimensions.

    Gradient:
        ``dx = matrix_transpose(g)``.
    """
    v = value_of(x, name="matrix_transpose")
    nd = np.ndim(v)
    if nd < 2:
        raise ShapeError(
            f"matrix_transpose: needs an array of at least 2 dimensions, got shape "
            f"{np.shape(v)}; use reshape or expand_dims to make it a matrix first."
        )
    perm = (*range(nd - 2), nd - 1, nd - 2)
    return _permuted("matrix_transpose", x, v, perm)


def swapaxes(a: Operand, axis1: int, axis2: int) -> Variable:
    """Interchange two axes of ``a``, as ``numpy.swapaxes``.

    Gradient:
        ``da = swapaxes(g, axis1, axis2)``.
    """
    x = value_of(a, name="swapaxes")
    array = type(x) is np.ndarray
    nd = x.ndim if array else np.ndim(x)
    ax1 = one_axis("swapaxes", axis1, nd, "axis1")
    ax2 = one_axis("swapaxes", axis2, nd, "axis2")
    value = x.swapaxes(ax1, ax2) if array else np.swapaxes(x, ax1, ax2)
    return _rearranged("swapaxes", a, value, lambda g: g.swapaxes(ax1, ax2))  # its own inverse


def moveaxis(a: Operand, source: int | Sequence[int], destination: int | Sequence[int]) -> Variable:
    """Move axes of ``a`` to new positions, the others keeping their order, as
    ``numpy.moveaxis``.

    Args:
        a: The array.
        source: Original position(s) of the axes to move (an int or a sequence).
        destination: Their new position(s), as many as in ``source``.

    Gradient:
        ``da = moveaxis(g, destination, source)``.
    """
    x = value_of(a, name="moveaxis")
    nd = np.ndim(x)
    src = _axis_list("moveaxis", source, nd, "source")
    dst = _axis_list("moveaxis", destination, nd, "destination")
    if len(src) != len(dst):
        raise ShapeError(
            f"moveaxis: source {source!r} and destination {destination!r} must name as "
            "many axes each."
        )
    perm = [n for n in range(nd) if n not in src]
    for d, s in sorted(zip(dst, src, strict=True)):
        perm.insert(d, s)
    return _permuted("moveaxis", a, x, tuple(perm))


def rollaxis(a: Operand, axis: int, start: int = 0) -> Variable:
    """Move axis ``axis`` of ``a`` to just before position ``start``, the others keeping
    their order, as ``numpy.rollaxis`` (which numpy keeps for old code; ``moveaxis`` is
    clearer).

    Args:
        a: The array.
        axis: The axis to move.
        start: The axis is moved to lie before the axis now at ``start`` (``-ndim`` to
            ``ndim``; ``ndim`` puts it last).

    Raises:
        ShapeError: if ``axis`` or ``start`` is out of range.

    Gradient:
        ``da = g.transpose(argsort(perm))``, ``perm`` the axis order of the result.
    """
    x = value_of(a, name="rollaxis")
    nd = np.ndim(x)
    ax = one_axis("rollaxis", axis, nd)
    pos = operator.index(start)
    if pos < 0:
        pos += nd
    if not 0 <= pos <= nd:
        raise ShapeError(
            f"rollaxis: start {start} is out of range for an array of {nd} dimensions "
            f"(it must lie in {-nd} to {nd})."
        )
    if ax < pos:
        pos -= 1
    perm = [n for n in range(nd) if n != ax]
    perm.insert(pos, ax)
    return _permuted("rollaxis", a, x, tuple(perm))


def squeeze(a: Operand, axis: Any = None, *, dim: Any = None) -> Variable:
    """Remove length-1 axes of ``a``: all of them, or those ``axis`` names.

    PyTorch's ``dim`` is accepted for ``axis``.

    Raises:
        ShapeError: if ``axis`` names an axis whose length is not 1.

    Gradient:
        ``da = g.reshape(a.shape)``.
    """
    axis = axis_or_dim("squeeze", axis, dim)
    x = np.asarray(value_of(a, name="squeeze"))
    shape = x.shape
    if axis is None:
        axes = tuple(i for i, n in enumerate(shape) if n == 1)
    elif not shape:  # numpy takes axis 0 (or -1) of a 0-d array
        normalize_axis("squeeze", axis, 1)
        axes = ()
    else:
        axes = normalize_axis("squeeze", axis, len(shape))
        wrong = [ax for ax in axes if shape[ax] != 1]
        if wrong:
            raise ShapeError(
                f"squeeze: cannot remove axis {wrong[0]} of an array of shape {shape}: its "
                f"length is {shape[wrong[0]]}, not 1. Only length-1 axes can be squeezed; "
                "index or reduce that axis instead."
            )
    return _reshaped("squeeze", a, np.squeeze(x, axes), shape)


def expand_dims(a: Operand, axis: Axis = None, *, dim: Axis = None) -> Variable:
    """Insert length-1 axes at the positions ``axis`` names (an int or a tuple), which
    index the result's axes, as ``numpy.expand_dims``.

    Also named ``lampy.unsqueeze``, as PyTorch's ``torch.unsqueeze(input, dim)``; ``dim``
    is accepted for ``axis``.

    Raises:
        LampyTypeError: if neither ``axis`` nor ``dim`` is given.

    Gradient:
        ``da = g.reshape(a.shape)``.
    """
    axis = axis_or_dim("expand_dims", axis, dim)
    if axis is None:
        raise LampyTypeError("expand_dims: pass the position of the new axis (axis or dim).")
    x = np.asarray(value_of(a, name="expand_dims"))
    count = 1 if isinstance(axis, (int, np.integer)) else len(tuple(axis))
    axes = normalize_axis("expand_dims", axis, x.ndim + count)
    return _reshaped("expand_dims", a, np.expand_dims(x, axes), x.shape)


def broadcast_to(array: Operand, shape: int | Sequence[int]) -> Variable:
    """``array`` broadcast to ``shape`` by numpy's rules (a read-only view, no copy).

    Raises:
        ShapeError: if ``array``'s shape does not broadcast to ``shape``.

    Gradient:
        ``darray = unbroadcast(g, array.shape)``: ``g`` summed over the axes that
        broadcasting added or stretched.
    """
    x = value_of(array, name="broadcast_to")
    dims: Any = shape  # an int, or a sequence (or 1-d array) of ints
    target = (operator.index(dims),) if np.ndim(dims) == 0 else tuple(dims)
    try:
        value = np.broadcast_to(x, target)
    except ValueError:
        raise ShapeError(
            f"broadcast_to: an array of shape {np.shape(x)} cannot be broadcast to shape "
            f"{target}: each trailing dimension must be equal to the target's or 1, and "
            "the target needs at least as many dimensions."
        ) from None
    return _rearranged("broadcast_to", array, value, lambda g: g)


def _atleast(name: str, arys: tuple[Any, ...], promote: Callable[[np.ndarray], np.ndarray]) -> Any:
    results = []
    for a in arys:
        x = np.asarray(value_of(a, name=name))
        value = promote(x)
        if type(a) is Variable and value.ndim == x.ndim:
            results.append(a)
        else:
            results.append(_reshaped(name, a, value, x.shape))
    return results[0] if len(results) == 1 else tuple(results)


def atleast_1d(*arys: Operand) -> Any:
    """Each input with at least one dimension (a 0-d input becomes shape ``(1,)``).

    Returns:
        One input: a Variable (the input itself if it is a Variable with enough
        dimensions). Several: a tuple of them, as numpy 2 returns.

    Gradient:
        ``da = g.reshape(a.shape)``.
    """
    return _atleast("atleast_1d", arys, np.atleast_1d)


def atleast_2d(*arys: Operand) -> Any:
    """Each input with at least two dimensions: ``()`` -> ``(1, 1)``, ``(n,)`` -> ``(1, n)``.

    Returns:
        One input: a Variable; several: a tuple (see ``lampy.atleast_1d``).

    Gradient:
        ``da = g.reshape(a.shape)``.
    """
    return _atleast("atleast_2d", arys, np.atleast_2d)


def atleast_3d(*arys: Operand) -> Any:
    """Each input with at least three dimensions: ``()`` -> ``(1, 1, 1)``, ``(n,)`` ->
    ``(1, n, 1)``, ``(m, n)`` -> ``(m, n, 1)``, as ``numpy.atleast_3d``.

    Returns:
        One input: a Variable; several: a tuple (see ``lampy.atleast_1d``).

    Gradient:
        ``da = g.reshape(a.shape)``.
    """
    return _atleast("atleast_3d", arys, np.atleast_3d)


__all__ = [
    "reshape",
    "ravel",
    "transpose",
    "permute_dims",
    "matrix_transpose",
    "swapaxes",
    "moveaxis",
    "rollaxis",
    "squeeze",
    "expand_dims",
    "unsqueeze",
    "broadcast_to",
    "atleast_1d",
    "atleast_2d",
    "atleast_3d",
]


unsqueeze = expand_dims
"""PyTorch's name of ``lampy.expand_dims``: ``unsqueeze(a, dim)``."""
