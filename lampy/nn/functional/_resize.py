"""Padding and resizing of ``lampy.nn.functional`` with PyTorch's names, arguments and
semantics: ``pad`` and ``interpolate``.

``pad`` takes PyTorch's pad tuple (last axis first); its reflect, replicate and circular
modes are ``lampy.pad``'s reflect, edge and wrap. ``interpolate`` resamples the spatial
axes of an ``(N, C, *spatial)`` input one axis at a time: every mode is separable, each
output element along an axis reads one (nearest) or two (linear) input elements, and
the source indices are computed exactly as PyTorch's CPU kernels compute them (in
float32 for float32 inputs), so that results match PyTorch's to rounding.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Sequence
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional._adaptive_pool import adaptive_avg_pool1d, adaptive_avg_pool2d
from lampy.opkit import Operand, Variable, contrib_of, op, value_of
from lampy.ops import pad as np_pad

__all__ = ["interpolate", "pad"]

_PAD_MODES = {"constant": "constant", "reflect": "reflect", "replicate": "edge", "circular": "wrap"}
_MODES = ("nearest", "nearest-exact", "linear", "bilinear", "trilinear", "area")
_LINEAR = {"linear": 3, "bilinear": 4, "trilinear": 5}


# --- pad ------------------------------------------------------------------------------------


def _pad_pairs(input_ndim: int, pad: Any) -> list[tuple[int, int]]:
    """PyTorch's pad tuple as ``(before, after)`` pairs for the trailing axes, first axis
    first."""
    try:
        p = [operator.index(i) for i in pad]
    except TypeError:
        raise LampyTypeError(f"pad: pad must be a sequence of ints, got {pad!r}.") from None
    if len(p) % 2:
        raise LampyValueError(
            f"pad: the pad sequence must have an even length (before, after pairs, last axis "
            f"first), got {len(p)}: {pad!r}."
        )
    if len(p) // 2 > input_ndim:
        raise ShapeError(
            f"pad: {len(p) // 2} (before, after) pairs {pad!r} pad more axes than the input "
            f"has ({input_ndim}); give at most one pair per axis."
        )
    return [(p[i], p[i + 1]) for i in range(len(p) - 2, -1, -2)]


def _crop_pad(input: Any, x: np.ndarray, pairs: list[tuple[int, int]], value: Any) -> Variable:
    """Constant padding where pads may be negative (they crop)."""
    k = len(pairs)
    lead = x.shape[: x.ndim - k]
    src: list[Any] = []
    dst: list[Any] = []
    shape: list[int] = []
    for n, (b, e) in zip(x.shape[x.ndim - k :], pairs, strict=True):
        kept = n + min(b, 0) + min(e, 0)
        if kept < 0:
            raise ShapeError(
                f"pad: negative pads ({b}, {e}) crop more than the {n} elements of an axis of "
                f"the input of shape {x.shape}."
            )
        src.append(slice(max(-b, 0), max(-b, 0) + kept))
        dst.append(slice(max(b, 0), max(b, 0) + kept))
        shape.append(n + b + e)
    into: tuple[Any, ...] = (Ellipsis, *dst)
    fro: tuple[Any, ...] = (Ellipsis, *src)
    value_ = np.full((*lead, *shape), 0 if value is None else value, dtype=x.dtype)
    value_[into] = x[fro]
    xshape = x.shape

    def d_x(g: np.ndarray) -> Any:
        d = np.zeros(xshape, g.dtype)
        d[fro] = g[into]
        return d

    return op("pad", value_, contrib_of(input, d_x))


def pad(
    input: Operand, pad: Sequence[int], mode: str = "constant", value: float | None = None
) -> Variable:
    """Pad (or, with negative pads, crop) the trailing axes of ``input``, as PyTorch's
    ``torch.nn.functional.pad``.

    ``pad`` lists ``(before, after)`` pairs starting from the last axis: ``(left,
    right)`` pads the last axis, ``(left, right, top, bottom)`` the last two, and so on.

    Args:
        input: The input.
        pad: An even number of ints; at most two per axis. Negative pads remove elements.
        mode: ``'constant'`` (fill with ``value``, any number of axes), ``'reflect'``
            (mirror without repeating the edge; pads must be shorter than the axis),
            ``'replicate'`` (repeat the edge element) or ``'circular'`` (wrap around;
            pads at most the axis length). The last three pad 1, 2 or 3 trailing axes of
            an input with 1 or 2 more axes (batch and channels, or channels only).
        value: The fill value of ``'constant'`` mode (default 0).

    Raises:
        LampyValueError: an odd-length ``pad``, an unknown mode, ``value`` with a mode
            other than constant, a reflect pad not shorter than its axis, a circular pad
            longer than its (cropped) axis.
        ShapeError: more pairs than axes, a rank that the mode does not support,
            negative pads cropping more than an axis holds.

    Gradient:
        ``dx`` gathers ``g`` back onto the element each output element copies (summed
        where an element is copied several times); cropped elements get 0.
    """
    if mode not in _PAD_MODES:
        raise LampyValueError(
            f"pad: mode must be one of {', '.join(map(repr, _PAD_MODES))}, got {mode!r}."
        )
    x = np.asarray(value_of(input, name="pad"))
    pairs = _pad_pairs(x.ndim, pad)
    if mode == "constant":
        return _crop_pad(input, x, pairs, value)
    if value is not None:
        raise LampyValueError(
            f"pad: mode {mode!r} does not take a value (only 'constant' fills with one), "
            f"got value={value!r}."
        )
    k = len(pairs)
    if not 1 <= k <= 3 or x.ndim not in (k + 1, k + 2):
        raise ShapeError(
            f"pad: mode {mode!r} pads the last 1, 2 or 3 axes of an input with 1 or 2 more "
            f"axes ((N, C, ...) or (C, ...)); {len(pad)} pads on an input of shape {x.shape} "
            f"do not fit. Use 2 pads for a 2-d or 3-d input, 4 for 3-d or 4-d, 6 for 4-d or 5-d."
        )
    spatial = x.shape[x.ndim - k :]
    if 0 in x.shape[1 if x.ndim == k + 2 else 0 :]:
        raise ShapeError(
            f"pad: mode {mode!r} needs non-empty channel and padded axes, got shape {x.shape}."
        )
    for n, (b, e) in zip(spatial, pairs, strict=True):
        if n + b + e < 0:
            raise ShapeError(
                f"pad: pads ({b}, {e}) leave {n + b + e} elements of an axis of length {n}; "
                f"the result cannot be shorter than 0 (input shape {x.shape})."
            )
    crop = tuple(
        slice(max(-b, 0), n - max(-e, 0)) for n, (b, e) in zip(spatial, pairs, strict=True)
    )
    if mode == "circular":
        # PyTorch crops first, then wraps around what is left
        for n, (b, e), c in zip(spatial, pairs, crop, strict=True):
            kept = c.stop - c.start
            if kept < 0 or max(b, e) > kept:
                raise LampyValueError(
                    f"pad: circular pads ({b}, {e}) of an axis of length {n} (after cropping "
                    f"{max(kept, 0)}) wrap around more than once; pads must be at most the "
                    "axis length."
                )
        if any(c != slice(0, n) for c, n in zip(crop, spatial, strict=True)):
            kept_part: tuple[Any, ...] = (Ellipsis, *crop)
            input = (input if isinstance(input, Variable) else x)[kept_part]
    elif mode == "reflect":
        for n, (b, e) in zip(spatial, pairs, strict=True):
            if b >= n or e >= n:
                raise LampyValueError(
                    f"pad: reflect pads ({b}, {e}) must be shorter than the axis they pad "
                    f"(length {n}) in the input of shape {x.shape}; use 'replicate' or "
                    "'circular', or pad in steps."
                )
    widths = [(0, 0)] * (x.ndim - k) + [(max(b, 0), max(e, 0)) for b, e in pairs]
    out = np_pad(input, widths, _PAD_MODES[mode])
    if mode != "circular" and any(b < 0 or e < 0 for b, e in pairs):
        # PyTorch pads the whole axis, then crops: cut from the padded result
        cut = tuple(
            slice(max(-b, 0), m - max(-e, 0))
            for m, (b, e) in zip(out.shape[x.ndim - k :], pairs, strict=True)
        )
        cropped: tuple[Any, ...] = (Ellipsis, *cut)
        out = out[cropped]
    return out


# --- interpolate ----------------------------------------------------------------------------


def _per_axis(name: str, what: str, v: Any, nd: int, shape: tuple[int, ...]) -> list[Any]:
    """``v`` (one value or one per spatial axis) as a list of ``nd`` values."""
    if np.ndim(v) == 0:
        return [v] * nd
    items = list(v)
    if len(items) != nd:
        raise ShapeError(
            f"{name}: {what} {v!r} must give one value per spatial axis: the input of shape "
            f"{shape} (N, C, *spatial) has {nd}."
        )
    return items


def _nearest_source(n: int, m: int, scale: float | None, exact: bool, kernel: bool) -> np.ndarray:
    """PyTorch's source index of each of ``m`` outputs resampling ``n`` inputs, in
    float32 arithmetic as PyTorch computes it.

    ``kernel``: legacy nearest of a 4-d input, which PyTorch runs in its C++ kernel: an
    unchanged length is copied and a doubled one halves the
    index. Otherwise (PyTorch's Python decomposition) every axis is resampled, even by a
    scale factor that leaves its length unchanged.
    """
    i = np.arange(m)
    if kernel:
        if m in (n, 2 * n):
            return i if m == n else i >> 1
        ratio = np.float32(1.0 / scale) if scale else np.float32(n) / np.float32(m)
    else:
        ratio = np.float32(n / (n * scale) if scale else n / m)
    at = i.astype(np.float32) + np.float32(0.5) if exact else i.astype(np.float32)
    src: np.ndarray = np.minimum(np.floor(at * ratio).astype(np.int64), n - 1)
    return src


def _linear_source(
    n: int, m: int, scale: float | None, align_corners: bool, dtype: Any
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """PyTorch's two source indices and weights of each of ``m`` outputs resampling
    ``n`` inputs linearly, in ``dtype`` arithmetic as its CPU kernels."""
    t = np.dtype(dtype).type
    if align_corners:
        ratio = t(n - 1) / t(m - 1) if m > 1 else t(0)
        real = ratio * np.arange(m).astype(dtype)
    else:
        ratio = t(1.0 / scale) if scale is not None and scale > 0 else t(n) / t(m)
        real = ratio * (np.arange(m).astype(dtype) + t(0.5)) - t(0.5)
        real = np.maximum(real, t(0))  # negative source coordinates clamp to 0
    i0 = np.minimum(np.floor(real).astype(np.int64), n - 1)
    w1 = np.clip(real - i0.astype(dtype), t(0), t(1))
    i1 = i0 + (i0 < n - 1)
    return i0, i1, t(1) - w1, w1


def _gather_sum(name: str, x: np.ndarray, axis: int, parts: list[tuple[np.ndarray, Any]]) -> Any:
    """``sum_k weight_k * x[idx_k]`` along ``axis`` (negative); a weight may be None (1)."""
    del name
    total: Any = None
    shape = (-1,) + (1,) * (-axis - 1)
    for idx, w in parts:
        v = np.take(x, idx, axis=axis)
        if w is not None:
            v *= w.reshape(shape)
        total = v if total is None else np.add(total, v, out=total)
    return total


def _scatter_sum(g: np.ndarray, axis: int, n: int, parts: list[tuple[np.ndarray, Any]]) -> Any:
    """The transpose of ``_gather_sum``: ``g`` (times each weight) added back onto the
    ``n`` source elements; the indices are non-decreasing, so ``numpy.add.reduceat``
    sums each run of outputs sharing a source."""
    d = np.zeros((*g.shape[: g.ndim + axis], n, *g.shape[g.ndim + axis + 1 :]), g.dtype)
    shape = (-1,) + (1,) * (-axis - 1)
    rest = (slice(None),) * (-axis - 1)
    for idx, w in parts:
        gw = g if w is None else g * w.reshape(shape)
        targets, starts = np.unique(idx, return_index=True)
        sums = np.add.reduceat(gw, starts, axis=axis) if targets.size < idx.size else gw
        at: tuple[Any, ...] = (Ellipsis, targets, *rest)
        d[at] += sums
    return d


def _resample(
    name: str, input: Any, x: np.ndarray, plans: list[tuple[int, int, list[Any]]]
) -> Variable:
    """Apply each axis's ``(axis, n, parts)`` plan in turn; record one op."""
    value = x
    for axis, _, parts in plans:
        value = _gather_sum(name, value, axis, parts)
    if value is x:
        value = x.copy()

    def d_x(g: np.ndarray) -> Any:
        d = g
        for axis, n, parts in reversed(plans):
            d = _scatter_sum(d, axis, n, parts)
        return d if d is not g else g.copy()

    return op(name, value, contrib_of(input, d_x))


def interpolate(
    input: Operand,
    size: int | Sequence[int] | None = None,
    scale_factor: float | Sequence[float] | None = None,
    mode: str = "nearest",
    align_corners: bool | None = None,
    recompute_scale_factor: bool | None = None,
    antialias: bool = False,
) -> Variable:
    """Resample the spatial axes of an ``(N, C, *spatial)`` input, as PyTorch's
    ``torch.nn.functional.interpolate``.

    The output length of an axis of length ``n`` is ``size``, or ``floor(n *
    scale_factor)``. Output index ``i`` reads the source coordinate ``i * r``
    (``'nearest'``, rounded down: PyTorch's legacy nearest), ``(i + 0.5) * r``
    (``'nearest-exact'``, rounded down), or ``(i + 0.5) * r - 0.5`` clamped at 0
    (``'linear'``, ``'bilinear'``, ``'trilinear'`` with ``align_corners=False``; with
    ``align_corners=True`` it is ``i * (n - 1) / (out - 1)``), where ``r = 1 /
    scale_factor`` if a scale factor is given and ``recompute_scale_factor`` is not True,
    else ``n / out``. Linear modes weight the two neighbours of the coordinate. An axis
    whose output length equals its input length is copied unchanged, except by the
    nearest modes with a scale factor, which resample it by the factor as PyTorch does.
    ``'area'`` is     ``adaptive_avg_pool1d``/``2d`` to the
    output size.

    Args:
        input: An ``(N, C, L)``, ``(N, C, H, W)`` or ``(N, C, D, H, W)`` input.
        size: The output spatial size: an int or one per axis.
        scale_factor: The multiplier of the spatial size: a float or one per axis.
        mode: ``'nearest'``, ``'nearest-exact'``, ``'linear'`` (3-d input),
            ``'bilinear'`` (4-d), ``'trilinear'`` (5-d) or ``'area'`` (3-d or 4-d).
        align_corners: Linear modes only: map the corner pixels' centres onto each
            other (True) or the corners' edges (False, the default).
        recompute_scale_factor: With ``scale_factor``: compute the sampling ratio from
            the rounded output size instead of the given factor.
        antialias: Not supported; must be False.

    Raises:
        LampyValueError: both or neither of ``size`` and ``scale_factor``, an unknown
            mode, ``align_corners`` with a non-linear mode, ``recompute_scale_factor``
            with ``size``, ``antialias=True``.
        ShapeError: an input rank the mode does not take, a size or scale per axis that
            does not match the spatial rank, an empty input or output spatial axis.

    Gradient:
        Each output's ``g`` goes back to the elements it read, times their weights
        (1 for nearest); sums over the outputs reading an element.
    """
    name = "interpolate"
    if mode not in _MODES:
        raise LampyValueError(
            f"{name}: mode must be one of {', '.join(map(repr, _MODES))}, got {mode!r}."
        )
    if antialias:
        raise LampyValueError(f"{name}: antialias=True is not supported.")
    x = np.asarray(value_of(input, name=name))
    if x.dtype.kind != "f":
        x = x.astype(np.float64)
    if x.ndim not in (3, 4, 5):
        raise ShapeError(
            f"{name}: expected a 3-d (N, C, L), 4-d (N, C, H, W) or 5-d (N, C, D, H, W) "
            f"input, got shape {x.shape}; add a batch axis to an unbatched input."
        )
    nd = x.ndim - 2
    if mode in _LINEAR and x.ndim != _LINEAR[mode]:
        raise ShapeError(
            f"{name}: mode {mode!r} needs a {_LINEAR[mode]}-d input, got shape {x.shape}; "
            "'linear' is for 3-d, 'bilinear' for 4-d, 'trilinear' for 5-d inputs."
        )
    if mode == "area" and nd == 3:
        raise LampyValueError(f"{name}: mode 'area' is not supported for 5-d inputs.")
    if align_corners is not None and mode not in _LINEAR:
        raise LampyValueError(
            f"{name}: align_corners is only for the linear modes (linear, bilinear, "
            f"trilinear), not {mode!r}; leave it None."
        )
    if (size is None) == (scale_factor is None):
        raise LampyValueError(
            f"{name}: give exactly one of size and scale_factor, got size={size!r}, "
            f"scale_factor={scale_factor!r}."
        )
    spatial = x.shape[2:]
    scales: list[float | None]
    if size is not None:
        if recompute_scale_factor:
            raise LampyValueError(
                f"{name}: recompute_scale_factor is only meaningful with scale_factor, not "
                "with an explicit size."
            )
        try:
            outs = [operator.index(v) for v in _per_axis(name, "size", size, nd, x.shape)]
        except TypeError:
            raise LampyTypeError(f"{name}: size must be ints, got {size!r}.") from None
        scales = [None] * nd
    else:
        factors = [float(v) for v in _per_axis(name, "scale_factor", scale_factor, nd, x.shape)]
        outs = [math.floor(n * f) for n, f in zip(spatial, factors, strict=True)]
        scales = [None] * nd if recompute_scale_factor else list(factors)
    if min(spatial) <= 0 or min(outs) <= 0:
        raise ShapeError(
            f"{name}: input and output spatial sizes must be > 0, got input {spatial} and "
            f"output {tuple(outs)}."
        )
    if mode == "area":
        pool = adaptive_avg_pool1d if nd == 1 else adaptive_avg_pool2d
        return pool(input if isinstance(input, Variable) else x, outs)
    plans = []
    for axis, n, m, sc in zip(range(-nd, 0), spatial, outs, scales, strict=True):
        if mode in _LINEAR:
            if m == n:
                continue  # PyTorch copies an axis whose length is unchanged
            i0, i1, w0, w1 = _linear_source(n, m, sc, bool(align_corners), x.dtype)
            parts: list[Any] = [(i0, w0), (i1, w1)]
        else:
            exact = mode == "nearest-exact"
            src = _nearest_source(n, m, sc, exact, kernel=not exact and nd == 2)
            if m == n and np.array_equal(src, np.arange(n)):
                continue
            parts = [(src, None)]
        plans.append((axis, n, parts))
    return _resample(name, input, x, plans)
