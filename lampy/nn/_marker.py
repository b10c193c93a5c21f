"""How the files below ``_module.py`` recognise a module without importing it.

``Module`` sets the class attribute ``__lampy_module__ = True``; the construction checks,
the construction window, the mode switches and the copies ask ``is_module(x)`` instead
of ``isinstance(x, Module)``, so that imports run one way: ``_module.py`` imports them,
never the reverse.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeGuard

if TYPE_CHECKING:
    from lampy.nn._module import Module

__all__ = ["MODULE_MARKER", "is_module", "is_module_class"]

MODULE_MARKER = "__lampy_module__"
"""The class attribute (True) that makes instances of a class modules."""


def is_module(x: Any) -> TypeGuard[Module]:
    """Whether ``x`` is a ``lampy.nn.Module`` (an instance of a class marked as one)."""
    return getattr(type(x), MODULE_MARKER, False) is True


def is_module_class(cls: Any) -> bool:
    """Whether ``cls`` is a ``lampy.nn.Module`` class (``Module`` or a subclass)."""
    return isinstance(cls, type) and getattr(cls, MODULE_MARKER, False) is True
