"""The convolutions' differentiable backward rules (vjps), written with convolutions:
every gradient of a convolution or a transposed convolution is itself one of the two
(plus reshapes, a transpose and a crop), so the rules are recorded ops with vjps of
their own, and derivatives of any order follow.

With ``x`` the input ``(N, C, *S)``, ``w`` the weight, ``g`` the output gradient,
stride ``s``, dilation ``d``, padding ``(lo, hi)`` per dimension and ``G`` groups:

- a convolution's input gradient is the transposed convolution of ``g`` with ``w``
  (same stride, dilation and groups), cropped to ``S`` from ``lo``; a transposed
  convolution's input gradient is the convolution of ``g`` with ``w``;
- both weight gradients are one correlation (``weight_correlation``): the input's
  channels within a group become the batch, ``(group, sample)`` the channels, and the
  other operand, samples as channels, the kernel; stride and dilation are exchanged;
- the bias gradient is ``g`` summed over the batch and spatial axes.

The convolutions are passed in (``Conv``), so this module does not import ``_conv``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from lampy.nn.functional._conv_common import Ints, Pads
from lampy.ops import reshape, swapaxes, transpose
from lampy.ops import sum as sum_op

Conv = Callable[[Any, Any, Ints, Pads, Ints, int], Any]
"""``conv(input, weight, stride, pads, dilation, groups)``: a convolution padded by
``pads`` (``(before, after)``, each >= 0, per spatial dimension), without bias."""


def correlate(
    conv: Conv,
    inp: Any,
    weight: Any,
    stride: Ints,
    lo: Ints,
    full: Ints,
    dilation: Ints,
    groups: int,
) -> Any:
    """The convolution of ``inp`` ``(N, C, *L)`` (or unbatched) with ``weight``, padded by
    ``lo`` before and to a padded length ``full`` after: zeros are added after, or the
    input cropped when it reaches past ``full``. None when every window reads padding
    only (the result is zero)."""
    size = inp.shape[-len(lo) :]
    keep = tuple(min(n, f - a) for n, f, a in zip(size, full, lo, strict=True))
    if min(keep) <= 0:
        return None
    if keep != size:
        crop: tuple[Any, ...] = (Ellipsis, *(slice(0, k) for k in keep))
        inp = inp[crop]
    pads = tuple((a, f - a - k) for a, f, k in zip(lo, full, keep, strict=True))
    return conv(inp, weight, stride, pads, dilation, groups)


def weight_correlation(
    conv: Conv,
    a: Any,
    b: Any,
    stride: Ints,
    lo: Ints,
    full: Ints,
    dilation: Ints,
    groups: int,
    unbatched: bool,
) -> Any:
    """``d[o, c, *k] = sum_{n, t} b[n, o, t] a_pad[n, group(o) C/G + c, t stride + k
    dilation]``, ``(O, C/G, *K)`` from ``a`` ``(N, C, *S)`` and ``b`` ``(N, O, *T)``,
    with ``a`` padded by ``lo`` before and to ``full`` after: a convolution's weight
    gradient (``a`` its input, ``b`` its output gradient) and a transposed convolution's
    (``a`` its output gradient, ``b`` its input). It is the convolution of ``a`` with
    its channels within a group as the batch and ``(group, sample)`` as the channels,
    by ``b`` with samples as its channels, in ``G`` groups, stride ``dilation`` and
    dilation ``stride``. None (zero) for an empty batch."""
    if unbatched:
        a, b = reshape(a, (1, *a.shape)), reshape(b, (1, *b.shape))
    n, c, spatial = a.shape[0], a.shape[1], a.shape[2:]
    if n == 0:  # an empty batch: zero
        return None
    nd = len(spatial)
    grouped = reshape(a, (n, groups, c // groups, *spatial))
    rows = transpose(grouped, (2, 1, 0, *range(3, 3 + nd)))
    batch = reshape(rows, (c // groups, groups * n, *spatial))
    d = correlate(conv, batch, swapaxes(b, 0, 1), dilation, lo, full, stride, groups)
    return None if d is None else swapaxes(d, 0, 1)


def geometry(
    pads: Pads, windows: Ints, kernel: Ints, stride: Ints, dilation: Ints
) -> tuple[Ints, Ints]:
    """The padding before and the padded length that ``windows`` windows span, per
    dimension: ``(before, (windows - 1) stride + dilation (kernel - 1) + 1)``."""
    full = tuple(
        (o - 1) * s + d * (k - 1) + 1
        for o, k, s, d in zip(windows, kernel, stride, dilation, strict=True)
    )
    return tuple(a for a, _ in pads), full


def bias_vjp(nd: int, unbatched: bool) -> Any:
    """The vjp of ``d bias``: ``g`` summed over every axis but the channels."""
    axes = (0, *range(2, 2 + nd)) if not unbatched else tuple(range(1, 1 + nd))

    def vjp(g: Any, out: Any) -> Any:
        return sum_op(g, axis=axes)

    return vjp
