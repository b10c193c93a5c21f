"""When a module's attributes may be assigned: the construction window of PyTorch-style
classes, and the ``ImmutableModuleError`` that explains the lampy way once it is closed.

A class written as PyTorch's (its own ``__init__`` assigning attributes, no attrs
decorator) is settled at its first instantiation (``settle``): its ``__init__`` is
wrapped so that attributes may be assigned while it runs, and ``__setattr__`` and
``__delattr__`` raise afterwards. While the outermost such ``__init__`` runs, every
module made joins the window (``join_window``) and its record's fields may still be
assigned, with the record's checks, as PyTorch code ties weights. Records get
``immutable_setattr`` and ``immutable_delattr`` in place of attrs' bare
``FrozenInstanceError``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any, NoReturn

import attrs

from lampy._errors import ImmutableModuleError, LampyTypeError, LampyValueError, ShapeError
from lampy.nn._buffer import as_buffer
from lampy.nn._construction_checks import record_spec, short
from lampy.nn._modes import EVAL_FIX
from lampy.opkit import Variable

if TYPE_CHECKING:
    from lampy.nn._module import Module

__all__ = [
    "ATTRS_FROZEN_SETATTR",
    "OWN",
    "immutable_delattr",
    "immutable_message",
    "immutable_setattr",
    "join_window",
    "settle",
]


@attrs.frozen
class _AttrsFrozenProbe:
    """Only here to know the __setattr__ attrs gives frozen classes."""


ATTRS_FROZEN_SETATTR = _AttrsFrozenProbe.__setattr__


def immutable_message(module: Module, name: str, deleting: bool = False) -> str:
    cls = type(module).__name__
    what = f"del {cls}.{name}: " if deleting else f"{cls}.{name} = ...: "
    why = (
        "lampy modules are immutable records (attrs frozen classes), so that a module and "
        "its copies can share parameters safely and a forward pass never sees a "
        "half-changed model. "
    )
    if name in ("training", "_training"):
        return what + why + EVAL_FIX
    if type(module)._dynamic:
        return (
            f"{what}{why}A {cls} takes its attributes in its __init__ (as PyTorch's "
            "modules do) and is frozen when __init__ returns (the submodules an "
            "__init__ makes stay open until the outermost one returns: tie weights "
            "there, as PyTorch code does). To change a parameter's "
            "values, write them in place (`model.load_state_dict({...})`, "
            "lampy.nn.init.normal_(p, ...), optimizers); for another submodule, build "
            "the module again."
        )
    fields = {f.alias or f.name for f in attrs.fields(type(module))}
    if name not in fields:
        return (
            f"{what}{why}{cls} has no field {name!r}: keep other state beside the module, "
            "or declare it as a field of your own Module subclass (see lampy/nn/README.md)."
        )
    return (
        f"{what}{why}To tie weights, assign inside the __init__ of a PyTorch-style module "
        "that made this one (`self.lm_head.weight = self.wte.weight`), or build the "
        "module from the shared param (`nn.Linear(wte.weight, None)`). "
        "To change a parameter's values, write them in place with "
        "`model.load_state_dict({...})` (optimizers step in place too); for a module with "
        f"another {name!r}, make a new record: `attrs.evolve(model, {name}=new_value)` "
        "(a new parameter is made with lampy.param inside a lampy.Scope)."
    )


OWN = "_lampy_"
_BUILDING = "_lampy_building"

# The construction window: while the outermost PyTorch-style __init__ of this context
# runs, every module made (by it or anything it calls) is listed here, and its fields
# may still be assigned, as PyTorch code does to tie weights
# (``self.transformer.wte.weight = self.lm_head.weight``). When that __init__ returns,
# the window closes and they are all frozen, as a module made alone is at once.
_CONSTRUCTION: ContextVar[dict[int, Module] | None] = ContextVar(
    "lampy.nn.construction", default=None
)


def join_window(module: Module) -> None:
    """List a module just made in the open construction window, if there is one."""
    window = _CONSTRUCTION.get()
    if window is not None:
        window[id(module)] = module


def _under_construction(module: Module) -> bool:
    window = _CONSTRUCTION.get()
    return window is not None and window.get(id(module)) is module


def _assign_field(module: Module, name: str, value: Any) -> None:
    """Assign a record's field inside the construction window, with the checks the
    record's constructor makes (the field's type, ``_invalid_record``) and, for a
    Variable replacing a Variable, the same shape and dtype (the module's settings were
    derived from the old one)."""
    cls = type(module)
    field = next((f for f in attrs.fields(cls) if name in (f.name, f.alias) and f.init), None)
    if field is None or field.name == "_training":
        raise ImmutableModuleError(immutable_message(module, name))
    key = field.alias or field.name
    what = f"{cls.__name__}.{name} = ..."
    check = record_spec(cls)[1].get(key)
    if check is not None and not check.accepts(value):
        raise LampyTypeError(f"{what}: {name} must be {check.describe()}, got {short(value)}.")
    if field.converter is as_buffer:  # as the record's constructor converts it
        value = as_buffer(value)
    old = getattr(module, field.name)
    if (
        isinstance(old, Variable)
        and isinstance(value, Variable)
        and (old.shape != value.shape or old.dtype != value.dtype)
    ):
        raise ShapeError(
            f"{what}: the new {name} is {value.dtype} of shape {value.shape}, the old "
            f"one {old.dtype} of shape {old.shape}; the module's settings were made "
            "for the old one. Build the module again with the new sizes."
        )
    fields = {f.alias or f.name: getattr(module, f.name) for f in attrs.fields(cls) if f.init}
    fields[key] = value
    invalid = cls._invalid_record(fields)
    if invalid is not None:
        raise LampyValueError(f"{what}: {invalid}.")
    object.__setattr__(module, field.name, value)


def settle(cls: type[Module]) -> None:
    """Decide, at a class's first instantiation, whether it is written as PyTorch's:
    not an attrs class itself, and its ``__init__`` is not one attrs made. Such a class
    keeps its state in instance attributes assigned by ``__init__``, frozen after it."""
    init_owner = next(c for c in cls.__mro__ if "__init__" in c.__dict__)
    dynamic = "__attrs_attrs__" not in cls.__dict__ and "__attrs_attrs__" not in init_owner.__dict__
    if dynamic:
        type.__setattr__(cls, "_dynamic", True)
        type.__setattr__(cls, "__init__", _building(init_owner.__dict__["__init__"]))
        type.__setattr__(cls, "__setattr__", _building_setattr)
        type.__setattr__(cls, "__delattr__", _building_delattr)
    type.__setattr__(cls, "_lampy_settled", True)


def _building(init: Callable[..., None]) -> Callable[..., None]:
    """A PyTorch-style ``__init__`` that may assign attributes while it runs (nested
    ``super().__init__`` calls included); the instance is frozen when it returns."""

    @functools.wraps(init)
    def __init__(self: Module, *args: Any, **kwargs: Any) -> None:
        state = self.__dict__
        depth = state.get(_BUILDING, 0)
        if depth == 0:
            object.__setattr__(self, "_training", True)  # even without super().__init__()
        state[_BUILDING] = depth + 1
        window = _CONSTRUCTION.get()
        token = _CONSTRUCTION.set({}) if window is None else None
        try:
            init(self, *args, **kwargs)
        finally:
            if token is not None:
                _CONSTRUCTION.reset(token)
            if depth:
                state[_BUILDING] = depth
            else:
                del state[_BUILDING]

    return __init__


def _building_setattr(self: Module, name: str, value: Any) -> None:
    if name == "_training" or not (self.__dict__.get(_BUILDING) or _under_construction(self)):
        raise ImmutableModuleError(immutable_message(self, name))
    if name.startswith(OWN) or name == "training":
        raise LampyTypeError(
            f"{type(self).__name__}.{name}: this name is lampy's; choose another attribute name."
        )
    object.__setattr__(self, name, value)


def _building_delattr(self: Module, name: str) -> None:
    if not (self.__dict__.get(_BUILDING) or _under_construction(self)):
        raise ImmutableModuleError(immutable_message(self, name, deleting=True))
    object.__delattr__(self, name)


def immutable_setattr(self: Module, name: str, value: Any) -> None:
    if name != "_training" and _under_construction(self):
        _assign_field(self, name, value)
        return
    raise ImmutableModuleError(immutable_message(self, name))


def immutable_delattr(self: Module, name: str) -> NoReturn:
    raise ImmutableModuleError(immutable_message(self, name, deleting=True))
