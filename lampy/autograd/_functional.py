"""Functional API: grad and value_and_grad over plain numpy arrays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lampy._errors import DTypeError, LampyError, LampyTypeError, LampyValueError
from lampy._memory import grad_buffer
from lampy._tree import leaves, map_leaves
from lampy.autograd._backprop import _propagate
from lampy.autograd._edge import NODE
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._higher import gradients, lifted
from lampy.autograd._leaves import const, param
from lampy.autograd._node import Node
from lampy.autograd._scope import Scope
from lampy.autograd._variable import Variable


def _argnums(name: str, argnums: int | Sequence[int], nargs: int) -> tuple[int, ...]:
    nums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    if not nums:
        raise LampyValueError(f"{name}: argnums is empty; name at least one argument.")
    for n in nums:
        if not isinstance(n, int) or not -nargs <= n < nargs:
            raise LampyValueError(
                f"{name}: argnums {argnums!r} does not fit a call with {nargs} positional "
                "arguments."
            )
    return tuple(n % nargs for n in nums)


def _depends_outside(roots: list[Node], inner: Scope) -> bool:
    """Whether the graph of ``roots`` reaches a node made outside the call (not owned by
    ``inner``) that needs a gradient: a Variable ``f`` closed over, or an argument not in
    ``argnums``. Walks the call's own nodes only: the walk stops at the first node made
    outside it, so its cost does not grow with the enclosing graph."""
    seen: set[Node] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.scope is not inner:
            if n.needs_grad and n.scope is not None:
                return True
            continue
        if n.params is not None:
            stack.extend(e[NODE] for e in n.params)
    return False


def _to_numpy(obj: Any) -> Any:
    """The tree ``obj`` with each Variable replaced by a copy of its value."""
    return map_leaves(lambda v: v.value.copy() if isinstance(v, Variable) else v, obj)


def _input(a: Any, n: int, name: str, differentiable: bool) -> Variable:
    """The Variable ``f`` gets for argument ``n``: a Variable that needs a gradient, when
    the result is differentiated further, stays in its graph (a ``lifted`` view of it,
    the target of this call's gradient); anything else becomes a new param."""
    if differentiable and isinstance(a, Variable) and a.needs_grad:
        if a.dtype.kind not in "fc":  # pragma: no cover (a Variable needing a gradient is)
            raise DTypeError(f"{name}: argument {n} has dtype {a.dtype}.")
        return lifted(a.node, a.value)
    v = np.asarray(a.value if isinstance(a, Variable) else a)
    if v.dtype.kind not in "fc":
        raise DTypeError(
            f"{name}: argument {n} has dtype {v.dtype}; only floating (or complex) arguments "
            "can be differentiated. Pass e.g. `x.astype(float)` or a float literal."
        )
    return param(v)


def _evaluate(
    name: str,
    f: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    args: tuple[Any, ...],
    workers: int | str | None,
) -> tuple[Any, Any, Any]:
    nums = _argnums(name, argnums, len(args))
    differentiable = GRAD_ENABLED.get()  # the caller may differentiate through the result
    token = GRAD_ENABLED.set(True)  # differentiate even when called under no_grad
    try:
        with Scope() as scope:
            call_args = list(args)
            inputs: dict[int, Variable] = {}
            for n in dict.fromkeys(nums):  # one input per distinct argument
                inputs[n] = call_args[n] = _input(args[n], n, name, differentiable)
            out = f(*call_args)
            aux = None
            if has_aux:
                if not (isinstance(out, tuple) and len(out) == 2):
                    raise LampyTypeError(
                        f"{name}(has_aux=True): f must return a pair (output, aux), got "
                        f"{type(out).__name__}."
                    )
                out, aux = out
            if not isinstance(out, Variable) or out.size != 1:
                shape = getattr(out, "shape", None)
                raise LampyTypeError(
                    f"{name}: f must return a scalar Variable (one element), got "
                    f"{type(out).__name__}{'' if shape is None else f' of shape {shape}'}. "
                    "Reduce it first, e.g. with `.sum()`."
                )
            roots = [out.node, *(v.node for v in leaves(aux) if isinstance(v, Variable))]
            if differentiable and _depends_outside(roots, scope):
                # The result is differentiated further (a gradient penalty, a nested grad):
                # a recorded gradient, handed with its graph to the caller's scope.
                return _nested(scope, out, aux, inputs, nums, argnums)
            if out.needs_grad:
                # Only this call's params receive gradients: params of enclosing scopes
                # that f closes over are left as they are (it runs under no_grad there).
                targets = {p.node for p in inputs.values()}
                for _ in _propagate([out], None, (), targets, workers=workers):
                    pass
            grads = {}
            for n, p in inputs.items():
                g = p.grad
                grads[n] = grad_buffer(p.shape, p.dtype) if g is None else g
            value = out.value.copy()
            aux = _to_numpy(aux)
    finally:
        GRAD_ENABLED.reset(token)
    if isinstance(argnums, int):
        return value, aux, grads[nums[0]]
    # A repeated index gets its own copy, so every returned array is owned separately.
    result = []
    for i, n in enumerate(nums):
        result.append(grads[n] if nums.index(n) == i else grads[n].copy())
    return value, aux, tuple(result)


def _nested(
    scope: Scope,
    out: Variable,
    aux: Any,
    inputs: dict[int, Variable],
    nums: tuple[int, ...],
    argnums: int | Sequence[int],
) -> tuple[Any, Any, Any]:
    """The gradients of a call whose result depends on Variables made outside it, as
    Variables recorded in the caller's scope (``gradients(create_graph=True)``)."""
    order = list(inputs)
    found = gradients(out, [inputs[n] for n in order], create_graph=True, allow_unused=True)
    grads = {}
    for n, g in zip(order, found, strict=True):
        if g is None:  # f does not use it: a zero gradient
            v = inputs[n]
            g = _variable_of_zeros(v.shape, v.dtype)
        grads[n] = g
    if scope.parent is None:  # pragma: no cover (an outer Variable lives in an open scope)
        raise LampyError("lampy.grad: a nested gradient needs an enclosing scope.")
    scope.hand_over()
    if isinstance(argnums, int):
        return out, aux, grads[nums[0]]
    return out, aux, tuple(grads[n] for n in nums)


def _variable_of_zeros(shape: tuple[int, ...], dtype: Any) -> Variable:
    return const(np.zeros(shape, dtype))


def grad(
    f: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    *,
    workers: int | str | None = None,
) -> Callable[..., Any]:
    """Return a function computing the gradient of ``f`` with numpy arrays in and out.

    ``f`` takes arrays (the arguments at ``argnums`` arrive as params) and returns a
    scalar Variable. Each call runs ``f`` in a child scope with grad mode on (also under
    ``lampy.no_grad``), backpropagates into that call's params only, and returns
    the gradients as plain numpy arrays owned by the caller; everything else is
    released before it returns. A scope need not be active.

    With grad mode on, a call whose output (or ``aux``) depends on a Variable that needs
    a gradient and was made outside the call (an enclosing ``grad``'s input, a param
    ``f`` closes over, an argument that is such a Variable) returns Variables instead,
    recorded in the caller's scope with the graph they came from, so that an enclosing
    computation differentiates through them: nested ``grad`` works to any order, and a
    gradient penalty reaches the weights (``lampy.gradients(..., create_graph=True)``
    does the recording). Under ``lampy.no_grad()`` such Variables are taken as constants
    and numpy arrays come back: the caller says the result is not differentiated.

    Args:
        f: The function to differentiate.
        argnums: Which positional argument(s) to differentiate with respect to. An int
            gives one array; a tuple gives a tuple of arrays (an index may repeat).
        has_aux: If True, ``f`` returns ``(output, aux)`` and the function returns
            ``(gradient, aux)``, with Variables in ``aux`` turned into numpy arrays.
        workers: Threads for the backward pass, as in ``lampy.backward``.

    Examples:
        >>> import numpy as np, lampy
        >>> df = lampy.grad(lambda x: (x * x).sum())
        >>> df(np.array([1.0, 2.0]))
        array([2., 4.])
    """

    def grad_f(*args: Any) -> Any:
        _, aux, grads = _evaluate("grad", f, argnums, has_aux, args, workers)
        return (grads, aux) if has_aux else grads

    return grad_f


def value_and_grad(
    f: Callable[..., Any],
    argnums: int | Sequence[int] = 0,
    has_aux: bool = False,
    *,
    workers: int | str | None = None,
) -> Callable[..., Any]:
    """Like ``lampy.grad``, but the function returns ``(value, gradient)``.

    With ``has_aux=True``, ``f`` returns ``(output, aux)`` and the function returns
    ``((value, aux), gradient)``; Variables inside ``aux`` come back as numpy arrays.
    ``value`` is a numpy array of the output's shape. Variables from outside the call
    follow ``lampy.grad``'s rule: when the result depends on one that needs a gradient
    (and grad mode is on), value, gradient and aux come back as Variables of the
    caller's scope, differentiable; under ``lampy.no_grad()`` they are constants.
    """

    def value_and_grad_f(*args: Any) -> Any:
        value, aux, grads = _evaluate("value_and_grad", f, argnums, has_aux, args, workers)
        return ((value, aux) if has_aux else value), grads

    return value_and_grad_f
