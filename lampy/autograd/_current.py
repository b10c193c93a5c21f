"""The current scope of this thread or asyncio task: one context variable, set by
``lampy.Scope`` and read by the scope, the ledger and the ops."""

from __future__ import annotations

from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

CURRENT: ContextVar[Any] = ContextVar("lampy_current_scope", default=None)
"""The innermost open ``lampy.Scope`` of this thread or task, or None."""

current_or_none: Callable[[], Any] = CURRENT.get
"""The innermost open scope of this thread or task, or None."""

__all__ = ["CURRENT", "current_or_none"]
