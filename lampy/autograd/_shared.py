"""Values shared by the closures of one op, safe when the closures run in several threads.

With ``workers`` > 1 the engine may run two closures of one op at the same time, so a
value they share is computed under a lock: the first closure to ask computes it, the
others wait for it instead of computing it again.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from typing import Any

import numpy as np

__all__ = ["Lazy", "SharedInBackward"]


def ref_of(g: Any) -> Callable[[], Any]:
    """A reference to the gradient ``g`` that recognises it later (``ref() is g``): weak
    for an array; a numpy scalar (the gradient of a 0-d value, which cannot be weakly
    referenced) is held, a few bytes."""
    if isinstance(g, np.generic):
        return lambda: g
    return weakref.ref(g)


class SharedInBackward:
    """A function of ``g`` that several closures of one op need: computed by the first
    closure that asks, handed to the others, and dropped after ``users`` asks.

    Only a weak reference to ``g`` is kept (a numpy scalar ``g``, the gradient of a 0-d
    value, is held), to recognise it: a later pass (a new ``g``) recomputes. If a pass
    serves fewer closures (gradients for some leaves only), the value is held until the
    next pass or until the op is released with its scope.

    Args:
        fn: ``fn(g)``, the shared value.
        users: How many closures ask for it in one pass.

    Examples:
        >>> import numpy as np, lampy
        >>> from lampy.autograd import SharedInBackward
        >>> def scaled_sum(x, y):  # both closures need g * 2, computed once per pass
        ...     twice = SharedInBackward(lambda g: g * 2.0, users=2)
        ...     d = lambda g, out: np.add(out, twice(g), out=out)
        ...     return lampy.op("scaled_sum", 2.0 * (x.value + y.value),
        ...                     x.zip_backward(d), y.zip_backward(d))
        >>> with lampy.Scope():
        ...     x, y = lampy.param(1.0), lampy.param(2.0)
        ...     scaled_sum(x, y).backward()
        ...     print(x.grad, y.grad)
        2.0 2.0
    """

    __slots__ = ("_fn", "_key", "_left", "_lock", "_users", "_value")

    def __init__(self, fn: Callable[[np.ndarray], Any], users: int) -> None:
        self._fn = fn
        self._users = users
        self._left = 0
        self._key: Any = None
        self._value: Any = None
        self._lock = threading.Lock()

    def captures(self) -> tuple[Any, ...]:
        """What this object keeps for the backward pass (its function, and what that
        captured), for memory accounting (``lampy.op`` counts the arrays)."""
        return (self._fn,)

    def __call__(self, g: np.ndarray) -> Any:
        with self._lock:
            if self._left == 0 or self._key() is not g:
                self._value = self._fn(g)
                self._key = ref_of(g)
                self._left = self._users
            value = self._value
            self._left -= 1
            if self._left == 0:
                self._value = self._key = None
            return value


class Lazy:
    """A value computed on first use and then kept (shared by the closures of one op).

    Args:
        fn: ``fn()``, computed once, by the first closure that asks.
    """

    __slots__ = ("_fn", "_lock", "_value")

    def __init__(self, fn: Callable[[], Any]) -> None:
        self._fn: Callable[[], Any] | None = fn
        self._value: Any = None
        self._lock = threading.Lock()

    def captures(self) -> tuple[Any, ...]:
        """What this object keeps for the backward pass (its function, or the value it
        computed), for memory accounting (``lampy.op`` counts the arrays)."""
        return (self._fn, self._value)

    def __call__(self) -> Any:
        with self._lock:
            fn = self._fn
            if fn is not None:
                self._value = fn()
                self._fn = None
            return self._value
