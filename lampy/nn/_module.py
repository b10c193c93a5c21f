"""The Module base: frozen attrs records holding parameter Variables, buffers and settings.

A module is an ``attrs`` frozen record (``@attrs.frozen(eq=False, repr=False)``) whose
fields hold its parameters (param Variables), buffers (writable numpy arrays such as
BatchNorm's running statistics), submodules (alone, or in tuples, lists and dicts) and
static settings (ints, strings, callables). Everything else follows from walking those
fields in declaration order: ``named_parameters``, ``state_dict`` with PyTorch's dotted
keys, ``load_state_dict`` into the existing buffers, ``train``/``eval`` copies.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar, NamedTuple, TypeVar

import attrs
import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy._narrowing import cast_checked
from lampy.autograd._inplace import in_place
from lampy.autograd._variable import Variable

__all__ = ["INLINE", "IncompatibleKeys", "Module", "inline"]

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
    """What [Module.load_state_dict][lampy.nn.Module.load_state_dict] did not match."""

    missing_keys: list[str]
    unexpected_keys: list[str]


def _entries(prefix: str, value: Any) -> Iterator[tuple[str, Any]]:
    """The (dotted name, leaf) pairs below one field value, in order.

    Leaves are Variables, numpy arrays (buffers) and Modules; containers are walked.
    """
    if isinstance(value, Module | Variable | np.ndarray):
        yield prefix, value
    elif isinstance(value, tuple | list):
        for i, item in enumerate(value):
            yield from _entries(f"{prefix}.{i}" if prefix else str(i), item)
    elif isinstance(value, dict):
        for key, item in value.items():
            yield from _entries(f"{prefix}.{key}" if prefix else str(key), item)


@attrs.frozen(eq=False, repr=False)
class Module:
    """Base class of neural-network modules: immutable records of parameters.

    Subclasses are ``attrs`` frozen records, declared with
    ``@attrs.frozen(eq=False, repr=False)`` (``eq=False``: modules compare by identity and
    never compare arrays), built by a classmethod factory ``init(...)`` that takes
    PyTorch's constructor arguments, and define ``forward``. Calling a module calls
    ``forward``.

    Parameters are param Variables owned by the scope that was current when the module
    was made; forward passes run in child scopes, so a step's graph is released when its
    scope exits while the parameters (and their accumulated gradients) stay. Optimizers
    and [load_state_dict][lampy.nn.Module.load_state_dict] update the parameters' buffers
    in place, so every copy of a module made by [train][lampy.nn.Module.train] or
    [eval][lampy.nn.Module.eval] sees the same weights.

    Attributes:
        training: Whether the module is in training mode (dropout active, batch norm
            using and updating batch statistics). Change it with ``train()``/``eval()``,
            which return copies.

    Example:
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
    """

    training: bool = attrs.field(default=True, kw_only=True)

    # Subclasses set this to describe their settings in repr: "in_features=3, ...".
    _repr_fields: ClassVar[tuple[str, ...]] = ()

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
        for f in attrs.fields(type(self)):
            if f.name == "training":
                continue
            yield ("" if f.metadata.get(INLINE) else f.name), getattr(self, f.name)

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
        """The trainable parameters, in the order [named_parameters][] gives them."""
        return [p for _, p in self.named_parameters()]

    def named_buffers(self, prefix: str = "") -> Iterator[tuple[str, np.ndarray]]:
        """The buffers (numpy arrays such as running statistics) with dotted names."""
        for name, leaf in self._named_state(prefix):
            if isinstance(leaf, np.ndarray):
                yield name, leaf

    def num_parameters(self) -> int:
        """The number of scalar trainable parameters (``sum(p.size)``)."""
        return sum(p.size for p in self.parameters())

    def zero_grad(self) -> None:
        """Fill every parameter's gradient buffer with zeros, in place."""
        for p in self.parameters():
            p.zero_grad()

    # ----------------------------------------------------------------- state
    def state_dict(self) -> dict[str, np.ndarray]:
        """The parameters and buffers as numpy arrays, keyed by PyTorch's dotted names.

        Like PyTorch's, the arrays share memory with the module (read-only views), so
        they change as the module trains; copy them (``{k: v.copy() ...}``) to keep a
        snapshot. Frozen parameters (Variables that need no gradient) are included.
        """
        out: dict[str, np.ndarray] = {}
        for name, leaf in self._named_state():
            if name in out:
                continue
            if isinstance(leaf, Variable):
                out[name] = leaf.value
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
            state_dict: Arrays keyed by dotted names, as [state_dict][lampy.nn.Module.state_dict]
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
    def train(self: M, mode: bool = True) -> M:
        """A copy of this module and its submodules with ``training`` set to ``mode``.

        The copy shares every parameter and buffer with this module.
        """
        return self._with_mode(mode)

    def eval(self: M) -> M:
        """A copy in evaluation mode (``train(False)``), sharing parameters and buffers."""
        return self._with_mode(False)

    def _with_mode(self: M, mode: bool) -> M:
        changes: dict[str, Any] = {"training": mode}
        for f in attrs.fields(type(self)):
            if f.name != "training":
                value = getattr(self, f.name)
                new = _map_modules(value, lambda m: m._with_mode(mode))
                if new is not value:
                    changes[f.alias or f.name] = new
        return attrs.evolve(self, **changes)

    def apply(self: M, fn: Callable[[Module], Module]) -> M:
        """A copy with ``fn`` applied to every submodule (bottom up), then to this one."""
        changes: dict[str, Any] = {}
        for f in attrs.fields(type(self)):
            value = getattr(self, f.name)
            new = _map_modules(value, lambda m: m.apply(fn))
            if new is not value:
                changes[f.alias or f.name] = new
        return fn(attrs.evolve(self, **changes) if changes else self)  # type: ignore[return-value]

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


def _map_modules(value: Any, fn: Callable[[Module], Module]) -> Any:
    """``value`` with ``fn`` applied to each Module in it (containers rebuilt), or
    ``value`` itself when it holds no Module."""
    if isinstance(value, Module):
        return fn(value)
    if isinstance(value, tuple | list):
        items = [_map_modules(v, fn) for v in value]
        if all(a is b for a, b in zip(items, value, strict=True)):
            return value
        return type(value)(items)
    if isinstance(value, dict):
        new = {k: _map_modules(v, fn) for k, v in value.items()}
        if all(new[k] is value[k] for k in value):
            return value
        return new
    return value
