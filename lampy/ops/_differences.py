"""Finite differences: diff and gradient, with numpy's names and signatures.

Both are linear in the array they difference, so each gradient is the adjoint (the
transpose) of the difference operator applied to ``g``: differences taken "backwards",
with each output element's coefficients scattered onto the elements it was computed from.
"""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.opkit import (
    NO_VALUE,
    Axis,
    Operand,
    Variable,
    contrib_of,
    contribution,
    needs_grad,
    normalize_axis,
    one_axis,
    op,
    param_of,
    real_result,
    value_of,
)

_add, _subtract = np.add, np.subtract


def _along(ax: int, ndim: int, s: slice) -> tuple[slice, ...]:
    """The index selecting ``s`` along axis ``ax`` of an array of ``ndim`` dimensions."""
    return (slice(None),) * ax + (s,)


def _linear_map(name: str, g: Any, fn: Callable[..., Any], fn_t: Callable[..., Any]) -> Any:
    """``fn(g)`` for a vjp, ``fn`` a linear map with constant coefficients and ``fn_t``
    its transpose (both on numpy arrays): an op whose vjp is ``fn_t``, recorded the same
    way, so every order of derivative is exact. A constant ``g`` gives a numpy array."""
    value = fn(np.asarray(value_of(g, name=name)))
    if type(g) is not Variable:
        return value
    return op(name, value, contrib_of(g, fn_t, vjp=lambda h, out: _linear_map(name, h, fn_t, fn)))


def _diff_adjoint(h: np.ndarray, ax: int) -> np.ndarray:
    """The transpose of one difference along ``ax``: ``d[i] = h[i - 1] - h[i]`` on an axis
    one longer (``h[-1]`` and ``h[len]`` taken as 0)."""
    shape = list(h.shape)
    shape[ax] += 1
    d = np.zeros(shape, h.dtype)
    head = d[_along(ax, d.ndim, slice(None, -1))]
    tail = d[_along(ax, d.ndim, slice(1, None))]
    _subtract(head, h, out=head)
    _add(tail, h, out=tail)
    return d


def diff(
    a: Operand, n: int = 1, axis: int = -1, prepend: Operand = NO_VALUE, append: Operand = NO_VALUE
) -> Variable:
    """The ``n``-th discrete difference along ``axis`` (``out[i] = a[i + 1] - a[i]``, ``n``
    times), as ``numpy.diff``.

    Args:
        a: The array, at least 1-d.
        n: How many times to difference; ``n = 0`` returns ``a`` itself (a Variable, or a
            constant Variable of it), as numpy returns its input.
        axis: The axis to difference along.
        prepend: Values put before ``a`` along ``axis`` first: a scalar (repeated across
            the other axes) or an array of ``a``'s shape except along ``axis``. A
            Variable gets a gradient too.
        append: Values put after ``a`` along ``axis``, likewise.

    Returns:
        A Variable whose ``axis`` is ``n`` shorter than the joined input (empty when
        ``n`` is at least its length).

    Raises:
        ShapeError: if ``a`` is 0-d, ``axis`` is out of range, or ``prepend``/``append``
            do not fit.
        LampyValueError: if ``n`` is negative.

    Gradient:
        ``n`` times the transpose of one difference, ``d[i] = g[i - 1] - g[i]`` (``g``
        taken as 0 past either end), then split between ``prepend``, ``a`` and ``append``
        (a scalar ``prepend``/``append`` gets the sum of its slice).
    """
    order = operator.index(n)
    if order < 0:
        raise LampyValueError(f"diff: the order n must be >= 0, got {n}.")
    if order == 0:
        return a if type(a) is Variable else op("diff", np.asarray(value_of(a, name="diff")))
    x = np.asarray(value_of(a, name="diff"))
    if x.ndim == 0:
        raise ShapeError(
            "diff: needs an array of at least 1 dimension, got a 0-d array; reshape it "
            "(`x.reshape(1)`) or differences of a single value make no sense."
        )
    ax = one_axis("diff", axis, x.ndim)
    parts: list[tuple[Any, np.ndarray]] = []
    for what, extra in (("prepend", prepend), (None, a), ("append", append)):
        if extra is NO_VALUE:
            continue
        v = x if what is None else np.asarray(value_of(extra, name="diff"))
        if what is not None and v.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            v = np.broadcast_to(v, shape)
        parts.append((extra, v))
    try:
        joined = np.concatenate([v for _, v in parts], axis=ax) if len(parts) > 1 else x
    except ValueError:
        shapes = ", ".join(str(v.shape) for _, v in parts)
        raise ShapeError(
            f"diff: prepend/append of shapes {shapes} do not fit a along axis {ax}: give "
            "scalars, or arrays of a's shape except along that axis."
        ) from None
    value = np.diff(joined, n=order, axis=ax)
    real_result("diff", value, a, prepend, append)
    empty = value.shape[ax] == 0

    def adjoint(g: np.ndarray) -> np.ndarray:
        if empty:
            return np.zeros(joined.shape, g.dtype)
        d = g
        for _ in range(order):
            d = _diff_adjoint(d, ax)
        return d

    def forward(h: np.ndarray) -> np.ndarray:
        return np.diff(h, n=order, axis=ax)

    params = []
    lo = 0
    for operand, v in parts:
        hi = lo + v.shape[ax]
        if needs_grad(operand):
            idx = _along(ax, x.ndim, slice(lo, hi))
            vjp = _part_vjp(adjoint, forward, idx)
            params.append(contrib_of(operand, _part(adjoint, idx), fresh=False, vjp=vjp))
        lo = hi
    return op("diff", value, *params)


def _part(adjoint: Callable[[np.ndarray], np.ndarray], idx: Any) -> Callable[..., Any]:
    """The gradient of one of diff's joined operands: its slice of the adjoint."""
    return lambda g: adjoint(g)[idx]


def _part_vjp(
    adjoint: Callable[[np.ndarray], np.ndarray],
    forward: Callable[[np.ndarray], np.ndarray],
    idx: Any,
) -> Callable[..., Any]:
    """The vjp of one of diff's joined operands: its slice ``idx`` of the adjoint, as
    an op whose own vjp is the difference again."""

    def vjp(g: Any, out: Any) -> Any:
        return _linear_map("diff_adjoint", g, adjoint, forward)[idx]

    return vjp


def _spacings(name: str, varargs: tuple[Any, ...], axes: tuple[int, ...]) -> list[Any]:
    """One spacing per differentiated axis, as numpy reads ``varargs``: nothing (unit
    spacing), one scalar for every axis, or one scalar or coordinate array per axis."""
    for v in varargs:
        if needs_grad(v):
            raise LampyTypeError(
                f"{name}: the spacing is not differentiable in lampy, but a Variable that "
                "needs a gradient was given; pass its value (`h.value`) or a constant."
            )
    values = [np.asarray(value_of(v, name=name)) for v in varargs]
    if not values:
        return [1.0] * len(axes)
    if len(values) == 1 and values[0].ndim == 0:
        return values * len(axes)
    return values  # numpy has checked that there is one per axis


def _coefficients(spacing: np.ndarray, n: int, edge_order: int) -> dict[str, Any]:
    """The weights numpy's ``gradient`` gives each neighbour along an axis of length ``n``
    (second-order central differences inside, first- or second-order one-sided ones at
    the edges; Fornberg 1988), from a scalar spacing or coordinates."""
    if spacing.ndim == 0:
        dx = np.full(n - 1, float(spacing))
    else:
        dx = np.diff(spacing.astype(np.float64))
    d1, d2 = dx[:-1], dx[1:]
    w = {
        "a": -d2 / (d1 * (d1 + d2)),
        "b": (d2 - d1) / (d1 * d2),
        "c": d1 / (d2 * (d1 + d2)),
    }
    if edge_order == 1:
        w["first"] = (0, (-1 / dx[0], 1 / dx[0]))
        w["last"] = (n - 2, (-1 / dx[-1], 1 / dx[-1]))
    else:
        h1, h2 = dx[0], dx[1]
        first = (-(2 * h1 + h2) / (h1 * (h1 + h2)), (h1 + h2) / (h1 * h2), -h1 / (h2 * (h1 + h2)))
        h1, h2 = dx[-2], dx[-1]
        last = (h2 / (h1 * (h1 + h2)), -(h2 + h1) / (h1 * h2), (2 * h2 + h1) / (h2 * (h1 + h2)))
        w["first"] = (0, first)
        w["last"] = (n - 3, last)
    return w


def _gradient_adjoint(g: np.ndarray, ax: int, w: dict[str, Any]) -> np.ndarray:
    """The transpose of numpy's ``gradient`` along ``ax`` applied to ``g``."""
    gm = np.moveaxis(g, ax, 0)
    d = np.zeros(gm.shape, g.dtype)
    n = gm.shape[0]
    tail = (1,) * (gm.ndim - 1)
    inner = gm[1 : n - 1]
    for key, lo in (("a", 0), ("b", 1), ("c", 2)):
        coef = w[key].astype(g.dtype).reshape((-1, *tail))
        target = d[lo : lo + n - 2]
        _add(target, coef * inner, out=target)
    for key, row in (("first", 0), ("last", n - 1)):
        start, coefs = w[key]
        for k, c in enumerate(coefs):
            target = d[start + k : start + k + 1]
            _add(target, gm[row : row + 1] * g.dtype.type(c), out=target)
    return np.moveaxis(d, 0, ax)


def gradient(f: Any, *varargs: Any, axis: Axis = None, edge_order: int = 1) -> Any:
    """The gradient of sampled values ``f`` by finite differences, as ``numpy.gradient``:
    second-order central differences inside, one-sided differences of order
    ``edge_order`` (1 or 2) at the edges.

    Args:
        f: The samples, an array of at least 1 dimension.
        *varargs: The spacing: nothing (1 along every axis), one scalar for every axis,
            or one per differentiated axis, each a scalar or the coordinates of the
            samples along that axis. Constants: the spacing is not differentiable.
        axis: The axes to differentiate along (None: all), an int or a tuple.
        edge_order: 1 or 2; every differentiated axis needs ``edge_order + 1`` samples.

    Returns:
        One Variable for one axis, else a tuple of Variables, one per axis (numpy 2).

    Raises:
        LampyTypeError: if a spacing is a Variable that needs a gradient.
        ShapeError: if numpy refuses the shapes (too few samples, coordinates of the
            wrong length, ``axis`` out of range).

    Gradient:
        Per axis, the transpose of the difference stencil: each output element's
        weights ``(a_i, b_i, c_i)`` on ``f[i - 1], f[i], f[i + 1]`` (and the edge
        weights) scatter ``g`` back onto those samples.
    """
    x = np.asarray(value_of(f, name="gradient"))
    axes = normalize_axis("gradient", axis, x.ndim)
    if isinstance(axis, (int, np.integer)):
        axes = (int(axis) % x.ndim,)
    elif axis is not None:
        axes = tuple(int(ax) % x.ndim for ax in axis)
    spacings = _spacings("gradient", varargs, axes)
    try:
        out = np.gradient(  # type: ignore[call-overload]
            x, *[value_of(v, name="gradient") for v in varargs], axis=axis, edge_order=edge_order
        )
    except TypeError as e:
        raise LampyTypeError(
            f"gradient: {e} (f of shape {x.shape}, {len(varargs)} spacings given)."
        ) from None
    except (ValueError, IndexError) as e:
        raise ShapeError(f"gradient: {e} (f of shape {x.shape}, axis={axis!r}).") from None
    values = [out] if isinstance(out, np.ndarray) else list(out)
    results = []
    for ax, h, value in zip(axes, spacings, values, strict=True):
        real_result("gradient", value, f)
        w = _coefficients(np.asarray(h), x.shape[ax], edge_order)

        def back(g: np.ndarray, ax: int = ax, w: dict[str, Any] = w) -> np.ndarray:
            return _gradient_adjoint(g, ax, w)

        def forward(v: np.ndarray, ax: int = ax, spacing: Any = h) -> Any:
            return np.gradient(v, spacing, axis=ax, edge_order=edge_order)  # type: ignore[call-overload]

        def vjp(g: Any, out: Any, back: Any = back, forward: Any = forward) -> Any:
            return _linear_map("gradient_adjoint", g, back, forward)

        results.append(op("gradient", value, param_of(f, contribution(back), vjp=vjp)))
    return results[0] if len(results) == 1 else tuple(results)


__all__ = ["diff", "gradient"]
