"""Stride-1 convolutions on flattened padded planes: an im2col whose copies run along
whole rows of the padded input.

Zero-pad the input to ``(N, C, *P)`` and flatten each padded plane row-major, with row
strides ``R`` (``R_i = prod(P[i+1:])``). With stride 1, output position ``o`` and kernel
position ``k`` read the padded element ``o + k * dilation``, at flat index
``o . R + (k * dilation) . R``: one constant offset per kernel position. Number the
outputs by ``q = o . R`` over the grid ``(Out_0, *P[1:])``, that is ``Q = Out_0 * R_0``
columns, and the im2col row of channel ``c`` and kernel position ``k`` is one contiguous
slice of that channel's flat plane, ``plane[offset(k) : offset(k) + Q]``. The copy into
the ``(N, C * prod(K), Q)`` matrix then moves runs of ``Q`` elements instead of one
short run per output row, about three times faster for small images.

The last axis needs no zeros of its own (``FlatGrid``): a 2-d convolution padded no
more than "same" stores its rows unpadded, and a window tap that falls in the left or
right padding then reads the end of the previous row or the start of the next; the
im2col copy sets those entries to zero. Otherwise a row is followed by zeros that are
its padding after and the next row's padding before. When the rows are longer than the
output's (less padding than "same", or more), the grid has junk columns: positions
that are no output (windows that wrap into the next row). The matmul computes them
and ``crop`` drops them; the weight gradient gives them zero weight (``embed_t``
writes the output gradient into zeros), and they are zeroed in the im2col matrix when
the input holds an inf or NaN. The last plane's windows read up to ``tail`` elements
past it, so the padded buffer is that much longer.

The matrices are batched over samples, ``(N, C * prod(K), Q)``: one matmul per sample
(``numpy.matmul`` broadcasting over N and groups), which OpenBLAS runs faster than one
wide matmul over all samples for these shapes, and whose product is already ordered
``(N, O, position)``, so no transpose is needed to return to ``(N, O, *spatial)``.

The input gradient of a stride-1 convolution is the correlation of the output gradient,
padded by ``dilation * (K - 1) - padding`` (cropped where that is negative), with the
flipped kernel: another stride-1 convolution, computed the same way, from an im2col
without the first kernel axis (each kernel row is a column-shifted view of it).

``FlatGrid.image`` undoes the im2col: the input back from the kept matrix, for the
differentiable weight gradient.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import attrs
import numpy as np

from lampy.autograd import scratch
from lampy.nn.functional._conv_common import Ints, Pads


@attrs.frozen
class FlatGrid:
    """The geometry of one stride-1 convolution of ``(N, C, *spatial)`` arrays padded by
    ``pads`` (a negative pad crops), read through flat planes.

    The last axis is padded in one of two ways (the first ones get whole zero rows):

    - wrapped, when its padding is no more than "same" (``before + after <= dilation
      (K - 1)``) in a 2-d convolution: rows hold the input row alone, so a window
      tap that falls in the padding reads the neighbouring row instead; ``cols`` sets
      those entries to zero. Rows are as long as output rows plus the taps' excess
      (none with "same" padding: no junk at all).
    - shared: a row holds the input row followed by ``max(before, after)`` zeros,
      which are its padding after and the next row's padding before (for the first
      plane, ``lead`` zeros in front).
    """

    kernel: Ints
    dilation: Ints
    take: tuple[slice, ...]  # the part of the input that the padding does not crop
    into: tuple[slice, ...]  # where that part goes in a padded plane
    padded: Ints  # P: a padded plane's shape (the last axis shares its padding)
    out: Ints  # the output's spatial shape
    rows: Ints  # R: a padded plane's row strides, in elements
    columns: int  # Q = Out_0 * R_0
    lead: int  # zeros before the first plane: the last axis's padding before
    tail: int  # zeros after the last plane, where its last junk windows read
    # wrapped taps: (k, first, last) for the last kernel axis' tap k, whose entries at
    # output positions [0, first) and [last, Out) of every row are padding (zero)
    wraps: tuple[tuple[int, int, int], ...]

    @classmethod
    @functools.lru_cache(maxsize=256)  # a model's few layers ask for the same grids
    def of(cls, spatial: Ints, pads: Pads, kernel: Ints, dilation: Ints) -> FlatGrid:
        """The grid of a stride-1 convolution; the output must not be empty (checked
        by the callers' ``out_sizes``)."""
        # a negative pad crops the input
        take = tuple(
            slice(max(-a, 0), s - max(-b, 0)) for s, (a, b) in zip(spatial, pads, strict=True)
        )
        kept = [t.stop - t.start for t in take]
        before, after = [max(a, 0) for a, _ in pads], [max(b, 0) for _, b in pads]
        out = tuple(
            s + a + b - d * (k - 1)
            for s, a, b, k, d in zip(kept, before, after, kernel, dilation, strict=True)
        )
        padded = [s + a + b for s, a, b in zip(kept, before, after, strict=True)]
        width, a, b, k, d = kept[-1], before[-1], after[-1], kernel[-1], dilation[-1]
        wraps: tuple[tuple[int, int, int], ...] = ()
        if len(kernel) > 1 and a + b <= d * (k - 1):
            padded[-1] = width  # out[-1] <= width
            taps = ((j, max(0, a - j * d), min(out[-1], width + a - j * d)) for j in range(k))
            wraps = tuple((j, lo, hi) for j, lo, hi in taps if lo > 0 or hi < out[-1])
        else:
            padded[-1] = max(width + max(a, b), out[-1])
        into = [slice(a, a + s) for s, a in zip(kept, before, strict=True)]
        into[-1] = slice(0, width)
        rows = tuple(math.prod(padded[i + 1 :]) for i in range(len(padded)))
        columns = out[0] * rows[0]
        reach = sum((k - 1) * d * r for k, d, r in zip(kernel, dilation, rows, strict=True))
        tail = max(0, columns + reach - math.prod(padded) - a)
        return cls(
            kernel, dilation, take, tuple(into), tuple(padded), out, rows, columns, a, tail, wraps
        )

    def pad(self, x: np.ndarray) -> np.ndarray:
        """``x`` of shape ``(N, C, *spatial)`` written into a new zero buffer: ``lead``
        zeros, the ``(N, C, *P)`` padded planes, ``tail`` zeros."""
        n, c = x.shape[:2]
        size = n * c * math.prod(self.padded)
        buffer = np.zeros(self.lead + size + self.tail, x.dtype)
        planes = buffer[self.lead : self.lead + size].reshape((n, c, *self.padded))
        into: tuple[Any, ...] = (Ellipsis, *self.into)
        take: tuple[Any, ...] = (Ellipsis, *self.take)
        planes[into] = x[take]
        return buffer

    def cols(self, buffer: np.ndarray, n: int, c: int, split: bool = False) -> np.ndarray:
        """The im2col matrix of a ``pad`` buffer holding ``n`` samples of ``c`` channels:
        a new ``(N, C * prod(K), Q)`` array, rows ordered (channel, kernel position) as
        a weight's flattened ``(C, *K)``, columns the grid's positions.

        With ``split``, without the first kernel axis: a new ``(N, C * prod(K[1:]),
        Q + (K_0 - 1) shift)`` array (``shift = dilation_0 R_0``) whose columns
        ``[i shift, i shift + Q)`` are the rows of kernel row ``i`` of the full matrix,
        ``K_0`` times less to copy.
        """
        e = buffer.itemsize
        plane = math.prod(self.padded)
        steps = tuple(d * r * e for d, r in zip(self.dilation, self.rows, strict=True))
        kernel, columns = self.kernel, self.columns
        if split:
            kernel, steps = kernel[1:], steps[1:]
            columns += (self.kernel[0] - 1) * self.dilation[0] * self.rows[0]
        shape = (n, c, *kernel, columns)
        # a view of buffer (np.ndarray is as_strided without its Python overhead)
        view = np.ndarray(shape, buffer.dtype, buffer, 0, (c * plane * e, plane * e, *steps, e))
        cols = np.ascontiguousarray(view)
        if self.wraps:  # (..., last kernel axis, rows, row): the wrapped taps read padding
            width = self.padded[-1]
            by_row = cols.reshape((*cols.shape[:-1], columns // width, width))
            for j, lo, hi in self.wraps:
                tap = by_row[..., j, :, :]
                tap[..., :lo] = 0
                tap[..., hi : self.out[-1]] = 0
        return cols.reshape(n, c * math.prod(kernel), columns)

    def image(self, cols: np.ndarray, spatial: Ints) -> np.ndarray:
        """The input ``(N, C, *spatial)`` whose full im2col matrix (``cols`` of shape
        ``(N, ..., Q)``, C * prod(K) rows per sample) this is: each kernel position's
        row written back at its offset in the padded planes, and the planes cropped; a
        new array, zero where no window reads. Entries ``cols`` set to zero (padding
        read across a row's end, junk columns) are not written: an entry's true value
        comes from another tap that reads it, or no output reads it."""
        n, taps, e = cols.shape[0], math.prod(self.kernel), cols.itemsize
        c = math.prod(cols.shape[1:-1]) // taps
        if n == 0:
            return np.zeros((0, c, *spatial), cols.dtype)
        blocks = cols.reshape(n, c, taps, self.columns)
        plane = math.prod(self.padded)
        buffer = np.zeros(self.lead + n * c * plane + self.tail, cols.dtype)
        for j, k in enumerate(np.ndindex(*self.kernel)):
            at = sum(i * d * r for i, d, r in zip(k, self.dilation, self.rows, strict=True))
            view = np.ndarray(
                (n, c, self.columns), cols.dtype, buffer, at * e, (c * plane * e, plane * e, e)
            )
            np.copyto(view, blocks[:, :, j], where=blocks[:, :, j] != 0)
        planes = buffer[self.lead : self.lead + n * c * plane].reshape((n, c, *self.padded))
        x = np.zeros((n, c, *spatial), cols.dtype)
        take: tuple[Any, ...] = (Ellipsis, *self.take)
        into: tuple[Any, ...] = (Ellipsis, *self.into)
        x[take] = planes[into]
        return x

    def _outputs(self) -> tuple[Any, ...]:
        """The index of the output positions in the ``(Out_0, *P[1:])`` grid."""
        return (slice(None), *(slice(0, o) for o in self.out[1:]))

    def crop(self, y: np.ndarray) -> np.ndarray:
        """``(N, O, Q)`` on the grid to a C-contiguous ``(N, O, *out)`` (``y`` itself,
        reshaped, when the grid has no junk, as in 1-D)."""
        grid = y.reshape((*y.shape[:2], self.out[0], *self.padded[1:]))
        if not self.junk:
            return grid
        index = (Ellipsis, *self._outputs())
        return np.ascontiguousarray(grid[index])

    def embed_t(self, g: np.ndarray) -> np.ndarray:
        """``g`` of shape ``(N, O, *out)`` moved onto the grid and transposed: a new
        ``(N, Q, O)`` array, zero at the junk columns."""
        n, o = g.shape[:2]
        moved = g.transpose(0, *range(2, g.ndim), 1)
        if not self.junk:
            return np.ascontiguousarray(moved).reshape(n, self.columns, o)
        grid = np.zeros((n, self.out[0], *self.padded[1:], o), g.dtype)
        index = (slice(None), *self._outputs(), slice(None))
        grid[index] = moved
        return grid.reshape(n, self.columns, o)

    @property
    def junk(self) -> bool:
        """Whether the grid has junk columns (positions that are no output)."""
        return self.padded[1:] != self.out[1:]

    def finite_cols(self, x: np.ndarray, cols: np.ndarray) -> np.ndarray:
        """``cols`` (an im2col matrix of ``x``, full or split) with its junk columns set
        to zero, in place, if ``x`` holds an inf or NaN: they read input values that no
        output pairs with, and would make a NaN (with a warning) in the matmul, or
        ``0 * inf`` in the weight gradient."""
        if self.junk and not np.isfinite(x).all():
            self.zero_junk(cols)
        return cols

    def zero_junk(self, cols: np.ndarray) -> None:
        """Set the junk columns of a (full or split) ``cols`` matrix to zero, in place."""
        rows = cols.shape[-1] // self.rows[0]
        grid = cols.reshape((*cols.shape[:-1], rows, *self.padded[1:]))
        nd = len(self.out)
        for j in range(1, nd):
            index: tuple[Any, ...] = (Ellipsis, slice(self.out[j], None))
            index += (slice(None),) * (nd - 1 - j)
            grid[index] = 0


def forward(
    grid: FlatGrid, xb: np.ndarray, w: np.ndarray, b: np.ndarray | None, groups: int
) -> tuple[np.ndarray, np.ndarray]:
    """The convolution of the batched input ``xb`` with weight ``w`` (and bias ``b``):
    the ``(N, O, *out)`` result and the ``(N, groups, C/groups * prod(K), Q)`` im2col
    matrix kept for the weight gradient."""
    n, c = xb.shape[:2]
    o, rows = w.shape[0], w[0].size  # rows: C/groups * prod(K)
    cols = grid.finite_cols(xb, grid.cols(grid.pad(xb), n, c))
    cols = cols.reshape(n, groups, rows, grid.columns)
    y = np.matmul(w.reshape(groups, o // groups, rows), cols).reshape(n, o, grid.columns)
    if b is not None:
        y += b[:, None]
    return grid.crop(y), cols


def weight_grad(grid: FlatGrid, cols: np.ndarray, g: np.ndarray, shape: Ints) -> np.ndarray:
    """``d weight = sum_n cols_n @ g_n^T``, per group, as a new array of ``shape``."""
    n, groups = cols.shape[:2]
    og = g.shape[1] // groups
    gt = grid.embed_t(g).reshape(n, grid.columns, groups, og).transpose(0, 2, 1, 3)
    per_sample = n * cols.shape[1] * cols.shape[2] * og * cols.itemsize
    with scratch(gt.nbytes + per_sample):  # g on the grid, and one product per sample
        d = np.matmul(cols, gt).sum(axis=0)  # (G, C/G * prod(K), O/G)
    return np.ascontiguousarray(d.transpose(0, 2, 1)).reshape(shape)


def input_grad(pads: Pads, dilation: Ints, w: np.ndarray, g: np.ndarray, groups: int) -> np.ndarray:
    """``d input``: the correlation of ``g`` (``(N, O, *out)``) padded by
    ``dilation (K - 1) - pads`` with the flipped kernel, as a new ``(N, C, *spatial)``
    (the input's spatial shape: the padded ``g`` is ``spatial + dilation (K - 1)``)."""
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    nd = len(kernel)
    reach = [d * (k - 1) for k, d in zip(kernel, dilation, strict=True)]
    g_pads = tuple((r - lo, r - hi) for r, (lo, hi) in zip(reach, pads, strict=True))
    grid = FlatGrid.of(g.shape[2:], g_pads, kernel, dilation)
    n, og = g.shape[0], o // groups
    flipped = w[(slice(None), slice(None)) + (slice(None, None, -1),) * nd]
    if nd == 1:
        wt = flipped.reshape(groups, og, cg, -1).transpose(0, 2, 1, 3)
        wt = wt.reshape(groups, cg, -1)  # (G, C/G, O/G * K): a copy
        cols = grid.finite_cols(g, grid.cols(grid.pad(g), n, o))
        cols = cols.reshape(n, groups, wt.shape[2], grid.columns)
        with scratch(cols.nbytes):  # counted in the scope's memory while it lives
            d = np.matmul(wt, cols)
    else:
        # Kernel row i reads the first-axis-less im2col shifted by i * shift columns:
        # K_0 matmuls over K_0 times fewer copied rows, summed.
        padded = grid.pad(g)
        with scratch(padded.nbytes):  # g padded, while its im2col is made
            cols = grid.finite_cols(g, grid.cols(padded, n, o, split=True))
        del padded
        cols = cols.reshape(n, groups, og * math.prod(kernel[1:]), cols.shape[2])
        shift = dilation[0] * grid.rows[0]
        d_bytes = n * cg * groups * grid.columns * cols.itemsize  # d, and one part
        with scratch(cols.nbytes + 2 * d_bytes):
            for i in range(kernel[0]):
                wi = flipped[:, :, i].reshape(groups, og, cg, -1).transpose(0, 2, 1, 3)
                wi = wi.reshape(groups, cg, cols.shape[2])  # (G, C/G, O/G * prod(K[1:]))
                part = np.matmul(wi, cols[..., i * shift : i * shift + grid.columns])
                d = part if i == 0 else np.add(d, part, out=d)
    return grid.crop(d.reshape(n, cg * groups, grid.columns))
