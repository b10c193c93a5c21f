"""Numba (the ``fast`` extra) for lampy's compiled kernels: ``njit`` with lampy's options.

Imported only by the kernel modules (``lampy.nn.functional._numba_kernels``,
``lampy.optim._adam_kernel``), which their callers import on first use and replace with
numpy code when Numba is not installed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, cast

import numba

_F = TypeVar("_F", bound=Callable[..., Any])


def compile_kernel(*fastmath: str) -> Callable[[_F], _F]:
    """``numba.njit`` with lampy's options and the ``fastmath`` flags given (``"reassoc"``
    only for functions whose loops sum, ``"contract"`` where fused multiply-adds may
    round once; none where the result must be numpy's bit for bit), cached on disk;
    without a writable cache directory (a read-only installation and home), compiled
    afresh in each process."""
    options: dict[str, Any] = {
        "nogil": True,
        "fastmath": set(fastmath),
        "error_model": "numpy",
    }

    def compile_(fn: _F) -> _F:
        try:
            return cast("_F", numba.njit(cache=True, **options)(fn))
        except RuntimeError:  # Numba: "cannot cache function ...: no locator available"
            return cast("_F", numba.njit(cache=False, **options)(fn))

    return compile_


__all__ = ["compile_kernel"]
