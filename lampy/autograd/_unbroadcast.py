"""Undo numpy broadcasting in a gradient: the one helper every closure uses."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeAlias

import numpy as np

from lampy._namespaces import is_foreign as _is_foreign
from lampy._namespaces import own_contribution as _own_foreign
from lampy.autograd._complex import real_part

_add = np.add
_ndarray = np.ndarray

Grad: TypeAlias = "np.ndarray | np.generic"
"""A gradient buffer of the engine: an ndarray, or for a 0-d Variable possibly a numpy
scalar of its dtype (immutable: arithmetic on it is ten times cheaper than on a 0-d
array, and it is safe to share)."""


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
    if lead < 0 or any(a == 1 != b for a, b in zip(gshape[lead:], shape, strict=True)):
        # g has length 1 where the input has another (a gradient that is constant
        # there, or an input empty along an axis the contribution broadcast):
        # spread it over the common broadcast shape first.
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
    try:
        _add(out, g, out=out)
    except TypeError:  # a complex contribution to a real input: its real part
        if np.result_type(g).kind != "c" or out.dtype.kind == "c":
            raise
        _add(out, np.real(g), out=out)


def scalar_of(d: Any, dtype: np.dtype[Any]) -> np.generic:
    """A 0-d input's gradient ``d`` (a numpy scalar, a Python number, or an array summed
    down to 0-d) as a numpy scalar of ``dtype``, cast as ``astype`` casts."""
    if type(d) is _ndarray:
        if d.shape:
            d = unbroadcast(d, ())
        d = d[()]
    elif not isinstance(d, np.generic):  # a Python number
        number: np.generic = real_part(d, dtype) if type(d) is complex else dtype.type(d)
        return number
    scalar: np.generic = d if d.dtype == dtype else real_part(d, dtype)
    return scalar


def add_to_scalar(buf: Grad, d: Any) -> Grad:
    """A 0-d scalar buffer ``buf`` plus the contribution ``d``: the numpy scalar that
    ``np.add(out, unbroadcast(d, ()), out=out)`` leaves in a 0-d array ``out`` holding
    ``buf`` (the same loop, then cast to ``buf``'s dtype), bit for bit.

    The engine adds into a buffer that is an array of another namespace here too
    (``buf + d``, a new array: it never writes into such an array)."""
    if type(d) is _ndarray and d.shape:
        d = unbroadcast(d, ())
    s = buf + d
    if type(s) is not type(buf):
        s = np.asarray(real_part(s, buf.dtype))[()]
    total: Grad = s
    return total


class Contribution:
    """A zip-backward closure given as the gradient it contributes: ``fn(g) -> array``.

    Calling it as ``closure(g, out)`` adds ``unbroadcast(fn(g), out.shape)`` into
    ``out``, like any closure. Knowing the contribution itself also lets the engine
    skip the zero-filled buffer for an input's first contribution: the contribution
    becomes the buffer (cast to the input's dtype, and copied unless the op declared it
    ``fresh``), which saves two passes over memory per input for cheap elementwise ops.

    ``x.zip_backward(contribution)`` gives the engine's form of such a param, the triple
    ``(x.node, fn, fresh)`` (the op library builds it directly); ``Variable.op`` shows it
    as the pair ``(x.node, Contribution(fn, fresh))``.

    For an op whose value is 0-d, ``g`` may be a numpy scalar of the value's dtype
    (``numpy.float64``...) rather than a 0-d array: numpy scalars have the read-only
    array API (``shape``, ``dtype``, ``reshape``, ``astype``, ``g[()]``, arithmetic,
    ufuncs), and arithmetic on them is much cheaper. They cannot be written to (neither
    may ``g``) nor weakly referenced; ``np.asarray(g)`` makes a 0-d array of one.

    Attributes:
        fn: ``fn(g)`` returns the input's gradient given the output's gradient ``g``,
            with the input's shape or broadcastable down to it (as numpy broadcasting
            made the output from the input).
        fresh: The op's declaration that ``fn`` always returns a new array that nothing
            else references, which the engine may keep and later add into. With False
            the engine keeps the result only when it is ``g`` itself or a view of all of
            ``g`` and nothing else needs ``g`` any more; anything else is copied.
    """

    __slots__ = ("__weakref__", "fn", "fresh")

    def __init__(self, fn: Callable[[Any], Any], fresh: bool = True) -> None:
        self.fn = fn
        self.fresh = fresh

    def __call__(self, g: np.ndarray, out: np.ndarray) -> None:
        accumulate(out, self.fn(g))


def own_contribution(
    d: Any, fresh: bool, g: Grad, shape: tuple[int, ...], dtype: np.dtype[Any], g_is_free: bool
) -> Grad:
    """Make a first contribution ``d = fn(g)`` (of a closure declared ``fresh`` or not)
    an input's gradient buffer that the engine owns.

    For a 0-d input that is a numpy scalar of its dtype (immutable, so kept as it is),
    unless ``d`` is an array the op declared fresh, with the input's dtype.
    ``g_is_free`` says that nothing else will read or write ``g`` after this call, so a
    contribution that is ``g`` itself or a view of all of it may be kept.
    """
    if type(d) is not _ndarray:  # a numpy scalar from 0-d arithmetic, or a number
        if _is_foreign(d):  # an array of another namespace: checked, kept or copied
            foreign: Grad = _own_foreign(d, shape, dtype, fresh)
            return foreign
        if not shape:
            return d if type(d) is dtype.type else scalar_of(d, dtype)
        d = np.asarray(d)  # spread over the input's shape below
    if d.shape != shape:
        if not shape:
            return scalar_of(d, dtype)
        d = unbroadcast(d, shape)  # sums over some axis, so the result is new
        fresh = True
    if d.dtype != dtype:
        if not shape:
            return scalar_of(d, dtype)
        cast: np.ndarray = real_part(d, dtype)
        if cast is d or cast.base is not None:  # a view of d's memory (its real part)
            cast = cast.copy()
        return cast
    if not shape and (not fresh or not d.flags.writeable):
        return scalar_of(d, dtype)  # the value of g or of an array of the op's
    if not fresh and g_is_free and d.size == g.size:
        # g itself, or a view of all of g's memory (a reshape or a transpose), may be
        # kept; a view of part of it is copied so it does not hold the rest.
        base = d.base
        fresh = d is g or base is g or (base is not None and base is g.base)
    if not fresh or not d.flags.writeable:
        copied: np.ndarray = d.copy()
        return copied
    kept: np.ndarray = d
    return kept


def contribution(fn: Callable[[Any], Any], *, fresh: bool = True) -> Contribution:
    """Make a zip-backward closure from the gradient it contributes.

    ``x.zip_backward(lampy.contribution(lambda g: g * cos(a)))`` is equivalent to
    ``x.zip_backward(lambda g, out: np.add(out, g * cos(a), out=out))`` but lets the
    engine use the result directly as the input's first gradient buffer.

    Args:
        fn: ``fn(g)``: the input's gradient, of the input's shape or broadcastable down
            to it (it is summed over broadcast axes). When the op's value is 0-d, ``g``
            may be a numpy scalar of its dtype (``numpy.float64``...) instead of a 0-d
            array: write ``fn`` with numpy functions and arithmetic, which take both
            (``np.asarray(g)`` gives a 0-d array if one is needed).
        fresh: Declare True only if ``fn`` always returns a new array that nothing else
            references (the engine keeps it and adds into it later). Set False if ``fn``
            may return ``g`` itself, a view of ``g``, or any array used elsewhere (a
            saved forward value, a broadcast view); the engine then copies it when it
            must.
    """
    return Contribution(fn, fresh)
