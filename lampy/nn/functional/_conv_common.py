"""Shared machinery of the convolution family (``_conv.py``, ``_fold.py``): argument
parsing and checks with PyTorch's rules, zero padding, and the two array kernels every
convolution is built from.

- ``windows`` is im2col as a view: the (dilated, strided) kernel windows of a padded
  array, ``(A, B, *S_padded) -> (A, B, *K, *Out)``, made by ``as_strided`` without a copy.
- ``col2im`` is its adjoint: it adds such windows back into a zero array of the padded
  size, one strided slice per kernel position, and crops the padding.

A convolution is im2col followed by one matmul (batched over groups); its gradient with
respect to the input, and the transposed convolution, are the matmul's transpose
followed by col2im. Arrays of N-d convolutions use PyTorch's layout ``(N, C, *spatial)``
with 1 or 2 spatial dimensions. ``image_of_cols`` undoes an im2col (the input, for the
differentiable weight gradient, from the matrix the closures keep).
"""

from __future__ import annotations

import math
import operator
from typing import Any

import numpy as np
from numpy.lib.stride_tricks import as_strided

from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError, describe
from lampy.opkit import needs_grad, value_of

Ints = tuple[int, ...]
Pads = tuple[tuple[int, int], ...]


def as_ints(name: str, arg: str, value: Any, nd: int, minimum: int) -> Ints:
    """``value`` (an int or a sequence of ``nd`` ints) as a tuple of ``nd`` ints, each at
    least ``minimum``."""
    items = value if isinstance(value, (tuple, list)) else (value,) * nd
    try:
        out = tuple(operator.index(v) for v in items if not isinstance(v, bool))
    except TypeError:
        out = ()
    if len(out) != nd or len(items) != nd:
        raise LampyTypeError(
            f"{name}: {arg} must be an int or a tuple of {nd} ints, got {value!r}."
        )
    if min(out) < minimum:
        raise LampyValueError(
            f"{name}: {arg} must be >= {minimum} in every dimension, got {value!r}."
        )
    return out


def float_values(name: str, *args: Any) -> tuple[Any, ...]:
    """The values of ``args`` (None stays None) as arrays of one common float dtype: the
    float inputs' promoted dtype, float64 when no input is floating point."""
    values = [None if a is None else np.asarray(value_of(a, name=name)) for a in args]
    floats = []
    for v in values:
        if v is None:
            continue
        if v.dtype.kind not in "biuf":
            raise DTypeError(f"{name}: inputs must be real numbers, got {describe(v)}.")
        if v.dtype.kind == "f":
            floats.append(v.dtype)
    dtype = np.result_type(*floats) if floats else np.dtype(np.float64)
    return tuple(None if v is None else v.astype(dtype, copy=False) for v in values)


def grad_dtype(x: Any) -> Any:
    """The dtype ``x``'s gradient must have, if ``x`` is a Variable that needs one."""
    return x.value.dtype if needs_grad(x) else None


def batched(name: str, x: np.ndarray, nd: int, layout: str) -> tuple[np.ndarray, bool]:
    """``x`` with a batch dimension (``(1, *x.shape)`` for an unbatched input, as PyTorch
    accepts), and whether it was unbatched."""
    if x.ndim == nd + 2:
        return x, False
    if x.ndim == nd + 1:
        return x[None], True
    raise ShapeError(
        f"{name}: input must be {nd + 1}-D {layout.replace('N, ', '')} (unbatched) or "
        f"{nd + 2}-D {layout} (batched), got shape {x.shape}."
    )


def check_weight(name: str, w: np.ndarray, nd: int, layout: str) -> None:
    if w.ndim != nd + 2:
        raise ShapeError(f"{name}: weight must be {nd + 2}-D {layout}, got shape {w.shape}.")
    if min(w.shape[2:]) < 1:
        raise ShapeError(f"{name}: the kernel size must be >= 1, got weight shape {w.shape}.")


def check_groups(name: str, groups: Any, **channels: int) -> int:
    """``groups`` checked: an int >= 1 dividing each named channel count."""
    if isinstance(groups, bool) or not isinstance(groups, (int, np.integer)) or groups < 1:
        raise LampyValueError(f"{name}: groups must be an int >= 1, got {groups!r}.")
    for what, n in channels.items():
        if n % groups:
            raise LampyValueError(
                f"{name}: groups={groups} must divide the {what.replace('_', ' ')} ({n})."
            )
    return int(groups)


def check_bias(name: str, b: np.ndarray | None, channels: int) -> None:
    if b is not None and b.shape != (channels,):
        raise ShapeError(
            f"{name}: bias must have shape ({channels},), one value per output channel, "
            f"got shape {b.shape}."
        )


def conv_padding(
    name: str, padding: Any, spatial: Ints, kernel: Ints, stride: Ints, dilation: Ints
) -> Pads:
    """``(before, after)`` per spatial dimension for an int/tuple padding, "valid" or
    "same" (PyTorch's: stride 1 only, an odd total puts the extra 1 after)."""
    nd = len(kernel)
    if isinstance(padding, str):
        if padding == "valid":
            return ((0, 0),) * nd
        if padding != "same":
            raise LampyValueError(
                f"{name}: padding must be an int, a tuple of ints, 'valid' or 'same', "
                f"got {padding!r}."
            )
        if any(s != 1 for s in stride):
            raise LampyValueError(
                f"{name}: padding='same' needs stride 1 (as in PyTorch), got stride={stride}; "
                "give the padding as numbers instead."
            )
        totals = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
        return tuple((t // 2, t - t // 2) for t in totals)
    pad = as_ints(name, "padding", padding, nd, 0)
    return tuple((p, p) for p in pad)


def out_sizes(
    name: str, spatial: Ints, pads: Pads, kernel: Ints, stride: Ints, dilation: Ints
) -> Ints:
    """The number of windows per spatial dimension:
    ``(S + before + after - dilation (K - 1) - 1) // stride + 1``, checked > 0."""
    padded = tuple(s + a + b for s, (a, b) in zip(spatial, pads, strict=True))
    span = tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation, strict=True))
    if any(p < e for p, e in zip(padded, span, strict=True)):
        raise ShapeError(
            f"{name}: the padded input size {padded} is smaller than the dilated kernel "
            f"size {span} (kernel {kernel}, dilation {dilation}) in some dimension, so the "
            "output would be empty; use a smaller kernel or dilation, or more padding."
        )
    return tuple((p - e) // s + 1 for p, e, s in zip(padded, span, stride, strict=True))


def _trailing(index: Any) -> tuple[Any, ...]:
    """An index of an array's trailing dimensions: ``(..., *index)``."""
    return (Ellipsis, *index)


def pad(x: np.ndarray, pads: Pads) -> np.ndarray:
    """``x`` of shape ``(A, B, *S)`` zero-padded by ``pads`` in its spatial dimensions
    (``x`` itself when nothing is padded)."""
    if not any(a or b for a, b in pads):
        return x
    shape = x.shape[:2] + tuple(s + a + b for s, (a, b) in zip(x.shape[2:], pads, strict=True))
    out = np.zeros(shape, x.dtype)
    inner = [slice(a, a + s) for s, (a, _) in zip(x.shape[2:], pads, strict=True)]
    out[_trailing(inner)] = x
    return out


def windows(xp: np.ndarray, kernel: Ints, out: Ints, stride: Ints, dilation: Ints) -> np.ndarray:
    """The kernel windows of a padded ``xp`` of shape ``(A, B, *S)`` as a read-only view
    of shape ``(A, B, *kernel, *out)``: element ``[a, b, *k, *o]`` is
    ``xp[a, b, *(o * stride + k * dilation)]``."""
    st = xp.strides[2:]
    strides = (
        xp.strides[:2]
        + tuple(s * d for s, d in zip(st, dilation, strict=True))
        + tuple(s * t for s, t in zip(st, stride, strict=True))
    )
    return as_strided(xp, xp.shape[:2] + kernel + out, strides, writeable=False)


def col2im(
    cols: np.ndarray, size: Ints, pads: Pads, kernel: Ints, stride: Ints, dilation: Ints
) -> Any:
    """The adjoint of ``windows`` followed by cropping ``pads``: ``cols`` of shape
    ``(A, B, *kernel, *out)`` added into a zero array of the padded size, each window
    where ``windows`` took it from; returns ``(A, B, *size)``, a new array or a view
    of one (the crop).

    ``size`` is the unpadded size; padded, it may reach past the last window (the
    positions no window touches are zero).
    """
    nd = len(kernel)
    out = cols.shape[2 + nd :]
    padded = tuple(s + a + b for s, (a, b) in zip(size, pads, strict=True))
    acc = np.zeros(cols.shape[:2] + padded, cols.dtype)
    for k in np.ndindex(*kernel):
        target = tuple(
            slice(i * d, i * d + t * (o - 1) + 1, t)
            for i, d, t, o in zip(k, dilation, stride, out, strict=True)
        )
        acc[_trailing(target)] += cols[_trailing([*k, *(slice(None),) * nd])]
    if not any(a or b for a, b in pads):
        return acc
    crop = [slice(a, a + s) for s, (a, _) in zip(size, pads, strict=True)]
    return acc[_trailing(crop)]


def channels_first(a: np.ndarray) -> np.ndarray:
    """``(N, C, *S)`` as a new C-contiguous ``(C, N * prod(S))`` matrix."""
    return np.ascontiguousarray(np.swapaxes(a, 0, 1)).reshape(a.shape[1], -1)


def batch_first(a: np.ndarray, n: int, spatial: Ints) -> np.ndarray:
    """``(C, N * prod(S))`` (or ``(C, N, *S)``) back to a C-contiguous ``(N, C, *S)``."""
    return np.ascontiguousarray(np.swapaxes(a.reshape((a.shape[0], n, *spatial)), 0, 1))


def im2col(
    xp: np.ndarray, kernel: Ints, out: Ints, stride: Ints, dilation: Ints, groups: int
) -> np.ndarray:
    """The windows of a padded ``(N, C, *S)`` input as a new matrix per group, of shape
    ``(groups, C/groups * prod(kernel), N * prod(out))``, rows ordered (channel, kernel
    position) as a weight's flattened ``(C/groups, *kernel)``, columns ordered
    (sample, output position)."""
    n, c = xp.shape[:2]
    nd = len(kernel)
    view = windows(xp, kernel, out, stride, dilation)
    # (N, C, *K, *Out) -> (C, *K, N, *Out): one copy; the matmuls then need no other.
    order = (1, *range(2, 2 + nd), 0, *range(2 + nd, 2 + 2 * nd))
    cols = np.ascontiguousarray(view.transpose(order))
    return cols.reshape(groups, c // groups * math.prod(kernel), n * math.prod(out))


def cols_to_image(
    cols: np.ndarray,
    n: int,
    kernel: Ints,
    out: Ints,
    size: Ints,
    pads: Pads,
    stride: Ints,
    dilation: Ints,
) -> np.ndarray:
    """The adjoint of ``im2col``: a ``(groups, C/groups * prod(kernel), N * prod(out))``
    matrix folded back into a new ``(N, C, *size)`` array."""
    nd = len(kernel)
    c = cols.shape[0] * cols.shape[1] // math.prod(kernel)
    blocks = cols.reshape((c, *kernel, n, *out))
    # (C, *K, N, *Out) -> (C, N, *K, *Out) as a view, summed into (C, N, *size).
    view = blocks.transpose((0, 1 + nd, *range(1, 1 + nd), *range(2 + nd, 2 + 2 * nd)))
    return np.ascontiguousarray(
        np.swapaxes(col2im(view, size, pads, kernel, stride, dilation), 0, 1)
    )


def image_of_cols(
    cols: np.ndarray,
    n: int,
    kernel: Ints,
    out: Ints,
    size: Ints,
    pads: Pads,
    stride: Ints,
    dilation: Ints,
) -> np.ndarray:
    """The input an ``im2col`` matrix was made from: each window of ``cols`` (of shape
    ``(groups, C/groups * prod(kernel), N * prod(out))``) written back where it was read
    (not added, as ``cols_to_image`` does), the padding cropped; a new ``(N, C, *size)``
    array, zero at the positions no window reads. A differentiable weight gradient
    needs the input, and the closures keep only this matrix."""
    c = cols.shape[0] * cols.shape[1] // math.prod(kernel)
    blocks = cols.reshape((c, *kernel, n, *out))
    padded = tuple(s + a + b for s, (a, b) in zip(size, pads, strict=True))
    image = np.zeros((n, c, *padded), cols.dtype)
    for k in np.ndindex(*kernel):
        target = tuple(
            slice(i * d, i * d + t * (o - 1) + 1, t)
            for i, d, t, o in zip(k, dilation, stride, out, strict=True)
        )
        block: tuple[Any, ...] = (slice(None), *k)
        image[_trailing(target)] = np.swapaxes(blocks[block], 0, 1)
    crop = [slice(a, a + s) for s, (a, _) in zip(size, pads, strict=True)]
    return image[_trailing(crop)] if any(a or b for a, b in pads) else image
