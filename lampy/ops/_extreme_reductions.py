"""Extreme-value reductions: amax/max, amin/min, argmax, argmin, and logsumexp.

Ties share the gradient equally among the tied extremes (PyTorch's convention for
``amax``/``amin``). A nan in a slice makes its extreme nan, as in numpy; the gradient
then goes to the nan entries (shared), which carry the value, as for
:func:`lampy.maximum`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import ShapeError
from lampy.opkit import (
    Axis,
    Operand,
    Variable,
    contrib_of,
    expand_reduced,
    graph_value,
    lifted,
    node_of,
    normalize_axis,
    op,
    param_of,
    single_axis,
    value_of,
)
from lampy.ops._exp_log import exp
from lampy.ops._shape import broadcast_to, reshape
from lampy.ops._torch_names import axis_or_dim, keepdims_or_keepdim
from lampy.ops._where import where as where_

if TYPE_CHECKING:
    from numpy.typing import ArrayLike


_add, _isnan, _equal = np.add, np.isnan, np.equal


def reduce_error(name: str, shape: tuple[int, ...], axis: Axis, e: Exception) -> ShapeError:
    if "identity" in str(e) or "empty" in str(e):
        return ShapeError(
            f"{name}: cannot reduce an empty selection (shape {shape}, axis {axis!r}): the "
            f"{name} of no elements is undefined. Reduce over non-empty axes"
            + (", or pass initial= to give empty slices a value." if "arg" not in name else ".")
        )
    return ShapeError(f"{name}: {e} (array of shape {shape}, axis {axis!r}).")


def _extreme(
    name: str,
    fn: Callable[..., Any],
    a: Any,
    axis: Any,
    keepdims: bool,
    initial: Any,
    where: Any,
) -> Variable:
    x = value_of(a, name=name)
    shape = np.shape(x)
    axes = normalize_axis(name, axis, len(shape))
    kwargs: dict[str, Any] = {}
    if initial is not None:
        kwargs["initial"] = initial
    masked = where is not True
    if masked:
        if initial is None:
            raise ShapeError(
                f"{name}: where= needs initial=, the value of a slice the mask leaves "
                "empty (numpy's rule: the reduction has no identity to fall back on)."
            )
        kwargs["where"] = where
    try:
        value_kd = fn(x, axis=axes, keepdims=True, **kwargs)
    except ValueError as e:
        raise reduce_error(name, shape, axis, e) from None
    value = value_kd if keepdims else np.squeeze(value_kd, axes)

    def hits(dtype: Any) -> tuple[np.ndarray, np.ndarray]:
        """Where the extreme is taken, and how many places share each slice's gradient."""
        hit = _equal(x, value_kd)
        nan = _isnan(value_kd)
        if nan.any():
            hit = hit | (_isnan(x) & nan)
        if masked:
            hit = hit & where
        count = np.sum(hit, axis=axes, keepdims=True, dtype=dtype)
        if initial is not None:  # a tie with `initial` takes its share, which is dropped
            count = count + _equal(value_kd, initial)
        return hit, count

    def d_a(g: np.ndarray, out: np.ndarray) -> None:
        hit, count = hits(g.dtype)
        share = expand_reduced(g, axes, keepdims) / count
        _add(out, share, out=out, where=hit)

    def vjp(g: Any, out: Any) -> Any:
        hit, count = hits(value_kd.dtype)
        share = broadcast_to(reshape(g, value_kd.shape) / count, shape)
        return where_(hit, share, 0.0)

    return op(name, value, param_of(a, d_a, vjp=vjp))


def amax(
    a: Operand,
    axis: Axis = None,
    *,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
    dim: Axis = None,
    keepdim: bool | None = None,
) -> Variable:
    """Maximum of elements over ``axis``, as ``numpy.amax``.

    PyTorch's ``dim`` and ``keepdim`` are accepted for ``axis`` and ``keepdims``
    (``torch.amax``); ``max`` takes numpy's names only, because ``torch.max(x, dim)``
    returns values and indices: use ``amax`` and ``argmax``, or ``topk``.

    Args:
        a: The input.
        axis: None (all axes), an int or a tuple of ints; negatives allowed.
        keepdims: Keep the reduced axes with length 1.
        initial: A value included in every slice (needed for empty slices).
        where: Boolean mask (broadcast to ``a``) of the elements to compare.

    Raises:
        ShapeError: if a slice is empty and ``initial`` is not given, naming the op and
            the shape; or if ``where`` is given without ``initial`` (as numpy).

    Gradient:
        ``da = g / k`` at the ``k`` elements equal to the maximum of their slice (ties
        share the gradient equally, as PyTorch's ``amax``), 0 elsewhere. If ``initial``
        ties with them it takes a share too (which is dropped); if it is strictly
        greater, every element gets 0. If the slice holds a nan (the result is nan) the
        nan entries share the gradient.
    """
    axis = axis_or_dim("amax", axis, dim)
    keepdims = keepdims_or_keepdim("amax", keepdims, keepdim)
    return _extreme("amax", np.amax, a, axis, keepdims, initial, where)


def amin(
    a: Operand,
    axis: Axis = None,
    *,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
    dim: Axis = None,
    keepdim: bool | None = None,
) -> Variable:
    """Minimum of elements over ``axis``, as ``numpy.amin``; arguments (``dim`` and
    ``keepdim`` too) as ``lampy.amax``.

    Raises:
        ShapeError: as :func:`amax`.

    Gradient:
        ``da = g / k`` at the ``k`` elements equal to the minimum of their slice (ties
        share the gradient equally), 0 elsewhere; ``initial`` and nans as in :func:`amax`.
    """
    axis = axis_or_dim("amin", axis, dim)
    keepdims = keepdims_or_keepdim("amin", keepdims, keepdim)
    return _extreme("amin", np.amin, a, axis, keepdims, initial, where)


def max(
    a: Operand,
    axis: Axis = None,
    *,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Variable:
    """Maximum of elements over ``axis``: numpy's ``max``, the same as :func:`amax`.

    Gradient:
        As :func:`amax`: tied maxima share ``g`` equally.
    """
    return _extreme("max", np.amax, a, axis, keepdims, initial, where)


def min(
    a: Operand,
    axis: Axis = None,
    *,
    keepdims: bool = False,
    initial: ArrayLike | None = None,
    where: ArrayLike = True,
) -> Variable:
    """Minimum of elements over ``axis``: numpy's ``min``, the same as :func:`amin`.

    Gradient:
        As :func:`amin`: tied minima share ``g`` equally.
    """
    return _extreme("min", np.amin, a, axis, keepdims, initial, where)


def _arg_extreme(name: str, fn: Callable[..., Any], a: Any, axis: Any, keepdims: bool) -> Any:
    x = value_of(a, name=name)
    ax = single_axis(name, axis, np.ndim(x))
    try:
        return fn(x, axis=ax, keepdims=keepdims)
    except ValueError as e:
        raise reduce_error(name, np.shape(x), axis, e) from None


def argmax(
    a: Operand,
    axis: int | None = None,
    *,
    keepdims: bool = False,
    dim: int | None = None,
    keepdim: bool | None = None,
) -> Any:
    """Indices of the maxima along ``axis`` (None: into the flattened array), as numpy.

    PyTorch's ``dim`` and ``keepdim`` are accepted for ``axis`` and ``keepdims``.

    The result is a plain numpy integer array (a numpy integer when ``axis`` is None
    and ``keepdims`` is False), not a Variable: indices have no gradient. Ties give the
    first index, as numpy.

    Raises:
        ShapeError: for an empty selection.

    Gradient:
        None (integer output).
    """
    axis = axis_or_dim("argmax", axis, dim)
    keepdims = keepdims_or_keepdim("argmax", keepdims, keepdim)
    return _arg_extreme("argmax", np.argmax, a, axis, keepdims)


def argmin(
    a: Operand,
    axis: int | None = None,
    *,
    keepdims: bool = False,
    dim: int | None = None,
    keepdim: bool | None = None,
) -> Any:
    """Indices of the minima along ``axis`` (None: into the flattened array), as numpy.

    PyTorch's ``dim`` and ``keepdim`` are accepted for ``axis`` and ``keepdims``.

    The result is a plain numpy integer array (a numpy integer when ``axis`` is None
    and ``keepdims`` is False), not a Variable: indices have no gradient. Ties give the
    first index, as numpy.

    Raises:
        ShapeError: for an empty selection.

    Gradient:
        None (integer output).
    """
    axis = axis_or_dim("argmin", axis, dim)
    keepdims = keepdims_or_keepdim("argmin", keepdims, keepdim)
    return _arg_extreme("argmin", np.argmin, a, axis, keepdims)


def logsumexp(
    a: Operand,
    axis: Any = None,
    *,
    keepdims: bool = False,
    dim: Any = None,
    keepdim: bool | None = None,
) -> Variable:
    """``log(sum(exp(a)))`` over ``axis``, computed stably (as ``scipy.special.logsumexp``).

    PyTorch's ``dim`` and ``keepdim`` are accepted for ``axis`` and ``keepdims``.

    The slice maximum is subtracted before exponentiating, so large inputs do not
    overflow. ``-inf`` entries contribute nothing; a slice of only ``-inf`` (or an empty
    slice) gives ``-inf``; a ``+inf`` entry gives ``+inf``. Integer inputs give float64.

    Gradient:
        ``da = g * exp(a - logsumexp(a))`` (the softmax of the slice; reuses the forward
        exponentials). ``-inf`` entries get 0. As in PyTorch, a slice of only ``-inf``
        gets nan, and a slice holding ``+inf`` gets nan there and 0 elsewhere.
    """
    axis = axis_or_dim("logsumexp", axis, dim)
    keepdims = keepdims_or_keepdim("logsumexp", keepdims, keepdim)
    x = value_of(a, name="logsumexp")
    if np.result_type(x).kind not in "fc":
        x = np.asarray(x, dtype=np.float64)
    shape = np.shape(x)
    axes = normalize_axis("logsumexp", axis, len(shape))
    m = np.amax(x, axis=axes, keepdims=True, initial=-np.inf)
    m = np.where(np.isfinite(m), m, 0)
    e = np.exp(x - m)
    s = np.sum(e, axis=axes, keepdims=True)
    with np.errstate(divide="ignore"):  # log(0) = -inf is the answer for all -inf
        value_kd = np.log(s) + m
    value = value_kd if keepdims else np.squeeze(value_kd, axes)

    def d_a(g: np.ndarray) -> Any:
        return e * (expand_reduced(g, axes, keepdims) / s)

    n = node_of(a)

    def vjp(g: Any, out: Any) -> Any:  # the softmax of the slice, as lampy ops of a
        p = exp(graph_value(n, x) - reshape(lifted(out, value), value_kd.shape))
        return p * reshape(g, value_kd.shape)

    return op("logsumexp", value, contrib_of(a, d_a, vjp=vjp))


__all__ = ["amax", "amin", "argmax", "argmin", "logsumexp", "max", "min"]
