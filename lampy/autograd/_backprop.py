"""The backprop engine: reverse topological order, closures accumulating into buffers.

One pass has three steps: ``Pass`` (``_pass.py``) orders the nodes, every consumer
before its inputs, and checks the graph (released inputs, inputs changed in place)
before anything is touched; then the serial loop below, or the concurrent scheduler
(``_concurrent.py``) for graphs with big branches, visits the nodes; gradients of
leaves are added into their ``.grad`` by ``commit``.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator, Sequence
from typing import Any

import numpy as np

from lampy import _memory
from lampy._errors import LampyTypeError
from lampy.autograd import _pass
from lampy.autograd._concurrent import run_concurrent
from lampy.autograd._node import Node
from lampy.autograd._pass import (
    Pass,
    array_buffer,
    closure_error,
    closure_g,
    commit_all,
    first_buffer,
    own_first,
)
from lampy.autograd._unbroadcast import Grad, accumulate, add_to_scalar
from lampy.autograd._variable import Variable, variable_of
from lampy.autograd._workers import resolve_workers

_ndarray = np.ndarray
_own_grad = _memory.own_grad
_RUNNING = _pass.RUNNING


def _propagate(
    roots: Sequence[Variable],
    grads: Sequence[Any] | None,
    retain: Iterable[Variable],
    targets: set[Node] | None = None,
    *,
    stream: bool = False,
    workers: int | str | None = None,
    sink: Callable[[Node, Grad], None] | None = None,
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
    p = Pass(roots, grads, retain, targets, measure=n_workers > 1)
    del roots, grads  # the pass holds the roots' nodes: a root value nothing reads may go
    run: Generator[Node, None, None]
    if n_workers > 1 and p.plan.big_bytes >= _pass.CONCURRENT_MIN_BYTES:
        run = run_concurrent(p, n_workers, stream)
    else:
        p.serve(stream, sink)
        run = _run_serial(p, p.stream)
    return _drive(p, run)


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


def _backward_atomic(
    roots: Sequence[Variable], grads: Sequence[Any] | None, retain: Iterable[Variable], workers: Any
) -> None:
    """An atomic pass (``backward``'s default), run to its end: as
    ``for _ in _propagate(roots, grads, retain, workers=workers): pass``, the same
    visits in the same order, but the serial loop is a plain call with ``p`` running
    for all of it (no generator resumed per leaf)."""
    n_workers = resolve_workers(workers)
    p = Pass(roots, grads, retain, None, measure=n_workers > 1)
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
    commit_all(done)
    if not stream:
        for node, _ in done:
            if node.params is None:
                yield node


def _run_atomic(p: Pass) -> None:
    """The serial loop of an atomic pass, as ``_run_serial(p, False)`` run to its end
    (the same visits in the same order, so bitwise the same gradients), without a
    generator: nothing is yielded before the final commit, so the loop never stops."""
    bufs = p.initial_buffers()
    ready = _leaf_roots(p, bufs)
    _visit(p, iter(p.plan.order), ready, hold=True)
    done, pop = p.done, bufs.pop
    for leaf in ready:  # roots that are leaves, in a graph without ops
        done.append((leaf, pop(leaf)))
    commit_all(done)


def _leaf_roots(p: Pass, bufs: dict[Node, Grad]) -> list[Node]:
    """The roots that are leaves whose gradient is final at once (no op reaches them)."""
    roots = p.roots
    if len(roots) == 1 and roots[0].params is not None:
        return []  # one op result (the usual loss)
    pending = p.plan.pending
    return [
        root
        for root in dict.fromkeys(roots)
        if root.params is None and root in bufs and root not in pending
    ]


def _visit(p: Pass, it: Iterator[Node], ready: list[Node], *, hold: bool) -> None:
    """Visit the nodes of ``it`` in order, serving each node's params last to first.

    Inputs are served last to first so that the first input (usually the full-size
    operand, e.g. ``x`` in ``x + bias``) is the one that may keep ``g`` itself.

    Leaves whose gradient became final are put in ``ready``. Without ``hold`` the visit
    returns after the node that made them final (the caller delivers them and calls
    again with the same iterator); with ``hold`` their gradients are kept for the end of
    the pass (``p.done``) at once and the visit goes on to the end of ``it``.
    """
    bufs = p.bufs
    pending = p.plan.pending
    keep, targets, borrowed = p.keep, p.targets, p.borrowed
    done = p.done
    pop, get = bufs.pop, bufs.get
    with np.errstate(all="ignore"):
        for node in it:
            params = node.params
            if params is None:
                continue
            g = pop(node)
            g_free = node is not borrowed
            if keep and node in keep:
                done.append((node, g))
                g_free = False
            i = len(params) - 1
            if i and type(g) is not _ndarray:  # a 0-d node's numpy scalar
                g = closure_g(g, params)
            try:
                while i >= 0:
                    param: Any = params[i]  # a pair or a contribution (Param)
                    inp = param[0]
                    if inp.params is None:
                        if targets is not None and inp not in targets:
                            i -= 1
                            continue
                        left = pending[inp] - 1
                        pending[inp] = left
                        if left == 0:
                            ready.append(inp)
                        elif left < 0:  # finished ahead of the loop (Pass.hand_over)
                            i -= 1
                            continue
                    buf = get(inp)
                    n = len(param)
                    if n != 2:  # a contribution (node, fn, fresh[, saved])
                        d = param[1](g) if n == 3 else param[1](g, param[3])
                        if buf is not None:
                            if type(buf) is _ndarray:
                                accumulate(buf, d)
                            else:  # a 0-d input's numpy scalar
                                bufs[inp] = add_to_scalar(buf, d)
                        elif type(d) is _ndarray:
                            if (
                                param[2]  # the op gives the new array away: the buffer
                                and d.shape == inp.shape
                                and d.dtype == inp.dtype
                            ):
                                bufs[inp] = _own_grad(d, inp)
                            else:
                                bufs[inp] = own_first(d, param[2], g, inp, g_free and i == 0)
                        elif type(d) is inp.dtype.type and not inp.shape:
                            bufs[inp] = d  # a 0-d input's numpy scalar: immutable, kept
                        else:
                            bufs[inp] = own_first(d, param[2], g, inp, False)
                        del d
                    else:
                        fn = param[1]
                        if type(g) is not _ndarray:  # its only closure is plain
                            g = np.array(g)
                        if buf is None:
                            bufs[inp] = first_buffer(fn, g, inp)
                        else:
                            if type(buf) is not _ndarray:
                                buf = bufs[inp] = array_buffer(buf, inp)
                            fn(g, buf)
                    i -= 1
            except Exception as e:
                raise closure_error(node.name, i, params[i][0], e, p.stream) from e
            del g
            if ready:
                if not hold:
                    return
                for leaf in ready:
                    done.append((leaf, pop(leaf)))
                ready.clear()


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
    workers: int | str | None = None,
    atomic: bool = True,
) -> None:
    """Backpropagate from one or several roots into the gradients of the params.

    Every node is visited once, after all its consumers, so shared subexpressions get
    exact gradients. Gradients of params accumulate across calls until
    ``lampy.Variable.zero_grad``. Gradient buffers of intermediate Variables are freed as
    soon as they are consumed, unless the Variable is named in ``retain``.

    The pass is all or nothing: the gradients of this pass are added into the params'
    ``.grad`` at its end, so a pass that raises (a closure failing, a stale graph)
    changes no ``.grad``.

    Args:
        roots: A Variable or a sequence of them.
        grads: One seed per root (the gradient of the final objective with respect to
            that root), or None to seed 1 for scalar roots.
        retain: Intermediate Variables whose gradient is kept in their ``.grad``.
        workers: Threads that may run independent branches of the graph at once (None
            takes ``lampy.get_num_workers``; ``"auto"`` is the number of cores). The
            gradients are bitwise the same for any number; small graphs run serially.
        atomic: With True (the default) the pass holds every param's gradient until
            its end and then adds them all, so a pass that raises changes no ``.grad``;
            this holds a second copy of all the gradients at the end of the pass. With
            False each param's gradient is added into its ``.grad`` as soon as it is
            final and its buffer freed (as ``lampy.backward_iter`` and PyTorch do): less memory,
            but a pass that raises keeps the gradients already added.

    Raises:
        ShapeError: a root is not a scalar and no grad was given, or a grad has the
            wrong shape.
        DTypeError: a grad has a different dtype from its root.
        LampyError: a root does not need a gradient.
        ReleasedError: a root, or an input of an op in the graph, was released.
        StaleGraphError: a param was changed in place after an op read it.
        BackwardError: a backward closure raised (the original exception is its cause).
    """
    if isinstance(roots, Variable) and grads is not None and not isinstance(grads, list | tuple):
        grads = [grads]  # backward(root, g): one root, one grad
    with _memory.backward_phase():  # shades the pass in lampy.memory_profile's plot
        if atomic:
            _backward_atomic(_as_roots(roots), grads, retain, workers)
            return
        for _ in _propagate(_as_roots(roots), grads, retain, stream=True, workers=workers):
            pass


def backward_iter(
    root: Variable, grad: Any = None, *, workers: int | str | None = None
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
    """
    for leaf in _propagate(
        _as_roots(root), None if grad is None else [grad], (), stream=True, workers=workers
    ):
        v = variable_of(leaf)
        g = leaf.grad
        if v is not None and g is not None:
            yield v, g
