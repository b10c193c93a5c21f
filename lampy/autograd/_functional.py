"""Functional API: grad and value_and_grad over plain numpy arrays."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextvars import ContextVar
from typing import Any

import numpy as np

from lampy._errors import DTypeError, LampyError, LampyTypeError, LampyValueError
from lampy._memory import grad_buffer
from lampy._tree import leaves, map_leaves
from lampy.autograd._backprop import _propagate
from lampy.autograd._edge import NODE
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._node import Node
from lampy.autograd._scope import Scope
from lampy.autograd._variable import Variable, param


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


# The params of the grad / value_and_grad calls running now in this context, outermost
# first: an inner call whose result depends on one of them would cut the outer graph.
_DIFFERENTIATING: ContextVar[tuple[frozenset[Node], ...]] = ContextVar(
    "lampy_differentiating", default=()
)


def _higher_order(name: str, what: str) -> LampyError:
    return LampyError(
        f"{name}: {what}, so its result would depend on a Variable being differentiated; "
        "higher-order gradients are not supported yet (lampy computes first derivatives "
        "only), and the inner result would be cut from the graph, making the outer "
        "gradient silently wrong. Work out the inner derivative by hand as lampy ops, or "
        "pass constants (`x.value`) if the inner call must not depend on the outer one."
    )


def _closed_over(
    name: str, roots: list[Node], inner: Scope, args: tuple[Any, ...], nums: tuple[int, ...]
) -> LampyError | None:
    """The error for a result of ``f`` that depends on a Variable made outside the call that
    needs a gradient (a param of an enclosing scope, or an argument not in ``argnums``),
    or None. Walks the call's own nodes only: the walk stops at the first node made
    outside it, so its cost does not grow with the enclosing graph."""
    seen: set[Node] = set()
    stack = list(roots)
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.scope is not inner:
            if not n.needs_grad or n.scope is None:  # released: backward raises for it
                continue
            shown = nums if len(nums) > 1 else nums[0]
            for i, a in enumerate(args):
                if i not in nums and isinstance(a, Variable) and a.node is n:
                    return LampyError(
                        f"{name}: argument {i} is a Variable that needs a gradient ("
                        f"{n.describe()}) but is not in argnums={shown}"
                        f"; {name} would take it by value, and its result, returned as a numpy "
                        "constant, would be cut from that Variable's graph: a later backward "
                        "through it gives a silently wrong gradient. " + _CONSTANT_FIX
                    )
            return LampyError(
                f"{name}: f uses a Variable made outside it that needs a gradient ("
                f"{n.describe()}, closed over from an enclosing scope), so its result depends "
                f"on it; {name} returns numpy constants, cut from that Variable's graph, and a "
                "later backward through them (a gradient penalty) would give a silently wrong "
                "gradient: higher-order gradients are not supported yet. " + _CONSTANT_FIX
            )
        if n.params is not None:
            stack.extend(p[0] for p in n.params)
    return None


_CONSTANT_FIX = (
    "If the result is not differentiated (the enclosing params are constants here: an "
    "input gradient for logging, a saliency map), say so: call it under `lampy.no_grad()`, "
    "or pass `w.value` instead of the Variable `w`."
)


def _reaches(root: Node, targets: frozenset[Node]) -> bool:
    """Whether ``root``'s graph reaches a node of ``targets`` (each node visited once)."""
    seen: set[Node] = set()
    stack = [root]
    while stack:
        n = stack.pop()
        if n in targets:
            return True
        if n in seen:
            continue
        seen.add(n)
        if n.params is not None:
            stack.extend(e[NODE] for e in n.params)
    return False


def _to_numpy(obj: Any) -> Any:
    """The tree ``obj`` with each Variable replaced by a copy of its value."""
    return map_leaves(lambda v: v.value.copy() if isinstance(v, Variable) else v, obj)


def _evaluate(
    name: str,
    f: Callable[..., Any],
    argnums: int | Sequence[int],
    has_aux: bool,
    args: tuple[Any, ...],
    workers: int | str | None,
) -> tuple[np.ndarray, Any, Any]:
    nums = _argnums(name, argnums, len(args))
    for n in nums:
        if isinstance(args[n], Variable) and args[n].needs_grad:
            raise _higher_order(name, f"argument {n} is a Variable that needs a gradient")
    enclosing = _DIFFERENTIATING.get()
    differentiable = GRAD_ENABLED.get()  # the caller may differentiate through the result
    token = GRAD_ENABLED.set(True)  # differentiate even when called under no_grad
    try:
        with Scope() as scope:
            call_args = list(args)
            params: dict[int, Variable] = {}
            for n in dict.fromkeys(nums):  # one param per distinct argument
                a = np.asarray(args[n].value if isinstance(args[n], Variable) else args[n])
                if a.dtype.kind != "f":
                    raise DTypeError(
                        f"{name}: argument {n} has dtype {a.dtype}; only floating arguments "
                        "can be differentiated. Pass e.g. `x.astype(float)` or a float literal."
                    )
                params[n] = call_args[n] = param(a)
            inner = _DIFFERENTIATING.set((*enclosing, frozenset(p.node for p in params.values())))
            try:
                out = f(*call_args)
            finally:
                _DIFFERENTIATING.reset(inner)
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
            if enclosing and _reaches(out.node, frozenset().union(*enclosing)):
                raise _higher_order(name, "f uses a Variable of an enclosing grad")
            if differentiable:
                roots = [out.node]
                roots.extend(v.node for v in leaves(aux) if isinstance(v, Variable))
                error = _closed_over(name, roots, scope, args, nums)
                if error is not None:
                    raise error
            if out.needs_grad:
                # Only this call's params receive gradients: params of enclosing scopes
                # that f closes over are left as they are.
                targets = {p.node for p in params.values()}
                for _ in _propagate([out], None, (), targets, workers=workers):
                    pass
            grads = {}
            for n, p in params.items():
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

    The results are numpy constants. With grad mode on, a call whose output (or ``aux``)
    depends on a Variable that needs a gradient and is not one of its own params (a
    param of an enclosing scope that ``f`` closes over, or one passed at a position not
    in ``argnums``) raises ``LampyError``: a backward through the constant result would
    silently miss that dependence (higher-order gradients are not supported yet). Under
    ``lampy.no_grad()`` such Variables are taken as constants: the caller says the
    result is not differentiated.

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
    follow ``lampy.grad``'s rule: with grad mode on, the value, gradient and aux must not
    depend on one that needs a gradient (``LampyError``); under ``lampy.no_grad()`` they
    are constants.
    """

    def value_and_grad_f(*args: Any) -> Any:
        value, aux, grads = _evaluate("value_and_grad", f, argnums, has_aux, args, workers)
        return ((value, aux) if has_aux else value), grads

    return value_and_grad_f
