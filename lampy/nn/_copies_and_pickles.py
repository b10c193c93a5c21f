"""Copies and pickles of modules: ``copy.deepcopy``'s new parameters and buffers,
pickling Variables as their values, unpickling into the current scope, and the maps
over the leaves and submodules of a field's value that copies and mode changes share.

A pickle holds a module's fields with each Variable replaced by a ``SavedVariable``
(its value, and whether it needs a gradient); ``restore`` (``restore_dynamic`` for a
PyTorch-style class) makes new parameters in the current scope, one per array, so that
tied weights stay tied.
"""

from __future__ import annotations

import copy
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

import attrs
import numpy as np

from lampy._errors import NoScopeError
from lampy._tree import is_container, map_leaves
from lampy.nn._buffer import Buffer
from lampy.nn._marker import is_module
from lampy.opkit import Variable, const, param

if TYPE_CHECKING:
    from lampy.nn._module import Module

__all__ = [
    "SavedVariable",
    "copy_state",
    "map_modules",
    "map_state_leaves",
    "pickled",
    "restore",
    "restore_dynamic",
]

M = TypeVar("M", bound="Module")


class SavedVariable(NamedTuple):
    """A module's Variable in a pickle: its value, and whether it is a param."""

    value: np.ndarray
    needs_grad: bool


def _saved(leaf: Any) -> Any:
    if isinstance(leaf, Variable):
        return SavedVariable(leaf.value, leaf.needs_grad)
    return leaf


def pickled(module: Module) -> tuple[Any, ...]:
    """``module.__reduce__()``: its fields with each Variable saved as its value and
    whether it is a param, and the function that rebuilds it (``restore`` or
    ``restore_dynamic``)."""
    cls = type(module)
    if cls._dynamic:
        state = {k: map_state_leaves(v, _saved) for k, v in module._attribute_items()}
        return (restore_dynamic, (cls, module._training, state))
    fields = {
        f.alias or f.name: map_state_leaves(getattr(module, f.name), _saved)
        for f in attrs.fields(cls)
        if f.init
    }
    return (restore, (cls, fields))


def restore(cls: type[M], fields: dict[str, Any]) -> M:
    """Rebuild a pickled module, making its parameters in the current scope."""
    leaf = _restored_leaf(cls)
    return cls(**{k: map_state_leaves(v, leaf) for k, v in fields.items()})


def restore_dynamic(cls: type[M], training: bool, state: dict[str, Any]) -> M:
    """Rebuild a pickled PyTorch-style module, making its parameters in the current scope."""
    module: M = cls.__new__(cls)
    object.__setattr__(module, "_training", training)
    fields = {k: map_state_leaves(v, _restored_leaf(cls)) for k, v in state.items()}
    module.__dict__.update(fields)
    return module


# The params made while one pickle is loaded, by the id of the array they were made from:
# a param shared by two modules (tied weights) is pickled as one array (pickle's memo),
# so each restore finds the param the first one made. An entry goes with its array.
_RESTORED: dict[int, tuple[weakref.ref[np.ndarray], Variable]] = {}


def _restored_param(x: SavedVariable) -> Variable:
    key = id(x.value)
    done = _RESTORED.get(key)
    if done is not None and done[0]() is x.value and done[1].needs_grad == x.needs_grad:
        return done[1]
    new = param(x.value) if x.needs_grad else const(x.value)

    def forget(_: Any) -> None:
        _RESTORED.pop(key, None)

    try:
        ref = weakref.ref(x.value, forget)
    except TypeError:  # not weakly referenceable: no tie to keep
        return new
    _RESTORED[key] = (ref, new)
    return new


def _restored_leaf(cls: type) -> Callable[[Any], Any]:
    def leaf(x: Any) -> Any:
        if isinstance(x, SavedVariable):
            try:
                return _restored_param(x)
            except NoScopeError:
                raise NoScopeError(
                    f"Unpickling a {cls.__name__} makes its parameters in the current scope, "
                    "and no lampy.Scope is active: call pickle.load(s) inside "
                    "`with lampy.Scope():`."
                ) from None
        return x

    return leaf


def copy_state(module: M, memo: dict[int, Any]) -> M:
    def leaf(x: Any) -> Any:
        if is_module(x):
            return copy.deepcopy(x, memo)
        if id(x) in memo:
            return memo[id(x)]
        if isinstance(x, Variable):
            new: Any = param(x.value) if x.needs_grad else const(x.value)
        elif isinstance(x, Buffer | np.ndarray):
            new = x.copy()
        else:
            return copy.deepcopy(x, memo)
        memo[id(x)] = new
        memo.setdefault(id(memo), []).append(x)  # keep x alive while its id is a key
        return new

    changes = {name: map_state_leaves(value, leaf) for name, value in module._attribute_items()}
    result = module._rebuilt(changes)
    memo[id(module)] = result
    return result


def map_state_leaves(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied to each Variable, array, Module, pickled Variable and
    setting in it (the containers around them rebuilt, as ``lampy.tree.map_leaves``)."""
    return map_leaves(fn, value, is_leaf=_is_saved_leaf)


def _is_saved_leaf(x: Any) -> bool:
    return is_module(x) or isinstance(x, SavedVariable)


def map_modules(value: Any, fn: Callable[[Module], Module]) -> Any:
    """``value`` with ``fn`` applied to each Module in it (containers rebuilt), or
    ``value`` itself when ``fn`` changed none."""
    if is_module(value):
        return fn(value)
    if not is_container(value):
        return value
    changed = False

    def visit(x: Any) -> Any:
        nonlocal changed
        if not is_module(x):
            return x
        new = fn(x)
        changed = changed or new is not x
        return new

    new = map_leaves(visit, value, is_leaf=is_module)
    return new if changed else value
