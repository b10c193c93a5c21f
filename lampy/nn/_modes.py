"""Training and evaluation mode beside the immutable records: ``eval_mode`` blocks and
the ``model.eval()``/``model.train()`` switches.

A module's own mode is a field of its record (``with_training``); these two kinds of
mode live outside it. ``eval_mode`` puts the ids of a tree's modules in a context
variable for the ``with`` block. ``model.eval()`` enters its modules in the registry of
switched modules, by id, with a weak reference that removes each entry when its module
goes (before the id can be reused); ``model.train()`` takes them out.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

from lampy._errors import LampyTypeError
from lampy.nn._marker import is_module

if TYPE_CHECKING:
    from lampy.nn._module import Module

__all__ = ["EVAL_FIX", "copy_switch", "eval_mode", "evaluating", "switch"]

_EVAL_MODE: ContextVar[frozenset[int]] = ContextVar("lampy.nn.eval_mode", default=frozenset())

# Modules switched to evaluation mode by ``model.eval()`` (PyTorch's switch), by id, until
# ``model.train()`` or their end: the mode lives beside the immutable record, as the
# context's does for ``eval_mode``. Each entry's weak reference drops it when the module
# goes, before its id can be reused.
_SWITCHED_OFF: dict[int, weakref.ref[Any]] = {}


def evaluating(module: Module) -> bool:
    """Whether ``module`` is in evaluation mode by ``model.eval()`` or an ``eval_mode``
    block (its record's own ``training`` field aside)."""
    key = id(module)
    if key in _SWITCHED_OFF:
        return True
    ids = _EVAL_MODE.get()
    return bool(ids) and key in ids


def switch(modules: Iterable[Module], evaluating: bool) -> None:
    """``model.eval()`` (``evaluating``) and ``model.train()`` of each of ``modules``."""
    for m in modules:
        key = id(m)
        if not evaluating:
            _SWITCHED_OFF.pop(key, None)
        elif key not in _SWITCHED_OFF:
            _SWITCHED_OFF[key] = weakref.ref(m, functools.partial(_gone, key))


def copy_switch(source: Module, copy: Module) -> None:
    """Switch ``copy`` to evaluation mode if ``source`` was, as PyTorch's flag is copied
    (``copy.copy`` and ``copy.deepcopy`` of a module)."""
    if id(source) in _SWITCHED_OFF:
        switch((copy,), True)


def _gone(key: int, _: object) -> None:
    """A switched module's end: its id may be reused from now on."""
    _SWITCHED_OFF.pop(key, None)


@contextmanager
def eval_mode(*modules: Module) -> Iterator[None]:
    """Run ``modules`` (and every submodule) in evaluation mode inside the block.

    The lampy form of PyTorch's ``model.eval()`` ... ``model.train()``: dropout is off
    and batch norm uses (and does not update) its running statistics for calls made in
    the ``with`` block, and everything is as before when it exits, even on an error.
    Modules are immutable, so nothing is switched and nothing has to be switched back:
    the block's context is the mode (like ``lampy.no_grad``, which it is often combined
    with). It covers the modules given and their submodules as they are at entry.

    For a module that stays in evaluation mode, make a copy instead:
    ``lampy.nn.Module.with_training`` (``model.with_training(False)``).

    Examples:
        >>> from lampy import nn
        >>> with lampy.Scope():
        ...     drop = nn.Dropout.init(0.5, rng=np.random.default_rng(0))
        ...     with nn.eval_mode(drop), lampy.no_grad():
        ...         print(drop.training, drop(np.ones(4)).value)
        ...     print(drop.training)
        False [1. 1. 1. 1.]
        True

    Raises:
        LampyTypeError: if no module, or something that is not a module, is given.
    """
    if not modules:
        raise LampyTypeError(
            "eval_mode: pass the modules to evaluate, as in `with lampy.nn.eval_mode(model):`."
        )
    for m in modules:
        if not is_module(m):
            raise LampyTypeError(
                f"eval_mode: expected lampy.nn.Module objects, got {type(m).__name__}."
            )
    ids = frozenset(id(sub) for m in modules for sub in m.modules())
    token = _EVAL_MODE.set(_EVAL_MODE.get() | ids)
    try:
        yield
    finally:
        _EVAL_MODE.reset(token)


EVAL_FIX = (
    "Switch modes with `model.eval()` and `model.train()` (as PyTorch's), evaluate inside "
    "`with lampy.nn.eval_mode(model):` (dropout off and batch norm on its running "
    "statistics for the calls in the block), or keep an evaluation copy that shares the "
    "parameters: `model_eval = model.with_training(False)`."
)
"""How to change a module's mode, for the errors of ``model.training = ...``."""
