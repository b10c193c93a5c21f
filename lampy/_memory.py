"""The one place where lampy allocates gradient buffers and takes ownership of values.

Every gradient buffer is allocated by ``grad_buffer`` (zero-filled) or taken over by
``own_grad`` (a first contribution an op computed), and every forward value
enters the graph through ``own_value`` (called by ``lampy.op``, ``lampy.param`` and
``lampy.const``). An allocation policy (per-scope accounting, buffer reuse, memory
budgets) changes here without touching any op.
"""

from __future__ import annotations

import ctypes
import os
import platform
from typing import Any

import numpy as np

_zeros = np.zeros
_ndarray = np.ndarray
_asarray = np.asarray


def grad_buffer(shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """A zero-filled gradient buffer of ``shape`` and ``dtype``."""
    return _zeros(shape, dtype)


def own_grad(buffer: np.ndarray) -> np.ndarray:
    """Take an array an op computed (a first gradient contribution) as a gradient buffer.

    The engine calls this instead of ``grad_buffer`` when a ``Contribution`` hands it a
    new array, so every gradient buffer passes through this module either way.
    """
    return buffer


def own_value(value: Any, shared: bool = False) -> Any:
    """Take ``value`` as the value of a Variable: an ndarray, made read-only.

    A view of memory that is still writable through another array (for example a
    reshape of the caller's own array) is copied, so nothing outside the graph can
    change the value, unless ``shared`` says the caller asked for no copy
    (``param(x, copy=False)``): then a read-only view of it is taken.
    """
    if type(value) is not _ndarray:
        value = _asarray(value)
        if type(value) is not _ndarray:  # an ndarray subclass: take a plain view
            value = value.view(_ndarray)
    if shared:
        if value.flags.writeable:
            value = value.view()
    else:
        base = value.base
        if base is not None and getattr(getattr(base, "flags", None), "writeable", True):
            value = value.copy()
    value.setflags(write=False)  # cheaper than value.flags.writeable = False
    return value


# glibc returns the freed top of its heap to the kernel once it exceeds the trim
# threshold, and serves blocks above the mmap threshold with fresh mappings. A scope
# frees all its arrays at once when it exits, so with the defaults every training step
# gets its memory back from the kernel as new pages: one page fault per 4 KiB, which
# made cheap ops 3 to 15 times slower than the numpy arithmetic they run (measured in
# benchmarks/). Fixed thresholds keep up to TRIM_THRESHOLD bytes of freed memory in the
# process for reuse. Set LAMPY_TUNE_MALLOC=0 to keep the C library's defaults.
MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 128 * 2**20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3


def tune_malloc() -> bool:
    """Set glibc's malloc thresholds for lampy's allocation pattern (see above).

    Returns whether they were set (False on other C libraries or when disabled).
    """
    if os.environ.get("LAMPY_TUNE_MALLOC", "1") == "0":
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        return bool(ok and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    except (OSError, AttributeError):
        return False


MALLOC_TUNED = tune_malloc()


class writable:
    """Open the read-only values of params for in-place updates, for one ``with`` block.

    Optimizers and ``load_state_dict`` update parameter buffers in place (as PyTorch
    and lamp do) while every other holder of a Variable's value sees a read-only array.
    Inside the block the arrays are writable; on exit, even by an exception, they are
    read-only again. Arrays that cannot be made writable (a param made with
    ``copy=False`` from a read-only array) raise ``ValueError`` on entry, before anything
    was opened.

    Example:
        >>> with writable([w.value for w in params]) as bufs:
        ...     for b, w in zip(bufs, params):
        ...         b -= 0.1 * w.grad
    """

    __slots__ = ("_arrays",)

    def __init__(self, arrays: Any) -> None:
        self._arrays = list(arrays)

    def __enter__(self) -> list[np.ndarray]:
        opened: list[np.ndarray] = []
        try:
            for a in self._arrays:
                a.setflags(write=True)
                opened.append(a)
        except ValueError:
            for a in opened:
                a.setflags(write=False)
            raise
        return self._arrays

    def __exit__(self, *exc: object) -> None:
        for a in self._arrays:
            a.setflags(write=False)
