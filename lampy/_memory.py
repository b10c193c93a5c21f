"""The one place where lampy allocates gradient buffers and takes ownership of values.

Every gradient buffer is allocated by ``grad_buffer``, and every forward value
enters the graph through ``own_value`` (called by ``lampy.op``, ``lampy.param`` and
``lampy.const``). An allocation policy (per-scope accounting, buffer reuse, memory
budgets) changes here without touching any op.
"""

from __future__ import annotations

from typing import Any

import numpy as np

_zeros = np.zeros
_ndarray = np.ndarray
_asarray = np.asarray


def grad_buffer(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A zero-filled gradient buffer of ``shape`` and ``dtype``."""
    return _zeros(shape, dtype)


def own_value(value: Any) -> Any:
    """Take ``value`` as the value of a Variable: an ndarray, made read-only.

    A view of memory that is still writable through another array (for example a
    reshape of the caller's own array) is copied, so nothing outside the graph can
    change the value.
    """
    if type(value) is not _ndarray:
        value = _asarray(value)
        if type(value) is not _ndarray:  # an ndarray subclass: take a plain view
            value = value.view(_ndarray)
    base = value.base
    if base is not None and getattr(getattr(base, "flags", None), "writeable", True):
        value = value.copy()
    value.flags.writeable = False
    return value
