"""Sorting: ``sort``, ``argsort`` and ``partition`` (numpy), ``topk`` (PyTorch).

nan sorts as the largest value, as in numpy's ``sort`` and PyTorch's ``topk``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.opkit import (
    GRAD_ENABLED,
    Operand,
    Variable,
    contribution,
    needs_grad,
    one_axis,
    op,
    param_of,
    value_of,
)
from lampy.ops._indexing import linear_index, scattered_flat
from lampy.ops._shape import reshape
from lampy.ops._torch_names import axis_or_dim

_isnan = np.isnan


def _sort_axis(name: str, x: Any, axis: Any) -> tuple[Any, int]:
    """The array to sort (flattened for ``axis=None``) and the axis, as numpy takes them."""
    if axis is None:
        return np.reshape(x, -1), 0
    return x, one_axis(name, axis, np.ndim(x))


def sort(
    a: Operand, axis: int | None = -1, kind: str | None = None, *, stable: bool | None = None
) -> Variable:
    """A sorted copy of ``a`` along ``axis`` (numpy's ``sort``; ``axis=None`` sorts the
    flattened array). nan sorts last.

    Args:
        a: The array to sort.
        axis: The axis to sort along (default the last; None: flattened).
        kind: numpy's sorting algorithm (``"quicksort"``, ``"stable"``...).
        stable: ``True`` asks for a stable sort (keyword-only, as in numpy). numpy's
            ``order`` argument (structured arrays) is not supported.

    Raises:
        ShapeError: if ``axis`` is out of range (a 0-d ``a`` needs ``axis=None``).

    Gradient:
        ``g`` scattered back through the sorting permutation ``p``:
        ``da[p[i]] = g[i]`` along ``axis``. Tied values get the gradients of the output
        positions the permutation gives them (in order of appearance with a stable
        sort); any such assignment is a valid subgradient.
    """
    x = value_of(a, name="sort")
    src, ax = _sort_axis("sort", x, axis)
    if not (needs_grad(a) and GRAD_ENABLED.get()):
        return op("sort", np.sort(src, axis=ax, kind=kind, stable=stable))  # type: ignore[arg-type]
    perm = np.argsort(src, axis=ax, kind=kind, stable=stable)  # type: ignore[arg-type]
    shape = src.shape
    lin = linear_index(shape, perm, ax, shape)
    value = np.reshape(src, -1)[lin]

    def d_a(g: np.ndarray) -> Any:
        d = np.empty(shape, g.dtype)
        d.reshape(-1)[lin] = g
        return d.reshape(np.shape(x))

    dtype = np.result_type(x)

    def vjp(g: Any, out: Any) -> Any:
        return reshape(scattered_flat(g, shape, dtype, lin), np.shape(x))

    return op("sort", value, param_of(a, contribution(d_a), vjp=vjp))


def argsort(
    a: Operand,
    axis: int | None = -1,
    kind: str | None = None,
    *,
    stable: bool | None = None,
    dim: int | None = None,
) -> np.ndarray:
    """The indices that sort ``a`` along ``axis``, as a plain numpy integer array
    (numpy's ``argsort``; not differentiable, so not a Variable).

    PyTorch's ``dim`` is accepted for ``axis`` (``sort`` takes numpy's names only:
    ``torch.sort`` returns values and indices).

    Raises:
        ShapeError: if ``axis`` is out of range.
    """
    axis = axis_or_dim("argsort", axis, dim, default=-1)
    x = value_of(a, name="argsort")
    if axis is not None and np.ndim(x) > 0:
        one_axis("argsort", axis, np.ndim(x))
    return np.argsort(x, axis=axis, kind=kind, stable=stable)  # type: ignore[arg-type]


def partition(
    a: Operand,
    kth: int | Sequence[int],
    axis: int | None = -1,
    kind: str = "introselect",
    order: None = None,
) -> Variable:
    """A copy of ``a`` partially sorted along ``axis`` so that the element at each
    position ``kth`` is the one a full sort would put there, smaller or equal elements
    before it and greater or equal ones after it, as ``numpy.partition`` (the value is
    numpy's, element for element). nan sorts last.

    Args:
        a: The array.
        kth: A position, or a sequence of positions, along ``axis`` (negatives allowed).
        axis: The axis to partition along (default the last; None: the flattened array).
        kind: numpy's selection algorithm (``'introselect'``).
        order: numpy's field order for structured arrays: not supported, must be None.

    Raises:
        ShapeError: if ``kth`` or ``axis`` is out of range.

    Gradient:
        ``g`` scattered back to the element each output position holds:
        ``da[p[i]] = g[i]`` along ``axis``. Elements of equal value are paired in order
        of position (any pairing is a valid subgradient, as for :func:`sort`).
    """
    if order is not None:
        raise LampyValueError(
            "partition: order= (the fields of a structured array) is not supported; "
            "partition a plain numeric array."
        )
    x = value_of(a, name="partition")
    src, ax = _sort_axis("partition", x, axis)
    try:
        value = np.partition(src, kth, axis=ax, kind=kind)  # type: ignore[call-overload]
    except ValueError as e:
        raise ShapeError(
            f"partition: kth={kth!r} does not fit axis {ax} of length {np.shape(src)[ax]} "
            f"(array of shape {np.shape(x)}): {e}"
        ) from None
    if not (needs_grad(a) and GRAD_ENABLED.get()):
        return op("partition", value)
    # numpy leaves the order inside each part unspecified, and argpartition's order may
    # differ from partition's: pair each output element with an input element of the
    # same value instead, the j-th smallest with the j-th smallest.
    shape = src.shape
    ranks_in = np.argsort(src, axis=ax, kind="stable")
    ranks_out = np.argsort(value, axis=ax, kind="stable")
    perm = np.empty_like(ranks_in)
    np.put_along_axis(perm, ranks_out, ranks_in, axis=ax)
    lin = linear_index(shape, perm, ax, shape)

    def d_a(g: np.ndarray) -> Any:
        d = np.empty(shape, g.dtype)
        d.reshape(-1)[lin] = g
        return d.reshape(np.shape(x))

    dtype = np.result_type(x)

    def vjp(g: Any, out: Any) -> Any:
        return reshape(scattered_flat(g, shape, dtype, lin), np.shape(x))

    return op("partition", value, param_of(a, contribution(d_a), vjp=vjp))


class TopK(NamedTuple):
    """What ``lampy.topk`` returns, like ``torch.return_types.topk``."""

    values: Variable
    """The k selected values (a Variable, differentiable)."""
    indices: np.ndarray
    """Their positions along the axis (int64, a plain numpy array)."""


def _select_mask(xm: np.ndarray, k: int, largest: bool) -> np.ndarray:
    """Boolean mask of the k largest (smallest) along the last axis, ties to the lowest
    index, nan counting as the largest value."""
    n = xm.shape[-1]
    kth = n - k if largest else k - 1
    t = np.partition(xm, kth, axis=-1)[..., kth : kth + 1]
    hasnan = xm.dtype.kind in "fc" and bool(_isnan(t).any() or _isnan(xm).any())
    if largest:
        strict = xm > t
        if hasnan:
            strict |= _isnan(xm) & ~_isnan(t)
    else:
        strict = xm < t
        if hasnan:
            strict |= ~_isnan(xm) & _isnan(t)
    tied = xm == t
    if hasnan:
        tied |= _isnan(xm) & _isnan(t)
    need = k - strict.sum(axis=-1, keepdims=True)
    mask: np.ndarray
    if np.array_equal(tied.sum(axis=-1, keepdims=True), need):  # no tie to break
        mask = strict | tied
    else:
        mask = strict | (tied & (np.cumsum(tied, axis=-1) <= need))
    return mask


def topk(
    x: Operand,
    k: int,
    axis: int = -1,
    largest: bool = True,
    sorted: bool = True,
    *,
    dim: int | None = None,
) -> TopK:
    """The ``k`` largest (or smallest) values of ``x`` along ``axis`` and their indices:
    PyTorch's ``torch.topk(input, k, dim=-1, largest=True, sorted=True)``.

    Ties are broken by the lowest index, deterministically (PyTorch leaves it
    unspecified): among equal values the earlier positions are selected, and listed
    first. nan counts as larger than every number. With ``sorted=False`` the selected
    values come in the order of their positions along ``axis``.

    Args:
        x: The array to select from.
        k: How many values to keep along ``axis``, ``0 <= k <= x.shape[axis]``. A 0-d
            ``x`` takes ``k=1`` and gives 0-d results.
        axis: The axis to select along (default the last).
        largest: Select the largest values (False: the smallest).
        sorted: Return the values sorted (descending for ``largest``, else ascending).
        dim: PyTorch's name for ``axis``.

    Returns:
        A ``TopK(values, indices)`` pair: ``values`` a Variable of shape ``x.shape``
        with ``k`` along ``axis``, ``indices`` the int64 positions (a numpy array).

    Raises:
        ShapeError: if ``k`` is out of range or ``axis`` invalid.

    Gradient:
        ``dx`` gets ``g`` at the selected positions, 0 elsewhere.
    """
    a = value_of(x, name="topk")
    scalar = np.ndim(a) == 0
    ax = one_axis("topk", axis_or_dim("topk", axis, dim, default=-1), max(np.ndim(a), 1))
    src = np.reshape(a, 1) if scalar else np.asarray(a)
    n = src.shape[ax]
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise LampyTypeError(f"topk: k must be an int, got {k!r}.")
    if not 0 <= k <= n or (scalar and k != 1):
        raise ShapeError(
            f"topk: k={k} is out of range for an axis of length {n} (array of shape "
            f"{np.shape(a)}); k must lie in 0 to {n}" + (" (1 for a 0-d array)." if scalar else ".")
        )
    xm = np.moveaxis(src, ax, -1)
    lead = xm.shape[:-1]
    if k == n:
        pos = np.broadcast_to(np.arange(n), xm.shape)
    elif k == 0:
        pos = np.empty((*lead, 0), np.intp)
    else:
        mask = _select_mask(xm, k, largest)
        rows = int(np.prod(lead))
        flat = np.flatnonzero(mask).reshape(rows, k) - np.arange(0, rows * n, n)[:, None]
        pos = flat.reshape((*lead, k))
    vals = np.take_along_axis(xm, pos, axis=-1)
    if sorted and k > 1:
        if largest:  # stable ascending sort of the reversed values, reversed back
            order = k - 1 - np.argsort(vals[..., ::-1], axis=-1, kind="stable")[..., ::-1]
        else:
            order = np.argsort(vals, axis=-1, kind="stable")
        pos = np.take_along_axis(pos, order, axis=-1)
        vals = np.take_along_axis(vals, order, axis=-1)
    last = ax == src.ndim - 1
    indices = np.ascontiguousarray(pos if last else np.moveaxis(pos, -1, ax), dtype=np.int64)
    value = vals if last else np.ascontiguousarray(np.moveaxis(vals, -1, ax))
    shape, selected = src.shape, indices

    def d_x(g: np.ndarray) -> Any:
        d = np.zeros(shape, g.dtype)
        d.reshape(-1)[linear_index(shape, selected, ax, selected.shape)] = g.reshape(selected.shape)
        return d.reshape(np.shape(a))

    dtype = np.result_type(a)

    def vjp(g: Any, out: Any) -> Any:
        lin = linear_index(shape, selected, ax, selected.shape)
        return reshape(scattered_flat(reshape(g, lin.shape), shape, dtype, lin), np.shape(a))

    if scalar:
        value, indices = value.reshape(()), indices.reshape(())
    return TopK(op("topk", value, param_of(x, contribution(d_x), vjp=vjp)), indices)


__all__ = ["sort", "argsort", "partition", "topk", "TopK"]
