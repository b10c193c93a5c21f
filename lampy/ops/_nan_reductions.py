"""NaN-ignoring reductions: nansum, nanmean, nanprod, nanvar, nanstd, nanmax, nanmin,
nanargmax, nanargmin, nancumsum, nancumprod (numpy's ``nan*`` functions).

Values are numpy's, warnings included (``nanmean`` of an all-nan slice is nan with
numpy's ``RuntimeWarning``). A nan entry is treated as absent: as in JAX's ``jnp.nan*``
functions, its gradient is 0, and so is the gradient of every entry of an all-nan slice
(JAX's value there too: numpy's nan result is a constant of the slice).

Like numpy's, each takes an array-like: a list (or nested lists) of Variables is stacked
into one Variable first. ``keepdims`` and ``ddof`` are keyword-only (numpy places them
after ``out``, which lampy does not take); numpy's ``initial``, ``where`` and ``mean``
arguments are not supported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import LampyValueError
from lampy.opkit import (
    Axis,
    Operand,
    Variable,
    array_of,
    contrib_of,
    expand_reduced,
    graph_value,
    lifted,
    node_of,
    normalize_axis,
    op,
    real_operands,
    single_axis,
    value_of,
)
from lampy.ops._cumulative import _cumprod_vjp, _reverse_cumsum, cumprod_grad, reverse_cumsum
from lampy.ops._extreme_reductions import reduce_error
from lampy.ops._reductions import (
    _prod_vjp,
    check_float_dtype,
    prod_grad,
    reduced_shape,
    spread,
)
from lampy.ops._shape import reshape
from lampy.ops._where import where

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


_isnan, _where = np.isnan, np.where


def _nan_mask(x: Any) -> Any:
    """Where ``x`` is nan (all False for integer and bool arrays, which hold no nan)."""
    if np.result_type(x).kind not in "fc":
        return np.zeros(np.shape(x), bool)
    return _isnan(x)


def _prepare(name: str, a: Any, axis: Any, dtype: Any = None) -> tuple[Any, Any, tuple[int, ...]]:
    """The operand (lists stacked), its value, and ``axis`` as a sorted tuple."""
    a = array_of(name, a)
    x = value_of(a, name=name)
    check_float_dtype(name, dtype, a)
    return a, x, normalize_axis(name, axis, np.ndim(x))


def nansum(
    a: Operand, axis: Axis = None, dtype: DTypeLike | None = None, *, keepdims: bool = False
) -> Variable:
    """Sum over ``axis`` treating nans as zero, as ``numpy.nansum`` (0 for an all-nan
    or empty selection).

    Args:
        a: The values.
        axis: None (all axes), an int or a tuple of ints; negatives allowed.
        dtype: A float dtype to sum in (None: numpy's default).
        keepdims: Keep the reduced axes with length 1.

    Gradient:
        ``da = g`` broadcast back over the reduced axes, 0 at nan entries (JAX's
        ``nansum``).
    """
    a, x, axes = _prepare("nansum", a, axis, dtype)
    value = np.nansum(x, axis=axes, dtype=dtype, keepdims=keepdims)

    def d_a(g: np.ndarray) -> Any:
        return _where(_nan_mask(x), 0, expand_reduced(g, axes, keepdims))

    shape = np.shape(x)

    def vjp(g: Any, out: Any) -> Any:
        return where(_nan_mask(x), 0.0, spread(g, shape, axes))

    return op("nansum", value, contrib_of(a, d_a, vjp=vjp))


def nanmean(
    a: Operand, axis: Axis = None, dtype: DTypeLike | None = None, *, keepdims: bool = False
) -> Variable:
    """Mean over ``axis`` of the entries that are not nan, as ``numpy.nanmean``.

    An all-nan (or empty) slice gives nan with numpy's ``RuntimeWarning``.

    Args:
        a: The values.
        axis: None (all axes), an int or a tuple of ints; negatives allowed.
        dtype: A float dtype to compute in (None: numpy's default).
        keepdims: Keep the reduced axes with length 1.

    Gradient:
        ``da = g / k`` at the ``k`` entries of the slice that are not nan, 0 at nan
        entries; 0 for every entry of an all-nan slice (JAX's ``nanmean``).
    """
    a, x, axes = _prepare("nanmean", a, axis, dtype)
    value = np.nanmean(x, axis=axes, dtype=dtype, keepdims=keepdims)

    def d_a(g: np.ndarray) -> Any:
        nan = _nan_mask(x)
        count = np.sum(~nan, axis=axes, keepdims=True)
        return _where(nan, 0, expand_reduced(g, axes, keepdims) / count)

    def vjp(g: Any, out: Any) -> Any:
        nan = _nan_mask(x)
        count = np.maximum(np.sum(~nan, axis=axes, keepdims=True), 1)  # all nan: masked
        return where(nan, 0.0, spread(g, np.shape(x), axes) / count)

    return op("nanmean", value, contrib_of(a, d_a, vjp=vjp))


def nanprod(
    a: Operand, axis: Axis = None, dtype: DTypeLike | None = None, *, keepdims: bool = False
) -> Variable:
    """Product over ``axis`` treating nans as one, as ``numpy.nanprod`` (1 for an
    all-nan or empty selection).

    Args:
        a: The values.
        axis: None (all axes), an int or a tuple of ints; negatives allowed.
        dtype: A float dtype to multiply in (None: numpy's default).
        keepdims: Keep the reduced axes with length 1.

    Gradient:
        ``da_i = g * prod_{j != i} a_j`` over the entries that are not nan (exact with
        zeros, as :func:`lampy.prod`), 0 at nan entries.
    """
    a, x, axes = _prepare("nanprod", a, axis, dtype)
    value = np.nanprod(x, axis=axes, dtype=dtype, keepdims=keepdims)

    def d_a(g: np.ndarray) -> Any:
        nan = _nan_mask(x)
        filled = _where(nan, 1, np.asarray(x, dtype=np.result_type(value)))
        pk = expand_reduced(value, axes, keepdims)
        d = prod_grad(filled, expand_reduced(g, axes, keepdims), pk, axes)
        return _where(nan, 0, d)

    node = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        nan = _nan_mask(x)
        kept = reduced_shape(np.shape(x), axes, True)
        filled = _where(nan, 1, np.asarray(x, dtype=np.result_type(value)))
        filled_v = where(nan, 1.0, graph_value(node, x))
        pv = reshape(lifted(out, value), kept)
        d = _prod_vjp(filled_v, filled, pv, np.reshape(value, kept), axes)
        return where(nan, 0.0, reshape(g, kept) * d)

    return op("nanprod", value, contrib_of(a, d_a, vjp=vjp))


def _nan_centered(x: Any, dtype: Any, axes: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """``(nan mask, count of non-nan entries, x - nanmean(x))`` per slice, in ``dtype``."""
    nan = _nan_mask(x)
    xv = np.asarray(x, dtype=dtype)
    count = np.sum(~nan, axis=axes, keepdims=True)
    mean = np.sum(_where(nan, 0, xv), axis=axes, keepdims=True) / count
    return nan, count, xv - mean


def _nan_centered_vjp(node: Any, x: Any, axes: tuple[int, ...]) -> tuple[Any, Any, Any]:
    """``_nan_centered`` with lampy ops (``x`` in the graph through ``node``), the nan
    entries set to 0 and the mean of an all-nan slice to 0, so that no nan reaches a
    derivative; for the vjps of nanvar and nanstd."""
    nan = _nan_mask(x)
    count = np.sum(~nan, axis=axes, keepdims=True)
    filled = where(nan, 0.0, graph_value(node, x))
    mean = filled.sum(axis=axes, keepdims=True) / np.maximum(count, 1)
    return nan, count, where(nan, 0.0, filled - mean)


def nanvar(
    a: Operand,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    *,
    ddof: int = 0,
    keepdims: bool = False,
) -> Variable:
    """Variance over ``axis`` of the entries that are not nan, as ``numpy.nanvar``:
    ``sum((a - nanmean)**2) / (k - ddof)``, ``k`` the number of such entries.

    With ``k - ddof <= 0`` (an all-nan slice among them) the result is nan with numpy's
    ``RuntimeWarning``.

    Gradient:
        ``da = g * 2 * (a - nanmean) / (k - ddof)`` at entries that are not nan, 0 at
        nan entries (so 0 over an all-nan slice); inf or nan, as :func:`lampy.var`,
        where ``k - ddof <= 0`` in a slice that has entries.
    """
    real_operands("nanvar", a)
    a, x, axes = _prepare("nanvar", a, axis, dtype)
    value = np.nanvar(x, axis=axes, dtype=dtype, ddof=ddof, keepdims=keepdims)

    def d_a(g: np.ndarray) -> Any:
        nan, count, centered = _nan_centered(x, np.result_type(value), axes)
        dof = np.maximum(count - ddof, 0)
        return _where(nan, 0, centered * (expand_reduced(g, axes, keepdims) * 2 / dof))

    node = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        nan, count, centered = _nan_centered_vjp(node, x, axes)
        dof = _where(count == 0, 1, np.maximum(count - ddof, 0))  # all nan: masked
        kept = reduced_shape(np.shape(x), axes, True)
        return where(nan, 0.0, centered * (reshape(g, kept) * 2 / dof))

    return op("nanvar", value, contrib_of(a, d_a, vjp=vjp))


def nanstd(
    a: Operand,
    axis: Axis = None,
    dtype: DTypeLike | None = None,
    *,
    ddof: int = 0,
    keepdims: bool = False,
) -> Variable:
    """Standard deviation over ``axis`` of the entries that are not nan, as
    ``numpy.nanstd``: ``sqrt(nanvar(a, axis, ddof=ddof))``.

    Gradient:
        ``da = g * (a - nanmean) / ((k - ddof) * nanstd)`` at entries that are not nan,
        0 at nan entries; 0 where ``nanstd == 0`` (a constant slice, as
        :func:`lampy.std`).
    """
    real_operands("nanstd", a)
    a, x, axes = _prepare("nanstd", a, axis, dtype)
    value = np.nanstd(x, axis=axes, dtype=dtype, ddof=ddof, keepdims=keepdims)

    def d_a(g: np.ndarray) -> Any:
        nan, count, centered = _nan_centered(x, np.result_type(value), axes)
        dof = np.maximum(count - ddof, 0)
        s = expand_reduced(value, axes, keepdims)
        scale = _where(s == 0, 0, expand_reduced(g, axes, keepdims) / (dof * s))
        return _where(nan, 0, centered * scale)

    node = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        nan, count, centered = _nan_centered_vjp(node, x, axes)
        dof = _where(count == 0, 1, np.maximum(count - ddof, 0))  # all nan: masked
        kept = reduced_shape(np.shape(x), axes, True)
        sk = np.reshape(value, kept)
        skip = (sk == 0) | _isnan(sk)  # constant or all-nan slices: gradient 0
        s = where(skip, 1.0, reshape(lifted(out, value), kept))
        scale = where(skip, 0.0, reshape(g, kept) / (dof * s))
        return where(nan, 0.0, centered * scale)

    return op("nanstd", value, contrib_of(a, d_a, vjp=vjp))


def _nan_extreme(name: str, fn: Any, a: Any, axis: Any, keepdims: bool) -> Variable:
    a, x, axes = _prepare(name, a, axis)
    try:
        value_kd = fn(x, axis=axes, keepdims=True)
    except ValueError as e:
        raise reduce_error(name, np.shape(x), axis, e) from None
    value = value_kd if keepdims else np.squeeze(value_kd, axes)

    def d_a(g: np.ndarray) -> Any:
        hit = np.equal(x, value_kd)  # never at a nan entry
        count = np.sum(hit, axis=axes, keepdims=True, dtype=g.dtype)
        return _where(hit, expand_reduced(g, axes, keepdims) / count, 0)

    shape = np.shape(x)

    def vjp(g: Any, out: Any) -> Any:
        hit = np.equal(x, value_kd)
        count = np.maximum(np.sum(hit, axis=axes, keepdims=True), 1)  # all nan: no hit
        return where(hit, spread(g, shape, axes) / count, 0.0)

    return op(name, value, contrib_of(a, d_a, vjp=vjp))


def nanmax(a: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """Maximum over ``axis`` ignoring nans, as ``numpy.nanmax``. An all-nan slice gives
    nan with numpy's ``RuntimeWarning``.

    Raises:
        ShapeError: for an empty selection (numpy raises ``ValueError``).

    Gradient:
        ``da = g / k`` at the ``k`` entries equal to the maximum (ties share equally, as
        :func:`lampy.amax`), 0 elsewhere and at nan entries; 0 over an all-nan slice.
    """
    return _nan_extreme("nanmax", np.nanmax, a, axis, keepdims)


def nanmin(a: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """Minimum over ``axis`` ignoring nans, as ``numpy.nanmin``; see :func:`nanmax`.

    Raises:
        ShapeError: for an empty selection.

    Gradient:
        ``da = g / k`` at the ``k`` entries equal to the minimum, 0 elsewhere and at nan
        entries; 0 over an all-nan slice.
    """
    return _nan_extreme("nanmin", np.nanmin, a, axis, keepdims)


def _nan_arg_extreme(name: str, fn: Any, a: Any, axis: Any, keepdims: bool) -> Any:
    x = value_of(array_of(name, a), name=name)
    ax = single_axis(name, axis, np.ndim(x))
    if np.size(x) == 0:
        raise reduce_error(name, np.shape(x), axis, ValueError("empty"))
    nan = _nan_mask(x)
    if nan.any() and np.all(nan, axis=ax).any():
        raise LampyValueError(
            f"{name}: a slice along axis {axis!r} of the array of shape {np.shape(x)} is all "
            "nan, so it has no index to give (numpy raises 'All-NaN slice encountered'). "
            "Replace the nans first (lampy.nan_to_num) or check with numpy.isnan(...).all()."
        )
    return fn(x, axis=ax, keepdims=keepdims)


def nanargmax(a: Operand, axis: int | None = None, *, keepdims: bool = False) -> Any:
    """Indices of the maxima along ``axis`` ignoring nans (None: into the flattened
    array), as ``numpy.nanargmax``: a plain numpy integer array, not a Variable.

    Raises:
        ShapeError: for an empty selection.
        LampyValueError: if a slice is all nan (numpy raises ``ValueError``).

    Gradient:
        None (integer output).
    """
    return _nan_arg_extreme("nanargmax", np.nanargmax, a, axis, keepdims)


def nanargmin(a: Operand, axis: int | None = None, *, keepdims: bool = False) -> Any:
    """Indices of the minima along ``axis`` ignoring nans, as ``numpy.nanargmin``; see
    :func:`nanargmax`.

    Raises:
        ShapeError: for an empty selection.
        LampyValueError: if a slice is all nan.

    Gradient:
        None (integer output).
    """
    return _nan_arg_extreme("nanargmin", np.nanargmin, a, axis, keepdims)


def _cumulative_axis(name: str, a: Any, axis: Any, dtype: Any) -> tuple[Any, Any, int, bool]:
    a = array_of(name, a)
    x = value_of(a, name=name)
    check_float_dtype(name, dtype, a)
    ax = single_axis(name, axis, np.ndim(x))
    flat = ax is None or np.ndim(x) == 0  # the value is 1-d, along axis 0
    return a, x, 0 if flat else ax, flat  # type: ignore[return-value]


def nancumsum(a: Operand, axis: int | None = None, dtype: DTypeLike | None = None) -> Variable:
    """Cumulative sum along ``axis`` treating nans as zero, as ``numpy.nancumsum``
    (``axis=None``: over the flattened array).

    Gradient:
        ``da_i = sum_{k >= i} g_k`` along the axis, 0 at nan entries.
    """
    a, x, k, flat = _cumulative_axis("nancumsum", a, axis, dtype)
    value = np.nancumsum(x, axis=None if flat else k, dtype=dtype)

    def d_a(g: np.ndarray) -> Any:
        d = _where(_nan_mask(x).reshape(value.shape), 0, reverse_cumsum(g, k))
        return d.reshape(np.shape(x))

    def vjp(g: Any, out: Any) -> Any:
        d = where(_nan_mask(x).reshape(value.shape), 0.0, _reverse_cumsum(g, k))
        return reshape(d, np.shape(x))

    return op("nancumsum", value, contrib_of(a, d_a, vjp=vjp))


def nancumprod(a: Operand, axis: int | None = None, dtype: DTypeLike | None = None) -> Variable:
    """Cumulative product along ``axis`` treating nans as one, as ``numpy.nancumprod``
    (``axis=None``: over the flattened array).

    Gradient:
        :func:`lampy.cumprod`'s gradient (exact with zeros) with the nans taken as 1, and
        0 at nan entries.
    """
    a, x, k, flat = _cumulative_axis("nancumprod", a, axis, dtype)
    value = np.nancumprod(x, axis=None if flat else k, dtype=dtype)

    def d_a(g: np.ndarray) -> Any:
        xv = np.asarray(x, dtype=value.dtype).reshape(value.shape)
        nan = _isnan(xv)
        d = _where(nan, 0, cumprod_grad(g, _where(nan, 1, xv), value, k))
        return d.reshape(np.shape(x))

    node = node_of(a)

    def vjp(g: Any, out: Any) -> Any:
        xv = np.asarray(x, dtype=value.dtype).reshape(value.shape)
        nan = _isnan(xv)
        filled_v = where(nan, 1.0, reshape(graph_value(node, x), value.shape))
        d = _cumprod_vjp(g, filled_v, _where(nan, 1, xv), lifted(out, value), k)
        return reshape(where(nan, 0.0, d), np.shape(x))

    return op("nancumprod", value, contrib_of(a, d_a, vjp=vjp))


__all__ = [
    "nanargmax",
    "nanargmin",
    "nancumprod",
    "nancumsum",
    "nanmax",
    "nanmean",
    "nanmin",
    "nanprod",
    "nanstd",
    "nansum",
    "nanvar",
]
