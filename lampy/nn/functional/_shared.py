"""Helpers shared by the functional ops.

- ``SharedInBackward``: a value shared by the backward closures of one op, computed once
  per backward pass (the convolutions' reshaped ``g``, attention's score gradient, the
  fused recurrent layers' backpropagation through time).
- ``frozen``: an op's fresh result made read-only, so that ``lampy.op`` takes it (or a
  view of it) without a copy.
- ``require_rng``: the check that a random generator was given, for the ops and modules
  that draw random numbers (lampy has no global random state).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError

__all__ = ["SharedInBackward", "frozen", "require_rng"]


class SharedInBackward:
    """A value that several closures of one op compute from the same ``g``: computed by
    the first closure that asks, handed to the others, and dropped after ``users`` asks.

    Only a weak reference to ``g`` is kept, to recognise it: a later pass (a new ``g``)
    recomputes. If a pass serves fewer closures (gradients for some leaves only), the
    value is held until the next pass or until the op is released with its scope.
    """

    __slots__ = ("_fn", "_key", "_left", "_users", "_value")

    def __init__(self, fn: Any, users: int) -> None:
        self._fn = fn
        self._users = users
        self._left = 0
        self._key: Any = None
        self._value: Any = None

    def __call__(self, g: np.ndarray) -> Any:
        if self._left == 0 or self._key() is not g:
            self._value = self._fn(g)
            self._key = weakref.ref(g)
            self._left = self._users
        value = self._value
        self._left -= 1
        if self._left == 0:
            self._value = self._key = None
        return value


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
