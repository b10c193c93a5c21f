"""The checks of a module class call: whether the arguments build the record (its
fields' types, the class's ``_invalid_record``), and the message when they fit neither
the record nor ``init``.

``_ModuleMeta.__call__`` (in ``_module.py``) asks ``record_problem`` before attrs'
``__init__`` runs; a field annotated as a Variable, array, Generator or Module (alone,
optional, or in a tuple or dict) must hold one. The construction window asks the same
checks of a field assigned in a PyTorch-style ``__init__`` (``record_spec``).
"""

from __future__ import annotations

import functools
import inspect
import types
import typing
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

import attrs
import numpy as np

from lampy.nn._buffer import Buffer, as_buffer
from lampy.nn._marker import is_module, is_module_class
from lampy.opkit import Variable

__all__ = [
    "binds",
    "call_text",
    "construction_message",
    "record_problem",
    "record_spec",
    "short",
]

_CHECKED_TYPES = (Variable, Buffer, np.ndarray, np.random.Generator)


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
        return not (
            is_module(value)
            or isinstance(value, Variable | Buffer | np.ndarray | str | bytes | int | float)
        )

    def describe(self) -> str:
        names = " or ".join(t.__name__ for t in self.types)
        what = {"one": f"a {names}", "seq": f"a tuple of {names}", "map": f"a dict of {names}"}
        return what[self.shape] + (" or None" if self.optional else "")


def _is_state_type(t: Any) -> bool:
    return is_module_class(t) or (isinstance(t, type) and issubclass(t, _CHECKED_TYPES))


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
def record_spec(cls: type) -> tuple[inspect.Signature, dict[str, _FieldCheck]]:
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
            if f.converter is as_buffer:  # it turns an array into a Buffer
                check = check._replace(types=(*check.types, np.ndarray))
            checks[f.alias or f.name] = check
    return sig, checks


def record_problem(cls: type, args: tuple[Any, ...], kwargs: dict[str, Any]) -> str | None:
    """Why ``cls(*args, **kwargs)`` cannot build the record, or None if it can."""
    sig, checks = record_spec(cls)
    fields = [p for p in list(sig.parameters)[1:] if p != "training"]
    try:
        partial = sig.bind_partial(None, *args, **kwargs)
    except TypeError as e:
        return f"{e}; the record's fields are ({', '.join(fields)})"
    # Wrong types first: PyTorch's arguments land in the fields of parameters.
    for name, value in partial.arguments.items():
        check = checks.get(name)
        if check is not None and not check.accepts(value):
            return f"{name} must be {check.describe()}, got {short(value)}"
    try:
        bound = sig.bind(None, *args, **kwargs)
    except TypeError as e:
        return f"{e}; the record's fields are ({', '.join(fields)})"
    bound.apply_defaults()
    invalid: str | None = cls._invalid_record(bound.arguments)  # type: ignore[attr-defined]
    return invalid


def short(value: Any) -> str:
    """A one-line description of an argument for messages."""
    if is_module(value):
        return f"{type(value).__name__}(...)"
    if isinstance(value, Variable | Buffer | np.ndarray):
        return f"{type(value).__name__} of shape {value.shape}"
    text = repr(value)
    return f"{type(value).__name__} {text if len(text) <= 40 else text[:37] + '...'}"


def call_text(args: tuple[Any, ...], kwargs: dict[str, Any]) -> str:
    def one(v: Any) -> str:
        if is_module(v):
            return f"{type(v).__name__}(...)"
        text = repr(v)
        return text if len(text) <= 40 else "..."

    return ", ".join([*map(one, args), *(f"{k}={one(v)}" for k, v in kwargs.items())])


def construction_message(
    cls: type, args: tuple[Any, ...], kwargs: dict[str, Any], problem: str
) -> str:
    prefix = "nn." if cls.__module__.startswith("lampy.nn") else ""
    name = f"{prefix}{cls.__name__}"
    called = f"{name}({call_text(args, kwargs)})"
    init = getattr(cls, "init", None)
    if init is None:
        return f"{called}: calling a module class builds the record from its fields, and {problem}."
    try:
        init(*args, **kwargs)  # only to read the binding error: the call does not bind
    except TypeError as e:
        init_problem = str(e)
    else:  # pragma: no cover - binds said it does not bind
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


def binds(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """Whether ``fn(*args, **kwargs)`` binds to ``fn``'s signature."""
    try:
        inspect.signature(fn).bind(*args, **kwargs)
    except TypeError:
        return False
    return True
