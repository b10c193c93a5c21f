"""Order statistics: median, quantile, percentile and their nan-ignoring versions
(nanmedian, nanquantile, nanpercentile), as numpy's.

Values are numpy's, computed by numpy (warnings included). Every numpy ``method`` is
a blend ``(1 - t) * s[j] + t * s[j + 1]`` of two neighbouring order statistics ``s`` of
the slice, ``j`` and ``t`` depending only on ``q``, the method and the slice length
(numpy's documentation defines each method by its "virtual index" ``j + t``). The
gradient flows to those two order statistics with the weights ``1 - t`` and ``t``.

Conventions, shared by the six ops:

- **Ties.** An order statistic whose value several entries share gives its weight to
  all of them equally, as :func:`lampy.amax` does for tied maxima (``quantile`` with
  ``q=1`` is ``amax``, with ``q=0`` ``amin``, and their gradients agree). PyTorch's
  ``quantile`` and JAX's ``jnp.quantile`` give it to the entries their sort puts
  there; any such split is a valid subgradient.
- **NaN.** In ``median``/``quantile``/``percentile`` a slice holding a nan has the value
  nan (numpy's); its gradient is shared equally by its nan entries, the entries the
  value came from (as :func:`lampy.amax`). The ``nan*`` versions leave nans out: their
  nan entries get 0, and an all-nan slice (numpy: nan with a ``RuntimeWarning``) gets 0
  everywhere (JAX's convention for its ``nan*`` reductions).
- ``q`` is a constant (a number, a sequence or an array; the result has ``q``'s shape
  in front of the reduced shape, as numpy): a Variable ``q`` that needs a gradient is
  refused.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.opkit import (
    Axis,
    Operand,
    Variable,
    array_of,
    contrib_of,
    needs_grad,
    normalize_axis,
    op,
    value_of,
)
from lampy.ops._shape import reshape

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


_METHODS = (
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
)


def _quantiles(name: str, q: Any, scale: float) -> Any:
    """``q`` as numpy takes it, checked to lie in ``[0, scale]``."""
    if needs_grad(q):
        raise LampyTypeError(
            f"{name}: q is a Variable that needs a gradient, but lampy does not "
            "differentiate quantiles with respect to q; pass q as a constant (q.value or "
            "q.detach())."
        )
    qv = value_of(q, False, name)
    qa = np.asarray(qv)
    if qa.dtype.kind not in "biuf":
        raise LampyTypeError(f"{name}: q must be real numbers, got dtype {qa.dtype}.")
    if qa.size == 0:
        raise LampyValueError(
            f"{name}: q is empty (shape {qa.shape}); numpy cannot check an empty q and "
            "raises ValueError. Pass at least one quantile."
        )
    if not np.all((qa >= 0) & (qa <= scale)):
        hint = " (for percentages use percentile)" if scale == 1 else ""
        raise LampyValueError(f"{name}: q must lie in [0, {scale:g}]{hint}, got {qv!r}.")
    return qv


def _check_method(name: str, method: str) -> None:
    if method not in _METHODS:
        raise LampyValueError(
            f"{name}: method={method!r} is not one of numpy's quantile methods: "
            f"{', '.join(_METHODS)} (default 'linear')."
        )


def _virtual_index(count: int, q: np.ndarray, method: str) -> tuple[Any, Any, Any]:
    """``(j, j_next, t)`` for slices of ``count`` entries: the value is
    ``(1 - t) * s[j] + t * s[j_next]`` over the sorted slice ``s``.

    numpy's quantile of ``0, 1, ..., count - 1`` is the virtual index ``j + t`` itself,
    since every method blends two neighbouring order statistics with weights that
    depend only on ``q`` and ``count``.
    """
    h = np.quantile(np.arange(count, dtype=np.float64), q, method=method)  # type: ignore[call-overload]
    j = np.clip(np.floor(h), 0, count - 1).astype(np.intp)
    return j, np.minimum(j + 1, count - 1), h - j


def _order_weights(
    x: Any, axes: tuple[int, ...], q: Any, method: str, skip_nan: bool, gq: np.ndarray
) -> Any:
    """The gradient of the quantiles ``q`` over ``axes`` of ``x``, given ``gq``, the
    output gradient as ``(q.size, *kept shape)``; see the module docstring."""
    shape = np.shape(x)
    kept = tuple(ax for ax in range(len(shape)) if ax not in axes)
    perm = kept + axes
    n = int(np.prod([shape[ax] for ax in axes], dtype=np.intp))
    if n == 0 or np.size(x) == 0:  # no entries: nothing to send a gradient to
        return np.zeros(shape, gq.dtype)
    xm = np.transpose(x, perm).reshape((*[shape[ax] for ax in kept], n))
    nan = np.isnan(xm) if xm.dtype.kind in "fc" else np.zeros(xm.shape, bool)
    counts = (n - np.sum(nan, axis=-1)) if skip_nan else np.full(xm.shape[:-1], n)
    s = np.sort(xm, axis=-1)  # nan sorts last
    qs = np.reshape(q, -1)
    d = np.zeros(xm.shape, gq.dtype)
    lo = np.zeros((qs.size, *counts.shape), np.intp)
    hi = np.zeros_like(lo)
    t = np.zeros(lo.shape, np.float64)
    for c in np.unique(counts):
        if c == 0:
            continue  # all nan: weights stay 0
        where = counts == c
        j, j_next, frac = (
            v.reshape((-1,) + (1,) * counts.ndim) for v in _virtual_index(int(c), qs, method)
        )
        lo, hi, t = np.where(where, j, lo), np.where(where, j_next, hi), np.where(where, frac, t)
    for k in range(qs.size):
        for idx, w in ((lo[k], 1 - t[k]), (hi[k], t[k])):
            v = np.take_along_axis(s, idx[..., None], axis=-1)
            hit = xm == v
            count = np.sum(hit, axis=-1, keepdims=True)
            share = (gq[k] * w.astype(gq.dtype))[..., None] / np.maximum(count, 1)
            d += np.where(hit, share, 0)
    if not skip_nan:  # a slice holding a nan: its nan entries share the gradient
        n_nan = np.sum(nan, axis=-1, keepdims=True)
        if n_nan.any():
            total = np.sum(gq, axis=0)[..., None] / np.maximum(n_nan, 1)
            d = np.where(n_nan > 0, np.where(nan, total, 0), d)
    d = d.reshape([shape[ax] for ax in perm])
    return np.transpose(d, np.argsort(perm))


def _order_vjp(g: Any, x: Any, axes: tuple[int, ...], q: Any, method: str, skip_nan: bool) -> Any:
    """The gradient of :func:`_order_weights` with lampy ops, for the vjps: it is linear
    in ``g`` with weights constant in ``x`` (piecewise), so it is ``g`` times the weights,
    summed over the quantiles (the weights of quantile ``k`` are ``_order_weights`` of a
    ``g`` that is 1 at ``k``, 0 at the others)."""
    shape = np.shape(x)
    kept = [shape[i] for i in range(len(shape)) if i not in axes]
    k = int(np.size(q))
    basis = np.eye(k).reshape((k, k, *[1] * len(kept)))
    w = np.stack(
        [
            _order_weights(x, axes, q, method, skip_nan, np.broadcast_to(e, (k, *kept)))
            for e in basis
        ]
    )
    kd = [1 if i in axes else n for i, n in enumerate(shape)]
    return (reshape(g, (k, *kd)) * w).sum(axis=0)


def _quantile_op(
    name: str,
    a: Any,
    q: Any,
    axis: Any,
    method: str,
    keepdims: bool,
    numpy_fn: Any,
    q_fraction: Any,
    skip_nan: bool,
) -> Variable:
    """The shared body: ``numpy_fn`` gives the value, ``q_fraction`` the quantiles as
    fractions in ``[0, 1]`` (for the gradient)."""
    _check_method(name, method)
    a = array_of(name, a)
    x = value_of(a, name=name)
    axes = normalize_axis(name, axis, np.ndim(x))
    qa = np.asarray(q)
    try:
        if skip_nan and qa.ndim >= 2:
            # numpy's nan* functions lay the result of a q of 2 or more dimensions out
            # unlike their documentation (and numpy.quantile) when the reduction leaves
            # axes and is not over one int axis (axis=() or a tuple: a of shape (2, 3, 4),
            # axis (0, 1) and q of shape (2, 1) give (1, 4, 2), not (2, 1, 4)); with a
            # flat q they agree: the documented layout, q's shape first.
            flat = numpy_fn(x, qa.reshape(-1), axis=axes, method=method, keepdims=keepdims)
            value = flat.reshape(qa.shape + flat.shape[1:])
        else:
            value = numpy_fn(x, q, axis=axes, method=method, keepdims=keepdims)
    except IndexError:  # numpy's quantile of an empty slice
        raise ShapeError(
            f"{name}: cannot take a quantile of an empty selection (shape {np.shape(x)}, "
            f"axis {axis!r}); reduce over non-empty axes."
        ) from None
    qf = np.asarray(q_fraction)

    def d_a(g: np.ndarray) -> Any:
        gq = np.reshape(g, (qf.size, *[np.shape(x)[i] for i in range(np.ndim(x)) if i not in axes]))
        return _order_weights(x, axes, qf, method, skip_nan, gq)

    def vjp(g: Any, out: Any) -> Any:
        return _order_vjp(g, x, axes, qf, method, skip_nan)

    return op(name, value, contrib_of(a, d_a, vjp=vjp))


def quantile(
    a: Operand,
    q: ArrayLike,
    axis: Axis = None,
    *,
    method: str = "linear",
    keepdims: bool = False,
) -> Variable:
    """The ``q``-th quantiles of ``a`` over ``axis``, as ``numpy.quantile``.

    Args:
        a: The values.
        q: A fraction in ``[0, 1]``, or an array of them (a constant).
        axis: None (all axes), an int or a tuple of ints; negatives allowed.
        method: One of numpy's 13 methods (``'linear'``, numpy's default,
            ``'lower'``, ``'higher'``, ``'nearest'``, ``'midpoint'``, ``'hazen'``,
            ``'weibull'``, ``'median_unbiased'``, ``'normal_unbiased'``,
            ``'inverted_cdf'``, ``'averaged_inverted_cdf'``, ``'closest_observation'``,
            ``'interpolated_inverted_cdf'``).
        keepdims: Keep the reduced axes with length 1.

    Returns:
        The quantiles: ``q``'s shape followed by the reduced shape.

    Raises:
        LampyValueError: ``q`` outside ``[0, 1]`` or an unknown ``method``.
        LampyTypeError: ``q`` a Variable that needs a gradient.
        ShapeError: an empty slice (numpy raises ``IndexError``).

    Gradient:
        The value is ``(1 - t) * s[j] + t * s[j + 1]`` over the sorted slice ``s``:
        ``g * (1 - t)`` goes to the entry holding ``s[j]``, ``g * t`` to the one holding
        ``s[j + 1]``. Entries tied at an order statistic share its weight equally (as
        :func:`lampy.amax`); a slice holding a nan (value nan) gives ``g`` to its nan
        entries, shared. ``q`` gets no gradient.
    """
    qv = _quantiles("quantile", q, 1.0)
    return _quantile_op("quantile", a, qv, axis, method, keepdims, np.quantile, qv, False)


def percentile(
    a: Operand,
    q: ArrayLike,
    axis: Axis = None,
    *,
    method: str = "linear",
    keepdims: bool = False,
) -> Variable:
    """The ``q``-th percentiles of ``a`` over ``axis``, as ``numpy.percentile``:
    :func:`quantile` of ``q / 100``.

    Args:
        a: The values.
        q: A percentage in ``[0, 100]``, or an array of them (a constant).
        axis: None (all axes), an int or a tuple of ints; negatives allowed.
        method: One of numpy's methods, as :func:`quantile` (default ``'linear'``).
        keepdims: Keep the reduced axes with length 1.

    Raises:
        LampyValueError: ``q`` outside ``[0, 100]`` or an unknown ``method``.
        LampyTypeError: ``q`` a Variable that needs a gradient.
        ShapeError: an empty slice.

    Gradient:
        As :func:`quantile`: the interpolation weights to the two order statistics,
        shared among ties; nan slices give ``g`` to their nans.
    """
    qv = _quantiles("percentile", q, 100.0)
    qf = np.asarray(qv, dtype=np.float64) / 100
    return _quantile_op("percentile", a, qv, axis, method, keepdims, np.percentile, qf, False)


def median(a: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """The median of ``a`` over ``axis``, as ``numpy.median``: the middle of each sorted
    slice, the mean of the two middle entries for an even length. An empty slice gives
    nan with numpy's ``RuntimeWarning``.

    Gradient:
        ``g`` to the middle entry, or ``g / 2`` to each of the two middle entries;
        entries tied there share equally (``[1, 2, 2, 3]`` gives ``[0, g/2, g/2, 0]``);
        a slice holding a nan gives ``g`` to its nans, shared.
    """
    a = array_of("median", a)
    x = value_of(a, name="median")
    axes = normalize_axis("median", axis, np.ndim(x))
    value = np.median(x, axis=axes, keepdims=keepdims)

    def d_a(g: np.ndarray) -> Any:
        gq = np.reshape(g, (1, *[np.shape(x)[i] for i in range(np.ndim(x)) if i not in axes]))
        return _order_weights(x, axes, np.asarray(0.5), "linear", False, gq)

    def vjp(g: Any, out: Any) -> Any:
        return _order_vjp(g, x, axes, np.asarray(0.5), "linear", False)

    return op("median", value, contrib_of(a, d_a, vjp=vjp))


def nanquantile(
    a: Operand,
    q: ArrayLike,
    axis: Axis = None,
    *,
    method: str = "linear",
    keepdims: bool = False,
) -> Variable:
    """The ``q``-th quantiles over ``axis`` of the entries that are not nan, as
    ``numpy.nanquantile``. An all-nan slice gives nan with numpy's ``RuntimeWarning``.
    With a ``q`` of two or more dimensions the result has the documented layout,
    ``q``'s shape followed by the reduced shape, as ``numpy.quantile``
    (``numpy.nanquantile`` lays it out otherwise for ``axis=()`` and for a tuple of
    axes that leaves some).

    Args:
        a: The values.
        q: A fraction in ``[0, 1]``, or an array of them (a constant).
        axis: None (all axes), an int or a tuple of ints; negatives allowed.
        method: One of numpy's methods, as :func:`quantile` (default ``'linear'``).
        keepdims: Keep the reduced axes with length 1.

    Raises:
        LampyValueError: ``q`` outside ``[0, 1]`` or an unknown ``method``.
        LampyTypeError: ``q`` a Variable that needs a gradient.

    Gradient:
        As :func:`quantile` over the entries that are not nan; nan entries get 0, and
        every entry of an all-nan slice 0.
    """
    qv = _quantiles("nanquantile", q, 1.0)
    return _quantile_op("nanquantile", a, qv, axis, method, keepdims, np.nanquantile, qv, True)


def nanpercentile(
    a: Operand,
    q: ArrayLike,
    axis: Axis = None,
    *,
    method: str = "linear",
    keepdims: bool = False,
) -> Variable:
    """The ``q``-th percentiles over ``axis`` of the entries that are not nan, as
    ``numpy.nanpercentile``: :func:`nanquantile` of ``q / 100``.

    Raises:
        LampyValueError: ``q`` outside ``[0, 100]`` or an unknown ``method``.
        LampyTypeError: ``q`` a Variable that needs a gradient.

    Gradient:
        As :func:`nanquantile`.
    """
    qv = _quantiles("nanpercentile", q, 100.0)
    qf = np.asarray(qv, dtype=np.float64) / 100
    return _quantile_op("nanpercentile", a, qv, axis, method, keepdims, np.nanpercentile, qf, True)


def nanmedian(a: Operand, axis: Axis = None, *, keepdims: bool = False) -> Variable:
    """The median over ``axis`` of the entries that are not nan, as ``numpy.nanmedian``.
    An all-nan slice gives nan with numpy's ``RuntimeWarning``.

    Gradient:
        As :func:`median` over the entries that are not nan; nan entries get 0, and
        every entry of an all-nan slice 0.
    """
    a = array_of("nanmedian", a)
    x = value_of(a, name="nanmedian")
    axes = normalize_axis("nanmedian", axis, np.ndim(x))
    value = np.nanmedian(x, axis=axes, keepdims=keepdims)

    def d_a(g: np.ndarray) -> Any:
        gq = np.reshape(g, (1, *[np.shape(x)[i] for i in range(np.ndim(x)) if i not in axes]))
        return _order_weights(x, axes, np.asarray(0.5), "linear", True, gq)

    def vjp(g: Any, out: Any) -> Any:
        return _order_vjp(g, x, axes, np.asarray(0.5), "linear", True)

    return op("nanmedian", value, contrib_of(a, d_a, vjp=vjp))


__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]
