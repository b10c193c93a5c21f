"""A value shared by the backward closures of one op, computed once per backward pass.

Used by ops whose gradients for several inputs come from one common intermediate (the
convolutions' reshaped ``g``, attention's score gradient, the fused recurrent layers'
backpropagation through time).
"""

from __future__ import annotations

import weakref
from typing import Any

import numpy as np

__all__ = ["SharedInBackward"]


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
