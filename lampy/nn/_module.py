"""The Module base: frozen attrs records holding parameter Variables, buffers and settings.

A module is an ``attrs`` frozen record (``@attrs.frozen(eq=False, repr=False)``) whose
fields hold its parameters (param Variables), buffers (writable numpy arrays such as
BatchNorm's running statistics), submodules (alone, or in tuples, lists and dicts) and
static settings (ints, strings, callables). Everything else follows from walking those
fields in declaration order: ``named_parameters``, ``state_dict`` with PyTorch's dotted
keys, ``load_state_dict`` into the existing buffers, ``with_training`` copies, deep
copies and pickles. ``eval_mode`` runs modules in evaluation mode for a block.

Calling a module class with PyTorch's constructor arguments (``Linear(3, 2)``) runs
its ``init`` factory (``_ModuleMeta.__call__``): the arguments that do not build the
record from its fields go to ``init``, which draws from lampy's default generator when
no ``rng=`` is given. The PyTorch habits that cannot work on immutable records fail
loudly here, with the lampy way in the message: assigning an attribute after
construction and ``model.eval()``/``model.train()`` as statements.
"""

from __future__ import annotations

import copy
import functools
import inspect
import types
import typing
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, ClassVar, NamedTuple, NoReturn, TypeVar

import attrs
import numpy as np

from lampy._errors import (
    ImmutableModuleError,
    LampyTypeError,
    LampyValueError,
    NoScopeError,
    ShapeError,
)
from lampy._memory import sealed_view
from lampy._narrowing import cast_checked
from lampy._tree import is_container, leaves, leaves_with_paths, map_leaves
from lampy.autograd import in_place, zero_grads
from lampy.opkit import Variable, const, param

__all__ = ["INLINE", "IncompatibleKeys", "Module", "eval_mode", "inline"]

M = TypeVar("M", bound="Module")

INLINE = "lampy.inline"
"""Field metadata key: the field's name is not part of its entries' dotted names."""


def inline(**kwargs: Any) -> Any:
    """An ``attrs.field`` whose entries are named without the field's own name.

    ``Sequential`` holds its layers in ``layers: tuple = inline()`` so their parameters
    are named ``0.weight``, ``1.weight``... as in PyTorch, not ``layers.0.weight``; an
    inline dict of Variables names each by its key (``weight_ih_l0`` in ``LSTM``).
    """
    metadata = dict(kwargs.pop("metadata", {}))
    metadata[INLINE] = True
    return attrs.field(metadata=metadata, **kwargs)


class IncompatibleKeys(NamedTuple):
    """What ``lampy.nn.Module.load_state_dict`` did not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def _is_module(x: Any) -> bool:
    return isinstance(x, Module)


def _entries(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    """The (dotted name, leaf) pairs below one field value, in order.

    Leaves are Variables, numpy arrays (buffers) and Modules; the containers around them
    are walked as ``lampy.tree`` walks them, each step of the path a part of the name.
    """
    if isinstance(value, Module | Variable | np.ndarray):
        yield prefix, value
        return
    if not is_container(value):
        return
    for path, leaf in leaves_with_paths(value, is_leaf=_is_module):
        if isinstance(leaf, Module | Variable | np.ndarray):
            yield ".".join([prefix, *map(str, path)] if prefix else map(str, path)), leaf


# Per module class (classes do not change): its state fields, and whether it walks them
# as Module does. Plain dicts (functools.cache wants hashable arguments, and mypy does not
# see attrs classes with eq=False as such).
_STATE_FIELDS: dict[type, tuple[tuple[str, str], ...]] = {}
_PLAIN_WALK: dict[type, bool] = {}


def _state_fields(cls: type) -> tuple[tuple[str, str], ...]:
    """(attribute name, entry name prefix) of each field of a module class that may hold
    state, in declaration order (every field but ``_training``)."""
    fields = _STATE_FIELDS.get(cls)
    if fields is None:
        fields = _STATE_FIELDS[cls] = tuple(
            (f.name, "" if f.metadata.get(INLINE) else f.name)
            for f in attrs.fields(cls)
            if f.name != "_training"
        )
    return fields


def _plain_walk(cls: type) -> bool:
    """Whether a module class walks its state as ``Module`` does (no override of
    ``_fields`` or ``_named_state``), so that ``_collect_parameters`` may walk its fields
    itself."""
    plain = _PLAIN_WALK.get(cls)
    if plain is None:
        plain = _PLAIN_WALK[cls] = (
            not getattr(cls, "_dynamic", False)
            and getattr(cls, "_fields", None) is Module._fields
            and getattr(cls, "_named_state", None) is Module._named_state
        )
    return plain


def _collect_parameters(value: Any, out: list[Variable], seen: set[int]) -> None:
    """Append to ``out`` the trainable Variables below ``value`` not in ``seen``, in the
    order of ``Module._named_state`` (depth first, fields in declaration order)."""
    if isinstance(value, Module):
        cls = type(value)
        if _plain_walk(cls):
            for name, _ in _state_fields(cls):
                v = getattr(value, name)
                if type(v) is Variable:  # the common leaf, without a call
                    if v.needs_grad and id(v) not in seen:
                        seen.add(id(v))
                        out.append(v)
                elif v is not None:
                    _collect_parameters(v, out, seen)
        else:
            for _, leaf in value._named_state():
                if isinstance(leaf, Variable):
                    _collect_parameters(leaf, out, seen)
    elif isinstance(value, Variable):
        if value.needs_grad and id(value) not in seen:
            seen.add(id(value))
            out.append(value)
    elif type(value) is tuple or type(value) is list:  # lampy.tree's rule, faster
        for item in value:
            _collect_parameters(item, out, seen)
    elif is_container(value):
        for leaf in leaves(value, is_leaf=_is_module):
            if isinstance(leaf, Module | Variable):
                _collect_parameters(leaf, out, seen)


# ----------------------------------------------------------------- evaluation mode
_EVAL_MODE: ContextVar[frozenset[int]] = ContextVar("lampy.nn.eval_mode", default=frozenset())

# Modules switched to evaluation mode by ``model.eval()`` (PyTorch's switch), by id, until
# ``model.train()`` or their end: the mode lives beside the immutable record, as the
# context's does for ``eval_mode``. Each entry's weak reference drops it when the module
# goes, before its id can be reused.
_SWITCHED_OFF: dict[int, weakref.ref[Any]] = {}


def _switch(modules: Iterator[Module], evaluating: bool) -> None:
    """``model.eval()`` (``evaluating``) and ``model.train()`` of each of ``modules``."""
    for m in modules:
        key = id(m)
        if not evaluating:
            _SWITCHED_OFF.pop(key, None)
        elif key not in _SWITCHED_OFF:
            _SWITCHED_OFF[key] = weakref.ref(m, functools.partial(_gone, key))


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
        if not isinstance(m, Module):
            raise LampyTypeError(
                f"eval_mode: expected lampy.nn.Module objects, got {type(m).__name__}."
            )
    ids = frozenset(id(sub) for m in modules for sub in m.modules())
    token = _EVAL_MODE.set(_EVAL_MODE.get() | ids)
    try:
        yield
    finally:
        _EVAL_MODE.reset(token)


_EVAL_FIX = (
    "Switch modes with `model.eval()` and `model.train()` (as PyTorch's), evaluate inside "
    "`with lampy.nn.eval_mode(model):` (dropout off and batch norm on its running "
    "statistics for the calls in the block), or keep an evaluation copy that shares the "
    "parameters: `model_eval = model.with_training(False)`."
)


# ----------------------------------------------------------------- the record
class _ModuleMeta(type):
    """The metaclass of modules: a class call is either the record's constructor (its
    fields, as ``attrs.evolve`` and ``init`` call it) or, when the arguments do not make
    a record and bind to the class's ``init``, PyTorch's constructor call, which
    ``init`` serves (``nn.Linear(3, 2)`` is ``nn.Linear.init(3, 2)``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_lampy_settled" not in cls.__dict__:
            _settle(cls)  # type: ignore[arg-type]
        if (args or kwargs) and not getattr(cls, "_dynamic", False):
            problem = _record_problem(cls, args, kwargs)
            if problem is not None:
                init = getattr(cls, "init", None)
                if init is not None and _binds(init, args, kwargs):
                    try:
                        return init(*args, **kwargs)  # its records join the window
                    except NoScopeError:
                        call = f"{cls.__name__}({_call_text(args, kwargs)})"
                        raise NoScopeError(
                            f"{call} makes parameters, and no lampy.Scope is active: every "
                            "parameter belongs to the scope that releases it. Build the "
                            f"model inside one:\n\n    with lampy.Scope():\n        "
                            f"model = ...\n"
                        ) from None
                raise LampyTypeError(_construction_message(cls, args, kwargs, problem))
        made = super().__call__(*args, **kwargs)
        window = _CONSTRUCTION.get()
        if window is not None:
            window[id(made)] = made
        return made


def _binds(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether ``fn(*args, **kwargs)`` binds to ``fn``'s signature."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return False
    return True


@attrs.frozen(eq=False, repr=False)
class Module(metaclass=_ModuleMeta):
    """Base class of neural-network modules: immutable records of parameters.

    Subclasses are ``attrs`` frozen records, declared with
    ``@attrs.frozen(eq=False, repr=False)`` (``eq=False``: modules compare by identity and
    never compare arrays), built by a classmethod factory ``init(...)`` that takes
    PyTorch's constructor arguments, and define ``forward``. Calling a module calls
    ``forward``. Calling the class itself builds the record from its fields (``init``
    does, and so does ``attrs.evolve``); given PyTorch's constructor arguments instead
    (``nn.Linear(3, 2)``), it calls ``init`` with them (inside a ``lampy.Scope``, which
    owns the parameters; random initialisations draw from lampy's default generator
    unless ``rng=`` is given). Arguments that fit neither raise at once.

    Parameters are param Variables owned by the scope that was current when the module
    was made; forward passes run in child scopes, so a step's graph is released when its
    scope exits while the parameters (and their accumulated gradients) stay. Optimizers
    and ``lampy.nn.Module.load_state_dict`` update the parameters' buffers in place, so
    every copy of a module made by ``lampy.nn.Module.with_training`` sees the same
    weights. ``copy.deepcopy(model)`` makes new parameters (with the same values) in the
    current scope; ``pickle`` saves the values and settings, and unpickling makes new
    parameters in the current scope.

    Attributes:
        training: Whether the module runs in training mode (dropout active, batch norm
            using and updating batch statistics): True unless the module was made by
            ``with_training(False)`` or is called inside ``lampy.nn.eval_mode``.

    Examples:
        >>> @attrs.frozen(eq=False, repr=False)
        ... class Affine(Module):
        ...     scale: Variable
        ...     shift: Variable
        ...
        ...     @classmethod
        ...     def init(cls, n: int) -> Affine:
        ...         return cls(lampy.param(np.ones(n)), lampy.param(np.zeros(n)))
        ...
        ...     def forward(self, x):
        ...         return x * self.scale + self.shift
        >>> with lampy.Scope():
        ...     print(Affine.init(2)(np.array([1.0, 2.0])).value)
        [1. 2.]
    """

    _training: bool = attrs.field(default=True, kw_only=True, alias="training")

    # Subclasses set this to describe their settings in repr: "in_features=3, ...".
    _repr_fields: ClassVar[tuple[str, ...]] = ()

    # True for a class written as PyTorch's (its own __init__ assigning attributes, no
    # attrs decorator): its state is its instance attributes, frozen once __init__ ends.
    _dynamic: ClassVar[bool] = False

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Copying and unpickling call __new__ alone (the class call checks arguments).
        if "_lampy_settled" not in cls.__dict__:
            _settle(cls)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # attrs gives each frozen class a __setattr__ that raises a bare
        # FrozenInstanceError; modules explain instead (the same error, subclassed).
        if cls.__dict__.get("__setattr__") is _ATTRS_FROZEN_SETATTR:
            type.__setattr__(cls, "__setattr__", _immutable_setattr)
            type.__setattr__(cls, "__delattr__", _immutable_delattr)
        # help() and inspect show the record's fields, not __new__'s (*args, **kwargs).
        init = cls.__dict__.get("__init__")
        if init is not None:
            sig = inspect.signature(init)
            cls.__signature__ = sig.replace(  # type: ignore[attr-defined]
                parameters=list(sig.parameters.values())[1:]
            )

    @classmethod
    def _invalid_record(cls, fields: Mapping[str, Any]) -> str | None:
        """Why these field values (keyed by argument name) make no usable module, or
        None. Subclasses with invariants between fields override it; it runs on every
        construction, so it must be cheap."""
        return None

    @property
    def training(self) -> bool:
        """Whether the module runs in training mode now (see the class's attributes)."""
        if not self._training or id(self) in _SWITCHED_OFF:
            return False
        ids = _EVAL_MODE.get()
        return not ids or id(self) not in ids

    def forward(self, *args: Any, **kwargs: Any) -> Any:
        """The module's computation; subclasses define it."""
        raise NotImplementedError(
            f"{type(self).__name__}.forward is not defined: a Module subclass must define "
            "forward(self, ...), which calling the module runs."
        )

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.forward(*args, **kwargs)

    # ----------------------------------------------------------------- traversal
    def _fields(self) -> Iterator[tuple[str, Any]]:
        """(entry name prefix, value) for each field that may hold state, in order."""
        if type(self)._dynamic:
            yield from self._attribute_items()
            return
        for name, prefix in _state_fields(type(self)):
            yield prefix, getattr(self, name)

    def __lampy_children__(self) -> list[Any]:
        """What the module holds (its fields' values: parameters, buffers, submodules,
        settings), for ``lampy.Scope.keep`` and the other ``lampy.tree`` walks."""
        return [value for _, value in self._fields()]

    def __lampy_rebuild__(self: M, children: list[Any]) -> M:
        """A new module holding ``children`` in place of ``__lampy_children__()``'s
        values (``lampy.tree.map_leaves``)."""
        if type(self)._dynamic:
            names = [name for name, _ in self._attribute_items()]
        else:
            names = [name for name, _ in _state_fields(type(self))]
        return self._rebuilt(dict(zip(names, children, strict=True)))

    def _attribute_items(self) -> list[tuple[str, Any]]:
        """(attribute name, value) of each field but ``_training``: the record's
        fields, or the attributes a PyTorch-style ``__init__`` assigned, in order."""
        if type(self)._dynamic:
            return [(k, v) for k, v in self.__dict__.items() if not k.startswith(_OWN)]
        return [
            (f.name, getattr(self, f.name))
            for f in attrs.fields(type(self))
            if f.init and f.name != "_training"
        ]

    def _rebuilt(self: M, changes: Mapping[str, Any], training: bool | None = None) -> M:
        """A new module with the attributes in ``changes`` (by attribute name) replaced,
        and ``training`` if given: ``attrs.evolve`` for a record, a copy of the
        attributes for a PyTorch-style class."""
        cls = type(self)
        if cls._dynamic:
            new: M = cls.__new__(cls)
            object.__setattr__(new, "_training", self._training if training is None else training)
            new.__dict__.update(
                {k: v for k, v in self.__dict__.items() if not k.startswith(_OWN)}, **changes
            )
            return new
        alias = {f.name: f.alias or f.name for f in attrs.fields(cls)}
        kwargs = {alias[k]: v for k, v in changes.items()}
        if training is not None:
            kwargs["training"] = training
        return attrs.evolve(self, **kwargs)

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """The direct submodules with their names, in declaration order."""
        for prefix, value in self._fields():
            for name, leaf in _entries(prefix, value):
                if isinstance(leaf, Module):
                    yield name, leaf

    def children(self) -> Iterator[Module]:
        """The direct submodules, in declaration order."""
        for _, m in self.named_children():
            yield m

    def named_modules(
        self, prefix: str = "", _seen: set[int] | None = None
    ) -> Iterator[tuple[str, Module]]:
        """This module (named ``prefix``) and every submodule below it, depth first.

        A module reachable by several paths is listed once, under its first name.
        """
        seen = set() if _seen is None else _seen
        if id(self) in seen:
            return
        seen.add(id(self))
        yield prefix, self
        for name, child in self.named_children():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name, seen)

    def modules(self) -> Iterator[Module]:
        """This module and every submodule below it, depth first."""
        for _, m in self.named_modules():
            yield m

    def _named_state(self, prefix: str = "") -> Iterator[tuple[str, Variable | np.ndarray]]:
        """Every Variable and buffer with its dotted name, in PyTorch's order."""
        for field_prefix, value in self._fields():
            for name, leaf in _entries(field_prefix, value):
                full = f"{prefix}.{name}" if prefix else name
                if isinstance(leaf, Module):
                    yield from leaf._named_state(full)
                else:
                    yield full, leaf

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, Variable]]:
        """The trainable parameters (Variables that need a gradient) with dotted names.

        A parameter shared by several submodules is listed once, under its first name,
        as in PyTorch.
        """
        seen: set[int] = set()
        for name, leaf in self._named_state(prefix):
            if isinstance(leaf, Variable) and leaf.needs_grad and id(leaf) not in seen:
                seen.add(id(leaf))
                yield name, leaf

    def parameters(self) -> list[Variable]:
        """The trainable parameters, in ``lampy.nn.Module.named_parameters``' order."""
        if type(self).named_parameters is not Module.named_parameters:
            return [p for _, p in self.named_parameters()]
        # The walk of named_parameters without building the dotted names (zero_grad and
        # optimizers call this every step).
        out: list[Variable] = []
        _collect_parameters(self, out, set())
        return out

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, np.ndarray]]:
        """The buffers (numpy arrays such as running statistics) with dotted names."""
        for name, leaf in self._named_state(prefix):
            if isinstance(leaf, np.ndarray):
                yield name, leaf

    def num_parameters(self) -> int:
        """The number of scalar trainable parameters (``sum(p.size)``)."""
        return sum(p.size for p in self.parameters())

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's gradient (None by default, as in PyTorch 2; with
        ``set_to_none=False`` the buffers are kept and filled with zeros)."""
        zero_grads(self.parameters(), set_to_none)

    # ----------------------------------------------------------------- state
    def state_dict(self) -> dict[str, np.ndarray]:
        """The parameters and buffers as numpy arrays, keyed by PyTorch's dotted names.

        Like PyTorch's, the arrays share memory with the module (read-only views), so
        they change as the module trains; copy them (``{k: v.copy() ...}``) to keep a
        snapshot. Frozen parameters (Variables that need no gradient) are included. A
        parameter's view cannot be made writable (``setflags(write=True)`` raises):
        change parameters with ``load_state_dict``, which counts versions.
        """
        out: dict[str, np.ndarray] = {}
        for name, leaf in self._named_state():
            if name in out:
                continue
            if isinstance(leaf, Variable):
                # a view numpy cannot make writable: a write would bypass the version
                # counter (load_state_dict and optimizers write through in_place)
                out[name] = sealed_view(leaf.value)
            else:
                view = leaf.view()
                view.setflags(write=False)
                out[name] = view
        return out

    def load_state_dict(
        self, state_dict: Mapping[str, Any], strict: bool = True
    ) -> IncompatibleKeys:
        """Copy arrays into the existing parameter and buffer memory, in place.

        Each value (a numpy array or anything ``numpy.asarray`` takes, such as a CPU
        PyTorch tensor) is cast to the dtype of the entry it replaces. Names and shapes
        are all checked before anything is written, so a failed load changes nothing.

        Args:
            state_dict: Arrays keyed by dotted names, as ``lampy.nn.Module.state_dict``
                or PyTorch's ``state_dict()`` gives them.
            strict: Whether a missing or unexpected key is an error.

        Returns:
            The missing and unexpected keys (both empty when ``strict``).

        Raises:
            LampyValueError: naming the module, the missing and unexpected keys.
            ShapeError: naming the entry, its shape and the given shape.
            LampyTypeError: if a value cannot be cast to the entry's dtype (complex into
                float, for example).
            LampyValueError: if a value would not fit the entry's dtype (a float64 1e300
                into float32 would become inf; an int64 beyond int32's range would wrap).
        """
        own = dict(self._named_state())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        name = type(self).__name__
        if strict and (missing or unexpected):
            raise LampyValueError(
                f"{name}.load_state_dict: the keys do not match. Missing: {missing or 'none'}; "
                f"unexpected: {unexpected or 'none'}. Check that the state dict comes from "
                "the same architecture, or pass strict=False to load the common keys."
            )
        pairs: list[tuple[np.ndarray, np.ndarray]] = []
        params: list[Variable] = []
        for key, dest in own.items():
            if key not in state_dict:
                continue
            if isinstance(dest, Variable):
                params.append(dest)
            dst = dest.value if isinstance(dest, Variable) else dest
            src = state_dict[key]
            if isinstance(src, Variable):
                src = src.value
            src = np.asarray(src)
            if src.shape != dst.shape:
                raise ShapeError(
                    f"{name}.load_state_dict: '{key}' has shape {dst.shape} in the module "
                    f"but {src.shape} in the state dict; nothing was loaded. Check the "
                    "module's configuration (sizes, bias, layers) against the saved one."
                )
            if not np.can_cast(src.dtype, dst.dtype, casting="same_kind"):
                raise LampyTypeError(
                    f"{name}.load_state_dict: '{key}' is {src.dtype} in the state dict and "
                    f"cannot be cast to the module's {dst.dtype}; nothing was loaded."
                )
            pairs.append((dst, cast_checked(f"{name}.load_state_dict", f"'{key}'", src, dst.dtype)))
        with in_place(params):  # each param's version goes up: graphs made before are stale
            for dst, src in pairs:
                np.copyto(dst, src)
        return IncompatibleKeys(missing, unexpected)

    # ----------------------------------------------------------------- modes
    def with_training(self: M, training: bool = True) -> M:
        """A copy of this module and its submodules with ``training`` set.

        The copy shares every parameter and buffer with this module, so it sees every
        update (an optimizer step, ``load_state_dict``) and its own updates (batch norm's
        running statistics) reach this module too. For a block of calls in evaluation
        mode, ``lampy.nn.eval_mode`` needs no copy.

        Args:
            training: True for training mode, False for evaluation mode.
        """
        if not isinstance(training, bool):
            raise LampyTypeError(
                f"{type(self).__name__}.with_training: training must be a bool, got {training!r}."
            )
        changes: dict[str, Any] = {}
        for name, value in self._attribute_items():
            new = _map_modules(value, lambda m: m.with_training(training))
            if new is not value:
                changes[name] = new
        return self._rebuilt(changes, training)

    def eval(self: M) -> M:
        """Switch this module and every submodule to evaluation mode, as PyTorch's
        ``model.eval()``: dropout off, batch norm on its running statistics, until
        ``model.train()``. Returns the module itself.

        The switch lives beside the immutable record (the module's fields do not change):
        it covers the module objects themselves and their copies (``copy.copy``,
        ``copy.deepcopy``, as PyTorch's flag), not ``with_training``'s, whose mode is
        their record's field. For evaluation
        confined to a block, ``with lampy.nn.eval_mode(model):`` switches nothing; for an
        evaluation copy that shares the parameters, ``model.with_training(False)``.

        Examples:
            >>> from lampy import nn
            >>> with lampy.Scope():
            ...     drop = nn.Dropout.init(0.5, rng=np.random.default_rng(0))
            ...     print(drop.eval() is drop, drop.training, drop.train().training)
            True False True
        """
        _switch(self.modules(), True)
        return self

    def train(self: M, mode: bool = True) -> M:
        """Switch this module and every submodule to training mode (``mode`` True) or
        evaluation mode (False, ``eval()``), as PyTorch's ``model.train(mode)``. Returns
        the module itself.

        A module made by ``with_training(False)`` stays in evaluation mode: its mode is
        a field of its record; ``with_training(True)`` makes a training copy of it.

        Raises:
            LampyTypeError: if ``mode`` is not a bool.
        """
        if not isinstance(mode, bool):
            raise LampyTypeError(
                f"{type(self).__name__}.train(mode): mode must be a bool (True to train, "
                f"False to evaluate), got {type(mode).__name__}."
            )
        _switch(self.modules(), not mode)
        return self

    def apply(self: M, fn: Callable[[Module], Module | None]) -> M:
        """``fn`` applied to every submodule (bottom up), then to this module.

        Two kinds of ``fn`` work. PyTorch's: ``fn(m)`` returns None and initialises
        ``m``'s parameters in place (``lampy.nn.init.normal_(m.weight, 0.0, 0.02,
        generator=rng)``); the module is kept, and ``apply`` returns this module, as
        PyTorch's. lampy's: ``fn(m)`` returns a module (a new record, say from
        ``attrs.evolve``) that takes ``m``'s place; ``apply`` then returns the new tree.
        A module tied at several places is visited at each.

        Raises:
            LampyTypeError: if ``fn`` returns something that is neither None nor a Module.
        """
        changes: dict[str, Any] = {}
        for name, value in self._attribute_items():
            new = _map_modules(value, lambda m: m.apply(fn))
            if new is not value:
                changes[name] = new
        current = self._rebuilt(changes) if changes else self
        result = fn(current)
        if result is None:
            return current
        if not isinstance(result, Module):
            raise LampyTypeError(
                f"{type(self).__name__}.apply: fn returned {type(result).__name__} for a "
                f"{type(current).__name__}; it must return None (PyTorch's way: initialise "
                "in place, e.g. lampy.nn.init.normal_(m.weight, 0.0, 0.02, generator=rng)) "
                "or a Module to take its place."
            )
        return result  # type: ignore[return-value]

    # ----------------------------------------------------------------- repr
    def extra_repr(self) -> str:
        """The settings shown between the parentheses of the repr."""
        return ", ".join(f"{k}={getattr(self, k)!r}" for k in self._repr_fields)

    def __repr__(self) -> str:
        children = list(self.named_children())
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not children:
            return head + ")"
        lines = [head]
        for name, child in children:
            body = repr(child).replace("\n", "\n  ")
            lines.append(f"  ({name}): {body}")
        return "\n".join(lines) + "\n)"

    # ----------------------------------------------------------------- copies
    def __copy__(self: M) -> M:
        """A shallow copy: a new record holding the same parameters and buffers (and in
        evaluation mode if this module was switched by ``eval()``, as PyTorch's copy)."""
        new = self._rebuilt({})
        if id(self) in _SWITCHED_OFF:
            _switch(iter((new,)), True)
        return new

    def __deepcopy__(self: M, memo: dict[int, Any]) -> M:
        """A copy with new parameters (same values, owned by the current scope), new
        buffers and deep copies of the settings; shared entries stay shared. Modules
        switched by ``eval()`` are switched in the copy too, as PyTorch's flag is."""
        new: M = _copy_state(self, memo)
        if id(self) in _SWITCHED_OFF:
            _switch(iter((new,)), True)
        return new

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the state, not the graph: parameter values, buffers and settings.

        Unpickling makes new parameters in the current scope (``pickle.loads`` inside
        ``with lampy.Scope():``). For files, prefer ``lampy.save``: it writes
        safetensors, which load without running code.
        """
        if type(self)._dynamic:
            state = {k: _map_leaves(v, _saved) for k, v in self._attribute_items()}
            return (_restore_dynamic, (type(self), self._training, state))
        fields = {
            f.alias or f.name: _map_leaves(getattr(self, f.name), _saved)
            for f in attrs.fields(type(self))
            if f.init
        }
        return (_restore, (type(self), fields))


# ----------------------------------------------------------------- construction checks
_CHECKED_TYPES = (Variable, np.ndarray, np.random.Generator)


class _FieldCheck(NamedTuple):
    """What a field holding state accepts: one object, a sequence or a mapping of
    instances of ``types``, or None when ``optional``."""

    shape: str  # "one", "seq" or "map"
    types: tuple[type, ...]
    optional: bool

    def accepts(self, value: Any) -> bool:
        if value is None:
            return self.optional
        if self.shape == "one":
            return isinstance(value, self.types)
        if self.shape == "map":
            return isinstance(value, Mapping) and all(
                isinstance(v, self.types) for v in value.values()
            )
        if isinstance(value, tuple | list):
            return all(isinstance(v, self.types) for v in value)
        # Other iterables (a generator given to a converter) are not consumed to check.
        return not isinstance(value, Module | Variable | np.ndarray | str | bytes | int | float)

    def describe(self) -> str:
        names = " or ".join(t.__name__ for t in self.types)
        what = {"one": f"a {names}", "seq": f"a tuple of {names}", "map": f"a dict of {names}"}
        return what[self.shape] + (" or None" if self.optional else "")


def _is_state_type(t: Any) -> bool:
    return isinstance(t, type) and (issubclass(t, Module) or issubclass(t, _CHECKED_TYPES))


def _check_of(tp: Any) -> _FieldCheck | None:
    """The check for a field annotated ``tp``, or None for a setting (int, str...)."""
    origin = typing.get_origin(tp)
    if origin is typing.Union or origin is types.UnionType:
        args = typing.get_args(tp)
        optional = type(None) in args
        rest = [a for a in args if a is not type(None)]
        if len(rest) == 1:
            inner = _check_of(rest[0])
            return inner._replace(optional=optional) if inner else None
        return _FieldCheck("one", tuple(rest), optional) if all(map(_is_state_type, rest)) else None
    if origin in (tuple, list, Sequence):
        items = [a for a in typing.get_args(tp) if a is not Ellipsis]
        if len(items) == 1 and _is_state_type(items[0]):
            return _FieldCheck("seq", (items[0],), False)
        return None
    if origin in (dict, Mapping):
        kv = typing.get_args(tp)
        if len(kv) == 2 and _is_state_type(kv[1]):
            return _FieldCheck("map", (kv[1],), False)
        return None
    return _FieldCheck("one", (tp,), False) if _is_state_type(tp) else None


@functools.cache
def _record_spec(cls: type) -> tuple[inspect.Signature, dict[str, _FieldCheck]]:
    """The signature of the class's record constructor and the checks of its fields
    (keyed by argument name); no checks when the annotations do not resolve."""
    sig = inspect.signature(cls.__init__)  # type: ignore[misc]
    try:
        hints = typing.get_type_hints(cls)
    except Exception:  # an annotation naming something not importable at run time
        return sig, {}
    checks: dict[str, _FieldCheck] = {}
    for f in attrs.fields(cls):
        check = _check_of(hints.get(f.name))
        if check is not None and f.init:
            checks[f.alias or f.name] = check
    return sig, checks


def _record_problem(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why ``cls(*args, **kwargs)`` cannot build the record, or None if it can."""
    sig, checks = _record_spec(cls)
    fields = [p for p in list(sig.parameters)[1:] if p != "training"]
    try:
        partial = sig.bind_partial(None, *args, **kwargs)
    except TypeError as e:
        return f"{e}; the record's fields are ({', '.join(fields)})"
    # Wrong types first: PyTorch's arguments land in the fields of parameters.
    for name, value in partial.arguments.items():
        check = checks.get(name)
        if check is not None and not check.accepts(value):
            return f"{name} must be {check.describe()}, got {_short(value)}"
    try:
        bound = sig.bind(None, *args, **kwargs)
    except TypeError as e:
        return f"{e}; the record's fields are ({', '.join(fields)})"
    bound.apply_defaults()
    invalid: str | None = cls._invalid_record(bound.arguments)  # type: ignore[attr-defined]
    return invalid


def _short(value: Any) -> str:
    """A one-line description of an argument for messages."""
    if isinstance(value, Module):
        return f"{type(value).__name__}(...)"
    if isinstance(value, Variable | np.ndarray):
        return f"{type(value).__name__} of shape {value.shape}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def _call_text(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    def one(v: Any) -> str:
        if isinstance(v, Module):
            return f"{type(v).__name__}(...)"
        text = repr(v)
        return text if len(text) <= 40 else "..."

    return ", ".join([*map(one, args), *(f"{k}={one(v)}" for k, v in kwargs.items())])


def _construction_message(
    cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], problem: str
) -> str:
    prefix = "nn." if cls.__module__.startswith("lampy.nn") else ""
    name = f"{prefix}{cls.__name__}"
    called = f"{name}({_call_text(args, kwargs)})"
    init = getattr(cls, "init", None)
    if init is None:
        return f"{called}: calling a module class builds the record from its fields, and {problem}."
    try:
        init(*args, **kwargs)  # only to read the binding error: the call does not bind
    except TypeError as e:
        init_problem = str(e)
    else:  # pragma: no cover - _binds said it does not bind
        init_problem = "they do not bind"
    return (
        f"{called}: a module class takes either PyTorch's constructor arguments, those of "
        f"{name}.init{_plain_signature(init)}, or the record's fields (the parameters as "
        f"Variables, the settings). As init's arguments: {init_problem}; as the "
        f"record's fields: {problem}."
    )


def _plain_signature(fn: Callable[..., Any]) -> str:
    """``fn``'s signature without annotations, types shown by name: ``(a, b=True, *,
    dtype=float32)``."""
    sig = inspect.signature(fn)
    params = []
    for p in sig.parameters.values():
        default = p.default
        if default is not p.empty and isinstance(default, type):
            default = _Code(default.__name__)
        params.append(p.replace(annotation=inspect.Parameter.empty, default=default))
    return str(sig.replace(parameters=params, return_annotation=inspect.Signature.empty))


class _Code(str):
    """A string shown as code (without quotes) in a message's call."""

    def __repr__(self) -> str:
        return str(self)


# ----------------------------------------------------------------- immutability
@attrs.frozen
class _AttrsFrozenProbe:
    """Only here to know the __setattr__ attrs gives frozen classes."""


_ATTRS_FROZEN_SETATTR = _AttrsFrozenProbe.__setattr__


def _immutable_message(module: Module, name: str, deleting: bool = False) -> str:
    cls = type(module).__name__
    what = f"del {cls}.{name}: " if deleting else f"{cls}.{name} = ...: "
    why = (
        "lampy modules are immutable records (attrs frozen classes), so that a module and "
        "its copies can share parameters safely and a forward pass never sees a "
        "half-changed model. "
    )
    if name in ("training", "_training"):
        return what + why + _EVAL_FIX
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


_OWN = "_lampy_"
_BUILDING = "_lampy_building"

# The construction window: while the outermost PyTorch-style __init__ of this context
# runs, every module made (by it or anything it calls) is listed here, and its fields
# may still be assigned, as PyTorch code does to tie weights
# (``self.transformer.wte.weight = self.lm_head.weight``). When that __init__ returns,
# the window closes and they are all frozen, as a module made alone is at once.
_CONSTRUCTION: ContextVar[dict[int, Module] | None] = ContextVar(
    "lampy.nn.construction", default=None
)


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
        raise ImmutableModuleError(_immutable_message(module, name))
    key = field.alias or field.name
    what = f"{cls.__name__}.{name} = ..."
    check = _record_spec(cls)[1].get(key)
    if check is not None and not check.accepts(value):
        raise LampyTypeError(f"{what}: {name} must be {check.describe()}, got {_short(value)}.")
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


def _settle(cls: type[Module]) -> None:
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
        raise ImmutableModuleError(_immutable_message(self, name))
    if name.startswith(_OWN) or name == "training":
        raise LampyTypeError(
            f"{type(self).__name__}.{name}: this name is lampy's; choose another attribute name."
        )
    object.__setattr__(self, name, value)


def _building_delattr(self: Module, name: str) -> None:
    if not (self.__dict__.get(_BUILDING) or _under_construction(self)):
        raise ImmutableModuleError(_immutable_message(self, name, deleting=True))
    object.__delattr__(self, name)


def _immutable_setattr(self: Module, name: str, value: Any) -> None:
    if name != "_training" and _under_construction(self):
        _assign_field(self, name, value)
        return
    raise ImmutableModuleError(_immutable_message(self, name))


def _immutable_delattr(self: Module, name: str) -> NoReturn:
    raise ImmutableModuleError(_immutable_message(self, name, deleting=True))


# ----------------------------------------------------------------- copies and pickles
class _SavedVariable(NamedTuple):
    """A module's Variable in a pickle: its value, and whether it is a param."""

    value: np.ndarray
    needs_grad: bool


def _saved(leaf: Any) -> Any:
    if isinstance(leaf, Variable):
        return _SavedVariable(leaf.value, leaf.needs_grad)
    return leaf


def _restore(cls: type[M], fields: dict[str, Any]) -> M:
    """Rebuild a pickled module, making its parameters in the current scope."""
    leaf = _restored_leaf(cls)
    return cls(**{k: _map_leaves(v, leaf) for k, v in fields.items()})


def _restore_dynamic(cls: type[M], training: bool, state: dict[str, Any]) -> M:
    """Rebuild a pickled PyTorch-style module, making its parameters in the current scope."""
    module: M = cls.__new__(cls)
    object.__setattr__(module, "_training", training)
    fields = {k: _map_leaves(v, _restored_leaf(cls)) for k, v in state.items()}
    module.__dict__.update(fields)
    return module


# The params made while one pickle is loaded, by the id of the array they were made from:
# a param shared by two modules (tied weights) is pickled as one array (pickle's memo),
# so each restore finds the param the first one made. An entry goes with its array.
_RESTORED: dict[int, tuple[weakref.ref[np.ndarray], Variable]] = {}


def _restored_param(x: _SavedVariable) -> Variable:
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
        if isinstance(x, _SavedVariable):
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


def _copy_state(module: M, memo: dict[int, Any]) -> M:
    def leaf(x: Any) -> Any:
        if isinstance(x, Module):
            return copy.deepcopy(x, memo)
        if id(x) in memo:
            return memo[id(x)]
        if isinstance(x, Variable):
            new: Any = param(x.value) if x.needs_grad else const(x.value)
        elif isinstance(x, np.ndarray):
            new = x.copy()
        else:
            return copy.deepcopy(x, memo)
        memo[id(x)] = new
        memo.setdefault(id(memo), []).append(x)  # keep x alive while its id is a key
        return new

    changes = {name: _map_leaves(value, leaf) for name, value in module._attribute_items()}
    result = module._rebuilt(changes)
    memo[id(module)] = result
    return result


def _map_leaves(value: Any, fn: Callable[[Any], Any]) -> Any:
    """``value`` with ``fn`` applied to each Variable, array, Module, pickled Variable and
    setting in it (the containers around them rebuilt, as ``lampy.tree.map_leaves``)."""
    return map_leaves(fn, value, is_leaf=_is_saved_leaf)


def _is_saved_leaf(x: Any) -> bool:
    return isinstance(x, Module | _SavedVariable)


def _map_modules(value: Any, fn: Callable[[Module], Module]) -> Any:
    """``value`` with ``fn`` applied to each Module in it (containers rebuilt), or
    ``value`` itself when ``fn`` changed none."""
    if isinstance(value, Module):
        return fn(value)
    if not is_container(value):
        return value
    changed = False

    def visit(x: Any) -> Any:
        nonlocal changed
        if not isinstance(x, Module):
            return x
        new = fn(x)
        changed = changed or new is not x
        return new

    new = map_leaves(visit, value, is_leaf=_is_module)
    return new if changed else value
