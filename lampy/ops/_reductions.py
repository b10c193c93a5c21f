"""Reductions: sum, mean, var, std, prod, average, and the axis helpers every reduction uses.

Extremes (amax, amin, argmax, argmin, logsumexp) live in ``_extreme_reductions``,
cumulative ops (cumsum, cumprod) in ``_cumulative``.

Like numpy's, each takes an array-like: a list (or nested lists) of Variables is stacked
into one Variable first, so that gradients reach every Variable in it.

Keywords that numpy places after its ``out`` argument (``ddof``, ``keepdims``) are
keyword-only in the new reductions, so a numpy-style positional call cannot silently
bind ``out``'s position to them.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import DTypeError, ShapeError, not_real
from lampy.autograd import _ledger
from lampy.opkit import (
    GRAD_ENABLED,
    Axis,
    Operand,
    Variable,
    accumulate,
    array_of,
    contrib_of,
    expand_reduced,
    graph_value,
    lifted,
    needs_grad,
    node_of,
    normalize_axis,
    op,
    param_of,
    real_result,
    reserve_output,
    sum_to,
    unbroadcast,
    value_of,
)
from lampy.ops._shape import broadcast_to, reshape, transpose
from lampy.ops._torch_names import axis_or_dim, keepdims_or_keepdim

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


_add = np.add


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...], keepdims: bool) -> tuple[int, ...]:
    """The shape of a reduction of an array of ``shape`` over ``axes`` (normalized)."""
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(shape))
    return tuple(n for i, n in enumerate(shape) if i not in axes)


def check_float_dtype(name: str, dtype: DTypeLike | None, x: Operand | None = None) -> None:
    """Refuse a non-float ``dtype=`` argument, which would truncate values and gradients,
    and a complex one when ``x`` needs a gradient (lampy's gradients are real)."""
    if dtype is None:
        return
    kind = np.dtype(dtype).kind
    if kind not in "fc":
        raise DTypeError(
            f"{name}: dtype={np.dtype(dtype)} would truncate; lampy reductions take a float "
            "dtype (or None)."
        )
    if kind == "c" and needs_grad(x) and GRAD_ENABLED.get():
        raise not_real(name, np.dtype(dtype), "the dtype= argument")


def _count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """Number of elements in each reduced slice."""
    return math.prod(shape[ax] for ax in axes)


def sum(
    x: Operand,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    keepdims: bool = False,
    *,
    dim: Axis = None,
    keepdim: bool | None = None,
) -> Variable:
    """Sum of elements over ``axis`` (None: all; an int or a tuple; negatives allowed).

    PyTorch's ``dim`` and ``keepdim`` are accepted for ``axis`` and ``keepdims``.

    Gradient:
        ``dx = g`` broadcast back over the summed axes.
    """
    x = array_of("sum", x)
    axis = axis_or_dim("sum", axis, dim)
    keepdims = keepdims_or_keepdim("sum", keepdims, keepdim)
    a = value_of(x, name="sum")
    check_float_dtype("sum", dtype, x)
    axes = normalize_axis("sum", axis, np.ndim(a))
    if _ledger.open_budgets:  # a scope has a budget: check the output's size first
        reserve_output(
            "sum",
            reduced_shape(np.shape(a), axes, keepdims),
            np.sum(np.zeros(1, np.result_type(a)), dtype=dtype).dtype,
        )
    value = np.sum(a, axis=axes, dtype=dtype, keepdims=keepdims)
    shape = np.shape(a)
    # The gradient is g spread over the summed axes: a broadcast view, which the engine
    # copies once as a first contribution (instead of zero-filling and adding).
    return op(
        "sum",
        value,
        contrib_of(
            x,
            lambda g: np.broadcast_to(expand_reduced(g, axes, keepdims), shape),
            fresh=False,
            vjp=lambda g, out: spread(g, shape, axes),
        ),
    )


def spread(g: Any, shape: tuple[int, ...], axes: tuple[int, ...]) -> Variable:
    """``g``, a reduction's cotangent, broadcast back over the reduced ``axes`` of an input
    of ``shape``, with lampy ops (for vjps)."""
    return broadcast_to(reshape(g, reduced_shape(shape, axes, True)), shape)


def _mean(name: str, x: Any, axis: Any, dtype: Any, keepdims: bool) -> Variable:
    x = array_of(name, x)
    a = value_of(x, name=name)
    check_float_dtype(name, dtype, x)
    shape = np.shape(a)
    axes = normalize_axis(name, axis, len(shape))
    value = np.mean(a, axis=axes, dtype=dtype, keepdims=keepdims)
    n = _count(shape, axes)
    return op(
        name,
        value,
        contrib_of(
            x,
            lambda g: np.broadcast_to(expand_reduced(g, axes, keepdims) / n, shape),
            fresh=False,
            vjp=lambda g, out: spread(g, shape, axes) / n,
        ),
    )


def mean(
    x: Operand,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    keepdims: bool = False,
    *,
    dim: Axis = None,
    keepdim: bool | None = None,
) -> Variable:
    """Arithmetic mean over ``axis``. The mean of an empty selection is nan, as in numpy.

    PyTorch's ``dim`` and ``keepdim`` are accepted for ``axis`` and ``keepdims``.

    Gradient:
        ``dx = g / n`` broadcast back over the reduced axes, ``n`` the number of
        elements averaged.
    """
    axis = axis_or_dim("mean", axis, dim)
    return _mean("mean", x, axis, dtype, keepdims_or_keepdim("mean", keepdims, keepdim))


def _centered(a: Any, axes: tuple[int, ...], dtype: Any, n: int) -> Any:
    """``a - mean(a)`` over ``axes`` as numpy's ``var`` computes it (silent on empty slices)."""
    return a - np.sum(a, axis=axes, dtype=dtype, keepdims=True) / n


def var(
    a: Operand,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    *,
    ddof: float = 0,
    keepdims: bool = False,
) -> Variable:
    """Variance over ``axis``: ``sum((a - mean)**2) / (n - ddof)``, as ``numpy.var``.

    With ``n - ddof <= 0`` the result is inf or nan with numpy's RuntimeWarning.

    Gradient:
        ``da = g * 2 * (a - mean) / (n - ddof)``, ``n`` the number of elements in each
        reduced slice.
    """
    a = array_of("var", a)
    x = value_of(a, name="var")
    check_float_dtype("var", dtype, a)
    shape = np.shape(x)
    axes = normalize_axis("var", axis, len(shape))
    value = np.var(x, axis=axes, dtype=dtype, ddof=ddof, keepdims=keepdims)
    n = _count(shape, axes)
    dof = max(n - ddof, 0)

    def d_a(g: np.ndarray) -> Any:
        scale = expand_reduced(g, axes, keepdims) * 2 / dof
        return _centered(x, axes, dtype, n) * scale

    node = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        kept = reduced_shape(shape, axes, True)
        return _centered_vjp(node, x, axes, n) * (reshape(g, kept) * (2 / dof))

    return op("var", value, contrib_of(a, d_a, vjp=vjp))


def _centered_vjp(node: Any, x: Any, axes: tuple[int, ...], n: int) -> Any:
    """``a - mean(a)`` over ``axes`` with lampy ops (``a`` of value ``x``, in the graph
    through ``node``), for the vjps of var and std."""
    xv = graph_value(node, x)
    return xv - sum(xv, axis=axes, keepdims=True) / n


def std(
    a: Operand,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    *,
    ddof: float = 0,
    keepdims: bool = False,
) -> Variable:
    """Standard deviation over ``axis``: ``sqrt(var(a, axis, ddof=ddof))``, as ``numpy.std``.

    Gradient:
        ``da = g * (a - mean) / ((n - ddof) * std)``. Where ``std == 0`` (a constant
        slice, where std is not differentiable) the gradient is 0, as in PyTorch.
    """
    a = array_of("std", a)
    x = value_of(a, name="std")
    check_float_dtype("std", dtype, a)
    shape = np.shape(x)
    axes = normalize_axis("std", axis, len(shape))
    value = np.std(x, axis=axes, dtype=dtype, ddof=ddof, keepdims=keepdims)
    n = _count(shape, axes)
    dof = max(n - ddof, 0)

    def d_a(g: np.ndarray) -> Any:
        s = expand_reduced(value, axes, keepdims)
        scale = np.where(s == 0, 0, expand_reduced(g, axes, keepdims) / (dof * s))
        return _centered(x, axes, dtype, n) * scale

    node = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        kept = reduced_shape(shape, axes, True)
        s = reshape(lifted(out, value), kept)
        zero = np.reshape(value, kept) == 0  # the constant slices: gradient 0
        scale = reshape(g, kept) / (dof * (s + zero)) * ~zero
        return _centered_vjp(node, x, axes, n) * scale

    return op("std", value, contrib_of(a, d_a, vjp=vjp))


def prod(
    a: Operand,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    *,
    keepdims: bool = False,
    dim: Axis = None,
    keepdim: bool | None = None,
) -> Variable:
    """Product of elements over ``axis``, as ``numpy.prod`` (1 for an empty selection).

    PyTorch's ``dim`` and ``keepdim`` are accepted for ``axis`` and ``keepdims``.

    Gradient:
        ``da_i = g * prod_{j != i} a_j`` within each reduced slice, computed as
        ``g * prod / a_i`` in slices without zeros. In a slice with one zero, the zero's
        gradient is ``g`` times the product of the others and the rest get 0; with two
        or more zeros every gradient is 0. No division by zero happens. In slices
        without zeros ``prod / a_i`` inherits any overflow or underflow of the product.
    """
    a = array_of("prod", a)
    axis = axis_or_dim("prod", axis, dim)
    keepdims = keepdims_or_keepdim("prod", keepdims, keepdim)
    x = value_of(a, name="prod")
    check_float_dtype("prod", dtype, a)
    axes = normalize_axis("prod", axis, np.ndim(x))
    value = np.prod(x, axis=axes, dtype=dtype, keepdims=keepdims)

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        xv = x if dtype is None else np.asarray(x, dtype=np.result_type(value))
        gk = expand_reduced(g, axes, keepdims)
        _add(out, prod_grad(xv, gk, expand_reduced(value, axes, keepdims), axes), out=out)

    node = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        kept = reduced_shape(np.shape(x), axes, True)
        pk = np.reshape(value, kept)
        d = _prod_vjp(
            graph_value(node, x), np.asarray(x), reshape(lifted(out, value), kept), pk, axes
        )
        return reshape(g, kept) * d

    return op("prod", value, param_of(a, d_a, vjp=vjp))


def _prod_vjp(xv: Any, x: np.ndarray, pv: Any, pk: np.ndarray, axes: tuple[int, ...]) -> Any:
    """``prod_grad``'s factor ``prod_{j != i} x_j`` with lampy ops, for the vjp of prod
    (``xv`` the input in the graph, ``x`` its value, ``pv`` and ``pk`` the product with
    the reduced axes kept, in the graph and its value).

    Its derivatives are exact in slices with up to two zeros: in a slice with one zero
    ``x_z``, a non-zero ``x_i`` gets ``x_z * others / x_i`` (0, with its derivative in
    ``x_z``); with two, each zero gets the other zero times the product of the rest.
    With three or more every second derivative is 0, and so is this factor's."""
    if not (np.any(pk == 0) or np.any(np.isnan(pk))):
        return pv / xv
    zeros = x == 0
    n_zeros = np.sum(zeros, axis=axes, keepdims=True)
    nonzero = xv * ~zeros + zeros  # 1 at the zeros, not depending on them
    others = prod(nonzero, axis=axes, keepdims=True)
    x_zeros = sum(xv * zeros, axis=axes, keepdims=True)  # the zeros' sum: 0, in the graph
    ratio = others / nonzero
    one, two = n_zeros == 1, n_zeros == 2
    return (
        ratio * (n_zeros == 0)
        + ratio * x_zeros * (~zeros & one)
        + others * (zeros & one)
        + (x_zeros - xv) * others * (zeros & two)
    )


def prod_grad(xv: Any, gk: Any, pk: Any, axes: tuple[int, ...]) -> Any:
    """``prod``'s gradient ``gk * prod_{j != i} xv_j`` over ``axes``, exact with zeros
    (``gk`` and the product ``pk`` with the reduced axes kept as length 1)."""
    # A zero makes its slice's product 0 (or nan next to an inf): checking the
    # products spares a pass over the input when there are none.
    if not (np.any(pk == 0) or np.any(np.isnan(pk))):
        return (gk * pk) / xv
    zeros = xv == 0
    n_zeros = np.sum(zeros, axis=axes, keepdims=True)
    nonzero = np.where(zeros, 1, xv)
    others = np.prod(nonzero, axis=axes, keepdims=True)  # product of the non-zeros
    d = np.where(n_zeros == 0, others / nonzero, np.where(zeros & (n_zeros == 1), others, 0))
    return gk * d


def _weights_along(w: Any, shape: tuple[int, ...], axis: Any) -> tuple[Any, tuple[int, ...] | None]:
    """``average``'s weights laid out to broadcast against ``a`` (numpy's rules).

    Returns the laid-out weights and the permutation applied to the given ones (None if
    they were used as they are).
    """
    wshape = np.shape(w)
    if wshape == shape:
        return w, None
    if axis is None:
        raise ShapeError(
            f"average: weights of shape {wshape} differ from a's shape {shape}; pass "
            "axis= naming the axes the weights run along, or weights of a's shape."
        )
    ndim = len(shape)
    normalize_axis("average", axis, ndim)  # validates
    order = tuple(int(ax) % ndim for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    along = tuple(shape[ax] for ax in order)
    if wshape != along:
        raise ShapeError(
            f"average: weights of shape {wshape} do not fit a of shape {shape} along axis "
            f"{axis!r}: they must have a's shape, or the shape {along} of a along that axis."
        )
    perm = tuple(int(i) for i in np.argsort(order))
    laid = np.transpose(w, perm).reshape(
        tuple(s if ax in order else 1 for ax, s in enumerate(shape))
    )
    return laid, perm


def average(
    a: Operand,
    axis: Axis = None,
    weights: Operand | None = None,
    returned: bool = False,
    *,
    keepdims: bool = False,
) -> Any:
    """Weighted average over ``axis``, as ``numpy.average``: ``sum(a * w) / sum(w)``.

    Args:
        a: The values.
        axis: None (all), an int or a tuple of ints.
        weights: None (the plain mean), an array of ``a``'s shape, or (with ``axis``)
            an array with the shape of ``a`` along ``axis``, in the order ``axis`` names
            them. It may be a Variable; the average is differentiable in it too.
        returned: Also return the sum of the weights (broadcast to the average's
            shape), as a Variable (differentiable in ``weights``).
        keepdims: Keep the reduced axes with length 1.

    Returns:
        The average, or the pair ``(average, sum_of_weights)`` if ``returned``.

    Raises:
        ShapeError: if the weights' shape fits neither rule.
        ZeroDivisionError: if the weights of a slice sum to zero (as numpy).

    Gradient:
        ``da = g * w / sum(w)``, ``dw = g * (a - average) / sum(w)``; for the returned
        sum of the weights, ``dw = g``.
    """
    a, weights = array_of("average", a), array_of("average", weights)
    x = value_of(a, name="average")
    shape = np.shape(x)
    axes = normalize_axis("average", axis, len(shape))
    if weights is None:
        avg = _mean("average", a, axes, None, keepdims)
        if not returned:
            return avg
        count = avg.dtype.type(np.size(x) / (avg.size or 1))
        return avg, op("average", np.broadcast_to(count, avg.shape).copy())
    w = value_of(weights, name="average")
    wb, perm = _weights_along(w, shape, axis)
    x_dtype, w_dtype = np.result_type(x), np.result_type(wb)
    dtype = np.result_type(x_dtype, w_dtype, *(("f8",) if x_dtype.kind in "biu" else ()))
    total = np.sum(wb, axis=axes, dtype=dtype, keepdims=True)
    if np.any(total == 0):
        raise ZeroDivisionError(
            f"average: the weights sum to zero along axis {axis!r}, so the average is "
            "undefined; give every reduced slice weights with a non-zero sum."
        )
    avg_kd = np.multiply(x, wb, dtype=dtype).sum(axis=axes, keepdims=True) / total
    real_result("average", avg_kd, a, weights)
    reduced = avg_kd if keepdims else np.squeeze(avg_kd, axes)

    def to_weights(dwb: np.ndarray) -> np.ndarray:
        """A gradient laid out like ``wb`` in the shape of the given weights."""
        if perm is None:
            return dwb
        laid_shape = tuple(np.shape(w)[i] for i in perm)
        return np.transpose(dwb.reshape(laid_shape), np.argsort(perm))

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, (expand_reduced(g, axes, keepdims) / total) * wb)

    def d_w(g: np.ndarray) -> Any:
        dwb = np.subtract(x, avg_kd)
        dwb *= expand_reduced(g, axes, keepdims) / total
        return to_weights(unbroadcast(dwb, wb.shape))

    n_a, n_w = node_of(a), node_of(weights)
    kd_shape = np.shape(avg_kd)

    def laid_weights() -> Any:
        """The weights laid out like ``wb``, in the graph."""
        wv = graph_value(n_w, w)
        return wv if perm is None else reshape(transpose(wv, perm), wb.shape)

    def to_weights_vjp(dwb: Any) -> Any:
        """``to_weights`` with lampy ops."""
        if perm is None:
            return dwb
        laid_shape = tuple(np.shape(w)[i] for i in perm)
        return transpose(reshape(dwb, laid_shape), tuple(np.argsort(perm).tolist()))

    def vjp_a(g: Any, out: Any) -> Any:
        wv = laid_weights()
        return reshape(g, kd_shape) / sum(wv, axis=axes, keepdims=True) * wv

    def vjp_w(g: Any, out: Any) -> Any:
        wv = laid_weights()
        avg_v = reshape(lifted(out, reduced), kd_shape)
        dwb = (graph_value(n_a, x) - avg_v) * (
            reshape(g, kd_shape) / sum(wv, axis=axes, keepdims=True)
        )
        return to_weights_vjp(sum_to(dwb, wb.shape))

    avg = op(
        "average",
        reduced,
        param_of(a, d_a, vjp=vjp_a),
        contrib_of(weights, d_w, vjp=vjp_w),
    )
    if not returned:
        return avg
    scl_kd = total if keepdims else np.squeeze(total, axes)

    def d_w_total(g: np.ndarray) -> Any:
        gk = expand_reduced(g, axes, keepdims)
        spread = tuple(i for i, n in enumerate(wb.shape) if n == 1 and gk.shape[i] != 1)
        t = gk.sum(axis=spread, keepdims=True) if spread else gk
        return to_weights(np.broadcast_to(t, wb.shape))

    def vjp_w_total(g: Any, out: Any) -> Any:
        gk = reshape(g, kd_shape)
        return to_weights_vjp(broadcast_to(sum_to(gk, _kept_of(kd_shape, wb.shape)), wb.shape))

    scl = np.broadcast_to(scl_kd, np.shape(reduced)).copy()
    return avg, op("average", scl, contrib_of(weights, d_w_total, fresh=False, vjp=vjp_w_total))


def _kept_of(shape: tuple[int, ...], target: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with 1 wherever ``target`` has 1 (the axes a broadcast to ``target``
    from ``shape`` summed over would come from)."""
    return tuple(1 if t == 1 else n for n, t in zip(shape, target, strict=True))


__all__ = ["average", "mean", "prod", "std", "sum", "var"]
