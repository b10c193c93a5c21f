"""One-dimensional piecewise-linear interpolation: ``interp``, as ``numpy.interp``.

The value is numpy's. Inside ``[xp[0], xp[-1]]`` the value at ``x`` is
``fp[j] + t * (fp[j + 1] - fp[j])`` with ``t = (x - xp[j]) / (xp[j + 1] - xp[j])`` on the
segment ``j`` holding ``x``; outside it is ``left`` / ``right`` (``fp[0]`` / ``fp[-1]``
by default). Every argument may be a Variable; the gradient conventions follow JAX's
``jnp.interp`` (which computes the same formula by differentiable ops).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    graph_value,
    node_of,
    op,
    param_of,
    real_result,
    value_of,
)
from lampy.ops._indexing import scattered_flat
from lampy.ops._where import where


def _check(x: Any, xp: Any, fp: Any, left: Any, right: Any) -> None:
    if np.ndim(xp) != 1 or np.ndim(fp) != 1:
        raise ShapeError(
            f"interp: xp and fp must be 1-d (the sample points and their values), got "
            f"shapes {np.shape(xp)} and {np.shape(fp)}; interpolate each row separately."
        )
    if np.shape(xp) != np.shape(fp):
        raise ShapeError(
            f"interp: xp and fp must have one length, got {np.shape(xp)[0]} and {np.shape(fp)[0]}."
        )
    if np.shape(xp)[0] == 0:
        raise ShapeError("interp: xp and fp are empty; give at least one sample point.")
    for name, v in (("left", left), ("right", right)):
        if v is not None and np.ndim(v) != 0:
            raise ShapeError(f"interp: {name} must be a number, got shape {np.shape(v)}.")


def _segments(xs: Any, xpe: Any, fpe: Any) -> tuple[Any, ...]:
    """For each ``x``: its segment ``j`` of the sample points ``xpe`` (values ``fpe``),
    the position ``t`` in it, its slope, and the masks ``inside``, ``below``, ``above``.

    At a knot the segment to its right is taken (the last one at ``xpe[-1]``); a
    degenerate last segment (a repeated last point) has slope 0 and ``t = 1``.
    """
    n = xpe.shape[0]
    below, above = xs < xpe[0], xs > xpe[-1]
    inside = (xs >= xpe[0]) & (xs <= xpe[-1])  # a nan x is in neither: no gradient
    if n == 1:
        zeros = np.zeros(np.shape(xs))
        return np.zeros(np.shape(xs), np.intp), zeros, zeros, inside, below, above
    j = np.clip(np.searchsorted(xpe, xs, side="right") - 1, 0, n - 2)
    width = xpe[j + 1] - xpe[j]
    flat = width == 0
    safe = np.where(flat, 1, width)
    t = np.where(flat, 1, (xs - xpe[j]) / safe)
    slope = np.where(flat, 0, (fpe[j + 1] - fpe[j]) / safe)
    return j, t, slope, inside, below, above


def _ignored(g: Any, out: Any) -> None:
    """The closure of an argument the value does not depend on: adds nothing."""


def interp(
    x: Operand,
    xp: Operand,
    fp: Operand,
    left: Operand | None = None,
    right: Operand | None = None,
    period: float | None = None,
) -> Variable:
    """Piecewise-linear interpolation of the points ``(xp, fp)`` at ``x``, as
    ``numpy.interp``.

    Args:
        x: Where to interpolate (any shape).
        xp: The sample points, 1-d and increasing (as numpy, not checked: with points
            out of order the result is meaningless); with ``period``, in any order.
        fp: The values at ``xp`` (1-d, real, ``xp``'s length).
        left: The value for ``x < xp[0]`` (default ``fp[0]``); a number or 0-d Variable.
        right: The value for ``x > xp[-1]`` (default ``fp[-1]``).
        period: A period of the x-coordinates, for angles: ``x`` and ``xp`` are taken
            modulo ``|period|`` and ``left``/``right`` ignored, as numpy.

    Returns:
        float64 values of ``x``'s shape (numpy's dtype, also for float32 inputs).

    Raises:
        ShapeError: ``xp`` or ``fp`` not 1-d, of different lengths or empty; ``left`` or
            ``right`` not a number.
        LampyValueError: ``period`` is 0.

    Gradient:
        With ``t`` and ``slope`` of the segment ``[xp[j], xp[j + 1]]`` holding ``x``:
        ``dx = g * slope`` inside ``[xp[0], xp[-1]]``, 0 outside (where the value is
        clamped); at a knot the slope of the segment to its right, at ``xp[-1]`` the
        last segment's (JAX's ``jnp.interp``). ``dfp[j] += g * (1 - t)``,
        ``dfp[j + 1] += g * t``, and ``fp[0]`` (``fp[-1]``) gets ``g`` for ``x`` below
        (above) the range when it gives the value there. ``dxp[j] += -g * slope *
        (1 - t)``, ``dxp[j + 1] += -g * slope * t``. ``left`` (``right``) gets the sum
        of ``g`` over ``x`` below (above) the range. A nan ``x`` gets 0 and sends
        nothing. With ``period`` the gradients pass through the modulo (derivative 1)
        and numpy's sorting and wrap-around padding of the sample points.
    """
    xv, xpv, fpv = (
        value_of(x, name="interp"),
        value_of(xp, name="interp"),
        value_of(fp, name="interp"),
    )
    lv = None if left is None else value_of(left, name="interp")
    rv = None if right is None else value_of(right, name="interp")
    _check(xv, xpv, fpv, lv, rv)
    if period is not None and period == 0:
        raise LampyValueError("interp: period must be a non-zero number (or None).")
    value = np.interp(xv, xpv, fpv, lv, rv, period)
    real_result("interp", np.asarray(value), x, xp, fp, left, right)
    n = np.shape(xpv)[0]
    if period is None:
        xs = np.asarray(xv, dtype=np.float64)
        xpe = np.asarray(xpv, dtype=np.float64)
        source = np.arange(n)  # which given point each sample point is
    else:
        p = abs(float(period))
        xs = np.asarray(xv, dtype=np.float64) % p
        order = np.argsort(np.asarray(xpv, dtype=np.float64) % p)
        source = np.concatenate((order[-1:], order, order[:1]))
        xpe = np.asarray(xpv, dtype=np.float64)[source] % p
        xpe[0] -= p
        xpe[-1] += p
        lv = rv = None  # numpy ignores them with a period
    fpe = np.asarray(fpv, dtype=np.float64)[source]
    single = source.size == 1  # one sample point: the value is fp[0], left or right
    seg: list[Any] = []

    def segments() -> tuple[Any, ...]:
        """The segments, computed once by the first closure that needs them."""
        if not seg:
            seg.extend(_segments(xs, xpe, fpe))
        return tuple(seg)

    def scatter(w: Any) -> Any:
        """Per-sample-point sums of the weights ``w`` (given per ``x`` and segment end)."""
        j, _, _, inside, _, _ = segments()
        ji = j[inside]
        lo = np.bincount(ji, weights=w[0][inside], minlength=source.size)
        hi = np.bincount(ji + 1, weights=w[1][inside], minlength=source.size)
        return np.bincount(source, weights=lo + hi, minlength=n)

    def d_x(g: Any) -> Any:
        _, _, slope, inside, _, _ = segments()
        return np.where(inside, g * slope, 0)

    def d_fp(g: Any) -> Any:
        _, t, _, inside, below, above = segments()
        g = np.asarray(g, dtype=np.float64)
        within = np.array([np.sum(g, where=inside)])
        d = within if single else scatter((g * (1 - t), g * t))
        if lv is None:
            d[0] += np.sum(g, where=below)
        if rv is None:
            d[-1] += np.sum(g, where=above)
        return d

    def d_xp(g: Any) -> Any:
        if single:
            return np.zeros(1)
        _, t, slope, _, _, _ = segments()
        gs = np.asarray(g, dtype=np.float64) * slope
        return -scatter((gs * (1 - t), gs * t))

    def d_left(g: Any) -> Any:
        return np.sum(g, where=segments()[4])

    def d_right(g: Any) -> Any:
        return np.sum(g, where=segments()[5])

    nodes = (node_of(x), node_of(xp), node_of(fp))

    def graph_segments() -> tuple[Any, Any]:
        """``t`` and ``slope`` with lampy ops of ``x``, ``xp`` and ``fp`` (the segment,
        the masks and the period's shifts are constants), for the vjps."""
        j, _, _, inside, _, _ = segments()
        xg, xpg, fpg = (graph_value(nd, v) for nd, v in zip(nodes, (xv, xpv, fpv), strict=True))
        shift = np.where(inside, xs - np.asarray(xv, dtype=np.float64), 0)  # nan x: masked
        xs_g = where(inside, xg + shift, 0.0)
        xpe_g = xpg[source] + (xpe - np.asarray(xpv, dtype=np.float64)[source])
        fpe_g = fpg[source]
        width = xpe[j + 1] - xpe[j]
        flat = width == 0
        safe = where(flat, 1.0, xpe_g[j + 1] - xpe_g[j])
        t = where(flat, 1.0, (xs_g - xpe_g[j]) / safe)
        slope = where(flat, 0.0, (fpe_g[j + 1] - fpe_g[j]) / safe)
        return t, slope

    def scatter_vjp(w0: Any, w1: Any) -> Any:
        """``scatter`` with lampy ops."""
        j, _, _, inside, _, _ = segments()
        size = (source.size,)
        lo = scattered_flat(where(inside, w0, 0.0), size, np.float64, j)
        hi = scattered_flat(where(inside, w1, 0.0), size, np.float64, j + 1)
        return scattered_flat(lo + hi, (n,), np.float64, source)

    def vjp_x(g: Any, out: Any) -> Any:
        if single:
            return np.zeros(np.shape(xv))
        inside = segments()[3]
        return where(inside, g * graph_segments()[1], 0.0)

    def vjp_fp(g: Any, out: Any) -> Any:
        _, _, _, inside, below, above = segments()
        if single:
            d: Any = where(inside, g, 0.0).sum().reshape(1)
        else:
            t = graph_segments()[0]
            d = scatter_vjp(g * (1 - t), g * t)
        ends = np.zeros((2, n))
        ends[0, 0] = ends[1, -1] = 1
        if lv is None:
            d = d + where(below, g, 0.0).sum() * ends[0]
        if rv is None:
            d = d + where(above, g, 0.0).sum() * ends[1]
        return d

    def vjp_xp(g: Any, out: Any) -> Any:
        if single:
            return np.zeros(1)
        t, slope = graph_segments()
        gs = g * slope
        return -scatter_vjp(gs * (1 - t), gs * t)

    def vjp_left(g: Any, out: Any) -> Any:
        return where(segments()[4], g, 0.0).sum()

    def vjp_right(g: Any, out: Any) -> Any:
        return where(segments()[5], g, 0.0).sum()

    def vjp_ignored(g: Any, out: Any) -> Any:
        return np.zeros(())

    return op(
        "interp",
        value,
        contrib_of(x, d_x, vjp=vjp_x),
        contrib_of(xp, d_xp, vjp=vjp_xp),
        contrib_of(fp, d_fp, vjp=vjp_fp),
        contrib_of(left, d_left, vjp=vjp_left)
        if period is None
        else param_of(left, _ignored, vjp=vjp_ignored),
        contrib_of(right, d_right, vjp=vjp_right)
        if period is None
        else param_of(right, _ignored, vjp=vjp_ignored),
    )


__all__ = ["interp"]
