"""Scratch memory: large temporaries an op's code holds while it runs, counted."""

from __future__ import annotations

from types import TracebackType

from lampy.autograd import _ledger
from lampy.autograd._scope import current_or_none


class scratch:
    """Count ``nbytes`` of temporaries in the current scope's memory while the block runs.

    A backward closure that allocates a large temporary (a convolution's im2col matrix
    of ``g``, a recurrent layer's per-step gradients) holds memory that no Variable
    and no gradient buffer shows; declaring it makes ``lampy.Scope.memory`` (its
    ``peak_bytes``) and budgets see it. Entering checks the scope's budgets
    (``lampy.MemoryBudgetError`` if it does not fit); the count is returned on exit.

    Args:
        nbytes: The bytes of the temporaries the block holds (already allocated, or
            about to be).

    Examples:
        >>> import numpy as np, lampy
        >>> with lampy.Scope() as s:
        ...     tmp = np.empty(1000)
        ...     with lampy.autograd.scratch(tmp.nbytes):
        ...         print(s.memory.live_bytes)
        ...     print(s.memory.live_bytes, s.memory.peak_bytes)
        8000
        0 8000
    """

    __slots__ = ("ledger", "nbytes")

    def __init__(self, nbytes: int) -> None:
        scope = current_or_none()
        self.ledger = None if scope is None or not scope.is_open else scope.ledger
        self.nbytes = int(nbytes)

    def __enter__(self) -> None:
        ledger = self.ledger
        if ledger is not None and self.nbytes:
            if ledger.limits:
                _ledger.check_room(ledger, "scratch", (self.nbytes,), "u1")
            _ledger.stage(ledger, self.nbytes)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.ledger is not None and self.nbytes:
            _ledger.unstage(self.ledger, self.nbytes)


__all__ = ["scratch"]
