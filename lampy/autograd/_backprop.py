"""The backprop engine: reverse topological order, closures accumulating into buffers.

One pass has three steps: ``Pass`` (``_pass.py``) orders the nodes, every consumer
before its inputs, and checks the graph (released inputs, inputs changed in place)
before anything is touched; then the serial loop below, or the concurrent scheduler
(``_concurrent.py``) for graphs with big branches, visits the nodes; gradients of
leaves are added into their ``.grad`` by ``commit``.
"""

from __future__ import annotations

import os
import sys
import warnings
from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy import _memory
from lampy._errors import LampyTypeError, MemoryBudgetError, ScopeWarning
from lampy.autograd import _ledger, _pass
from lampy.autograd._concurrent import run_concurrent
from lampy.autograd._edge import CONTRIBUTION, WIDTH
from lampy.autograd._node import Node
from lampy.autograd._pass import (
    RELEASED_DURING,
    Pass,
    array_buffer,
    closure_error,
    closure_g,
    commit,
    commit_all,
    first_buffer,
    is_variable,
    own_first,
    scalar_array,
    shares,
)
from lampy.autograd._unbroadcast import Grad, accumulate, add_to_scalar
from lampy.autograd._workers import resolve_workers

_ndarray = np.ndarray
if TYPE_CHECKING:
    from lampy.autograd._variable import Variable

_own_grad = _memory.own_grad
_stage, _unstage, _refund = _ledger.stage, _ledger.unstage, _ledger.refund
_RUNNING = _pass.RUNNING


def _propagate(
    roots: Sequence[Variable],
    grads: Sequence[Any] | None,
    retain: Iterable[Variable] | bool,
    targets: set[Node] | None = None,
    *,
    stream: bool = False,
    workers: int | str | None = None,
    sink: Callable[[Node, Grad], None] | None = None,
    retain_graph: bool = False,
) -> Iterator[Node]:
    """Run backprop, yielding each leaf node once its gradient is final.

    With ``stream`` a leaf's gradient is added into its ``.grad`` as soon as it is
    final (before it is yielded); otherwise every ``.grad`` changes at the very end, so
    a pass that raises changes none. With ``targets``, only those leaves receive
    gradients. With ``sink`` (serial) each leaf's final gradient is handed to
    ``sink(node, g)`` as soon as it is final, instead of being added into ``.grad``
    (``lampy.remat`` hands them on to the enclosing pass).
    """
    n_workers = 1 if sink is not None else resolve_workers(workers)
    p = Pass(roots, grads, retain, targets, measure=n_workers > 1, retain_graph=retain_graph)
    if p.leaky:
        warn_leak()
    del roots, grads  # the pass holds the roots' nodes: a root value nothing reads may go
    run: Generator[Node, None, None]
    if n_workers > 1 and p.plan.big_bytes >= _pass.CONCURRENT_MIN_BYTES:
        run = run_concurrent(p, n_workers, stream)
    else:
        p.serve(stream, sink)
        run = _run_serial(p, p.stream)
    return _drive(p, run)


LEAK = (
    "backward: this scope already ran a backward pass through the same params, and they "
    "were changed in place since (an optimizer step): it looks like a training loop "
    "whose steps share one scope. Every step's graph then stays owned by that scope "
    "until it exits, so memory grows with each step. Open a scope per step: `for ...: "
    "with lampy.Scope(): loss = ...; loss.backward()` then `opt.step()`, or use "
    "lampy.train.fit, which does."
)


def warn_leak() -> None:
    """Warn (``lampy.ScopeWarning``) about a loop without a scope per step, at the
    user's line that called backward."""
    if sys.version_info >= (3, 12):
        warnings.warn(LEAK, ScopeWarning, skip_file_prefixes=(_LAMPY_DIR,))
    else:
        warnings.warn(LEAK, ScopeWarning, stacklevel=5)


_LAMPY_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _drive(p: Pass, run: Generator[Node, None, None]) -> Iterator[Node]:
    """Advance ``run`` (the loop of ``p``) as the caller asks, with ``p`` the running
    pass (``_pass.RUNNING``) while its loop runs, not while the caller handles what it
    yields; leaves ``Pass.hand_over`` finished are yielded before the next."""
    handed = p.handed
    try:
        while True:
            token = _RUNNING.set(p)
            try:
                node = next(run, None)
            finally:
                _RUNNING.reset(token)
            if handed:
                finished = handed[:]
                handed.clear()
                yield from finished
            if node is None:
                return
            yield node
    finally:
        run.close()  # a pass stopped early (backward_iter closed) stops its loop now


def _backward_held(
    roots: Sequence[Variable],
    grads: Sequence[Any] | None,
    retain: Iterable[Variable] | bool,
    workers: Any,
    retain_graph: bool,
    atomic: bool,
) -> None:
    """A pass that holds final gradients to its end (``backward``'s default, and
    ``atomic=True``), run to its end: as ``for _ in _propagate(roots, grads, retain,
    workers=workers): pass``, the same visits in the same order, but the serial loop is
    a plain call with ``p`` running for all of it (no generator resumed per leaf)."""
    n_workers = resolve_workers(workers)
    p = Pass(roots, grads, retain, None, measure=n_workers > 1, retain_graph=retain_graph)
    if p.leaky:
        warn_leak()
    p.atomic = atomic
    del roots, grads  # the pass holds the roots' nodes: a root value nothing reads may go
    if n_workers > 1 and p.plan.big_bytes >= _pass.CONCURRENT_MIN_BYTES:
        for _ in _drive(p, run_concurrent(p, n_workers, False)):
            pass
        return
    p.serve(False, None)
    token = _RUNNING.set(p)
    try:
        _run_atomic(p)
    finally:
        _RUNNING.reset(token)


def _run_serial(p: Pass, stream: bool) -> Generator[Node, None, None]:
    """Visit every node once, in order; yield each leaf once its gradient is final
    (``stream``: delivered then, as it becomes final; otherwise after the commit at the
    end of the pass)."""
    bufs = p.initial_buffers()
    ready = _leaf_roots(p, bufs)
    done, deliver, pop = p.done, p.deliver, bufs.pop
    it = iter(p.plan.order)
    while True:
        _visit(p, it, ready, hold=False)
        if not ready:
            break
        for leaf in ready:  # no local holds a delivered gradient while the loop goes on
            if stream:
                deliver(leaf, pop(leaf))
            else:
                done.append((leaf, pop(leaf)))
        if stream:
            yield from ready
        ready.clear()
    commit_all(done, p.ledger)
    if not stream:
        for node, _ in done:
            if node.edges is None:
                yield node


def _run_atomic(p: Pass) -> None:
    """The serial loop of an atomic pass, as ``_run_serial(p, False)`` run to its end
    (the same visits in the same order, so bitwise the same gradients), without a
    generator: nothing is yielded before the final commit, so the loop never stops."""
    bufs = p.initial_buffers()
    ready = _leaf_roots(p, bufs)
    _visit(p, iter(p.plan.order), ready, hold=True)
    _finish_held(p, ready)  # roots that are leaves, in a graph without ops
    commit_all(p.done, p.ledger)


def _leaf_roots(p: Pass, bufs: dict[Node, Grad]) -> list[Node]:
    """The roots that are leaves whose gradient is final at once (no op reaches them)."""
    roots = p.roots
    if len(roots) == 1 and roots[0].edges is not None:
        return []  # one op result (the usual loss)
    pending = p.plan.pending
    return [
        root
        for root in dict.fromkeys(roots)
        if root.edges is None and root in bufs and root not in pending
    ]


def _visit(p: Pass, it: Iterator[Node], ready: list[Node], *, hold: bool) -> None:
    """Visit the nodes of ``it`` in order, serving each node's params last to first.

    Inputs are served last to first so that the first input (usually the full-size
    operand, e.g. ``x`` in ``x + bias``) is the one that may keep ``g`` itself. Once a
    node's params are served, ``g`` is dropped (unless an input kept it as its buffer)
    and a pass that does not retain the graph drops the params (``Node.spend``): the
    values they saved return now.

    Leaves whose gradient became final are put in ``ready``. Without ``hold`` the visit
    returns after the node that made them final (the caller delivers them and calls
    again with the same iterator); with ``hold`` they are finished at once
    (``_finish_held``) and the visit goes on to the end of ``it``.
    """
    bufs, get, pending, targets = p.bufs, p.bufs.get, p.plan.pending, p.targets
    keep, borrowed, done, ledger, spend = p.keep, p.borrowed, p.done, p.ledger, not p.retain_graph
    profiled = _memory.PROFILE is not None  # lampy.memory_profile sees each buffer
    fn: Any
    with np.errstate(all="ignore"):
        for node in it:
            edges = node.edges
            if edges is None:  # a leaf, or a node released (in another thread) since Pass
                if node.scope is None:
                    raise node.released_error(RELEASED_DURING)
                continue
            g: Any = bufs.pop(node)
            added = count = 0  # bytes and number of the new buffers of fresh contributions
            g_free = not (keep and _kept(node, g, keep, done)) and node is not borrowed
            staged = g.nbytes if g_free and type(g) is _ndarray else 0  # refunded below
            i = len(edges)  # edge i // WIDTH starts at i
            one = i == WIDTH  # one edge: the edge itself, no slice
            if not one and i and type(g) is not _ndarray:  # a 0-d node's numpy scalar
                g = closure_g(g, edges)
            try:
                while i:
                    i -= WIDTH
                    inp, fn, kind, fresh, saved = edges if one else edges[i : i + WIDTH]
                    if inp.edges is None and not _due(inp, pending, targets, ready):
                        continue
                    if added:  # the buffers of earlier inputs, counted before the next call
                        _stage(ledger, added, count)
                        added = count = 0
                    buf = get(inp)
                    if not kind:  # a plain closure fn(g, out)
                        _serve_plain(bufs, inp, buf, fn, g, ledger)
                        continue
                    d = fn(g) if kind == CONTRIBUTION else fn(g, saved)
                    if buf is not None:
                        _add_into(bufs, inp, buf, d, g, ledger)
                    elif (
                        fresh
                        and type(d) is _ndarray
                        and d.shape == inp.shape
                        and d.dtype is inp.dtype
                    ):
                        n = d.nbytes  # the op gives its new array away: the buffer
                        if n and ledger.fast:
                            added += n  # staged at the node's end, with g's refund
                            count += 1
                        elif n:
                            _stage(ledger, n)
                        bufs[inp] = _own_grad(d, inp) if profiled else d
                    elif type(d) is inp.dtype.type and not inp.shape:
                        bufs[inp] = d  # a 0-d input's numpy scalar: immutable, kept
                    else:  # a cast, a copy, or g itself (its count then moves with it)
                        free = staged > 0 and i == 0 and type(d) is _ndarray
                        bufs[inp] = own_first(d, fresh, g, inp, free, ledger)
                        if free and shares(bufs[inp], g):  # no local: it would hold it
                            staged = 0
                    del d
            except MemoryBudgetError:
                raise
            except Exception as e:
                raise closure_error(node.name, i // WIDTH, edges[i], e, p.stream, p.added) from e
            g = fn = saved = None  # no local holds what is freed now (g, the params')
            freed = node.spend() if spend else 0  # the params dropped, with what they saved
            if added or staged or freed:  # new buffers staged, g and freed refunded, at once
                scope = node.scope
                if ledger.fast and (not freed or (scope is not None and scope.ledger is ledger)):
                    live = ledger.live + added  # the peak: g with the new buffers
                    if live > ledger.high:
                        ledger.high = live
                    ledger.live = live - staged - freed
                    ledger.arrays += count - (staged > 0)
                else:
                    _settle(ledger, node, added, count, staged, freed)
            if ready:
                if not hold:
                    return
                _finish_held(p, ready)


def _settle(
    ledger: _ledger.Ledger, node: Node, added: int, count: int, staged: int, freed: int
) -> None:
    """A visited node's changes to the ledgers, where they cannot be made at once: the
    ``count`` new buffers of ``added`` bytes staged and the ``staged`` bytes of its ``g``
    refunded in the pass's ``ledger``, the ``freed`` bytes of its spent params in its own
    scope's."""
    if added:
        _stage(ledger, added, count)
    _unstage(ledger, staged)
    if freed:
        _refund(node, freed)


def _kept(node: Node, g: Grad, keep: set[Node], done: list[tuple[Node, Grad]]) -> bool:
    """Whether ``node`` is a retained op result (its ``g`` goes to its ``.grad`` at the
    end of the pass, so it is not dropped after its closures ran)."""
    if node in keep:
        done.append((node, g))
        return True
    return False


def _due(inp: Node, pending: dict[Node, int], targets: set[Node] | None, ready: list[Node]) -> bool:
    """Whether a leaf input takes this contribution, counting it: the leaf is a target
    of the pass and not finished ahead of the loop (``Pass.hand_over``); ``ready`` gets
    it once this was its last one."""
    if targets is not None and inp not in targets:
        return False
    left = pending[inp] - 1
    pending[inp] = left
    if left == 0:
        ready.append(inp)
    return left >= 0


def _serve_plain(
    bufs: dict[Node, Grad], inp: Node, buf: Grad | None, fn: Any, g: Grad, ledger: _ledger.Ledger
) -> None:
    """Run a plain closure ``fn(g, out)``: into a new zero buffer (``first_buffer``) or
    into ``inp``'s buffer (a 0-d input's numpy scalar made a 0-d array first)."""
    if buf is None:
        bufs[inp] = first_buffer(fn, g, inp, ledger)
        return
    if type(buf) is not _ndarray:
        buf = bufs[inp] = array_buffer(buf, inp, ledger)
    fn(g if type(g) is _ndarray else scalar_array(g), buf)


def _add_into(
    bufs: dict[Node, Grad], inp: Node, buf: Grad, d: Any, g: Grad, ledger: _ledger.Ledger
) -> None:
    """Add a contribution ``d`` into ``inp``'s buffer ``buf``. A new array ``d`` is held
    while it is added: the ledger's peak sees it (staged and unstaged at once)."""
    if type(buf) is not _ndarray:  # a 0-d input's numpy scalar
        bufs[inp] = add_to_scalar(buf, d)
        return
    if type(d) is _ndarray and d.base is None and d is not g:
        if ledger.fast:  # _stage then _unstage, in one comparison
            top = ledger.live + d.nbytes
            if top > ledger.high:
                ledger.high = top
        else:
            _stage(ledger, d.nbytes)
            _unstage(ledger, d.nbytes)
    accumulate(buf, d)


def _finish_held(p: Pass, ready: list[Node]) -> None:
    """Finish the leaves of ``ready`` in a pass that holds final gradients: each one is
    kept for the end of the pass, except (unless the pass is ``atomic``) a leaf whose
    ``.grad`` already holds a gradient, which takes this pass's at once, so that its
    buffer is freed now rather than held beside the ``.grad`` until the end."""
    done, pop = p.done, p.bufs.pop
    for leaf in ready:
        if p.atomic or leaf.grad is None:
            done.append((leaf, pop(leaf)))
        else:
            commit(leaf, pop(leaf), p.ledger)
            p.added += 1
    ready.clear()


def _as_roots(roots: Variable | Sequence[Variable]) -> list[Variable]:
    if is_variable(roots):
        return [roots]  # type: ignore[list-item]
    out = list(roots)  # type: ignore[arg-type]
    for r in out:
        if not is_variable(r):
            raise LampyTypeError(
                f"backward: roots must be Variables, got {type(r).__name__}; pass a "
                "Variable or a list of Variables."
            )
    return out


_RECORDED_PASS: list[Callable[[list[Variable], Any], None]] | None = None
"""The recorded pass that serves ``backward(create_graph=True)``: ``lampy.autograd._higher``
(one floor up: it records with ``lampy.op``) registers it when imported."""


def serve_create_graph(fn: Callable[[list[Variable], Any], None]) -> None:
    """Register ``fn(roots, grads)`` as the pass behind ``backward(create_graph=True)``."""
    global _RECORDED_PASS
    _RECORDED_PASS = [fn]


def backward(
    roots: Variable | Sequence[Variable],
    grads: Sequence[Any] | None = None,
    *,
    retain: Iterable[Variable] | bool = (),
    retain_graph: bool = False,
    workers: int | str | None = None,
    atomic: bool | None = None,
    create_graph: bool = False,
) -> None:
    """Backpropagate from one or several roots into the gradients of the params.

    Every node is visited once, after all its consumers, so shared subexpressions get
    exact gradients. Gradients of params accumulate across calls until
    ``lampy.Variable.zero_grad``.

    Memory is returned as the pass goes, as in PyTorch: a node's gradient buffer once
    its closures have run, and (unless the graph is retained) the closures themselves
    with the values they saved, so an intermediate that no Variable you hold refers to
    is freed during the pass, not when the scope exits. A second pass through the same
    graph then raises ``lampy.SpentGraphError``: pass ``retain=True`` to keep the graph.
    Values of Variables you hold stay readable until their scope exits.

    By default a param whose ``.grad`` is None (the usual loop, after
    ``zero_grad()``) takes this pass's gradient buffer as its ``.grad`` at the end of
    the pass, so a pass that raises changes none of them, at no memory cost. A param
    whose ``.grad`` holds a gradient already (accumulation) takes this pass's
    gradient as soon as it is final, and the buffer is freed: if the pass then raises,
    those ``.grad`` keep it (the error says how many). ``atomic=True`` holds those too
    until the end, so a pass that raises changes no ``.grad`` at all, at the cost of a
    second copy of the accumulated gradients; ``atomic=False`` adds every gradient as
    soon as it is final.

    Args:
        roots: A Variable or a sequence of them.
        grads: One seed per root (the gradient of the final objective with respect to
            that root), or None to seed 1 for scalar roots.
        retain: True to keep the graph for another pass (PyTorch's ``retain_graph``);
            or intermediate Variables whose gradient is kept in their ``.grad``.
        retain_graph: PyTorch's name for ``retain=True``.
        workers: Threads that may run independent branches of the graph at once (None
            takes ``lampy.get_num_workers``; ``"auto"`` is the number of cores). The
            gradients are bitwise the same for any number; small graphs run serially.
        atomic: None (the default): all or nothing for params without a ``.grad``,
            free; accumulated gradients added as soon as final. True: all or nothing
            for every param (accumulated ones held to the end, a second copy). False:
            every gradient added as soon as it is final (as ``lampy.backward_iter``).
        create_graph: Record the pass (PyTorch's ``create_graph``): each param's
            ``.grad`` gets the value as usual, and its ``grad_graph`` the gradient as a
            Variable of the current scope that can be differentiated again (summed over
            such passes until ``zero_grad``). The graph is kept. Every op on the way
            needs a differentiable rule (``lampy.NoSecondOrderError`` names one that has
            none); ``workers`` and ``atomic`` do not apply. For the gradients of a few
            inputs only, ``lampy.gradients(..., create_graph=True)`` returns them.

    Raises:
        ShapeError: a root is not a scalar and no grad was given, or a grad has the
            wrong shape.
        DTypeError: a grad has a different dtype from its root.
        LampyError: a root does not need a gradient.
        ReleasedError: a root, or an input of an op in the graph, was released.
        StaleGraphError: a param was changed in place after an op read it.
        SpentGraphError: an earlier pass without ``retain=True`` already went through
            an op of the graph.
        BackwardError: a backward closure raised (the original exception is its cause).
        MemoryBudgetError: a gradient buffer would take a scope past its budget.
    """
    if is_variable(roots) and grads is not None and not isinstance(grads, list | tuple):
        grads = [grads]  # backward(root, g): one root, one grad
    if retain is True:
        retain_graph, retain = True, ()
    if create_graph:
        if _RECORDED_PASS is None:  # pragma: no cover (lampy.autograd registers it)
            raise LampyTypeError("backward(create_graph=True): import lampy.autograd first.")
        _RECORDED_PASS[0](_as_roots(roots), grads)
        return
    with _memory.backward_phase():  # shades the pass in lampy.memory_profile's plot
        if atomic is not False:
            _backward_held(_as_roots(roots), grads, retain, workers, retain_graph, bool(atomic))
            return
        stream = _propagate(
            _as_roots(roots), grads, retain, stream=True, workers=workers, retain_graph=retain_graph
        )
        for _ in stream:
            pass


def backward_iter(
    root: Variable,
    grad: Any = None,
    *,
    retain: bool = False,
    workers: int | str | None = None,
) -> Iterator[tuple[Variable, np.ndarray]]:
    """Backpropagate from ``root``, yielding ``(param, gradient)`` as each becomes final.

    A param's gradient is final once every op that consumes it has passed its
    contribution on; from then on nothing else is added to it in this pass, so an
    optimizer step or a gradient all-reduce for that param can start while backprop
    goes on (with ``workers`` > 1, other threads go on with it while you handle the
    yielded gradient). The gradient yielded is the param's ``.grad`` buffer (which,
    as with ``lampy.backward``, accumulates across calls until
    ``lampy.Variable.zero_grad``), already holding this pass's contribution.

    Params are yielded in the order their gradients become final. Stopping the
    iteration early leaves the remaining gradients unchanged; if a closure raises,
    the gradients already yielded keep this pass's contribution and no other changes
    (but for params whose gradients a ``lampy.remat`` recomputation finished and added
    just before: they are yielded right after the remat op, at the next yield).

    As ``lampy.backward``, the pass frees the graph's closures as it goes unless
    ``retain`` is True (then another pass may go through the same graph).
    """
    for leaf in _propagate(
        _as_roots(root),
        None if grad is None else [grad],
        (),
        stream=True,
        workers=workers,
        retain_graph=retain,
    ):
        handle = leaf.handle  # a param's weak reference to its Variable
        v = None if handle is None else handle()
        g = leaf.grad
        if v is not None and g is not None:
            yield v, g
