"""Functional API: grad and value_and_grad over plain numpy arrays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lampy._errors import LampyError
from lampy._memory import grad_buffer
from lampy._scope import Scope
from lampy.autograd._backprop import backward
from lampy.autograd._variable import Variable, param


def _argnums(argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    for n in nums:
        if not -nargs <= n < nargs:
            raise LampyError(
                f"grad: argnums {argnums!r} is out of range for a call with {nargs} "
                "positional arguments."
            )
    return tuple(n % nargs for n in nums)


def _to_numpy(obj: Any) -> Any:
    """Replace every Variable in a nest of tuples, lists and dicts by a copy of its value."""
    if isinstance(obj, Variable):
        return obj.value.copy()
    if isinstance(obj, tuple):
        return (
            type(obj)(*map(_to_numpy, obj))
            if hasattr(obj, "_fields")
            else tuple(map(_to_numpy, obj))
        )
    if isinstance(obj, list):
        return [_to_numpy(o) for o in obj]
    if isinstance(obj, dict):
        return {k: _to_numpy(o) for k, o in obj.items()}
    return obj


def _evaluate(
    f: Callable[..., Any], argnums: int | Sequence[int], has_aux: bool, args: tuple[Any, ...]
) -> tuple[np.ndarray, Any, Any]:
    nums = _argnums(argnums, len(args))
    with Scope():
        call_args = list(args)
        params: list[Variable] = []
        for n in nums:
            p = param(args[n])
            call_args[n] = p
            params.append(p)
        out = f(*call_args)
        aux = None
        if has_aux:
            if not (isinstance(out, tuple) and len(out) == 2):
                raise LampyError(
                    "value_and_grad(has_aux=True): f must return a pair (output, aux), got "
                    f"{type(out).__name__}."
                )
            out, aux = out
        if not isinstance(out, Variable) or out.size != 1:
            shape = getattr(out, "shape", None)
            raise LampyError(
                "grad: f must return a scalar Variable (one element), got "
                f"{type(out).__name__}{'' if shape is None else f' of shape {shape}'}. "
                "Reduce it first, e.g. with `.sum()`."
            )
        if out.needs_grad:
            backward(out)
        grads = []
        for p in params:
            g = p.grad
            grads.append(grad_buffer(p.shape, p.dtype) if g is None else g)
        value = out.value.copy()
        aux = _to_numpy(aux)
    result = grads[0] if isinstance(argnums, int) else tuple(grads)
    return value, aux, result


def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0) -> Callable[..., Any]:
    """Return a function computing the gradient of ``f`` with numpy arrays in and out.

    ``f`` takes arrays (the arguments at ``argnums`` arrive as params) and returns a
    scalar Variable. Each call runs ``f`` in a child scope, backpropagates, and returns
    the gradients as plain numpy arrays owned by the caller; everything else is
    released before it returns. A scope need not be active.

    Args:
        f: The function to differentiate.
        argnums: Which positional argument(s) to differentiate with respect to. An int
            gives one array; a tuple gives a tuple of arrays.

    Examples:
        >>> import numpy as np, lampy
        >>> df = lampy.grad(lambda x: (x * x).sum())
        >>> df(np.array([1.0, 2.0]))
        array([2., 4.])
    """

    def grad_f(*args: Any) -> Any:
        return _evaluate(f, argnums, False, args)[2]

    return grad_f


def value_and_grad(
    f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False
) -> Callable[..., Any]:
    """Like [grad][], but the function returns ``(value, gradient)``.

    With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the function returns
    ``((value, aux), gradient)``; Variables inside ``aux`` come back as numpy arrays.
    ``value`` is a numpy array of the output's shape.
    """

    def value_and_grad_f(*args: Any) -> Any:
        value, aux, grads = _evaluate(f, argnums, has_aux, args)
        return ((value, aux) if has_aux else value), grads

    return value_and_grad_f
