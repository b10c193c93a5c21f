"""Max pooling whose windows tile the input (kernel = stride, no padding, no dilation,
each spatial size a multiple of the kernel), the common ``MaxPool2d(2)``: separable.

The maximum of a window is the maximum over its rows of each row's maximum. With the
input C-contiguous, the ``kW`` taps of every row segment are ``kW`` strided 1-D views
of the flat input (``x.reshape(-1, kW)[:, j]``), so the row maxima take ``kW - 1``
long ``numpy.maximum`` calls; the ``kH`` row maxima of a window are then rows
``i`` of ``rows.reshape(-1, kH, W_out)``, ``kH - 1`` more calls. The generic pooling
(``_pool.py``) instead visits each of the ``kH kW`` taps over the 4-d output.

The gradient goes, as in PyTorch, to the first maximum of each window in scan order:
the first row whose maximum is the window's, and in that row its first maximum. It is
routed in the same two steps: ``g`` to the window's row (``g`` where the row holds the
maximum, and what is left to the next rows), then each row's share to its column.
With ``g`` finite, "what is left" is ``rest - rest * mask``, exact. A non-finite ``g``
(where ``inf * 0`` would make NaN) takes the generic tap-by-tap gradient, and a window
holding a NaN (whose gradient goes to its last NaN) the generic op; the caller checks
the latter.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np


def tiles(
    x: np.ndarray,
    ks: Sequence[int],
    ss: Sequence[int],
    ps: Sequence[int],
    ds: Sequence[int],
    outs: Sequence[int],
) -> bool:
    """Whether the pooling windows of ``x`` (C-contiguous) tile it exactly."""
    nd = len(ks)
    return (
        tuple(ks) == tuple(ss)
        and not any(ps)
        and all(d == 1 for d in ds)
        and all(o * k == n for o, k, n in zip(outs, ks, x.shape[-nd:], strict=True))
        and x.size > 0
        and x.flags.c_contiguous
    )


def _max_of_taps(taps: Sequence[np.ndarray]) -> np.ndarray:
    """The elementwise maximum of ``taps`` (NaN propagates) as a new array."""
    if len(taps) == 1:
        return np.array(taps[0])
    best: np.ndarray = np.maximum(taps[0], taps[1])
    for t in taps[2:]:
        np.maximum(best, t, out=best)
    return best


def block_max(x: np.ndarray, ks: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
    """The pooled ``(..., *out)`` maximum of a tiled ``x``, and the row maxima
    ``(..., H, W_out)`` (for 1-d pooling, the maximum itself)."""
    kw = ks[-1]
    segments = x.reshape(-1, kw)
    shape = (*x.shape[:-1], x.shape[-1] // kw)
    rows = _max_of_taps([segments[:, j] for j in range(kw)]).reshape(shape)
    if len(ks) == 1:
        return rows, rows
    kh, w_out = ks[0], shape[-1]
    stacked = rows.reshape(-1, kh, w_out)
    best = _max_of_taps([stacked[:, i] for i in range(kh)])
    return best.reshape((*x.shape[:-2], x.shape[-2] // kh, w_out)), rows


def _route(src: np.ndarray, holds: Callable[[int], np.ndarray], out: np.ndarray) -> None:
    """Write a finite ``src`` into ``out[:, i]`` for the first ``i`` where ``holds(i)``
    (a bool array of ``src``'s shape) is true, zero into the others; the last ``i``
    takes whatever no earlier one did."""
    k = out.shape[1]
    rest = src
    for i in range(k - 1):
        took = out[:, i]
        np.multiply(rest, holds(i), out=took)
        left = out[:, k - 1] if i == k - 2 else np.empty_like(src)
        np.subtract(rest, took, out=left)
        rest = left
    if k == 1:
        out[:, 0] = src


def block_grad(
    x: np.ndarray,
    rows: np.ndarray,
    best: np.ndarray,
    ks: Sequence[int],
    generic: Callable[[np.ndarray], Any],
) -> Callable[[np.ndarray], Any]:
    """The input gradient closure of ``block_max``'s pooling (no NaN in ``best``);
    ``generic(g)`` computes it tap by tap, for a non-finite ``g``."""

    def d_x(g: np.ndarray) -> Any:
        if not np.isfinite(g).all():
            return generic(g)
        kw = ks[-1]
        if len(ks) == 2:
            kh, w_out = ks[0], rows.shape[-1]
            stacked = rows.reshape(-1, kh, w_out)
            top = best.reshape(-1, w_out)
            per_row = np.empty(stacked.shape, g.dtype)
            _route(g.reshape(-1, w_out), lambda i: stacked[:, i] == top, per_row)
        else:
            per_row = g
        segments = x.reshape(-1, kw)
        flat_rows = rows.reshape(-1)
        d = np.empty(segments.shape, g.dtype)
        _route(per_row.reshape(-1), lambda j: segments[:, j] == flat_rows, d)
        return d.reshape(x.shape)

    return d_x
