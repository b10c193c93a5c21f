"""Helpers shared by the functional ops.

- ``SharedInBackward`` (from ``lampy.autograd``): a value shared by the backward closures
  of one op, computed once per backward pass (the convolutions' reshaped ``g``,
  attention's score gradient, the fused recurrent layers' backpropagation through time).
- ``frozen``: an op's fresh result made read-only, so that ``lampy.op`` takes it (or a
  view of it) without a copy.
- ``sum_along`` and ``dot_along``: sums and dot products along one axis, keeping it, in
  one pass over memory and without temporaries (the fused softmax, log-softmax,
  cross-entropy and normalisation kernels).
- ``require_rng``: the check that a random generator was given, for the ops and modules
  that draw random numbers (lampy has no global random state).
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.autograd._shared import SharedInBackward

__all__ = ["SharedInBackward", "dot_along", "frozen", "require_rng", "sum_along"]

_vecdot = getattr(np, "vecdot", None)  # numpy >= 2.0


def frozen(value: np.ndarray, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` (reshaped to ``shape`` if given), made read-only first so that
    ``lampy.op`` takes it without a copy (it copies views of writable memory).

    ``value`` may be a view (an index, a reshape) of an array whose memory nothing else
    will write: that array, which owns the memory, is made read-only too. Only pass
    arrays the calling op made itself, never views of its inputs.
    """
    base = value.base
    if type(base) is np.ndarray:
        base.setflags(write=False)
    value.setflags(write=False)
    return value if shape is None or value.shape == shape else value.reshape(shape)


def sum_along(a: np.ndarray, axis: int) -> np.ndarray:
    """``a.sum(axis, keepdims=True)``; along a contiguous last axis as one matrix-vector
    product with a vector of ones (BLAS, in ``a``'s dtype: two to three times faster
    than numpy's pairwise ``sum`` there)."""
    if axis == a.ndim - 1 and a.size and a.flags.c_contiguous:
        d = a.shape[-1]
        s: np.ndarray = a.reshape(-1, d) @ np.ones(d, a.dtype)
        return s.reshape(*a.shape[:-1], 1)
    summed: np.ndarray = a.sum(axis=axis, keepdims=True)
    return summed


def dot_along(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    """``(a * b).sum(axis, keepdims=True)`` for real ``a`` and ``b`` of one shape; along
    the last axis in one pass without the product array (``numpy.vecdot``, numpy >= 2;
    it is slow along other axes, which take the product and ``sum``)."""
    if _vecdot is not None and axis == a.ndim - 1:
        d: np.ndarray = _vecdot(a, b)
        return d[..., None]
    product = np.multiply(a, b)
    summed: np.ndarray = product.sum(axis=axis, keepdims=True)
    return summed


def require_rng(
    owner: str,
    rng: Any,
    why: str = "its parameters are initialised randomly",
    instead: str = "",
) -> np.random.Generator:
    """``rng`` itself if it is a ``numpy.random.Generator``, else a clear error.

    Args:
        owner: The op or factory, named first in the message (``"Linear.init"``).
        rng: What the caller passed.
        why: Why a generator is needed, completing "rng is required because ...".
        instead: An alternative to passing one, completing "..., or ..." (optional).

    Raises:
        LampyValueError: if ``rng`` is None.
        LampyTypeError: if ``rng`` is not a Generator.
    """
    if rng is None:
        alternative = f", or {instead}" if instead else ""
        raise LampyValueError(
            f"{owner}: rng is required because {why}; pass rng=np.random.default_rng(seed) "
            f"(lampy has no global random state){alternative}."
        )
    if not isinstance(rng, np.random.Generator):
        raise LampyTypeError(
            f"{owner}: rng must be a numpy.random.Generator (np.random.default_rng(seed)), "
            f"got {type(rng).__name__}."
        )
    return rng
