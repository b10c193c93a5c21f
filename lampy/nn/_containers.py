"""Container modules: Sequential, ModuleList, ModuleDict."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from typing import Any, overload

import attrs

from lampy._errors import LampyTypeError
from lampy.nn._module import Module, inline

__all__ = ["ModuleDict", "ModuleList", "Sequential"]

_module_call = Module.__call__


def _check_modules(owner: str, items: Any) -> None:
    for i, m in enumerate(items):
        if not isinstance(m, Module):
            raise LampyTypeError(
                f"{owner}: item {i} is a {type(m).__name__}, not a lampy.nn.Module; wrap "
                "functions in a Module (e.g. lampy.nn.Lambda) before adding them."
            )


@attrs.frozen(eq=False, repr=False, init=False)
class Sequential(Module):
    """Modules applied one after the other; parameters are named ``0.weight``, ``1.bias``...

    The record is its layers, so the class call takes them as PyTorch's does:
    ``nn.Sequential(a, b, c)`` is ``nn.Sequential.init(a, b, c)`` (and
    ``Sequential(layers=(a, b, c))`` names the field, as ``attrs.evolve`` does).

    Examples:
        >>> from lampy import nn
        >>> rng = np.random.default_rng(0)
        >>> with lampy.Scope():
        ...     model = nn.Sequential.init(
        ...         nn.Linear.init(4, 8, rng=rng), nn.ReLU.init(), nn.Linear.init(8, 1, rng=rng)
        ...     )
        ...     print(model(np.ones((5, 4), np.float32)).shape, model.state_dict().keys())
        (5, 1) dict_keys(['0.weight', '0.bias', '2.weight', '2.bias'])
    """

    layers: tuple[Module, ...] = inline(converter=tuple)

    def __init__(
        self, *modules: Module, layers: Iterable[Module] | None = None, training: bool = True
    ) -> None:
        if layers is not None and modules:
            raise LampyTypeError(
                f"{type(self).__name__}: pass the layers as arguments or as layers=, not both."
            )
        items = modules if layers is None else tuple(layers)
        self.__attrs_init__(items, training=training)

    @classmethod
    def _invalid_record(cls, fields: Mapping[str, Any]) -> str | None:
        items = fields.get("modules") or fields.get("layers") or ()
        if not isinstance(items, tuple | list):
            return None  # an iterable for the converter: checked by init's callers
        for i, m in enumerate(items):
            if not isinstance(m, Module):
                return f"layer {i} must be a lampy.nn.Module, got {type(m).__name__} {m!r:.30}"
        return None

    @classmethod
    def init(cls, *layers: Module) -> Sequential:
        """A Sequential of ``layers``."""
        _check_modules("Sequential.init", layers)
        return cls(layers=layers)

    def forward(self, x: Any) -> Any:
        """Each layer applied to the previous one's output."""
        for layer in self.layers:
            # A layer whose class keeps Module.__call__ (which only calls forward) is
            # run through forward directly: one call less per layer.
            x = layer.forward(x) if type(layer).__call__ is _module_call else layer(x)
        return x

    def __len__(self) -> int:
        return len(self.layers)

    def __iter__(self) -> Iterator[Module]:
        return iter(self.layers)

    @overload
    def __getitem__(self, i: int) -> Module: ...
    @overload
    def __getitem__(self, i: slice) -> Sequential: ...
    def __getitem__(self, i: int | slice) -> Module | Sequential:
        if isinstance(i, slice):
            return attrs.evolve(self, layers=self.layers[i])
        return self.layers[i]


@attrs.frozen(eq=False, repr=False)
class ModuleList(Module):
    """An indexable tuple of modules, named ``0``, ``1``... in parameter names.

    It has no ``forward``: the owner decides how to use its modules. The tuple is the
    ``entries`` field.
    """

    entries: tuple[Module, ...] = inline(converter=tuple)

    @classmethod
    def init(cls, modules: Any = ()) -> ModuleList:
        """A ModuleList of the modules in the iterable ``modules``."""
        items = tuple(modules)
        _check_modules("ModuleList.init", items)
        return cls(items)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[Module]:
        return iter(self.entries)

    def __getitem__(self, i: int) -> Module:
        return self.entries[i]


@attrs.frozen(eq=False, repr=False)
class ModuleDict(Module):
    """Modules keyed by name (insertion order kept), named by key in parameter names.

    It has no ``forward``: the owner decides how to use its modules. The dict is the
    ``entries`` field; ``keys()``, ``values()`` and ``items()`` work as on a dict, and
    a key is also an attribute, as in PyTorch (``model.transformer.wte``).
    """

    entries: dict[str, Module] = inline(converter=dict)

    @classmethod
    def init(cls, modules: Any = ()) -> ModuleDict:
        """A ModuleDict of a mapping or iterable of ``(name, module)`` pairs."""
        items = dict(modules)
        _check_modules("ModuleDict.init", items.values())
        for k in items:
            if not isinstance(k, str) or "." in k or not k:
                raise LampyTypeError(
                    f"ModuleDict.init: key {k!r} must be a non-empty string without '.', "
                    "since it becomes part of dotted parameter names."
                )
        return cls(items)

    def __len__(self) -> int:
        return len(self.entries)

    def __iter__(self) -> Iterator[str]:
        return iter(self.entries)

    def __getitem__(self, key: str) -> Module:
        return self.entries[key]

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def __getattr__(self, name: str) -> Module:
        # Only for names not found otherwise: PyTorch's `self.transformer.wte`.
        if not name.startswith("_"):
            try:
                entries = object.__getattribute__(self, "entries")
            except AttributeError:
                entries = None
            if entries is not None and name in entries:
                return entries[name]  # type: ignore[no-any-return]
            if entries is not None:
                raise AttributeError(
                    f"ModuleDict has no module {name!r}; its keys are {list(entries)}."
                )
        raise AttributeError(name)

    def keys(self) -> Any:
        """The names."""
        return self.entries.keys()

    def values(self) -> Any:
        """The modules."""
        return self.entries.values()

    def items(self) -> Any:
        """The ``(name, module)`` pairs, as ``torch.nn.ModuleDict.items()``."""
        return self.entries.items()
