"""``unfold`` (im2col) and ``fold`` (col2im) of ``lampy.nn.functional``, with PyTorch's
names, arguments and ``(N, C * kH * kW, L)`` block layout.

``unfold`` copies the sliding blocks of a zero-padded ``(N, C, H, W)`` input into
columns; ``fold`` sums columns back into an image, adding where blocks overlap. Each is
the other's adjoint, so each one's gradient is the other applied to ``g``.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from lampy._errors import ShapeError
from lampy.nn.functional._conv_common import (
    Ints,
    Pads,
    as_ints,
    col2im,
    float_values,
    grad_dtype,
    out_sizes,
    pad,
    windows,
)
from lampy.opkit import Operand, Variable, contrib_of, op

__all__ = ["fold", "unfold"]


def _blocks(
    name: str, size: Ints, kernel_size: Any, dilation: Any, padding: Any, stride: Any
) -> tuple[Ints, Ints, Pads, Ints, Ints]:
    """Parsed ``(kernel, dilation, pads, stride, blocks)``: ``blocks`` is the number of
    sliding blocks per spatial dimension."""
    kernel = as_ints(name, "kernel_size", kernel_size, 2, 1)
    dilation_ = as_ints(name, "dilation", dilation, 2, 1)
    pads = tuple((p, p) for p in as_ints(name, "padding", padding, 2, 0))
    stride_ = as_ints(name, "stride", stride, 2, 1)
    blocks = out_sizes(name, size, pads, kernel, stride_, dilation_)
    return kernel, dilation_, pads, stride_, blocks


def _unfold(
    x: np.ndarray, kernel: Ints, dilation: Ints, pads: Pads, stride: Ints, blocks: Ints
) -> Any:
    """``(N, C, H, W) -> (N, C * prod(kernel), prod(blocks))``, a new array."""
    cols = _new_array(windows(pad(x, pads), kernel, blocks, stride, dilation))
    return cols.reshape(x.shape[0], x.shape[1] * math.prod(kernel), math.prod(blocks))


def _fold(
    x: np.ndarray, size: Ints, kernel: Ints, dilation: Ints, pads: Pads, stride: Ints, blocks: Ints
) -> Any:
    """``(N, C * prod(kernel), prod(blocks)) -> (N, C, *size)``, a new array."""
    n, ck = x.shape[:2]
    cols = x.reshape((n, ck // math.prod(kernel), *kernel, *blocks))
    return _new_array(col2im(cols, size, pads, kernel, stride, dilation))


def _new_array(a: np.ndarray) -> np.ndarray:
    """``a`` as a C-contiguous array that owns its memory: copied if it is a view.

    With a 1x1 kernel, stride 1 and no padding the windows of ``x`` are ``x`` itself
    (a read-only view of it), and ``np.ascontiguousarray`` would return that view: the
    closures declare their result fresh (the engine keeps it as a gradient buffer and
    adds into it), so it must not be ``g``'s memory.
    """
    if a.flags.c_contiguous and a.flags.owndata and a.flags.writeable:
        return a
    return np.array(a, order="C")


def unfold(
    input: Operand,
    kernel_size: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    stride: int | tuple[int, int] = 1,
) -> Variable:
    """Sliding blocks of a zero-padded image as columns (im2col, PyTorch's ``unfold``).

    ``out[n, (c, p, q), (i, j)] = x_pad[n, c, i*sH + p*dH, j*sW + q*dW]``, the row index
    flattening ``(c, p, q)`` and the column index ``(i, j)`` in C order. There are
    ``L = prod((size + 2 padding - dilation (k - 1) - 1) // stride + 1)`` blocks.

    Args:
        input: ``(N, C, H, W)``, or ``(C, H, W)`` for one unbatched image.
        kernel_size: Block size, an int or ``(kH, kW)`` (>= 1).
        dilation: Spacing between block elements (>= 1).
        padding: Zeros on both sides of each spatial dimension (>= 0).
        stride: Step between blocks (>= 1).

    Returns:
        ``(N, C * kH * kW, L)`` (``(C * kH * kW, L)`` for an unbatched input).

    Gradient:
        ``d input = fold(g, (H, W), kernel_size, dilation, padding, stride)``: each
        element gets the sum of ``g`` over the block positions that copied it.
    """
    (x,) = float_values("unfold", input)
    if x.ndim not in (3, 4):
        raise ShapeError(
            f"unfold: input must be 3-D (C, H, W) or 4-D (N, C, H, W), got shape {x.shape}."
        )
    xb = x if x.ndim == 4 else x[None]
    size = xb.shape[2:]
    parsed = _blocks("unfold", size, kernel_size, dilation, padding, stride)
    value = _unfold(xb, *parsed)
    dtype = grad_dtype(input)

    def d_input(g: np.ndarray) -> Any:
        d = _fold(g if x.ndim == 4 else g[None], size, *parsed)
        return (d if x.ndim == 4 else d[0]).astype(dtype, copy=False)

    return op("unfold", value if x.ndim == 4 else value[0], contrib_of(input, d_input))


def fold(
    input: Operand,
    output_size: int | tuple[int, int],
    kernel_size: int | tuple[int, int],
    dilation: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    stride: int | tuple[int, int] = 1,
) -> Variable:
    """Sum columns of sliding blocks back into an image (col2im, PyTorch's ``fold``),
    the adjoint of ``unfold``: overlapping block elements add up, and the padding is
    cropped. ``fold(unfold(x))`` is ``x`` times the number of blocks covering each
    element.

    Args:
        input: ``(N, C * kH * kW, L)``, or ``(C * kH * kW, L)`` unbatched, where ``L`` is
            the number of blocks ``unfold`` makes from an ``output_size`` image.
        output_size: The image size ``(H, W)`` (or an int for both).
        kernel_size: Block size, an int or ``(kH, kW)`` (>= 1).
        dilation: Spacing between block elements (>= 1).
        padding: Zeros on both sides of each spatial dimension (>= 0), cropped.
        stride: Step between blocks (>= 1).

    Returns:
        ``(N, C, H, W)`` (``(C, H, W)`` for an unbatched input).

    Gradient:
        ``d input = unfold(g, kernel_size, dilation, padding, stride)``.
    """
    (x,) = float_values("fold", input)
    if x.ndim not in (2, 3):
        raise ShapeError(
            f"fold: input must be 2-D (C * kH * kW, L) or 3-D (N, C * kH * kW, L), got "
            f"shape {x.shape}."
        )
    xb = x if x.ndim == 3 else x[None]
    size = as_ints("fold", "output_size", output_size, 2, 1)
    parsed = _blocks("fold", size, kernel_size, dilation, padding, stride)
    kernel, blocks = parsed[0], parsed[-1]
    if xb.shape[1] % math.prod(kernel):
        raise ShapeError(
            f"fold: the size of the input's channel dimension ({xb.shape[1]}, input shape "
            f"{x.shape}) must be divisible by the product of kernel_size {kernel} "
            f"({math.prod(kernel)})."
        )
    if xb.shape[2] != math.prod(blocks):
        raise ShapeError(
            f"fold: output_size {size} with kernel_size {kernel}, dilation {parsed[1]}, "
            f"padding {padding!r} and stride {parsed[3]} makes {blocks[0]} * {blocks[1]} = "
            f"{math.prod(blocks)} blocks, but the input (shape {x.shape}) has "
            f"{xb.shape[2]} in its last dimension."
        )
    value = _fold(xb, size, *parsed)
    dtype = grad_dtype(input)

    def d_input(g: np.ndarray) -> Any:
        d = _unfold(g if x.ndim == 3 else g[None], *parsed)
        return (d if x.ndim == 3 else d[0]).astype(dtype, copy=False)

    return op("fold", value if x.ndim == 3 else value[0], contrib_of(input, d_input))
