"""p-norms of ``lampy.nn.functional``: ``normalize`` (PyTorch's) and the p-norm helpers
it shares with the distance losses (``vector_norm`` and its gradient)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from lampy._errors import ShapeError
from lampy.nn.functional._shared import float_value
from lampy.opkit import Operand, Variable, contrib_of, normalize_axis, op

__all__ = ["normalize", "vector_norm", "vector_norm_grad"]


def vector_norm(a: np.ndarray, p: float, axis: int | tuple[int, ...]) -> Any:
    """The p-norm of ``a`` along ``axis`` (one axis or a tuple of them), kept as
    length-1 axes (``torch.norm``): p = 0 counts the non-zeros, ±inf is the max/min of
    ``|a|``, else ``sum(|a|**p)**(1/p)``."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if p == 2:
            return np.sqrt((a * a).sum(axis=axis, keepdims=True))
        if p == 1:
            return np.abs(a).sum(axis=axis, keepdims=True)
        if p == 0:
            return (a != 0).sum(axis=axis, keepdims=True).astype(a.dtype)
        if math.isinf(p):
            axes = (axis,) if isinstance(axis, int) else axis
            if any(a.shape[ax] == 0 for ax in axes):
                kept = tuple(1 if ax in axes else n for ax, n in enumerate(a.shape))
                return np.zeros(kept, a.dtype)
            reduce = np.max if p > 0 else np.min
            return np.asarray(reduce(np.abs(a), axis=axis, keepdims=True))
        s = (np.abs(a) ** p).sum(axis=axis, keepdims=True)
        return np.asarray(s ** (1.0 / p), dtype=a.dtype)


def vector_norm_grad(
    a: np.ndarray, norm: np.ndarray, p: float, axis: int | tuple[int, ...], c: Any
) -> Any:
    """``c * d norm / d a`` for ``norm = vector_norm(a, p, axis)`` (``c`` broadcasts
    against ``norm``), with PyTorch's conventions: 0 where the norm is 0, and for ±inf
    the gradient split evenly among the entries attaining it; p = 0 gives zeros."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if p == 0:
            return np.zeros(np.broadcast_shapes(a.shape, np.shape(c)), a.dtype)
        if p == 1:
            return np.sign(a) * c
        if math.isinf(p):
            hit = np.abs(a) == norm
            share = c / hit.sum(axis=axis, keepdims=True).astype(a.dtype)
            return np.sign(a) * hit * share
        if p == 2:
            scale = np.where(norm == 0, 0, c / norm)
            return a * scale.astype(a.dtype, copy=False)
        if p < 1:
            scaled = np.where(a == 0, 0, np.sign(a) * np.abs(a) ** (p - 1))
        elif p < 2:
            scaled = np.sign(a) * np.abs(a) ** (p - 1)
        else:
            scaled = a * np.abs(a) ** (p - 2)
        scale = np.where(norm == 0, 0, c / norm ** (p - 1))
        return (scaled * scale).astype(a.dtype, copy=False)


def normalize(
    input: Operand, p: float = 2.0, dim: int | Sequence[int] | None = 1, eps: float = 1e-12
) -> Variable:
    """``input / max(||input||_p, eps)`` along ``dim``, as
    ``torch.nn.functional.normalize``.

    Args:
        input: The array to normalise (at least 1-d).
        p: The order of the norm: a float, ``math.inf`` or ``-math.inf``.
        dim: The axis, or a tuple of axes whose elements are normalised together (the
            p-norm of all of them); None or ``()`` normalises over every axis, as
            PyTorch.
        eps: The smallest divisor.

    Raises:
        ShapeError: a 0-d input, or an axis out of range or repeated.
        LampyTypeError: ``dim`` is not an int, a sequence of ints or None.

    Gradient:
        With ``n`` the p-norm and ``d = max(n, eps)``: ``dx = g / d - x * sum(g x) / d**2
        * dn/dx`` where ``n >= eps``, and ``dx = g / eps`` where the norm was clamped
        (PyTorch's ``clamp_min`` passes no gradient below the bound). ``dn/dx`` is 0 where
        ``n = 0``.
    """
    name = "normalize"
    a = np.asarray(float_value(input, name, reserve=False))
    if a.ndim == 0:
        raise ShapeError(f"{name}: the input must have at least one dimension, got a 0-d array.")
    empty = isinstance(dim, (tuple, list)) and len(dim) == 0
    axes = normalize_axis(name, None if empty else dim, a.ndim)
    axis = axes[0] if len(axes) == 1 else axes
    norm = vector_norm(a, p, axis)
    clamped = norm < eps
    denom = np.maximum(norm, a.dtype.type(eps))
    value = a / denom

    def d_input(g: np.ndarray) -> Any:
        dx = g / denom
        gy = np.sum(g * value, axis=axis, keepdims=True)
        c = np.where(clamped, 0, -gy / denom).astype(a.dtype, copy=False)
        dx += vector_norm_grad(a, norm, p, axis, c)
        return dx

    return op(name, value, contrib_of(input, d_input))
