"""Adaptive pooling of ``lampy.nn.functional`` with PyTorch's names and semantics:
``adaptive_avg_pool1d``, ``adaptive_avg_pool2d``, ``adaptive_max_pool1d`` and
``adaptive_max_pool2d``.

Output element ``i`` of a spatial axis of length ``n`` pooled to ``out`` pools the window
``[floor(i n / out), ceil((i + 1) n / out))``: windows cover the axis, have lengths
differing by at most one, and overlap by one element where ``out`` does not divide
``n``. Average pooling is separable, one 0/1 window matrix per axis applied with
``numpy.matmul``; max pooling loops over the (at most ``ceil(n / out) + 1``) positions
of a window.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, Literal, overload

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.nn.functional._pool import scatter_max, spatial_input
from lampy.opkit import Operand, Variable, contrib_of, op

__all__ = [
    "adaptive_avg_pool1d",
    "adaptive_avg_pool2d",
    "adaptive_max_pool1d",
    "adaptive_max_pool2d",
]

_OutSize = int | None | Sequence[int | None]


def _out_sizes(name: str, output_size: Any, shape: tuple[int, ...]) -> tuple[int, ...]:
    """``output_size`` (an int, or one int or None per axis) as ints; None keeps the
    input's length."""
    nd = len(shape)
    items = [output_size] * nd if output_size is None or np.ndim(output_size) == 0 else output_size
    try:
        items = list(items)
        sizes = [n if v is None else operator.index(v) for v, n in zip(items, shape, strict=True)]
    except TypeError:
        raise LampyTypeError(
            f"{name}: output_size must be an int or {nd} ints or None, got {output_size!r}."
        ) from None
    except ValueError:
        raise LampyValueError(
            f"{name}: output_size must give {nd} sizes, got {output_size!r}."
        ) from None
    if min(sizes) < 0:
        raise LampyValueError(f"{name}: output_size must be >= 0, got {output_size!r}.")
    return tuple(sizes)


def _windows(n: int, out: int) -> tuple[np.ndarray, np.ndarray]:
    """The starts ``floor(i n / out)`` and ends ``ceil((i + 1) n / out)`` of the windows."""
    i = np.arange(out, dtype=np.int64)
    return (i * n) // out, -((-(i + 1) * n) // out)


def _sum_windows(x: np.ndarray, axis: int, start: np.ndarray, end: np.ndarray) -> Any:
    """Sums of ``x`` over the windows along ``axis``, by gathering (no products with 0,
    so inf and NaN stay in their windows)."""
    x = np.moveaxis(x, axis, -1)
    n = x.shape[-1]
    total = np.zeros((*x.shape[:-1], start.size), x.dtype)
    for a in range(int((end - start).max(initial=0))):
        pos = start + a
        np.add(total, x[..., np.minimum(pos, n - 1)], out=total, where=pos < end)
    return np.moveaxis(total, -1, axis)


def _spread_windows(g: np.ndarray, axis: int, n: int, start: np.ndarray, end: np.ndarray) -> Any:
    """The transpose of ``_sum_windows``: each window's ``g`` added to its elements."""
    g = np.moveaxis(g, axis, -1)
    d = np.zeros((*g.shape[:-1], n), g.dtype)
    flat, gs = d.reshape(-1, n), g.reshape(-1, start.size)
    for a in range(int((end - start).max(initial=0))):
        pos = start + a
        keep = np.flatnonzero(pos < end)
        np.add.at(flat.T, pos[keep], gs[:, keep].T)
    return np.moveaxis(d, -1, axis)


def _adaptive_avg(name: str, input: Any, nd: int, output_size: Any) -> Variable:
    x = spatial_input(name, input, nd)
    shape = x.shape[-nd:]
    outs = _out_sizes(name, output_size, shape)
    win = [_windows(n, o) for n, o in zip(shape, outs, strict=True)]
    sizes = [(e - s).astype(x.dtype) for s, e in win]
    div = sizes[0] if nd == 1 else np.multiply.outer(sizes[0], sizes[1])
    axes = range(-nd, 0)
    mats: list[np.ndarray] = []

    def matrices() -> list[np.ndarray]:
        """The ``(out, n)`` 0/1 matrices of the windows of each axis."""
        if not mats:
            for (s, e), n in zip(win, shape, strict=True):
                j = np.arange(n)
                mats.append(((j >= s[:, None]) & (j < e[:, None])).astype(x.dtype))
        return mats

    if np.isfinite(x).all():  # products with the 0s of the window matrices are exact 0s
        p = matrices()
        value = np.matmul(x, p[-1].T)
        if nd == 2:
            value = np.matmul(p[0], value)
    else:
        value = x
        for (s, e), axis in zip(win, axes, strict=True):
            value = _sum_windows(value, axis, s, e)
    value /= div

    def d_x(g: np.ndarray) -> Any:
        d = g / div
        if np.isfinite(d).all():
            p = matrices()
            d = np.matmul(d, p[-1])
            return d if nd == 1 else np.matmul(p[0].T, d)
        for (s, e), axis, n in zip(win, axes, shape, strict=True):
            d = _spread_windows(d, axis, n, s, e)
        return d

    return op(name, value, contrib_of(input, d_x))


def adaptive_avg_pool1d(input: Operand, output_size: int | Sequence[int]) -> Variable:
    """1-d adaptive average pooling of an ``(N, C, L)`` or ``(C, L)`` input, as PyTorch's.

    Output ``i`` is the mean of the window ``[floor(i L / out), ceil((i + 1) L / out))``.

    Args:
        input: The input.
        output_size: The output length ``out`` (0 gives an empty output).

    Raises:
        ShapeError: wrong rank, an empty channel or length.

    Gradient:
        ``g`` of each window divided by its length, added to each of its elements.
    """
    return _adaptive_avg("adaptive_avg_pool1d", input, 1, output_size)


def adaptive_avg_pool2d(input: Operand, output_size: _OutSize) -> Variable:
    """2-d adaptive average pooling of an ``(N, C, H, W)`` or ``(C, H, W)`` input, as
    PyTorch's.

    Output ``(i, j)`` is the mean of the rows ``[floor(i H / oH), ceil((i + 1) H /
    oH))`` and columns ``[floor(j W / oW), ceil((j + 1) W / oW))``.

    Args:
        input: The input.
        output_size: ``(oH, oW)``, or one int for both; None for a size keeps the
            input's.

    Raises:
        ShapeError: wrong rank, empty channel or spatial axes.

    Gradient:
        ``g`` of each window divided by its area, added to each of its elements.
    """
    return _adaptive_avg("adaptive_avg_pool2d", input, 2, output_size)


def _adaptive_max(name: str, input: Any, nd: int, output_size: Any, return_indices: bool) -> Any:
    x = spatial_input(name, input, nd)
    shape = x.shape[-nd:]
    outs = _out_sizes(name, output_size, shape)
    win = [_windows(n, o) for n, o in zip(shape, outs, strict=True)]
    longest = [int((e - s).max(initial=0)) for s, e in win]
    best = np.full(x.shape[:-nd] + outs, -np.inf, dtype=x.dtype)
    (sh, eh), (sw, ew) = win[0], win[-1]
    idx = np.broadcast_to(sw if nd == 1 else np.add.outer(sh * shape[1], sw), best.shape).copy()
    nan = bool(np.isnan(x).any())
    for a in range(longest[0]):
        rows = sh + a
        inside = rows < eh
        rows = np.minimum(rows, shape[0] - 1)
        for b in range(longest[1] if nd == 2 else 1):
            if nd == 2:
                cols = sw + b
                ok = np.logical_and.outer(inside, cols < ew)
                cols = np.minimum(cols, shape[1] - 1)
                v = x[..., rows[:, None], cols]
                pos = np.add.outer(rows * shape[1], cols)
            else:
                ok, v, pos = inside, x[..., rows], rows
            # the first maximum in window order, or the last NaN, as PyTorch
            m = v > best
            if nan:
                m |= np.isnan(v)
            m &= ok
            np.copyto(best, v, where=m)
            np.copyto(idx, pos, where=m)
    xshape = x.shape
    value = op(name, best, contrib_of(input, lambda g: scatter_max(g, idx, xshape, nd)))
    return (value, idx) if return_indices else value


@overload
def adaptive_max_pool1d(
    input: Operand, output_size: int | Sequence[int], return_indices: Literal[False] = False
) -> Variable: ...
@overload
def adaptive_max_pool1d(
    input: Operand, output_size: int | Sequence[int], return_indices: Literal[True]
) -> tuple[Variable, np.ndarray]: ...
def adaptive_max_pool1d(
    input: Operand, output_size: int | Sequence[int], return_indices: bool = False
) -> Any:
    """1-d adaptive max pooling of an ``(N, C, L)`` or ``(C, L)`` input, as PyTorch's.

    Output ``i`` is the maximum of the window ``[floor(i L / out), ceil((i + 1) L /
    out))``.

    Args:
        input: The input.
        output_size: The output length.
        return_indices: Also return the argmax positions (an int64 numpy array of
            indices along ``L``).

    Raises:
        ShapeError: wrong rank, an empty channel or length.

    Gradient:
        ``g`` goes to each window's first maximum (or its last NaN), as PyTorch;
        overlapping windows add up.
    """
    return _adaptive_max("adaptive_max_pool1d", input, 1, output_size, return_indices)


@overload
def adaptive_max_pool2d(
    input: Operand, output_size: _OutSize, return_indices: Literal[False] = False
) -> Variable: ...
@overload
def adaptive_max_pool2d(
    input: Operand, output_size: _OutSize, return_indices: Literal[True]
) -> tuple[Variable, np.ndarray]: ...
def adaptive_max_pool2d(input: Operand, output_size: _OutSize, return_indices: bool = False) -> Any:
    """2-d adaptive max pooling of an ``(N, C, H, W)`` or ``(C, H, W)`` input, as
    PyTorch's.

    Output ``(i, j)`` is the maximum of the rows ``[floor(i H / oH), ceil((i + 1) H /
    oH))`` and columns ``[floor(j W / oW), ceil((j + 1) W / oW))``.

    Args:
        input: The input.
        output_size: ``(oH, oW)``, or one int for both; None for a size keeps the
            input's.
        return_indices: Also return the argmax positions (an int64 numpy array of flat
            indices ``h * W + w`` in the input plane).

    Raises:
        ShapeError: wrong rank, empty channel or spatial axes.

    Gradient:
        ``g`` goes to each window's first maximum in row-major order (or its last NaN),
        as PyTorch; overlapping windows add up.
    """
    return _adaptive_max("adaptive_max_pool2d", input, 2, output_size, return_indices)
