"""What the special-function families share: scipy.special on first use, elementwise
values with numpy broadcasting, the error for a refused gradient, dtype keeping."""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import numpy as np

from lampy._errors import LampyValueError
from lampy._scipy import scipy_module
from lampy.opkit import broadcast_error, needs_grad, real_operands, value_of, values_of


def sp(name: str) -> ModuleType:
    """``scipy.special``, for the lampy function ``name`` (MissingExtraError without it)."""
    return scipy_module("scipy.special", f"lampy.special.{name}")


def unary(name: str, x: Any) -> tuple[Any, Any]:
    """``x``'s value and ``scipy.special.<name>`` of it."""
    real_operands(f"special.{name}", x)
    a = value_of(x, name=name)
    return a, getattr(sp(name), name)(a)


def binary(name: str, x1: Any, x2: Any, fn: Callable[..., Any] | None = None) -> tuple[Any, ...]:
    """Both values (promoted as lampy's binary ops do) and ``fn`` (by default
    ``scipy.special.<name>``) of them; a broadcasting failure is a ShapeError."""
    real_operands(f"special.{name}", x1, x2)
    a, b = values_of(x1, x2, name=name)
    f = fn if fn is not None else getattr(sp(name), name)
    try:
        value = f(a, b)
    except ValueError:
        raise broadcast_error(name, a, b) from None
    return a, b, value


def ordered(name: str, order: Any, x: Any) -> tuple[Any, Any, Any]:
    """The values of an order or shape argument (``n``, ``v``, ``a``: no gradient) and of
    ``x``, and ``scipy.special.<name>(order, x)`` in ``x``'s float dtype: an integer
    order next to a float32 ``x`` keeps it float32. A broadcasting failure is a
    ShapeError."""
    real_operands(f"special.{name}", order, x)
    k, a = value_of(order, name=name), value_of(x, name=name)
    try:
        value = getattr(sp(name), name)(k, a)
    except ValueError:
        raise broadcast_error(name, k, a) from None
    return k, a, like(value, a)


def like(value: Any, *values: Any) -> Any:
    """``value`` in the dtype numpy's promotion gives ``values``, where scipy computes in
    float64 what a float32 input asked (``polygamma``, ``yn``, ``multigammaln``): float32
    stays float32."""
    dtype = np.result_type(*values)
    if dtype.kind == "f" and np.result_type(value) != dtype:  # float64 from an order
        return np.asarray(value, dtype=dtype)[()]
    return value


def refuse_gradient(name: str, arg: str, x: Any, why: str) -> None:
    """Raise if ``x``, argument ``arg`` of ``name``, needs a gradient that has no closed
    form (the order of a Bessel function, ``a`` of ``gammainc``)."""
    if needs_grad(x):
        raise LampyValueError(
            f"lampy.special.{name}: no gradient in {arg}: {why}. Pass {arg} as a constant "
            f"(a number, a numpy array, or `{arg}.value` of the Variable) to differentiate "
            "in the other arguments."
        )
