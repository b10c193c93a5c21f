"""Max and average pooling of ``lampy.nn.functional`` with PyTorch's names, arguments and
semantics: ``max_pool1d``, ``max_pool2d``, ``avg_pool1d`` and ``avg_pool2d``.

Inputs are ``(N, C, *spatial)`` or unbatched ``(C, *spatial)`` (channels first, as
PyTorch); the batch may be empty. Every op is vectorised over the batch and channels and
loops only over the kernel positions: at each position the output block whose window
tap falls inside the input reads one strided slice of the input, so neither padding nor
``ceil_mode``'s overhanging windows are ever materialised. Max pooling whose windows
tile the input (kernel = stride, the common ``MaxPool2d(2)``) is computed separably,
rows then columns (``_max_pool_blocks.py``). The output length of a
spatial axis of length ``n`` is PyTorch's

    out = floor((n + 2 p - d (k - 1) - 1 + (s - 1 if ceil_mode else 0)) / s) + 1,

less one when ``ceil_mode`` would start the last window at or past ``n + p`` (the last
window must start inside the input or the left padding). float32 stays float32; integer
inputs (constants) are pooled in float64.
"""

from __future__ import annotations

import operator
from collections.abc import Iterator, Sequence
from itertools import product
from typing import Any, Literal, overload

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional import _max_pool_blocks as _blocks
from lampy.opkit import Operand, Variable, contrib_of, op, value_of

__all__ = ["avg_pool1d", "avg_pool2d", "max_pool1d", "max_pool2d"]

_Size = int | Sequence[int]
_Taps = tuple[tuple[Any, ...], tuple[Any, ...]]


def spatial_input(name: str, input: Operand, nd: int) -> np.ndarray:
    """The value of ``input`` as a float array of ``nd + 1`` or ``nd + 2`` dimensions
    whose channel and spatial axes are not empty (the batch may be)."""
    x = np.asarray(value_of(input, name=name))
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    axes = ("L",) if nd == 1 else ("H", "W")
    if x.ndim not in (nd + 1, nd + 2):
        raise ShapeError(
            f"{name}: expected an input of shape (N, C, {', '.join(axes)}) or unbatched "
            f"(C, {', '.join(axes)}), got shape {x.shape}; {nd + 2} or {nd + 1} dimensions."
        )
    if 0 in x.shape[-nd - 1 :]:
        raise ShapeError(
            f"{name}: the channel and spatial axes of the input must not be empty, got shape "
            f"{x.shape} (only the batch axis may have length 0)."
        )
    return x


def int_tuple(name: str, what: str, v: Any, nd: int, minimum: int) -> tuple[int, ...]:
    """``v`` (an int, or a sequence of 1 or ``nd`` ints) as ``nd`` ints ``>= minimum``."""
    try:
        t = (operator.index(v),) if np.ndim(v) == 0 else tuple(operator.index(i) for i in v)
    except TypeError:
        raise LampyTypeError(
            f"{name}: {what} must be an int or a sequence of {nd} ints, got {v!r}."
        ) from None
    if len(t) == 1:
        t = t * nd
    if len(t) != nd:
        raise LampyValueError(f"{name}: {what} must be one int or {nd} ints, got {v!r}.")
    if any(i < minimum for i in t):
        raise LampyValueError(f"{name}: {what} must be >= {minimum}, got {v!r}.")
    return t


def _settings(
    name: str, nd: int, kernel_size: Any, stride: Any, padding: Any, dilation: Any
) -> tuple[tuple[int, ...], ...]:
    ks = int_tuple(name, "kernel_size", kernel_size, nd, 1)
    empty = stride is None or (np.ndim(stride) == 1 and len(stride) == 0)
    ss = ks if empty else int_tuple(name, "stride", stride, nd, 1)
    ps = int_tuple(name, "padding", padding, nd, 0)
    ds = int_tuple(name, "dilation", dilation, nd, 1)
    return ks, ss, ps, ds


def _check_padding(name: str, ks: Any, ps: Any, limit: Sequence[int]) -> None:
    if any(p > m for p, m in zip(ps, limit, strict=True)):
        raise LampyValueError(
            f"{name}: padding {ps} must be at most half of the kernel size {ks} "
            f"(at most {tuple(limit)}); pad the input with pad() for more."
        )


def out_sizes(
    name: str, shape: tuple[int, ...], ks: Any, ss: Any, ps: Any, ds: Any, ceil_mode: bool
) -> tuple[int, ...]:
    """PyTorch's pooling output lengths of the spatial axes ``shape``; raises when one
    would be below 1 (the kernel does not fit in the padded input)."""
    outs = []
    for n, k, s, p, d in zip(shape, ks, ss, ps, ds, strict=True):
        o = (n + 2 * p - d * (k - 1) - 1 + (s - 1 if ceil_mode else 0)) // s + 1
        if ceil_mode and (o - 1) * s >= n + p:
            o -= 1
        outs.append(o)
    if min(outs) < 1:
        raise ShapeError(
            f"{name}: the kernel {tuple(ks)} (dilation {tuple(ds)}) does not fit in the "
            f"input's spatial shape {shape} padded by {tuple(ps)}: the output would have "
            f"shape {tuple(outs)}; use a smaller kernel or more padding."
        )
    return tuple(outs)


def _tap(n: int, out: int, s: int, c: int) -> tuple[slice, slice] | None:
    """The outputs ``o`` whose tap ``o s + c`` is inside ``[0, n)``, and those taps."""
    lo = max(0, -(c // s))
    hi = min(out - 1, (n - 1 - c) // s)
    if hi < lo:
        return None
    return slice(lo, hi + 1), slice(lo * s + c, hi * s + c + 1, s)


def kernel_taps(
    shape: tuple[int, ...], outs: tuple[int, ...], ks: Any, ss: Any, ps: Any, ds: Any
) -> Iterator[tuple[int, _Taps | None]]:
    """For each kernel position (in scan order, numbered ``k``): the block of the output
    whose taps are inside the input, and the strided input slice it reads (None if none)."""
    for k, offsets in enumerate(product(*(range(i) for i in ks))):
        taps = [
            _tap(n, o, s, a * d - p)
            for n, o, s, p, d, a in zip(shape, outs, ss, ps, ds, offsets, strict=True)
        ]
        if any(t is None for t in taps):
            yield k, None
            continue
        yield (
            k,
            (
                (Ellipsis, *(t[0] for t in taps if t)),
                (Ellipsis, *(t[1] for t in taps if t)),
            ),
        )


# --- max pooling ----------------------------------------------------------------------------


def _max_pool(
    name: str,
    input: Any,
    nd: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    ceil_mode: bool,
    return_indices: bool,
) -> Any:
    x = spatial_input(name, input, nd)
    ks, ss, ps, ds = _settings(name, nd, kernel_size, stride, padding, dilation)
    if nd == 1:  # PyTorch's max_pool1d bounds padding by the dilated kernel, max_pool2d not
        _check_padding(name, ks, ps, [(d * (k - 1) + 1) // 2 for k, d in zip(ks, ds, strict=True)])
    else:
        _check_padding(name, ks, ps, [k // 2 for k in ks])
    shape = x.shape[-nd:]
    outs = out_sizes(name, shape, ks, ss, ps, ds, ceil_mode)
    if not return_indices and _blocks.tiles(x, ks, ss, ps, ds, outs):
        # windows tiling the input: separable, faster (_max_pool_blocks.py)
        tiled, rows = _blocks.block_max(x, ks)
        if not np.isnan(tiled).any():

            def generic(g: np.ndarray) -> Any:
                taps = [t for _, t in kernel_taps(shape, outs, ks, ss, ps, ds) if t is not None]
                return first_max_grad(x, tiled, taps, g)

            d_tiled = _blocks.block_grad(x, rows, tiled, ks, generic)
            return op(name, tiled, contrib_of(input, d_tiled), keeps=(x, rows, tiled))
    lead = x.shape[:-nd]
    taps = [t for _, t in kernel_taps(shape, outs, ks, ss, ps, ds) if t is not None]
    best = np.full(lead + outs, -np.inf, dtype=x.dtype)
    for at, src in taps:
        b = best[at]
        np.maximum(b, x[src], out=b)  # NaN propagates, as in PyTorch
    found: list[np.ndarray] = []

    def flat() -> np.ndarray:
        """PyTorch's indices: the flat position in its input plane (int64) of each
        window's first maximum in scan order, or of its last NaN."""
        if found:
            return found[0]
        nan = bool(np.isnan(best).any())
        idx = np.full(best.shape, -1, dtype=np.int64)
        for at, src in taps:
            i, v = idx[at], x[src]
            m = (v == best[at]) & (i < 0)
            if nan:
                m |= np.isnan(v)
            pos = np.arange(src[1].start, src[1].stop, src[1].step)
            if nd == 2:
                pos = np.add.outer(
                    pos * shape[1], np.arange(src[2].start, src[2].stop, src[2].step)
                )
            np.copyto(i, pos, where=m)
        if idx.min(initial=0) < 0:
            # windows with no tap inside the input (dilation): PyTorch reports the first
            # tap past the left edge; they get no gradient (their value is -inf)
            first = [
                o * s - p + np.maximum(0, -((o * s - p) // d)) * d
                for o, s, p, d in zip(
                    np.ix_(*(np.arange(o) for o in outs)), ss, ps, ds, strict=True
                )
            ]
            pos = first[0] * shape[1] + first[1] if nd == 2 else first[0]
            np.copyto(idx, pos, where=idx < 0)
            outside = first[0] >= shape[0]
            if nd == 2:
                outside = outside | (first[1] >= shape[1])
            dead.append(np.broadcast_to(outside, idx.shape))
        found.append(idx)
        return idx

    dead: list[np.ndarray] = []
    xshape = x.shape

    def d_x(g: np.ndarray) -> Any:
        if np.isnan(best).any():  # the last NaN of a window takes g: scatter by index
            idx = flat()
            if dead:
                g, idx = np.where(dead[0], 0, g), np.where(dead[0], 0, idx)
            return scatter_max(g, idx, xshape, nd)
        return first_max_grad(x, best, taps, g)

    value = op(name, best, contrib_of(input, d_x))
    return (value, flat()) if return_indices else value


def first_max_grad(x: np.ndarray, best: np.ndarray, taps: list[_Taps], g: np.ndarray) -> Any:
    """The max pool's input gradient when no window holds a NaN: each tap (in scan
    order) adds ``g`` where it holds its window's maximum and no earlier tap did."""
    d = np.zeros(x.shape, dtype=g.dtype)
    free = np.ones(best.shape, dtype=bool)
    share = np.empty(best.shape, dtype=g.dtype)
    finite = bool(np.isfinite(g).all())
    for at, src in taps:
        f, part = free[at], d[src]
        m = np.equal(x[src], best[at])
        m &= f
        f ^= m
        if finite:  # g * m is g or 0 (not so for inf and NaN)
            t = share[at]
            np.multiply(g[at], m, out=t)
            np.add(part, t, out=part)
        else:
            np.add(part, g[at], out=part, where=m)
    return d


def scatter_max(g: np.ndarray, flat: np.ndarray, shape: tuple[int, ...], nd: int) -> Any:
    """``g`` added into zeros of ``shape`` at the plane positions ``flat``.

    ``g`` and ``flat`` have shape ``(*lead, *out)`` and ``shape`` is ``(*lead,
    *spatial)`` with ``nd`` spatial axes; ``flat`` holds flat positions in each
    ``spatial`` plane, and repeats add up.
    """
    plane = int(np.prod(shape[-nd:]))
    planes = int(np.prod(shape[:-nd]))
    offsets = np.arange(0, planes * plane, plane, dtype=np.int64)
    where = (flat + offsets.reshape(shape[:-nd] + (1,) * nd)).ravel()
    d = np.bincount(where, weights=g.ravel(), minlength=planes * plane)
    return d.astype(g.dtype, copy=False).reshape(shape)


@overload
def max_pool1d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    dilation: _Size = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Variable: ...
@overload
def max_pool1d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    dilation: _Size = 1,
    ceil_mode: bool = False,
    *,
    return_indices: Literal[True],
) -> tuple[Variable, np.ndarray]: ...
def max_pool1d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    dilation: _Size = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """1-d max pooling of an ``(N, C, L)`` or ``(C, L)`` input, as PyTorch's.

    Each output element is the maximum over its window ``o * stride - padding + j *
    dilation``, ``j < kernel_size``; padded positions count as ``-inf`` and are never
    chosen.

    Args:
        input: The input.
        kernel_size: The window length.
        stride: The window step; None (default): ``kernel_size``.
        padding: Implicit ``-inf`` padding on both sides, at most half the dilated
            kernel ``(dilation * (kernel_size - 1) + 1) // 2``.
        dilation: The spacing of a window's taps.
        ceil_mode: Round the output length up instead of down (the extra window must
            start inside the input or the left padding).
        return_indices: Also return the argmax positions.

    Returns:
        The pooled Variable, or with ``return_indices`` a pair of it and an int64 numpy
        array of each maximum's index along ``L``.

    Raises:
        ShapeError: wrong rank, an empty channel or length, a kernel longer than the
            padded input.
        LampyValueError: too much padding, non-positive kernel, stride or dilation.

    Gradient:
        ``g`` goes to each window's argmax: the first maximum in window order (ties go to
        the earliest tap), the last NaN if the window holds NaNs, as PyTorch; gradients
        of overlapping windows add up.
    """
    return _max_pool(
        "max_pool1d", input, 1, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


@overload
def max_pool2d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    dilation: _Size = 1,
    ceil_mode: bool = False,
    return_indices: Literal[False] = False,
) -> Variable: ...
@overload
def max_pool2d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    dilation: _Size = 1,
    ceil_mode: bool = False,
    *,
    return_indices: Literal[True],
) -> tuple[Variable, np.ndarray]: ...
def max_pool2d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    dilation: _Size = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> Any:
    """2-d max pooling of an ``(N, C, H, W)`` or ``(C, H, W)`` input, as PyTorch's.

    Each output element ``(i, j)`` is the maximum over the taps ``(i * sH - pH + a *
    dH, j * sW - pW + b * dW)``, ``a < kH``, ``b < kW``; padded positions count as
    ``-inf`` and are never chosen.

    Args:
        input: The input.
        kernel_size: The window size: an int or ``(kH, kW)``.
        stride: The window step (int or pair); None (default): ``kernel_size``.
        padding: Implicit ``-inf`` padding of each side (int or pair), at most half the
            kernel size ``k // 2``.
        dilation: The spacing of a window's taps (int or pair).
        ceil_mode: Round the output size up instead of down (an extra window must start
            inside the input or the left/top padding).
        return_indices: Also return the argmax positions.

    Returns:
        The pooled Variable, or with ``return_indices`` a pair of it and an int64 numpy
        array of each maximum's flat index ``h * W + w`` in its input plane.

    Raises:
        ShapeError: wrong rank, empty channel or spatial axes, a kernel bigger than the
            padded input.
        LampyValueError: too much padding, non-positive kernel, stride or dilation.

    Gradient:
        ``g`` goes to each window's argmax: the first maximum in row-major window order
        (ties go to the earliest tap), the last NaN if the window holds NaNs, as
        PyTorch; gradients of overlapping windows add up.
    """
    return _max_pool(
        "max_pool2d", input, 2, kernel_size, stride, padding, dilation, ceil_mode, return_indices
    )


# --- average pooling ------------------------------------------------------------------------


def _divisors(
    n: int, out: int, k: int, s: int, p: int, count_include_pad: bool, dtype: Any
) -> np.ndarray:
    """PyTorch's window sizes along one axis: with ``count_include_pad`` the window
    clipped to the padded input ``[-p, n + p)``, else to the input ``[0, n)``."""
    start = np.arange(out) * s - p
    end = np.minimum(start + k, n + p)
    if not count_include_pad:
        start, end = np.maximum(start, 0), np.minimum(end, n)
    return (end - start).astype(dtype)


def _avg_pool(
    name: str,
    input: Any,
    nd: int,
    kernel_size: Any,
    stride: Any,
    padding: Any,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: int | None,
) -> Variable:
    x = spatial_input(name, input, nd)
    ks, ss, ps, ds = _settings(name, nd, kernel_size, stride, padding, 1)
    _check_padding(name, ks, ps, [k // 2 for k in ks])
    if divisor_override is not None and operator.index(divisor_override) == 0:
        raise LampyValueError(f"{name}: divisor_override must not be 0.")
    shape = x.shape[-nd:]
    outs = out_sizes(name, shape, ks, ss, ps, ds, ceil_mode)
    taps = [t for _, t in kernel_taps(shape, outs, ks, ss, ps, ds) if t is not None]
    total = np.zeros(x.shape[:-nd] + outs, dtype=x.dtype)
    for at, src in taps:
        block = total[at]
        np.add(block, x[src], out=block)
    if divisor_override is not None:
        div: Any = x.dtype.type(divisor_override)
    else:
        sizes = [
            _divisors(n, o, k, s, p, count_include_pad, x.dtype)
            for n, o, k, s, p in zip(shape, outs, ks, ss, ps, strict=True)
        ]
        div = sizes[0] if nd == 1 else np.multiply.outer(sizes[0], sizes[1])
    value = np.divide(total, div, out=total)
    xshape = x.shape

    def d_x(g: np.ndarray) -> Any:
        share = g / div
        d = np.zeros(xshape, dtype=share.dtype)
        for at, src in taps:
            part = d[src]
            np.add(part, share[at], out=part)
        return d

    return op(name, value, contrib_of(input, d_x))


def avg_pool1d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
) -> Variable:
    """1-d average pooling of an ``(N, C, L)`` or ``(C, L)`` input, as PyTorch's.

    Each output element is the sum over its window ``[o * stride - padding, ... +
    kernel_size)`` (zero padding) divided by the window's length: the part of it inside
    ``[-padding, L + padding)`` with ``count_include_pad``, else the part inside the
    input.

    Args:
        input: The input.
        kernel_size: The window length.
        stride: The window step; None (default): ``kernel_size``.
        padding: Implicit zero padding on both sides, at most ``kernel_size // 2``.
        ceil_mode: Round the output length up instead of down (the extra window must
            start inside the input or the left padding).
        count_include_pad: Count the padding in the divisor.

    Raises:
        ShapeError: wrong rank, an empty channel or length, a kernel longer than the
            padded input.
        LampyValueError: too much padding, non-positive kernel or stride.

    Gradient:
        ``dx`` at each tap of a window is ``g / divisor`` of that window, summed over the
        windows holding it.
    """
    return _avg_pool(
        "avg_pool1d", input, 1, kernel_size, stride, padding, ceil_mode, count_include_pad, None
    )


def avg_pool2d(
    input: Operand,
    kernel_size: _Size,
    stride: _Size | None = None,
    padding: _Size = 0,
    ceil_mode: bool = False,
    count_include_pad: bool = True,
    divisor_override: int | None = None,
) -> Variable:
    """2-d average pooling of an ``(N, C, H, W)`` or ``(C, H, W)`` input, as PyTorch's.

    Each output element is the sum over its ``kH x kW`` window (zero padding) divided by
    ``divisor_override`` if given, else by the window's area: with
    ``count_include_pad`` the part of the window inside the padded input ``[-pH, H +
    pH) x [-pW, W + pW)`` (``ceil_mode``'s windows overhanging it count less), else the
    part inside the input.

    Args:
        input: The input.
        kernel_size: The window size: an int or ``(kH, kW)``.
        stride: The window step (int or pair); None (default): ``kernel_size``.
        padding: Implicit zero padding of each side (int or pair), at most
            ``kernel_size // 2``.
        ceil_mode: Round the output size up instead of down (an extra window must start
            inside the input or the left/top padding).
        count_include_pad: Count the padding in the divisor.
        divisor_override: A fixed divisor for every window.

    Raises:
        ShapeError: wrong rank, empty channel or spatial axes, a kernel bigger than the
            padded input.
        LampyValueError: too much padding, non-positive kernel or stride, a zero
            ``divisor_override``.

    Gradient:
        ``dx`` at each tap of a window is ``g / divisor`` of that window, summed over the
        windows holding it.
    """
    return _avg_pool(
        "avg_pool2d",
        input,
        2,
        kernel_size,
        stride,
        padding,
        ceil_mode,
        count_include_pad,
        divisor_override,
    )
