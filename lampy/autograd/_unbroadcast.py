"""Undo numpy broadcasting in a gradient: the one helper every closure uses."""

from __future__ import annotations

import numpy as np

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
