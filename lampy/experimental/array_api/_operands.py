"""Reading an op's operands: the one namespace and device they share (mixed ones are
refused, naming the op), their values, and undoing broadcasting in that namespace."""

from __future__ import annotations

import math
from types import ModuleType
from typing import Any

import numpy as np

from lampy._errors import LampyTypeError
from lampy._namespaces import is_foreign, namespace_name, namespace_of
from lampy.opkit import Variable, namespace_leaf, value_of
from lampy.opkit import const as numpy_const
from lampy.opkit import param as numpy_param

_SCALARS = (bool, int, float)


def operands(name: str, *xs: Any, keep: bool = True) -> tuple[ModuleType, list[Any]]:
    """The namespace of op ``name``'s operands and their values.

    A Variable gives its value as the engine holds it (an array of its namespace; a
    numpy scalar for a 0-d result of the numpy path); an array is a constant of its
    namespace (a numpy one read by ``lampy.opkit.value_of``, copied if writable and
    ``keep``; another namespace's copied if ``keep``, since the standard has no
    read-only flag); a Python number stays a number (the standard's operators take
    them). ``keep`` says whether the op's closures keep the values (memory accounting
    reads it).

    Raises:
        LampyTypeError: the operands are arrays of two namespaces, or of one namespace on
            two devices (lampy does not move arrays between libraries or devices), or an
            operand is not an array or a number.
    """
    values: list[Any] = []
    found: list[tuple[ModuleType, Any]] = []  # (namespace, device) of each array operand
    for x in xs:
        if type(x) is Variable:
            v = value_of(x, keep, name)
        elif is_foreign(x):
            v = namespace_of(x).asarray(x, copy=True) if keep else x
        elif isinstance(x, _SCALARS):
            values.append(x)
            continue
        elif isinstance(x, np.ndarray | np.generic | list | tuple):
            v = value_of(x, keep, name)
        else:
            raise LampyTypeError(
                f"{name}: an operand is {type(x).__name__}; lampy.experimental.array_api's "
                "ops take Variables, arrays of an array API namespace and Python numbers."
            )
        values.append(v)
        found.append((namespace_of(v), device_of(v)))
    if not found:
        return np, values
    xp, device = found[0]
    for other, other_device in found[1:]:
        if other is not xp:
            raise mixed_namespaces(name, xp, other)
        if other_device != device:
            raise mixed_devices(name, xp, device, other_device)
    return xp, values


def device_of(a: Any) -> Any:
    """The device of an array (``"cpu"`` for numpy's)."""
    return "cpu" if isinstance(a, np.ndarray | np.generic) else a.device


def mixed_namespaces(name: str, xp: ModuleType, other: ModuleType) -> LampyTypeError:
    """The error of an op whose operands are arrays of two namespaces."""
    a, b = namespace_name(xp), namespace_name(other)
    return LampyTypeError(
        f"{name}: its operands are arrays of two namespaces, {a} and {b}. lampy does not "
        "move arrays between libraries (or between host and device) on its own: a copy "
        "there is a cost you should see. Convert one operand first, e.g. "
        f"`{b}.asarray(x)` (or `from_dlpack`) to compute with {b}, and make params, "
        "constants and targets with the namespace of the model's arrays."
    )


def mixed_devices(name: str, xp: ModuleType, device: Any, other: Any) -> LampyTypeError:
    """The error of an op whose operands are arrays of one namespace on two devices."""
    return LampyTypeError(
        f"{name}: its operands are arrays of {namespace_name(xp)} on two devices, {device} "
        f"and {other}. lampy does not move arrays between devices on its own; move one "
        f"first: `x.to_device({other})` or `{namespace_name(xp)}.asarray(x, device=...)`."
    )


def shape_of(a: Any) -> tuple[int, ...]:
    """The shape of a value (``()`` for a Python number)."""
    return tuple(getattr(a, "shape", ()))


def sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """``g`` summed down to ``shape`` in its own namespace, undoing broadcasting: leading
    axes broadcasting added are summed away, and axes where ``shape`` has length 1 are
    summed keeping their length (the namespace-wide twin of ``lampy.unbroadcast``)."""
    gshape = shape_of(g)
    if gshape == shape:
        return g
    xp = namespace_of(g)
    lead = len(gshape) - len(shape)
    axes = (*range(lead), *(lead + i for i, n in enumerate(shape) if n == 1 != gshape[lead + i]))
    if axes:
        g = xp.sum(g, axis=axes, keepdims=True)
    return xp.reshape(g, shape)


def spread(g: Any, shapes: tuple[tuple[int, ...], tuple[int, ...]]) -> Any:
    """A reduction's ``g`` back over its input: ``shapes`` is ``(kept, shape)``, the
    result's shape with the reduced axes kept as 1, and the input's (a broadcast view,
    which the engine copies when it keeps it)."""
    kept, shape = shapes
    xp = namespace_of(g)
    return xp.broadcast_to(xp.reshape(g, kept), shape)


def reduced_shape(shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """``shape`` with the ``axes`` reduced kept as length 1."""
    return tuple(1 if i in axes else n for i, n in enumerate(shape))


def count(shape: tuple[int, ...], axes: tuple[int, ...]) -> int:
    """How many elements a reduction over ``axes`` of an array of ``shape`` takes in."""
    return math.prod(shape[i] for i in axes)


def param(x: Any, dtype: Any = None) -> Variable:
    """A param of ``x``'s namespace, owned by the current scope: ``lampy.param`` for a
    numpy array (or anything numpy takes), a copy of an array of another namespace on its
    device (``lampy.opkit.namespace_leaf``).

    Args:
        x: An array of an array API namespace, or an array-like numpy takes.
        dtype: For numpy input, a floating dtype to cast to (as ``lampy.param``).

    Raises:
        DTypeError: the dtype is not real floating.
        NoScopeError: no scope is open.
    """
    if is_foreign(x):
        return namespace_leaf("param", x, True)
    return numpy_param(x, dtype)


def const(x: Any, dtype: Any = None) -> Variable:
    """A constant of ``x``'s namespace, owned by the current scope (see ``param``).

    Raises:
        NoScopeError: no scope is open.
    """
    if is_foreign(x):
        return namespace_leaf("const", x, False)
    return numpy_const(x, dtype)


__all__ = [
    "const",
    "count",
    "device_of",
    "mixed_devices",
    "mixed_namespaces",
    "operands",
    "param",
    "reduced_shape",
    "shape_of",
    "spread",
    "sum_to",
]
