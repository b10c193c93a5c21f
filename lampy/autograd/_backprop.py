"""The backprop engine: reverse topological order, closures accumulating into buffers."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from lampy import _memory
from lampy._errors import DTypeError, LampyError, LampyTypeError, ShapeError
from lampy.autograd._unbroadcast import Contribution
from lampy.autograd._variable import Variable

_grad_buffer = _memory.grad_buffer
_own_grad = _memory.own_grad


def _topological(roots: Sequence[Variable]) -> tuple[list[Variable], dict[Variable, int]]:
    """Nodes reachable from ``roots`` through params, every consumer before its inputs.

    Also counts, for each leaf, the edges that reach it (how many contributions its
    gradient receives). Iterative, so chains of any length work.
    """
    post: list[Variable] = []
    visited: set[Variable] = set()
    edges_to_leaf: dict[Variable, int] = {}
    stack: list[tuple[Variable, bool]] = [(r, False) for r in reversed(roots)]
    push = stack.append
    pop = stack.pop
    add = visited.add
    while stack:
        node, expanded = pop()
        if expanded:
            post.append(node)
            continue
        if node in visited:
            continue
        add(node)
        push((node, True))
        op = node.op
        if op is not None:
            for inp, _ in op.params:
                if inp.op is None:
                    edges_to_leaf[inp] = edges_to_leaf.get(inp, 0) + 1
                if inp not in visited:
                    push((inp, False))
    post.reverse()
    return post, edges_to_leaf


def _seed(root: Variable, grad: Any, borrow: bool = False) -> np.ndarray:
    value = root.value
    if not root.needs_grad and value.dtype.kind != "f":
        raise DTypeError(
            f"backward: the root (made by '{root._label}') has dtype {value.dtype}; only "
            "floating Variables carry gradients. Integer and boolean Variables are "
            "constants: backpropagate from a float result computed from params."
        )
    if not root.needs_grad:
        raise LampyError(
            f"backward: the root (made by '{root._label}', shape {value.shape}) does not "
            "need a gradient: nothing it was computed from is a param (or it was computed "
            "under lampy.no_grad()). Make the inputs with lampy.param(...)."
        )
    if grad is None:
        if value.size != 1:
            raise ShapeError(
                f"backward: the root has shape {value.shape}; a gradient can be seeded "
                "implicitly only for a scalar (one element). Pass `grad=` with an array "
                f"of shape {value.shape}, or reduce the root first (e.g. `.sum()`)."
            )
        buf = _grad_buffer(value.shape, value.dtype)
        buf.fill(1)
        return buf
    if isinstance(grad, Variable):
        grad = grad.value
    if isinstance(grad, np.ndarray | np.generic):
        if grad.dtype != value.dtype:
            raise DTypeError(
                f"backward: grad has dtype {grad.dtype} but the root has dtype "
                f"{value.dtype}; pass `grad.astype({value.dtype})`."
            )
    else:
        grad = np.asarray(grad)
        if grad.dtype.kind not in "fiub":
            raise DTypeError(f"backward: grad must be numeric, got dtype {grad.dtype}")
    if grad.shape != value.shape:
        raise ShapeError(
            f"backward: grad has shape {grad.shape} but the root has shape {value.shape}; "
            "they must be equal."
        )
    if borrow:
        return np.asarray(grad, dtype=value.dtype)
    return np.array(grad, dtype=value.dtype, copy=True)


def _propagate(
    roots: Sequence[Variable],
    grads: Sequence[Any] | None,
    retain: Iterable[Variable],
    targets: set[Variable] | None = None,
) -> Iterator[Variable]:
    """Run backprop, yielding each leaf as soon as its gradient is final.

    With ``targets``, only those leaves receive gradients; other leaves are untouched.
    """
    if grads is not None and len(grads) != len(roots):
        raise LampyError(
            f"backward: {len(roots)} roots but {len(grads)} grads; pass one grad per root "
            "(None seeds 1 for a scalar root)."
        )
    # Every seed is checked before any buffer is touched: a bad call changes nothing.
    # The caller's array is only read when it seeds the one root, which is an op result
    # nothing adds into and not retained; otherwise it is copied.
    keep = set(retain)
    borrow = len(roots) == 1 and roots[0].op is not None and roots[0] not in keep
    seeds = [_seed(r, None if grads is None else grads[i], borrow) for i, r in enumerate(roots)]
    for v in keep:
        v.value  # noqa: B018 - raises ReleasedError for a released Variable
    order, pending = _topological(roots)
    if targets is not None:
        pending = {leaf: n for leaf, n in pending.items() if leaf in targets}

    node_grads: dict[Variable, np.ndarray] = {}
    ready: list[Variable] = []
    for root, seed in zip(roots, seeds, strict=True):
        if root.op is None:  # the root is itself a leaf
            if targets is None or root in targets:
                _add_to_leaf(root, seed)
                if root not in pending:
                    ready.append(root)
        elif root in node_grads:
            node_grads[root] += seed
        else:
            node_grads[root] = seed
    borrowed = roots[0] if borrow else None
    del seeds, seed  # from here on node_grads alone holds them, so they are freed when used
    yield from ready
    ready.clear()

    it = iter(order)
    pop_grad = node_grads.pop
    get_grad = node_grads.get
    while True:
        with np.errstate(all="ignore"):
            for node in it:
                op = node.op
                if op is None:
                    continue
                g = pop_grad(node)
                # g is "free" once no one else holds it: then the last input may keep it
                # (or a view of it) as its own buffer instead of a copy.
                g_free = node is not borrowed
                if keep and node in keep:
                    _add_to_leaf(node, g)
                    g_free = False
                # Inputs are served last to first, so that the first input (usually the
                # full-size operand, e.g. x in x + bias) is the one that may keep g.
                params = op.params
                for i in range(len(params) - 1, -1, -1):
                    inp, fn = params[i]
                    if inp.op is None:  # a leaf: its buffer is its .grad
                        if targets is not None and inp not in targets:
                            continue
                        buf = inp._grad
                        if buf is not None:
                            fn(g, buf)
                        elif type(fn) is Contribution:
                            value = inp._value
                            assert value is not None
                            first = fn.first(g, value.shape, value.dtype, g_free and i == 0)
                            inp._set_grad(_own_grad(first))
                        else:
                            value = inp._value
                            buf = _grad_buffer(value.shape, value.dtype)  # type: ignore[union-attr]
                            inp._set_grad(buf)
                            fn(g, buf)
                        left = pending[inp] - 1
                        pending[inp] = left
                        if left == 0:
                            ready.append(inp)
                    else:
                        buf = get_grad(inp)
                        if buf is not None:
                            fn(g, buf)
                        elif type(fn) is Contribution:
                            value = inp._value
                            assert value is not None
                            node_grads[inp] = _own_grad(
                                fn.first(g, value.shape, value.dtype, g_free and i == 0)
                            )
                        else:
                            value = inp._value
                            buf = _grad_buffer(value.shape, value.dtype)  # type: ignore[union-attr]
                            node_grads[inp] = buf
                            fn(g, buf)
                del g
                if ready:
                    break
        if not ready:
            return
        yield from ready
        ready.clear()


def _add_to_leaf(v: Variable, g: np.ndarray) -> None:
    buf = v._grad
    if buf is None:
        v._set_grad(g)
    else:
        buf += g


def _as_roots(roots: Variable | Sequence[Variable]) -> list[Variable]:
    if isinstance(roots, Variable):
        return [roots]
    out = list(roots)
    for r in out:
        if not isinstance(r, Variable):
            raise LampyTypeError(
                f"backward: roots must be Variables, got {type(r).__name__}; pass a "
                "Variable or a list of Variables."
            )
    return out


def backward(
    roots: Variable | Sequence[Variable],
    grads: Sequence[Any] | None = None,
    *,
    retain: Iterable[Variable] = (),
) -> None:
    """Backpropagate from one or several roots into the gradients of the params.

    Every node is visited once, after all its consumers, so shared subexpressions get
    exact gradients. Gradients of params accumulate across calls until
    [Variable.zero_grad][]. Gradient buffers of intermediate Variables are freed as
    soon as they are consumed, unless the Variable is named in ``retain``.

    Args:
        roots: A Variable or a sequence of them.
        grads: One seed per root (the gradient of the final objective with respect to
            that root), or None to seed 1 for scalar roots.
        retain: Intermediate Variables whose gradient is kept in their ``.grad``.

    Raises:
        ShapeError: a root is not a scalar and no grad was given, or a grad has the
            wrong shape.
        DTypeError: a grad has a different dtype from its root.
        LampyError: a root does not need a gradient.
        ReleasedError: a root was released.
    """
    if isinstance(roots, Variable) and grads is not None and not isinstance(grads, list | tuple):
        grads = [grads]  # backward(root, g): one root, one grad
    for _ in _propagate(_as_roots(roots), grads, retain):
        pass


def backward_iter(root: Variable, grad: Any = None) -> Iterator[tuple[Variable, np.ndarray]]:
    """Backpropagate from ``root``, yielding ``(param, gradient)`` as each becomes final.

    A param's gradient is final once every op that consumes it has passed its
    contribution on; from then on nothing else is added to it in this pass, so an
    optimizer step or a gradient all-reduce for that param can start while backprop
    goes on. The gradient yielded is the param's ``.grad`` buffer (which, as with
    [backward][], accumulates across calls until ``zero_grad()``).

    Params are yielded in the order their gradients become final. Stopping the
    iteration early leaves the remaining gradients incomplete.
    """
    for leaf in _propagate(_as_roots(root), None if grad is None else [grad], ()):
        g = leaf._grad
        assert g is not None
        yield leaf, g
