"""Concurrent backprop: independent branches in several threads, bitwise as serial.

The unit of work is one closure call: ``(node, param i)``. A node's closures may run
as soon as its gradient ``g`` is complete, each in any worker thread. What makes the
result bitwise equal to the serial engine is the *delivery order*: every input's
buffer receives its contributions in exactly the order the serial engine adds them
(nodes in plan order, each node's params last to first). The sequence number of each
contribution is fixed before the pass starts; a contribution that arrives early is
parked and added by whichever thread delivers its predecessor. For a contribution triple
closure the costly part, ``fn(g)``, runs in parallel and only the addition waits its
turn; a plain ``(g, out)`` closure runs whole at its turn. Additions into one buffer
never overlap, and each node's gradient is complete (all its deliveries made) before
its closures run. See ``lampy/autograd/README.md``.
"""

from __future__ import annotations

import heapq
import threading
from collections.abc import Generator
from concurrent.futures import Future
from typing import Any

import numpy as np

from lampy._errors import BackwardError, ReleasedError
from lampy.autograd._edge import CONTRIBUTION, FN, FRESH, NODE, split_edges
from lampy.autograd._ledger import refund, unstage
from lampy.autograd._node import Node, Param
from lampy.autograd._pass import (
    RELEASED_DURING,
    Pass,
    array_buffer,
    closure_error,
    closure_g,
    commit,
    first_buffer,
    own_first,
)
from lampy.autograd._unbroadcast import Grad, accumulate, add_to_scalar
from lampy.autograd._workers import pool

# A task: (plan position, -param index, node name, param index, input, closure, g, seq,
# node)
Task = tuple[int, int, str, int, Node, Param, Grad, int, Node]


class _Scheduler:
    """The shared state of one concurrent pass; every field is guarded by ``lock``."""

    def __init__(self, p: Pass, stream: bool) -> None:
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.stream = stream
        self.keep = p.keep
        self.bufs = p.initial_buffers()
        self.heap: list[Task] = []
        self.parked: dict[Node, dict[int, tuple[Any, ...]]] = {}
        self.delivered: dict[Node, int] = {}
        self.outq: list[Node] = []
        self.done: list[tuple[Node, Grad]] = []
        self.error: BackwardError | ReleasedError | None = None
        self.stopped = False
        self.active = 0
        self.pos: dict[Node, int] = {}
        self.seqs: dict[Node, list[int | None]] = {}
        self.expected: dict[Node, int] = {}
        self.ledger = p.ledger
        self.atomic = p.atomic
        self.added = 0
        self.spend = not p.retain_graph
        self.borrowed = p.borrowed
        self.tasks_left: dict[Node, int] = {}  # closures of a node not run yet
        self.staged: dict[Node, int] = {}  # bytes of its g counted in the pass's ledger
        targets = p.targets
        edges = 0
        for k, node in enumerate(p.plan.order):
            self.pos[node] = k
            params = node.params
            if params is None:
                continue
            seqs: list[int | None] = [None] * len(params)
            for i in range(len(params) - 1, -1, -1):
                inp = params[i][NODE]
                if inp.edges is None and targets is not None and inp not in targets:
                    continue
                c = self.expected.get(inp, 0)
                seqs[i] = c
                self.expected[inp] = c + 1
                edges += 1
            self.seqs[node] = seqs
        self.remaining = edges
        with self.lock:
            for root in dict.fromkeys(p.roots):
                if root in self.bufs and self.expected.get(root, 0) == 0:
                    self._complete(root)

    @property
    def finished(self) -> bool:
        return self.remaining == 0 or self.stopped or self.error is not None

    # -------------------------------------------------------- under the lock
    def _complete(self, node: Node) -> None:
        """``node``'s gradient is complete: run its closures, or finish a leaf."""
        g = self.bufs.pop(node)
        if node.scope is None:  # its owner exited the scope in another thread
            if self.error is None:
                self.error = node.released_error(RELEASED_DURING)
            self.cond.notify_all()
            return
        edges: Any = node.edges  # read once: another thread may release the node
        if edges is None:
            if self.stream:
                commit(node, g, self.ledger)
                self.outq.append(node)
            elif not self.atomic and node.grad is not None:
                commit(node, g, self.ledger)  # accumulated: added now, its buffer freed
                self.added += 1
            else:
                self.done.append((node, g))
        else:
            if node in self.keep:
                self.done.append((node, g))
            staged = g.nbytes if type(g) is np.ndarray and node is not self.borrowed else 0
            if node in self.keep:
                staged = 0  # kept as the node's .grad at the end
            g = closure_g(g, edges)  # a 0-d node's numpy scalar, or an array if need be
            params = split_edges(edges)
            k = self.pos[node]
            tasks = 0
            for i, seq in enumerate(self.seqs[node]):
                if seq is not None:
                    param = params[i]
                    task = (k, -i, node.name, i, param[NODE], param, g, seq, node)
                    heapq.heappush(self.heap, task)
                    tasks += 1
            self.tasks_left[node] = tasks
            self.staged[node] = staged
            if not tasks:
                self._node_done(node)
        self.cond.notify_all()

    def _node_done(self, node: Node) -> None:
        """Every closure of ``node`` has run: its ``g`` is dropped (refunded) and, in a
        pass that does not retain the graph, its params with it (``Node.spend``)."""
        del self.tasks_left[node]
        staged = self.staged.pop(node)
        if staged:
            unstage(self.ledger, staged)
        if self.spend:
            freed = node.spend()
            if freed:
                refund(node, freed)

    # -------------------------------------------------------- in a worker
    def run(self, task: Task) -> None:
        _, _, name, i, inp, param, g, seq, node = task
        try:
            _, fn, kind, _, saved = param
            if kind:  # a contribution: fn(g), or fn(g, saved)
                d = fn(g) if kind == CONTRIBUTION else fn(g, saved)
                item: tuple[Any, ...] = (param, g, d)  # the costly part, in parallel
            else:
                item = (param, g)
            self._deliver(inp, seq, item)
            with self.lock:
                left = self.tasks_left[node] - 1
                if left:
                    self.tasks_left[node] = left
                else:
                    self._node_done(node)
        except Exception as e:
            with self.lock:
                if self.error is None:
                    error = closure_error(name, i, inp, e, self.stream, self.added)
                    error.__cause__ = e
                    self.error = error
                self.cond.notify_all()

    def _deliver(self, inp: Node, seq: int, item: tuple[Any, ...]) -> None:
        with self.lock:
            if self.delivered.get(inp, 0) != seq:
                self.parked.setdefault(inp, {})[seq] = item
                return
        while True:
            self._apply(inp, seq, item)
            with self.lock:
                seq += 1
                self.delivered[inp] = seq
                self.remaining -= 1
                if seq == self.expected[inp]:
                    self.parked.pop(inp, None)
                    self._complete(inp)
                    if self.remaining == 0:
                        self.cond.notify_all()
                    return
                waiting = self.parked.get(inp)
                nxt = None if waiting is None else waiting.pop(seq, None)
                if nxt is None:
                    return
                item = nxt

    def _apply(self, inp: Node, seq: int, item: tuple[Any, ...]) -> None:
        """Add one contribution into ``inp``'s buffer (the first one makes the buffer)."""
        buf = self.bufs.get(inp)
        if len(item) == 3:
            param, g, d = item
            if buf is None:  # as the serial loop's first buffer, without adopting g itself
                self.bufs[inp] = own_first(d, param[FRESH], g, inp, False, self.ledger)
            elif type(buf) is np.ndarray:
                accumulate(buf, d)
            else:  # a 0-d input's numpy scalar
                self.bufs[inp] = add_to_scalar(buf, d)
        else:
            param, g = item
            fn = param[FN]
            if buf is None:
                self.bufs[inp] = first_buffer(fn, g, inp, self.ledger)
            else:
                if type(buf) is not np.ndarray:
                    buf = self.bufs[inp] = array_buffer(buf, inp, self.ledger)
                fn(g, buf)

    def work(self) -> None:
        """A helper thread's loop: run tasks until the pass is over."""
        with self.lock:
            if self.finished:
                return
            self.active += 1
        try:
            with np.errstate(all="ignore"):
                while True:
                    with self.lock:
                        while not self.heap and not self.finished:
                            self.cond.wait()
                        if self.error is not None or self.stopped or not self.heap:
                            return
                        task = heapq.heappop(self.heap)
                    self.run(task)
                    del task
        finally:
            with self.lock:
                self.active -= 1
                self.cond.notify_all()


def run_concurrent(p: Pass, n_workers: int, stream: bool) -> Generator[Node, None, None]:
    """Run pass ``p`` on the caller's thread and ``n_workers - 1`` pool threads."""
    s = _Scheduler(p, stream)
    executor = pool(n_workers - 1)
    helpers: list[Future[None]] = [executor.submit(s.work) for _ in range(n_workers - 1)]
    try:
        while True:
            with s.lock:
                while not s.heap and not s.outq and not s.finished:
                    s.cond.wait()
                if s.error is not None:
                    break
                if s.outq:
                    out, s.outq = s.outq, []
                    task = None
                elif s.heap:
                    out, task = [], heapq.heappop(s.heap)
                else:
                    break
            if task is not None:
                with np.errstate(all="ignore"):
                    s.run(task)
                del task
            yield from out
    finally:
        with s.lock:
            s.stopped = s.stopped or s.remaining != 0
            s.cond.notify_all()
            while s.active:
                s.cond.wait()
        for h in helpers:
            h.cancel()  # still queued behind other work: it has nothing to do
    if s.error is not None:
        raise s.error
    for node, g in s.done:
        commit(node, g, s.ledger)
    if not stream:
        for node, _ in s.done:
            if node.edges is None:
                yield node
