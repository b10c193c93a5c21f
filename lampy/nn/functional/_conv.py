"""Convolutions of ``lampy.nn.functional`` with PyTorch's names, arguments, defaults and
``(N, C, *spatial)`` layout: ``conv1d``, ``conv2d``, ``conv_transpose1d`` and
``conv_transpose2d`` (cross-correlations, as in PyTorch; unbatched inputs accepted).

Each is one op with exact gradients for input, weight and bias; float32 stays float32.
A stride-1 convolution runs on flattened padded planes (``_conv_flat.py``): an im2col
copied along whole rows, one matmul per sample whose product is already ``(N, O,
position)``, a crop of the extra grid columns; its input gradient is the same kind of
convolution of the padded output gradient with the flipped kernel, its weight gradient
one matmul per sample against the kept im2col matrix. With a larger stride, im2col is
an ``as_strided`` view of the padded input copied once into a matrix whose columns are
(sample, output position), followed by one matmul batched over groups; its input
gradient is the transposed matmul followed by col2im (one strided add per kernel
position). A transposed convolution is the input gradient of a convolution, and its
gradients are that convolution's forward pass and weight gradient.

The gradients are differentiable to any order (``create_graph=True``, ``lampy.hessian``):
each edge's vjp is a convolution or a transposed convolution (``_conv_vjp.py``), recorded
with vjps of its own; a weight's vjp rebuilds the input from the im2col matrix the
closure keeps (``image_of_cols``, ``FlatGrid.image``), so no vjp keeps more memory.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.nn.functional import _conv_flat as flat
from lampy.nn.functional._conv_common import (
    Ints,
    Pads,
    as_ints,
    batch_first,
    batched,
    channels_first,
    check_bias,
    check_groups,
    check_weight,
    cols_to_image,
    conv_padding,
    float_values,
    grad_dtype,
    im2col,
    image_of_cols,
    out_sizes,
    pad,
)
from lampy.nn.functional._conv_vjp import bias_vjp, correlate, geometry, weight_correlation
from lampy.nn.functional._shared import SharedInBackward, frozen
from lampy.opkit import Operand, Variable, contrib_of, graph_value, needs_grad, node_of, op

__all__ = ["conv1d", "conv2d", "conv_transpose1d", "conv_transpose2d"]

_LAYOUT = {1: "(N, C, L)", 2: "(N, C, H, W)"}
_KERNEL = {1: "kL", 2: "kH, kW"}


def _bias_grad(b: np.ndarray | None, unbatched: bool, dtype: Any) -> Any:
    """``d bias = g`` summed over every dimension but the channel one: two
    matrix-vector products with vectors of ones (BLAS, three times faster than
    ``sum`` over the batch and spatial axes)."""

    def fn(g: np.ndarray) -> Any:
        if g.size == 0:  # an empty batch: reshape(0, -1) is ambiguous, the sum is 0
            return np.zeros(g.shape[0 if unbatched else 1], dtype)
        gb = g.reshape(1 if unbatched else g.shape[0], -1)  # (N, C * prod(S))
        per_position = np.ones(gb.shape[0], g.dtype) @ gb
        grid = per_position.reshape(g.shape[0 if unbatched else 1], -1)
        return (grid @ np.ones(grid.shape[1], g.dtype)).astype(dtype, copy=False)

    return fn


def _operands(
    name: str,
    nd: int,
    input: Any,
    weight: Any,
    bias: Any,
    channels: str,
    stride: Any,
    dilation: Any,
) -> tuple[Any, Any, Any, np.ndarray, bool, Ints, Ints]:
    """The checked operands of a convolution (``channels`` opens the weight's expected
    layout): the float values of input, weight and bias, the batched input, whether the
    input was unbatched, and the stride and dilation as ``nd`` ints."""
    x, w, b = float_values(name, input, weight, bias)
    check_weight(name, w, nd, f"{channels}, {_KERNEL[nd]})")
    xb, unbatched = batched(name, x, nd, _LAYOUT[nd])
    stride_ = as_ints(name, "stride", stride, nd, 1)
    dilation_ = as_ints(name, "dilation", dilation, nd, 1)
    return x, w, b, xb, unbatched, stride_, dilation_


def _conv(
    name: str,
    nd: int,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    dilation: Any,
    groups: Any,
    pads: Pads | None = None,
) -> Variable:
    """The N-d convolution behind ``conv1d`` and ``conv2d``; ``pads`` (``(before,
    after)`` per dimension, for the vjps) replaces ``padding``."""
    x, w, b, xb, unbatched, stride_, dilation_ = _operands(
        name, nd, input, weight, bias, "(out_channels, in_channels/groups", stride, dilation
    )
    c, spatial = xb.shape[1], xb.shape[2:]
    o, cg, kernel = w.shape[0], w.shape[1], w.shape[2:]
    groups = check_groups(name, groups, out_channels=o)
    if c != cg * groups:
        raise ShapeError(
            f"{name}: expected the input to have weight.shape[1] * groups = {cg} * {groups} "
            f"= {cg * groups} channels, but input of shape {x.shape} has {c} channels "
            f"(weight shape {w.shape})."
        )
    check_bias(name, b, o)
    if pads is None:
        pads = conv_padding(name, padding, spatial, kernel, stride_, dilation_)
    out = out_sizes(name, spatial, pads, kernel, stride_, dilation_)
    if all(st == 1 for st in stride_):
        value, d_input, d_weight, weight_of, image_of, kept = _flat_parts(
            xb, w, b, groups, pads, dilation_
        )
    else:
        users = needs_grad(input) + needs_grad(weight)
        value, d_input, d_weight, weight_of, image_of = _strided_parts(
            xb, w, b, groups, pads, out, stride_, dilation_, users
        )
        kept = None  # the closures' memory found by scanning them
    value = frozen(value[0] if unbatched else value)  # fresh: taken without a copy
    x_dtype, w_dtype = grad_dtype(input), grad_dtype(weight)

    def d_x(g: np.ndarray) -> Any:
        d = d_input(g)
        return (d[0] if unbatched else d).astype(x_dtype, copy=False)

    def d_w(g: np.ndarray) -> Any:
        return d_weight(g).astype(w_dtype, copy=False)

    # The vjps: d input is the transposed convolution of g, d weight the correlation
    # of the input (rebuilt from the kept im2col matrix) with g (see _conv_vjp.py);
    # each keeps only what its closure keeps (the weight, or the im2col matrix).
    n_x, n_w = node_of(input), node_of(weight)

    def vjp_x(g: Any, out_node: Any) -> Any:
        lo, full = geometry(pads, out, kernel, stride_, dilation_)
        after = tuple(max(f - a - s, 0) for f, a, s in zip(full, lo, spatial, strict=True))
        pads_t = tuple(zip(lo, after, strict=True))
        wv = graph_value(n_w, weight_of())
        return _transpose_op(nd, g, wv, stride_, pads_t, spatial, dilation_, groups)

    def vjp_w(g: Any, out_node: Any) -> Any:
        image = image_of()
        xv = graph_value(n_x, image[0] if unbatched else image)
        conv = functools.partial(_conv_op, name, nd)
        lo, full = geometry(pads, out, kernel, stride_, dilation_)
        return weight_correlation(conv, xv, g, stride_, lo, full, dilation_, groups, unbatched)

    p_x, p_w = contrib_of(input, d_x, vjp=vjp_x), contrib_of(weight, d_w, vjp=vjp_w)
    p_b = contrib_of(bias, _bias_grad(b, unbatched, grad_dtype(bias)), vjp=bias_vjp(nd, unbatched))
    keeps = None if kept is None else (*(kept[0] if p_x else ()), *(kept[1] if p_w else ()))
    return op(name, value, p_x, p_w, p_b, keeps=keeps)


def _conv_op(
    name: str, nd: int, x: Any, w: Any, stride: Ints, pads: Pads, dilation: Ints, groups: int
) -> Variable:
    """A convolution without bias padded by ``pads`` (the vjps' ``Conv``)."""
    return _conv(name, nd, x, w, None, stride, 0, dilation, groups, pads)


def _transpose_op(
    nd: int, x: Any, w: Any, stride: Ints, pads: Pads, size: Ints, dilation: Ints, groups: int
) -> Variable:
    """A transposed convolution without bias, cropped to ``size`` after ``pads`` (each
    >= 0; the padded size covers every window)."""
    name = f"conv_transpose{nd}d"
    return _conv_transpose(name, nd, x, w, None, stride, 0, 0, groups, dilation, (pads, size))


# A gradient closure of the batched convolution: the output gradient ``g`` (unbatched
# for an unbatched input) to the batched input's gradient, or the weight's.
_Grad = Callable[[np.ndarray], np.ndarray]


# What the vjps read of the arrays the closures keep: the weight, and the batched input
# rebuilt from the im2col matrix (zero where no window reads), made on demand.
_Kept = Callable[[], np.ndarray]


def _flat_parts(
    xb: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    groups: int,
    pads: Pads,
    dilation: Ints,
) -> tuple[np.ndarray, _Grad, _Grad, _Kept, _Kept, tuple[tuple[np.ndarray, ...], ...]]:
    """A stride-1 convolution on flattened padded planes (``_conv_flat.py``): the
    batched ``(N, O, *out)`` value, the input and weight gradient closures, the
    weight and the input as the vjps read them from what the closures keep, and the
    arrays each gradient closure keeps (``lampy.op``'s ``keeps``)."""
    grid = flat.FlatGrid.of(xb.shape[2:], pads, w.shape[2:], dilation)
    value, cols = flat.forward(grid, xb, w, b, groups)

    shape = (-1, *value.shape[1:])  # g batched

    def d_input(g: np.ndarray) -> np.ndarray:
        return flat.input_grad(pads, dilation, w, g.reshape(shape), groups)

    def d_weight(g: np.ndarray) -> np.ndarray:
        return flat.weight_grad(grid, cols, g.reshape(shape), w.shape)

    spatial = xb.shape[2:]
    kept = ((w,), (w, cols))  # d_input keeps the weight, d_weight its shape and cols
    return value, d_input, d_weight, lambda: w, lambda: grid.image(cols, spatial), kept


def _strided_parts(
    xb: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    groups: int,
    pads: Pads,
    out: Ints,
    stride: Ints,
    dilation: Ints,
    users: int,
) -> tuple[np.ndarray, _Grad, _Grad, _Kept, _Kept]:
    """A convolution with some stride > 1: im2col as one ``(groups, C/groups *
    prod(K), N * prod(out))`` matrix, the input gradient by col2im; ``users`` closures
    share the reshaped output gradient."""
    n, spatial = xb.shape[0], xb.shape[2:]
    o, kernel = w.shape[0], w.shape[2:]
    cols = im2col(pad(xb, pads), kernel, out, stride, dilation, groups)
    wm = w.reshape(groups, o // groups, -1)
    y = np.matmul(wm, cols).reshape(o, -1)  # (O, N * prod(out))
    if b is not None:
        y += b[:, None]
    g_matrix = SharedInBackward(lambda g: channels_first(g.reshape(-1, o, *out)), users)

    def d_input(g: np.ndarray) -> np.ndarray:
        d_cols = np.matmul(wm.transpose(0, 2, 1), g_matrix(g).reshape(groups, o // groups, -1))
        return cols_to_image(d_cols, n, kernel, out, spatial, pads, stride, dilation)

    def d_weight(g: np.ndarray) -> np.ndarray:
        gm = g_matrix(g).reshape(groups, o // groups, -1)
        d: np.ndarray = np.matmul(gm, cols.transpose(0, 2, 1))
        return d.reshape(w.shape)

    w_shape = w.shape

    def image_of() -> np.ndarray:
        return image_of_cols(cols, n, kernel, out, spatial, pads, stride, dilation)

    return batch_first(y, n, out), d_input, d_weight, lambda: wm.reshape(w_shape), image_of


def _conv_flat(
    xb: np.ndarray, w: np.ndarray, b: np.ndarray | None, groups: int, pads: Pads, dilation: Ints
) -> tuple[np.ndarray, _Grad, _Grad]:
    """``_flat_parts`` without what the vjps read (for the tests comparing the
    two paths)."""
    parts = _flat_parts(xb, w, b, groups, pads, dilation)
    return parts[0], parts[1], parts[2]


def _conv_strided(
    xb: np.ndarray,
    w: np.ndarray,
    b: np.ndarray | None,
    groups: int,
    pads: Pads,
    out: Ints,
    stride: Ints,
    dilation: Ints,
    users: int,
) -> tuple[np.ndarray, _Grad, _Grad]:
    """``_strided_parts`` without what the vjps read."""
    parts = _strided_parts(xb, w, b, groups, pads, out, stride, dilation, users)
    return parts[0], parts[1], parts[2]


def _conv_transpose(
    name: str,
    nd: int,
    input: Any,
    weight: Any,
    bias: Any,
    stride: Any,
    padding: Any,
    output_padding: Any,
    groups: Any,
    dilation: Any,
    layout: tuple[Pads, Ints] | None = None,
) -> Variable:
    """The N-d transposed convolution behind ``conv_transpose1d`` and ``conv_transpose2d``;
    ``layout`` (for the vjps) replaces ``padding`` and ``output_padding``: ``(pads,
    size)``, the output is the full one padded by ``pads`` (>= 0, at least the full size
    once padded) and cropped to ``size`` after the padding before."""
    x, w, b, xb, unbatched, stride_, dilation_ = _operands(
        name, nd, input, weight, bias, "(in_channels, out_channels/groups", stride, dilation
    )
    if layout is None:
        padding_ = as_ints(name, "padding", padding, nd, 0)
        extra = as_ints(name, "output_padding", output_padding, nd, 0)
        if any(e >= max(s, d) for e, s, d in zip(extra, stride_, dilation_, strict=True)):
            raise LampyValueError(
                f"{name}: output_padding {extra} must be smaller than either stride "
                f"{stride_} or dilation {dilation_} in every dimension (as in PyTorch)."
            )
    n, c, size_in = xb.shape[0], xb.shape[1], xb.shape[2:]
    ci, cog, kernel = w.shape[0], w.shape[1], w.shape[2:]
    groups = check_groups(name, groups, in_channels=ci)
    if c != ci:
        raise ShapeError(
            f"{name}: expected the input to have weight.shape[0] = {ci} channels, but input "
            f"of shape {x.shape} has {c} channels (weight shape {w.shape})."
        )
    co = cog * groups
    check_bias(name, b, co)
    if layout is None:
        size: Ints = tuple(
            (i - 1) * s - 2 * p + d * (k - 1) + e + 1
            for i, s, p, d, k, e in zip(
                size_in, stride_, padding_, dilation_, kernel, extra, strict=True
            )
        )
        if min(size) < 1:
            raise ShapeError(
                f"{name}: the output size {size} would be < 1 (input size {size_in}, "
                f"kernel {kernel}, stride {stride_}, padding {padding_}, dilation "
                f"{dilation_}, output_padding {extra}); reduce the padding."
            )
        pads: Pads = tuple((p, p) for p in padding_)
    else:
        pads, size = layout

    x_matrix = channels_first(xb).reshape(groups, ci // groups, -1)  # (G, Ci/G, N * prod(in))
    wm = w.reshape(groups, ci // groups, -1)  # (G, Ci/G, Co/G * prod(kernel))
    cols = np.matmul(wm.transpose(0, 2, 1), x_matrix)  # (G, Co/G * prod(kernel), N * prod(in))
    value = cols_to_image(cols, n, kernel, size_in, size, pads, stride_, dilation_)
    if b is not None:
        value += b.reshape((co,) + (1,) * nd)
    value = frozen(value[0] if unbatched else value)  # fresh: taken without a copy

    g_cols = SharedInBackward(
        lambda g: im2col(
            pad(g[None] if unbatched else g, pads), kernel, size_in, stride_, dilation_, groups
        ),
        needs_grad(input) + needs_grad(weight),
    )
    x_dtype, w_dtype = grad_dtype(input), grad_dtype(weight)

    def d_input(g: np.ndarray) -> Any:
        d = batch_first(np.matmul(wm, g_cols(g)).reshape(ci, -1), n, size_in)
        return (d[0] if unbatched else d).astype(x_dtype, copy=False)

    def d_weight(g: np.ndarray) -> Any:
        d = np.matmul(x_matrix, g_cols(g).transpose(0, 2, 1))
        return d.reshape(w.shape).astype(w_dtype, copy=False)

    # The vjps: d input is the convolution of g, d weight the correlation of g with the
    # input (rebuilt from the kept x_matrix), see _conv_vjp.py.
    n_x, n_w = node_of(input), node_of(weight)

    def vjp_input(g: Any, out: Any) -> Any:
        wv = graph_value(n_w, wm.reshape((ci, cog, *kernel)))
        conv = functools.partial(_conv_op, f"conv{nd}d", nd)
        lo, full = geometry(pads, size_in, kernel, stride_, dilation_)
        return correlate(conv, g, wv, stride_, lo, full, dilation_, groups)

    def vjp_weight(g: Any, out: Any) -> Any:
        xt = batch_first(x_matrix.reshape(ci, -1), n, size_in)
        xv = graph_value(n_x, xt[0] if unbatched else xt)
        conv = functools.partial(_conv_op, f"conv{nd}d", nd)
        lo, full = geometry(pads, size_in, kernel, stride_, dilation_)
        return weight_correlation(conv, g, xv, stride_, lo, full, dilation_, groups, unbatched)

    return op(
        name,
        value,
        contrib_of(input, d_input, vjp=vjp_input),
        contrib_of(weight, d_weight, vjp=vjp_weight),
        contrib_of(bias, _bias_grad(b, unbatched, grad_dtype(bias)), vjp=bias_vjp(nd, unbatched)),
    )


def conv1d(
    input: Operand,
    weight: Operand,
    bias: Operand | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] | str = 0,
    dilation: int | tuple[int] = 1,
    groups: int = 1,
) -> Variable:
    """1-D convolution (cross-correlation, as PyTorch's ``conv1d``) of ``input``
    ``(N, C_in, L)`` or ``(C_in, L)`` with ``weight`` ``(C_out, C_in/groups, kL)``:

    ``out[n, o, l] = bias[o] + sum_{c, k} weight[o, c, k] * x_pad[n, c0 + c, l*s + k*d]``

    where ``c`` runs over the ``C_in/groups`` channels of output channel ``o``'s group,
    starting at ``c0``, and ``x_pad`` is the zero-padded input. The output length is
    ``(L + 2 padding - dilation (kL - 1) - 1) // stride + 1``.

    Args:
        input: ``(N, C_in, L)``, or ``(C_in, L)`` for one unbatched sample.
        weight: ``(C_out, C_in/groups, kL)``.
        bias: ``(C_out,)`` or None.
        stride: Step between windows (>= 1).
        padding: Zeros added at both ends (an int), or "valid" (none) or "same" (output
            length = input length; stride 1 only, an odd total pads 1 more at the end).
        dilation: Spacing between kernel elements (>= 1).
        groups: Channels are split into ``groups`` blocks, each convolved with its own
            ``C_out/groups`` filters; must divide ``C_in`` and ``C_out``.

    Returns:
        ``(N, C_out, L_out)`` (``(C_out, L_out)`` for an unbatched input), in the
        inputs' float dtype.

    Gradient:
        ``d input = col2im(W^T g)`` (a transposed convolution of ``g``, cropped to the
        input), ``d weight = g @ im2col(x)^T``, ``d bias = g`` summed over N and L.
        Differentiable again, to any order, with every option.
    """
    return _conv("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(
    input: Operand,
    weight: Operand,
    bias: Operand | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] | str = 0,
    dilation: int | tuple[int, int] = 1,
    groups: int = 1,
) -> Variable:
    """2-D convolution (cross-correlation, as PyTorch's ``conv2d``) of ``input``
    ``(N, C_in, H, W)`` or ``(C_in, H, W)`` with ``weight`` ``(C_out, C_in/groups, kH, kW)``:

    ``out[n, o, i, j] = bias[o] + sum_{c, p, q} weight[o, c, p, q] * x_pad[n, c0 + c, y, x]``

    with ``y = i*sH + p*dH``, ``x = j*sW + q*dW``, ``c`` running over the channels of
    output channel ``o``'s group (starting at ``c0``) and ``x_pad`` the padded input.
    Each output dimension is ``(size + 2 padding - dilation (k - 1) - 1) // stride + 1``.

    Args:
        input: ``(N, C_in, H, W)``, or ``(C_in, H, W)`` for one unbatched sample.
        weight: ``(C_out, C_in/groups, kH, kW)``.
        bias: ``(C_out,)`` or None.
        stride: Step between windows, an int or ``(sH, sW)`` (>= 1).
        padding: Zeros on both sides, an int or ``(pH, pW)``; or "valid" (none) or "same"
            (output size = input size; stride 1 only, an odd total pads 1 more at the
            bottom/right, as PyTorch).
        dilation: Spacing between kernel elements, an int or ``(dH, dW)`` (>= 1).
        groups: Channels are split into ``groups`` blocks, each convolved with its own
            ``C_out/groups`` filters; must divide ``C_in`` and ``C_out``.

    Returns:
        ``(N, C_out, H_out, W_out)`` (without N for an unbatched input), in the inputs'
        float dtype.

    Gradient:
        ``d input = col2im(W^T g)`` (a transposed convolution of ``g``, cropped to the
        input), ``d weight = g @ im2col(x)^T``, ``d bias = g`` summed over N, H and W.
        Differentiable again, to any order, with every option.
    """
    return _conv("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(
    input: Operand,
    weight: Operand,
    bias: Operand | None = None,
    stride: int | tuple[int] = 1,
    padding: int | tuple[int] = 0,
    output_padding: int | tuple[int] = 0,
    groups: int = 1,
    dilation: int | tuple[int] = 1,
) -> Variable:
    """1-D transposed convolution (PyTorch's ``conv_transpose1d``): the gradient of
    ``conv1d`` with respect to its input, which maps ``(N, C_in, L)`` to
    ``(N, C_out, L_out)`` with

    ``L_out = (L - 1) stride - 2 padding + dilation (kL - 1) + output_padding + 1``.

    Args:
        input: ``(N, C_in, L)``, or ``(C_in, L)`` for one unbatched sample.
        weight: ``(C_in, C_out/groups, kL)`` (note: in-channels first).
        bias: ``(C_out,)`` or None.
        stride: Step between the input positions' windows in the output (>= 1).
        padding: Cropped from both ends of the full output (>= 0).
        output_padding: Extra length added at the end (< stride or < dilation), to
            pick among the output lengths a strided ``conv1d`` maps to the same length.
        groups: Must divide ``C_in``; ``C_out = weight.shape[1] * groups``.
        dilation: Spacing between kernel elements (>= 1).

    Returns:
        ``(N, C_out, L_out)`` (``(C_out, L_out)`` for an unbatched input).

    Gradient:
        ``d input = conv1d(g, weight, stride, padding, dilation, groups)``,
        ``d weight = x @ im2col(g)^T``, ``d bias = g`` summed over N and L.
        Differentiable again, to any order, with every option.
    """
    return _conv_transpose(
        "conv_transpose1d",
        1,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )


def conv_transpose2d(
    input: Operand,
    weight: Operand,
    bias: Operand | None = None,
    stride: int | tuple[int, int] = 1,
    padding: int | tuple[int, int] = 0,
    output_padding: int | tuple[int, int] = 0,
    groups: int = 1,
    dilation: int | tuple[int, int] = 1,
) -> Variable:
    """2-D transposed convolution (PyTorch's ``conv_transpose2d``): the gradient of
    ``conv2d`` with respect to its input, which maps ``(N, C_in, H, W)`` to
    ``(N, C_out, H_out, W_out)`` with, per dimension,

    ``out = (size - 1) stride - 2 padding + dilation (k - 1) + output_padding + 1``.

    Args:
        input: ``(N, C_in, H, W)``, or ``(C_in, H, W)`` for one unbatched sample.
        weight: ``(C_in, C_out/groups, kH, kW)`` (note: in-channels first).
        bias: ``(C_out,)`` or None.
        stride: An int or ``(sH, sW)`` (>= 1).
        padding: Cropped from both sides of the full output, an int or ``(pH, pW)``.
        output_padding: Extra size added at the bottom/right (< stride or < dilation).
        groups: Must divide ``C_in``; ``C_out = weight.shape[1] * groups``.
        dilation: An int or ``(dH, dW)`` (>= 1).

    Returns:
        ``(N, C_out, H_out, W_out)`` (without N for an unbatched input).

    Gradient:
        ``d input = conv2d(g, weight, stride, padding, dilation, groups)``,
        ``d weight = x @ im2col(g)^T``, ``d bias = g`` summed over N, H and W.
        Differentiable again, to any order, with every option.
    """
    return _conv_transpose(
        "conv_transpose2d",
        2,
        input,
        weight,
        bias,
        stride,
        padding,
        output_padding,
        groups,
        dilation,
    )
