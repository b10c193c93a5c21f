"""Undo numpy broadcasting in a gradient: the one helper every closure uses."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import numpy as np

_getrefcount = sys.getrefcount

_add = np.add


def unbroadcast(g: np.ndarray, shape: tuple[int, ...]) -> np.ndarray:
    """Sum ``g`` down to ``shape``, undoing numpy broadcasting of an input of that shape.

    Leading axes that broadcasting added are summed away, and axes where ``shape`` has
    length 1 are summed with the length kept.

    Gradient:
        If ``y = broadcast_to(x, s)`` then ``dL/dx = unbroadcast(dL/dy, x.shape)``.
    """
    gshape = g.shape
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    if lead < 0 or any(a < b for a, b in zip(gshape[lead:], shape, strict=True)):
        # g is smaller than the input along some axis (a gradient that is constant
        # there): spread it over the common broadcast shape first.
        g = np.broadcast_to(g, np.broadcast_shapes(gshape, shape))
        gshape = g.shape
        if gshape == shape:
            return g
        lead = len(gshape) - len(shape)
    axes = tuple(range(lead)) + tuple(
        lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1
    )
    if axes:
        g = g.sum(axis=axes, keepdims=True)
    return g.reshape(shape)


def accumulate(out: np.ndarray, g: np.ndarray) -> None:
    """``out += unbroadcast(g, out.shape)``, in place."""
    if g.shape != out.shape:
        g = unbroadcast(g, out.shape)
    _add(out, g, out=out)


class Contribution:
    """A zip-backward closure given as the gradient it contributes: ``fn(g) -> array``.

    Calling it as ``closure(g, out)`` adds ``unbroadcast(fn(g), out.shape)`` into
    ``out``, like any closure. Knowing the contribution itself also lets the engine
    skip the zero-filled buffer for an input's first contribution: the contribution
    becomes the buffer (cast to the input's dtype, copied unless ``fresh``), which saves
    two passes over memory per input for cheap elementwise ops.

    Attributes:
        fn: ``fn(g)`` returns the input's gradient given the output's gradient ``g``,
            with the input's shape or broadcastable down to it (as numpy broadcasting
            made the output from the input).
        fresh: Whether ``fn`` always returns a new array that nothing else references
            (so it may be kept as the buffer without a copy). With False, the engine
            checks: an array only ``fn``'s result references (by CPython's reference
            count), or ``g`` itself when nothing else needs it, is kept; anything else
            is copied.
    """

    __slots__ = ("__weakref__", "fn", "fresh")

    def __init__(self, fn: Callable[[np.ndarray], Any], fresh: bool = True) -> None:
        self.fn = fn
        self.fresh = fresh

    def __call__(self, g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, self.fn(g))

    def first(
        self, g: np.ndarray, shape: tuple[int, ...], dtype: np.dtype[Any], g_is_free: bool
    ) -> Any:
        """The input's gradient buffer from this first contribution alone.

        ``g_is_free`` says that nothing else will read or write ``g`` after this call,
        so a contribution that is ``g`` itself or a view of it may be kept as it is.
        """
        d = self.fn(g)
        if type(d) is not np.ndarray:  # a numpy scalar from 0-d arithmetic
            return np.array(d, dtype=dtype)
        fresh = self.fresh
        if d.shape != shape:
            d = unbroadcast(d, shape)  # sums over some axis, so the result is new
            fresh = True
        if d.dtype != dtype:
            return d.astype(dtype)
        if not fresh:
            base = d.base
            if base is None:
                # No one else references a new array: only `d` here, and getrefcount's
                # argument (CPython's reference counts; anything held elsewhere, like a
                # captured forward value or g, has more).
                fresh = _getrefcount(d) == 2
            else:  # a view of all of a new array that only this view references
                fresh = (
                    _getrefcount(d) == 2
                    and _getrefcount(base) == 3
                    and d.size == getattr(base, "size", -1)
                )
            if not fresh and g_is_free and d.size == g.size:
                # g itself, or a view of all of g's memory (a reshape or a transpose), may
                # be kept; a view of part of it is copied so it does not hold the rest.
                fresh = d is g or base is g or (base is not None and base is g.base)
        if not fresh or not d.flags.writeable:
            return d.copy()
        return d


def contribution(fn: Callable[[np.ndarray], Any], *, fresh: bool = True) -> Contribution:
    """Make a zip-backward closure from the gradient it contributes.

    ``x.zip_backward(lampy.contribution(lambda g: g * cos(a)))`` is equivalent to
    ``x.zip_backward(lambda g, out: np.add(out, g * cos(a), out=out))`` but lets the
    engine use the result directly as the input's first gradient buffer.

    Args:
        fn: ``fn(g)``: the input's gradient, of the input's shape or broadcastable down
            to it (it is summed over broadcast axes).
        fresh: Set False if ``fn`` may return ``g`` itself or a view of an array that
            is used elsewhere; the engine then copies it before keeping it.
    """
    return Contribution(fn, fresh)
