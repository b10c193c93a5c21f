"""Differentiable gradients (``create_graph``): a backward pass whose gradients are
Variables, recorded like any op result, so they can be differentiated again.

The first-order engine (``_backprop``) runs each edge's numpy closure and adds into
buffers; nothing it computes is recorded. This pass walks the same graph but asks each
edge for its *vjp*, the same contribution written with lampy ops on Variables:

- a ``CONTRIBUTION`` or ``PLAIN`` edge carries it in its ``SAVED`` slot, a function
  ``vjp(g, out)`` of the cotangent ``g`` (a Variable, or a numpy constant) and the op's
  own node ``out``; ops make it with the values their numpy closure keeps, and turn a
  saved value back into a Variable of the graph with ``lifted(node, value)``;
- a ``WITH_SAVED`` edge (``fn(g, saved)``, the elementwise ops) is looked up by op name
  and ``fn`` in a table that says what ``saved`` is (the op's value, the input's, the
  other operand's, or nothing), filled by the op modules with ``saved_vjp``.

An edge without one raises ``NoSecondOrderError`` naming the op, when the pass reaches
it (only edges on a path to a requested input are asked). The pass records into the
current scope; nothing in the first-order engine changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from lampy._errors import (
    DTypeError,
    LampyTypeError,
    LampyValueError,
    NoSecondOrderError,
    ShapeError,
    spent_graph,
)
from lampy.autograd._backprop import serve_create_graph
from lampy.autograd._complex import LINEAR, OWN, complex_rule, real_part, serve_complex_vjp
from lampy.autograd._edge import CONTRIBUTION, NODE, WITH_SAVED
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._node import SPENT, Node
from lampy.autograd._pass import _check_versions as check_versions
from lampy.autograd._pass import commit_all
from lampy.autograd._unbroadcast import Contribution, unbroadcast
from lampy.autograd._variable import Variable, op

Vjp = Callable[[Any, Node], Any]
"""A differentiable contribution ``vjp(g, out)``: the input's share of the cotangent
``g`` (a Variable or a numpy constant of the op's value's shape), computed with lampy ops
so that it is recorded; ``out`` is the op's node (for ``lifted(out, value)``). It returns
a Variable, a numpy constant, or None for zero."""


SOURCES = ("none", "output", "input", "other")

_SAVED_RULES: dict[tuple[str, Callable[..., Any]], tuple[str, Callable[..., Any]]] = {}


def saved_vjp(
    name: str, fn: Callable[..., Any], source: str, rule: Callable[..., Any] | None = None
) -> None:
    """Declare the differentiable form of op ``name``'s ``WITH_SAVED`` edge ``fn(g, saved)``.

    Args:
        name: The op's name (as it passes it to ``lampy.op``).
        fn: The edge's module-level function.
        source: What ``saved`` is: ``"none"`` (not used), ``"output"`` (the op's value),
            ``"input"`` (this input's value) or ``"other"`` (the other operand's value, of
            a binary op; a constant when that operand needs no gradient).
        rule: ``rule(g, s)`` with ``s`` the saved value as a Variable of the graph;
            ``fn`` itself when it is written with operators only (``g * s``).
    """
    if source not in SOURCES:
        raise LampyValueError(f"saved_vjp: source must be one of {SOURCES}, got {source!r}.")
    _SAVED_RULES[(name, fn)] = (source, fn if rule is None else rule)


def _pass_through(g: Any) -> Any:
    return g


def _pass_through_vjp(g: Any, out: Node) -> Any:
    return g


def lifted(node: Node, value: Any) -> Variable:
    """``value``, the value ``node`` had when an op saved it, as a Variable whose gradient
    flows into ``node``: how a vjp uses a saved input (or its op's own value) so that a
    later pass differentiates through it. The value is a view: nothing is copied."""
    if node.scope is None:
        raise node.released_error("a differentiable backward pass")
    arr = value.view() if type(value) is np.ndarray else value
    return op("saved", arr, (node, _pass_through, CONTRIBUTION, False, _pass_through_vjp))


def graph_value(node: Node | None, value: Any) -> Any:
    """``lifted(node, value)``, or ``value`` itself (a constant) when ``node`` is None: for
    vjps, which keep ``x.node if needs_grad(x) else None`` next to an operand's value."""
    return value if node is None else lifted(node, value)


def no_second_order(name: str) -> NoSecondOrderError:
    return NoSecondOrderError(
        f"op '{name}' has no differentiable backward rule yet, so gradients through it "
        "cannot be differentiated again (create_graph=True, a nested lampy.grad, "
        "lampy.hessian, lampy.hvp, lampy.jvp...). Compute this part under lampy.no_grad() "
        "if it is a constant for the outer derivative, write it with ops that have one "
        "(docs: Higher-order gradients lists them), or give your op a vjp "
        "(lampy.opkit.contrib_of(x, fn, vjp=...))."
    )


def _numpy_contribution(params: Any, i: int, g: Any) -> Any:
    """The contribution of the ``i``-th of an op's ``params`` by its numpy closure (first
    order, nothing recorded): how ``gradients`` works without ``create_graph``, for
    every op."""
    inp, fn, kind, _, saved = params[i]
    g = np.asarray(g)
    if kind == WITH_SAVED:
        return fn(g, saved)
    if kind == CONTRIBUTION:
        return fn(g)
    if type(fn) is Contribution:
        return fn.fn(g)
    out = np.zeros(inp.shape, inp.dtype)
    fn(g, out)
    return out


def _edge_vjp(node: Node, params: Any, i: int, g: Any) -> Any:
    """The differentiable contribution of the ``i``-th of op ``node``'s ``params``."""
    inp, fn, kind, _, saved = params[i]
    if kind == WITH_SAVED:
        found = _SAVED_RULES.get((node.name, fn))
        if found is None:
            raise no_second_order(node.name)
        source, rule = found
        if source == "output":
            saved = lifted(node, saved)
        elif source == "input":
            saved = lifted(inp, saved)
        elif source == "other" and len(params) == 2:
            saved = lifted(params[1 - i][NODE], saved)
        return rule(g, saved)
    if saved is None:
        raise no_second_order(node.name)
    return saved(g, node)


# ------------------------------------------------ the pass's own ops (no lampy.ops here)
def _value(x: Any) -> Any:
    return x.value if type(x) is Variable else x


def _needs(x: Any) -> bool:
    return type(x) is Variable and x.node.needs_grad


def sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """``unbroadcast(g, shape)`` for a vjp: ``g`` (a Variable or a numpy constant) summed
    over the axes broadcasting added to ``shape``, recorded when ``g`` needs a gradient."""
    return _sum_to(g, shape)


def _sum_to(g: Any, shape: tuple[int, ...]) -> Any:
    """``g`` summed over the axes broadcasting added to ``shape`` (``unbroadcast``)."""
    if not _needs(g):
        return unbroadcast(np.asarray(_value(g)), shape)
    src = g.shape
    return op(
        "sum_to",
        np.array(unbroadcast(np.asarray(g.value), shape)),
        (
            g.node,
            lambda d: np.broadcast_to(d, src),
            CONTRIBUTION,
            False,
            lambda d, out: _broadcast(d, src),
        ),
    )


def _broadcast(g: Any, shape: tuple[int, ...]) -> Any:
    """``g`` broadcast to ``shape`` (the transpose of ``_sum_to``)."""
    if not _needs(g):
        return np.broadcast_to(_value(g), shape)
    src = g.shape
    return op(
        "broadcast_to",
        np.broadcast_to(g.value, shape),
        (
            g.node,
            lambda d: unbroadcast(d, src),
            CONTRIBUTION,
            False,
            lambda d, out: _sum_to(d, src),
        ),
    )


def _cast(g: Any, dtype: np.dtype[Any]) -> Any:
    """``g`` cast to ``dtype``: its real part for a real ``dtype`` (a real input's
    contribution from a complex result)."""
    if not _needs(g):
        return np.asarray(real_part(np.asarray(_value(g)), dtype))
    src = g.dtype
    return op(
        "astype",
        np.asarray(real_part(np.asarray(g.value), dtype)),
        (g.node, lambda d: real_part(d, src), CONTRIBUTION, True, lambda d, out: _cast(d, src)),
    )


def _conj(g: Any) -> Any:
    """``conj(g)``, recorded when ``g`` needs a gradient (its own transpose)."""
    if not _needs(g):
        return np.conj(_value(g))
    return op(
        "conj", np.conj(g.value), (g.node, np.conj, CONTRIBUTION, True, lambda d, out: _conj(d))
    )


def _complex_vjp(out: Node, params: Any, i: int, g: Any, real_input: bool, conj: bool) -> Any:
    """The recorded form of a conjugated edge (``_complex.conjugated``):
    ``conj(vjp(conj(g)))``, or ``vjp(g)`` for a linear op's real input; ``_fit`` takes
    a real input's real part."""
    if conj:
        g = _conj(g)
    d = _edge_vjp(out, params, i, g)
    if d is None or not conj:
        return d
    return d if real_input and not _needs(d) and np.isrealobj(d) else _conj(d)


# The pass's own ops take complex values: conj, and identities, sums and casts.
complex_rule(OWN, "conj")
complex_rule(LINEAR, "saved", "sum_to", "broadcast_to", "add", "astype")
serve_complex_vjp(_complex_vjp)


def _plus(a: Any, b: Any) -> Any:
    """``a + b`` of two contributions of one shape (Variables or numpy constants)."""
    value = np.add(_value(a), _value(b))
    if not (_needs(a) or _needs(b)):
        return value
    edges = [
        (x.node, _pass_through, CONTRIBUTION, False, _pass_through_vjp) for x in (a, b) if _needs(x)
    ]
    return op("add", value, *edges)


def _fit(d: Any, node: Node) -> Any:
    """A contribution to ``node`` in its shape and dtype."""
    if type(d) is not Variable:
        d = np.asarray(d)
    if d.shape != node.shape:
        try:
            full = np.broadcast_shapes(d.shape, node.shape)
            if full != d.shape:  # a contribution constant along an axis: spread it first
                d = _broadcast(d, full)
            d = _sum_to(d, node.shape)
        except ValueError:
            raise ShapeError(
                f"a differentiable backward pass: a contribution of shape {d.shape} does not "
                f"reduce to its input's shape {node.shape}."
            ) from None
    if d.dtype != node.dtype:
        d = _cast(d, node.dtype)
    return d


# ------------------------------------------------------------------ the pass
def _as_list(name: str, what: str, xs: Any) -> list[Variable]:
    seq = [xs] if type(xs) is Variable else list(xs)
    for x in seq:
        if type(x) is not Variable:
            raise LampyTypeError(f"{name}: {what} must be Variables, got {type(x).__name__}.")
    return seq


def gradients(
    outputs: Variable | Sequence[Variable],
    inputs: Variable | Sequence[Variable],
    grad_outputs: Any = None,
    *,
    create_graph: bool = False,
    allow_unused: bool = False,
) -> tuple[Variable | None, ...]:
    """The gradients of ``outputs`` with respect to ``inputs``, as Variables (PyTorch's
    ``torch.autograd.grad``).

    Nothing is added into ``.grad``: the gradients are returned. With
    ``create_graph=True`` they are recorded in the current scope like any op result, so
    they can be differentiated again (a gradient penalty, a Hessian-vector product, a
    second derivative); otherwise they are constants. The graph is kept either way (a
    later ``backward`` may go through it), and released with its scope.

    Args:
        outputs: A Variable or a sequence of them.
        inputs: The Variables to differentiate with respect to: leaves or op results
            that need a gradient.
        grad_outputs: The cotangent of each output (arrays or Variables of its shape);
            None for ones, allowed only for outputs of one element.
        create_graph: Record the backward pass, so its results can be differentiated.
        allow_unused: Give None for an input the outputs do not depend on, instead of
            raising.

    Returns:
        One gradient per input, of its shape and dtype.

    Raises:
        NoSecondOrderError: with ``create_graph``, an op on the way has no
            differentiable backward rule.
        LampyValueError: an input does not need a gradient, or is not used (without
            ``allow_unused``); ``grad_outputs`` does not fit.
        SpentGraphError, ReleasedError, StaleGraphError: as ``lampy.backward``.

    Gradient:
        With ``create_graph=True``, each result is a Variable whose own gradient is the
        second derivative: ``d/dw <gradients(f, x)[0], v> = (d²f/dx dw)ᵀ v``.
    """
    name = "lampy.gradients"
    outs = _as_list(name, "outputs", outputs)
    ins = _as_list(name, "inputs", inputs)
    for k, x in enumerate(ins):
        if not x.node.needs_grad:
            raise LampyValueError(
                f"{name}: input {k} ({x.node.describe()}) does not need a gradient; make it "
                "with lampy.param (or requires_grad=True)."
            )
    found = _pass_of(outs, _seeds(name, outs, grad_outputs), {x.node for x in ins}, create_graph)
    results: list[Variable | None] = []
    for k, x in enumerate(ins):
        g = found.get(x.node)
        if g is None and not allow_unused:
            raise LampyValueError(
                f"{name}: input {k} ({x.node.describe()}) is not used to compute the "
                "outputs, so it has no gradient; pass allow_unused=True to get None."
            )
        if g is not None and type(g) is not Variable:
            g = _constant(g)
        results.append(g)
    return tuple(results)


def _pass_of(
    outs: list[Variable], seeds: list[Any], targets: set[Node], create_graph: bool
) -> dict[Node, Any]:
    """One pass from ``outs`` (seeded) into ``targets``: each target's gradient (a
    Variable or a numpy array), recorded with ``create_graph``."""
    order, reach = _order([o.node for o in outs], targets)
    token = GRAD_ENABLED.set(bool(create_graph) and GRAD_ENABLED.get())
    try:
        cts: dict[Node, Any] = {}
        for o, s in zip(outs, seeds, strict=True):
            if reach.get(o.node):
                _accumulate(cts, o.node, s)
        for node in order:
            params = node.params
            if not params or not reach.get(node):
                continue
            g = cts.get(node) if node in targets else cts.pop(node, None)
            if g is None:
                continue
            for i in range(len(params)):
                if reach.get(params[i][NODE], False):
                    if create_graph:
                        d = _edge_vjp(node, params, i, g)
                    else:
                        d = _numpy_contribution(params, i, g)
                    if d is not None:
                        _accumulate(cts, params[i][NODE], d)
    finally:
        GRAD_ENABLED.reset(token)
    return {n: cts[n] for n in targets if n in cts}


def backward_recorded(roots: list[Variable], grads: Any) -> None:
    """``backward(roots, grads, create_graph=True)``: the gradients of every param the
    roots reach, recorded; each param's ``.grad`` gets the value (accumulated as by any
    pass) and its ``grad_graph`` the recorded Variable (summed, recorded, over passes)."""
    seeds = _seeds("backward", roots, grads)
    leaves: set[Node] = set()
    seen: set[Node] = set()
    stack = [r.node for r in roots]
    while stack:
        n = stack.pop()
        if n in seen:
            continue
        seen.add(n)
        if n.params is None:
            if n.needs_grad:
                leaves.add(n)
        else:
            stack.extend(e[NODE] for e in n.params)
    found = _pass_of(roots, seeds, leaves, True)
    done = []
    for node, g in found.items():
        if type(g) is not Variable:
            g = _constant(g)
        done.append((node, np.array(g.value)))  # this pass's, added into .grad
        prev = getattr(node, "grad_graph", None)
        if prev is not None and prev.node.scope is not None:
            g = _plus(prev, g)
        node.set_grad_graph(g)
    commit_all(done)


def _order(roots: list[Node], targets: set[Node]) -> tuple[list[Node], dict[Node, bool]]:
    """The op nodes above ``targets`` from ``roots``, each consumer before its inputs, and
    for each node whether a target lies below it. Iterative; every node reachable from
    the roots is visited, and a spent or released part of the graph is an error
    (``SpentGraphError``, ``ReleasedError``), as in backward."""
    post: list[Node] = []
    reach: dict[Node, bool] = {}
    stack: list[tuple[Node, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            done_params = node.params or ()
            r = node in targets or any(reach.get(e[NODE], False) for e in done_params)
            reach[node] = r
            if r and done_params:
                versions = node.versions
                if versions is not None:
                    check_versions(node.name, versions)  # a leaf changed in place raises
                post.append(node)
            continue
        if node in reach:
            continue
        params = node.params
        if params is SPENT:
            raise spent_graph(node.name, node.shape, node.dtype)
        reach[node] = node in targets  # provisional, while its inputs are visited
        stack.append((node, True))
        if params:
            if node.scope is None:
                raise node.released_error("a differentiable backward pass")
            for e in params:
                inp = e[NODE]
                if inp not in reach:
                    stack.append((inp, False))
    post.reverse()
    return post, reach


serve_create_graph(backward_recorded)


def _constant(value: Any) -> Variable:
    """A numpy gradient as a Variable of the current scope (needing no gradient)."""
    arr = np.array(value)  # a new array: op takes it over
    return op("gradient", arr)


def _accumulate(cts: dict[Node, Any], node: Node, d: Any) -> None:
    d = _fit(d, node)
    prev = cts.get(node)
    cts[node] = d if prev is None else _plus(prev, d)


def _implied_seed(name: str, k: int, o: Variable) -> np.ndarray:
    """The seed 1 of output ``k`` when none is given: only for a real output (PyTorch's
    rule: a complex output's gradient depends on the real loss made of it)."""
    if o.dtype.kind == "c":
        raise DTypeError(
            f"{name}: output {k} is complex ({o.dtype}); a gradient can be implied only "
            "for a real output. Pass grad_outputs (dL/dRe + i dL/dIm of your real loss), or "
            "reduce it to a real number first (`lampy.abs(z) ** 2`, `lampy.real(z)`)."
        )
    return np.ones(o.shape, o.dtype)


def _seeds(name: str, outs: list[Variable], grad_outputs: Any) -> list[Any]:
    if grad_outputs is None:
        seeds: list[Any] = []
        for k, o in enumerate(outs):
            if o.size != 1:
                raise LampyValueError(
                    f"{name}: output {k} has shape {o.shape}; a gradient can be implied "
                    "only for an output of one element. Pass grad_outputs, or reduce the "
                    "output first (.sum())."
                )
            seeds.append(_implied_seed(name, k, o))
        return seeds
    if type(grad_outputs) in (Variable, np.ndarray) or np.isscalar(grad_outputs):
        given = [grad_outputs]
    else:
        given = list(grad_outputs)
    if len(given) != len(outs):
        raise LampyValueError(
            f"{name}: {len(given)} grad_outputs for {len(outs)} outputs; give one per output."
        )
    seeds = []
    for k, (o, s) in enumerate(zip(outs, given, strict=True)):
        if s is None:
            s = _implied_seed(name, k, o)
        if np.shape(_value(s)) != o.shape:
            raise ShapeError(
                f"{name}: grad_outputs[{k}] has shape {np.shape(_value(s))}, output {k} has "
                f"shape {o.shape}; they must match."
            )
        seeds.append(s if type(s) is Variable else np.asarray(s, dtype=o.dtype))
    return seeds


__all__ = [
    "NoSecondOrderError",
    "Vjp",
    "gradients",
    "graph_value",
    "lifted",
    "no_second_order",
    "backward_recorded",
    "saved_vjp",
    "sum_to",
]
