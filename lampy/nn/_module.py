"""The Module base: frozen attrs records holding parameter Variables, buffers and settings.

A module is an ``attrs`` frozen record (``@attrs.frozen(eq=False, repr=False)``) whose
fields hold its parameters (param Variables), buffers (``lampy.nn.Buffer``, such as
BatchNorm's running statistics), submodules (alone, or in tuples, lists and dicts) and
static settings (ints, strings, callables). Everything else follows from walking those
fields in declaration order: ``named_parameters``, ``state_dict`` with PyTorch's dotted
keys, ``load_state_dict`` into the existing buffers, ``with_training`` copies, deep
copies and pickles.

Calling a module class with PyTorch's constructor arguments (``Linear(3, 2)``) runs
its ``init`` factory (``_ModuleMeta.__call__``): the arguments that do not build the
record from its fields go to ``init``, which draws from lampy's default generator when
no ``rng=`` is given. The PyTorch habits that cannot work on immutable records fail
loudly, with the lampy way in the message: assigning an attribute after construction.

This file holds the record and its public methods; the files it imports hold the rest
(``lampy/nn/README.md`` lists them): the class call's checks, the construction window,
state dicts, copies and pickles, and the modes.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, TypeVar

import attrs
import numpy as np

from lampy._errors import LampyTypeError, NoScopeError
from lampy._tree import is_container, leaves
from lampy.autograd import zero_grads
from lampy.nn._buffer import Buffer
from lampy.nn._construction_checks import binds, call_text, construction_message, record_problem
from lampy.nn._construction_window import (
    ATTRS_FROZEN_SETATTR,
    OWN,
    immutable_delattr,
    immutable_setattr,
    join_window,
    settle,
)
from lampy.nn._copies_and_pickles import (
    SavedVariable,
    copy_state,
    map_modules,
    pickled,
    restore,
    restore_dynamic,
)
from lampy.nn._marker import is_module
from lampy.nn._modes import copy_switch, evaluating, switch
from lampy.nn._state_dict import IncompatibleKeys, load_state, state_arrays, state_entries
from lampy.opkit import Variable

__all__ = ["INLINE", "IncompatibleKeys", "Module", "inline"]

M = TypeVar("M", bound="Module")

# Pickles made before these moved to _copies_and_pickles.py name them here: they load.
_restore = restore
_restore_dynamic = restore_dynamic
_SavedVariable = SavedVariable

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
        for leaf in leaves(value, is_leaf=is_module):
            if isinstance(leaf, Module | Variable):
                _collect_parameters(leaf, out, seen)


# ----------------------------------------------------------------- the record
class _ModuleMeta(type):
    """The metaclass of modules: a class call is either the record's constructor (its
    fields, as ``attrs.evolve`` and ``init`` call it) or, when the arguments do not make
    a record and bind to the class's ``init``, PyTorch's constructor call, which
    ``init`` serves (``nn.Linear(3, 2)`` is ``nn.Linear.init(3, 2)``)."""

    def __call__(cls, *args: Any, **kwargs: Any) -> Any:
        if "_lampy_settled" not in cls.__dict__:
            settle(cls)  # type: ignore[arg-type]
        if (args or kwargs) and not getattr(cls, "_dynamic", False):
            problem = record_problem(cls, args, kwargs)
            if problem is not None:
                init = getattr(cls, "init", None)
                if init is not None and binds(init, args, kwargs):
                    try:
                        return init(*args, **kwargs)  # its records join the window
                    except NoScopeError:
                        call = f"{cls.__name__}({call_text(args, kwargs)})"
                        raise NoScopeError(
                            f"{call} makes parameters, and no lampy.Scope is active: every "
                            "parameter belongs to the scope that releases it. Build the "
                            f"model inside one:\n\n    with lampy.Scope():\n        "
                            f"model = ...\n"
                        ) from None
                raise LampyTypeError(construction_message(cls, args, kwargs, problem))
        made = super().__call__(*args, **kwargs)
        join_window(made)
        return made


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

    # The marker by which the files below this one recognise modules (_marker.py).
    __lampy_module__: ClassVar[bool] = True

    def __new__(cls, *args: Any, **kwargs: Any) -> Any:
        # Copying and unpickling call __new__ alone (the class call checks arguments).
        if "_lampy_settled" not in cls.__dict__:
            settle(cls)
        return super().__new__(cls)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        # attrs gives each frozen class a __setattr__ that raises a bare
        # FrozenInstanceError; modules explain instead (the same error, subclassed).
        if cls.__dict__.get("__setattr__") is ATTRS_FROZEN_SETATTR:
            type.__setattr__(cls, "__setattr__", immutable_setattr)
            type.__setattr__(cls, "__delattr__", immutable_delattr)
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
        return self._training and not evaluating(self)

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
            return [(k, v) for k, v in self.__dict__.items() if not k.startswith(OWN)]
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
                {k: v for k, v in self.__dict__.items() if not k.startswith(OWN)}, **changes
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
            for name, leaf in state_entries(prefix, value):
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

    def _named_state(
        self, prefix: str = ""
    ) -> Iterator[tuple[str, Variable | Buffer | np.ndarray]]:
        """Every Variable and buffer with its dotted name, in PyTorch's order."""
        for field_prefix, value in self._fields():
            for name, leaf in state_entries(field_prefix, value):
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
        """The buffers (such as running statistics) with dotted names: a ``lampy.nn.Buffer``
        as its read-only ``value``, a plain numpy array field as itself."""
        for name, leaf in self._named_state(prefix):
            if isinstance(leaf, Buffer):
                yield name, leaf.value
            elif isinstance(leaf, np.ndarray):
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
        return state_arrays(self._named_state())

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
        return load_state(type(self).__name__, dict(self._named_state()), state_dict, strict)

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
            new = map_modules(value, lambda m: m.with_training(training))
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
        switch(self.modules(), True)
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
        switch(self.modules(), not mode)
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
            new = map_modules(value, lambda m: m.apply(fn))
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
        copy_switch(self, new)
        return new

    def __deepcopy__(self: M, memo: dict[int, Any]) -> M:
        """A copy with new parameters (same values, owned by the current scope), new
        buffers and deep copies of the settings; shared entries stay shared. Modules
        switched by ``eval()`` are switched in the copy too, as PyTorch's flag is."""
        new: M = copy_state(self, memo)
        copy_switch(self, new)
        return new

    def __reduce__(self) -> tuple[Any, ...]:
        """Pickle the state, not the graph: parameter values, buffers and settings.

        Unpickling makes new parameters in the current scope (``pickle.loads`` inside
        ``with lampy.Scope():``). For files, prefer ``lampy.save``: it writes
        safetensors, which load without running code.
        """
        return pickled(self)
