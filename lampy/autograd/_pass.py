"""One backward pass, planned and checked before anything changes; shared by the engines.

``Pass`` checks the roots, seeds and ``retain``, then ``_plan`` orders the nodes (every
consumer before its inputs) and checks the graph (released inputs, inputs changed in
place). The serial loop (``_backprop.py``) and the concurrent scheduler
(``_concurrent.py``) then run it; both make first buffers with ``first_buffer`` and add
final gradients into ``.grad`` with ``commit``.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterable, Sequence
from contextvars import ContextVar
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy import _memory, _namespaces
from lampy._errors import (
    BackwardError,
    DTypeError,
    LampyError,
    LampyTypeError,
    ShapeError,
    StaleGraphError,
    spent_graph,
)
from lampy.autograd import _ledger
from lampy.autograd._edge import KIND, PLAIN, WIDTH
from lampy.autograd._ledger import Ledger
from lampy.autograd._node import SPENT, Backward, Node
from lampy.autograd._scope import current_or_none
from lampy.autograd._unbroadcast import Grad, own_contribution

if TYPE_CHECKING:
    from lampy.autograd._variable import Variable

_grad_buffer = _memory.grad_buffer
_stage, _unstage = _ledger.stage, _ledger.unstage
_prod = math.prod
_own_grad = _memory.own_grad
_ndarray = np.ndarray
_is_foreign = _namespaces.is_foreign

# Leaves may be shared by passes running in several threads (params of one model):
# adding a pass's gradient into a leaf's .grad happens under this lock.
_COMMIT_LOCK = threading.Lock()

# A graph goes concurrent only when its big nodes hold at least this many bytes in all:
# below that, handing work to another thread costs more than it saves.
BIG_NODE_BYTES = 64 * 1024
CONCURRENT_MIN_BYTES = 4 * 2**20


class Plan:
    """One backward pass, planned: the nodes in order and how many edges reach each leaf.

    Attributes:
        order: Every node reachable from the roots, each consumer before its inputs.
        pending: For each leaf that receives gradients, the number of edges reaching
            it (its gradient is final once that many contributions arrived).
        big_bytes: Bytes of the values of the big op results (to decide concurrency).
    """

    __slots__ = ("big_bytes", "order", "pending")

    def __init__(self, order: list[Node], pending: dict[Node, int], big_bytes: int) -> None:
        self.order = order
        self.pending = pending
        self.big_bytes = big_bytes


def _plan(roots: Sequence[Node], targets: set[Node] | None, measure: bool) -> Plan:
    """Order the graph from ``roots`` and check it, before any buffer is touched.

    Iterative (chains of any length work). Raises ReleasedError for an input whose
    scope has exited and StaleGraphError for a leaf changed in place since an op read it.
    """
    post: list[Node] = []
    visited: set[Node] = set()
    pending: dict[Node, int] = {}
    big = 0
    # Nodes to visit, and for each op visited, the op with a None above it: popping the
    # None means that everything above it (the op's inputs) is done, so the op is next.
    stack: list[Node | None] = list(reversed(roots))
    push, pop, add, finish = stack.append, stack.pop, visited.add, post.append
    while stack:
        node = pop()
        if node is None:
            finish(pop())  # type: ignore[arg-type]  # under a None there is always a node
            continue
        if node in visited:
            continue
        add(node)
        edges = node.edges
        if edges is None:
            finish(node)
            continue
        if edges is SPENT:
            raise spent_graph(node.name, node.shape, node.dtype)
        push(node)
        push(None)
        versions = node.versions
        if versions is not None:
            for leaf, saved in versions:
                if leaf.version != saved:
                    _check_versions(node.name, versions)  # raises
        if measure:
            nbytes = node.dtype.itemsize * _prod(node.shape)
            if nbytes >= BIG_NODE_BYTES and nbytes > 0:
                big += nbytes
        if len(edges) == WIDTH:  # one input, an op result (a chain): no slice to make
            inp = edges[0]
            if inp.edges is not None and inp.scope is not None:
                if inp not in visited:
                    push(inp)
                continue
        for inp in edges[::WIDTH]:  # each edge's node
            if inp.scope is None:
                raise inp.released_error(f"backward through op '{node.name}'")
            if inp.edges is None:
                if targets is None or inp in targets:
                    pending[inp] = pending.get(inp, 0) + 1
            elif inp not in visited:
                push(inp)
    post.reverse()
    return Plan(post, pending, big)


def _check_versions(name: str, versions: tuple[tuple[Node, int], ...]) -> None:
    for leaf, saved in versions:
        if leaf.version != saved:
            raise StaleGraphError(
                f"backward: the param ({leaf.describe()}) was changed in place after op "
                f"'{name}' read it (version {saved} then, {leaf.version} now; every "
                "optimizer step, load_state_dict, lampy.load or lampy.in_place write adds "
                "one), so the gradients through that op would be computed from the new "
                "values. Call backward before opt.step() (step after backward), or "
                "recompute the forward pass after the update. No gradient was changed."
            )


def is_variable(x: Any) -> bool:
    """Whether ``x`` is a Variable (a record whose ``node`` is a Node): the engine reads
    Variables through their node, and is built below the ``Variable`` class."""
    return type(getattr(x, "node", None)) is Node


def _seed(root: Variable, grad: Any, borrow: bool = False) -> np.ndarray:
    value = root.value
    node = root.node
    if not node.needs_grad:
        if node.dtype.kind not in "fc":
            raise DTypeError(
                f"backward: the root (made by '{node.name}') has dtype {value.dtype}; only "
                "floating Variables carry gradients. Integer and boolean Variables are "
                "constants: backpropagate from a float result computed from params."
            )
        raise LampyError(
            f"backward: the root (made by '{node.name}', shape {value.shape}) does not "
            "need a gradient: nothing it was computed from is a param (or it was computed "
            "under lampy.no_grad()). Make the inputs with lampy.param(...)."
        )
    if type(value) is not _ndarray:  # an array of another namespace
        seeded: np.ndarray = _namespaces.seed(value, grad)
        return seeded
    if grad is None:
        if value.dtype.kind == "c":
            raise DTypeError(
                f"backward: the root (made by '{node.name}') is complex ({value.dtype}); a "
                "gradient can be seeded implicitly only for a real loss. Reduce it to a "
                "real number first (`lampy.abs(z) ** 2`, `lampy.real(z)`), or pass `grad=` "
                "(the gradient dL/dRe + i dL/dIm of your real loss with respect to the root)."
            )
        if value.size != 1:
            raise ShapeError(
                f"backward: the root has shape {value.shape}; a gradient can be seeded "
                "implicitly only for a scalar (one element). Pass `grad=` with an array "
                f"of shape {value.shape}, or reduce the root first (e.g. `.sum()`)."
            )
        buf = _grad_buffer(value.shape, value.dtype)
        buf.fill(1)
        return buf
    if is_variable(grad):
        grad = grad.value
    if isinstance(grad, np.ndarray | np.generic):
        if grad.dtype != value.dtype:
            raise DTypeError(
                f"backward: grad has dtype {grad.dtype} but the root has dtype "
                f"{value.dtype}; pass `grad.astype({value.dtype})`."
            )
    else:
        grad = np.asarray(grad)
        if grad.dtype.kind not in "fiubc":
            raise DTypeError(f"backward: grad must be numeric, got dtype {grad.dtype}")
    if grad.shape != value.shape:
        raise ShapeError(
            f"backward: grad has shape {grad.shape} but the root has shape {value.shape}; "
            "they must be equal."
        )
    if borrow:
        return np.asarray(grad, dtype=value.dtype)
    return np.array(grad, dtype=value.dtype, copy=True)


# Gradients of 0-d nodes flow between contribution closures as numpy scalars (``Grad``):
# ``own_contribution`` makes them, ``add_to_scalar`` adds into them. They become 0-d
# arrays wherever an array is needed: ``g`` of a node with a plain (g, out) closure
# (``closure_g``), a buffer a plain closure adds into (``array_buffer``), ``.grad``
# (``commit``).


PLAIN_OVER_NAMESPACE = (
    "backward: a plain (g, out) closure met a gradient that is an array of another "
    "namespace than numpy. Plain closures add into numpy buffers in place; the engine adds "
    "the gradients of other namespaces out of place (the array API standard makes in-place "
    "updates optional). An op over another namespace gives contributions instead "
    "(lampy.opkit.contrib_of, contrib_with), as lampy.experimental.array_api's ops do."
)


def scalar_array(g: Grad) -> np.ndarray:
    """A gradient held as a numpy scalar, as the 0-d array a plain closure is promised
    (``LampyTypeError`` for an array of another namespace: ``PLAIN_OVER_NAMESPACE``)."""
    if _is_foreign(g):
        raise LampyTypeError(PLAIN_OVER_NAMESPACE)
    return np.array(g)


def array_buffer(buf: Grad, inp: Node, ledger: Ledger) -> np.ndarray:
    """A 0-d scalar buffer as a 0-d array holding it, for a plain closure to add into
    (counted in the pass's ``ledger`` from now on)."""
    a = scalar_array(buf)
    _stage(ledger, a.nbytes)
    return _own_grad(a, inp)


def closure_g(g: Grad, edges: tuple[Any, ...]) -> Grad:
    """The node's gradient ``g`` as its closures receive it (one object for all): a
    numpy scalar only if every param is a contribution, else a 0-d array holding
    it (plain ``(g, out)`` closures are promised an ndarray). ``edges``: the node's
    flat edges."""
    if type(g) is _ndarray:
        return g
    if PLAIN in edges[KIND::WIDTH]:
        return scalar_array(g)
    return g


def first_buffer(fn: Backward, g: Grad, inp: Node, ledger: Ledger) -> np.ndarray:
    """An input's gradient buffer for this pass, from the first contribution of a plain
    closure ``fn``: zero-filled (checked against the budgets first, and counted in the
    pass's ``ledger``), then ``fn`` adds into it."""
    if ledger.limits:
        _ledger.check_room(ledger, "backward", inp.shape, inp.dtype)
    buf = _grad_buffer(inp.shape, inp.dtype, inp)
    _stage(ledger, buf.nbytes)
    fn(g if type(g) is _ndarray else scalar_array(g), buf)
    return buf


def own_first(d: Any, fresh: bool, g: Grad, inp: Node, g_is_free: bool, ledger: Ledger) -> Grad:
    """An input's gradient buffer for this pass, from the first contribution ``d`` of a
    contribution triple (``own_contribution``): an array is handed to
    ``lampy._memory`` and counted in the pass's ``ledger`` (unless it is ``g`` or a view
    of it: ``g``'s count moves with it); a numpy scalar (a 0-d input's) is immutable,
    kept as it is."""
    b = own_contribution(d, fresh, g, inp.shape, inp.dtype, g_is_free)
    if type(b) is not _ndarray:
        return b
    if not (g_is_free and shares(b, g)):
        _stage(ledger, b.nbytes)
    return _own_grad(b, inp)


def shares(b: Any, g: Grad) -> bool:
    """Whether the buffer ``b`` is ``g`` or a view of ``g``'s memory (``g`` was kept)."""
    if b is g:
        return True
    if type(b) is not _ndarray:
        return False
    base = b.base
    return base is not None and (base is g or base is getattr(g, "base", 0))


RELEASED_DURING = (
    "backward (the scope that owns it exited during the pass, in another thread: the "
    "pass stopped and its gradients were dropped; keep the scope open until the pass "
    "returns)"
)


def commit(node: Node, g: Grad, ledger: Ledger | None = None) -> None:
    """Add a pass's final gradient ``g`` of a leaf (or retained node) into its ``.grad``.

    ``g`` belongs to the pass, so a node without a gradient yet takes it as it is (a
    numpy scalar as a 0-d array holding it: ``.grad`` is always an ndarray). ``ledger``
    is the pass's, which counted ``g`` while it was staged (None: not counted there).
    """
    commit_all(((node, g),), ledger)


def commit_all(done: Sequence[tuple[Node, Grad]], ledger: Ledger | None = None) -> None:
    """``commit`` each ``(node, g)`` of ``done``, in order, under one hold of the lock
    (leaves may be shared by passes running in other threads). Each staged ``g`` leaves
    the pass's ``ledger``: added into a ``.grad`` and dropped, or kept as the ``.grad``,
    which the node's own scope then counts."""
    new: list[tuple[Node, int]] = []
    with _COMMIT_LOCK:
        for node, _ in done:  # all checked first: a pass that raises changes nothing
            if node.scope is None:
                raise node.released_error(RELEASED_DURING)
        for node, g in done:
            if ledger is not None and type(g) is _ndarray:
                _unstage(ledger, g.nbytes)
            buf = node.grad
            if buf is None:
                if type(g) is not _ndarray:
                    if _is_foreign(g):  # another namespace's: kept as it is
                        node.adopt_grad(g)
                        new.append((node, _namespaces.nbytes(g)))
                        continue
                    g = np.array(g)
                node.adopt_grad(g)
                new.append((node, g.nbytes))
            elif type(buf) is _ndarray:
                np.add(buf, g, out=buf)
            else:  # another namespace's array: the sum replaces it (never written in place)
                total: Any = buf + g
                node.adopt_grad(total)
        if new:
            _ledger.charge_grads(new)  # one count per scope, not one per param


def closure_error(
    op_name: str, i: int, inp: Node, e: Exception, stream: bool = False, added: int = 0
) -> BackwardError:
    """The error for a closure of op ``op_name`` (for its input ``i``) that raised ``e``
    in a pass that delivers final gradients as it goes (``stream``) or at its end
    (but for the ``added`` params whose accumulated ``.grad`` took theirs at once)."""
    if added:
        params = (
            "param whose .grad already held" if added == 1 else "params whose .grad already held"
        )
        changed = (
            f"{added} {params} a gradient had taken this pass's gradient already (the "
            "default pass adds accumulated gradients as soon as they are final; "
            "atomic=True holds them to the end); no other gradient was changed: zero the "
            "gradients (opt.zero_grad()) before trying again."
        )
    elif stream:
        changed = (
            "the gradients that were final before it had already been delivered (added "
            "into .grad by backward(atomic=False), or yielded by backward_iter); no other "
            "gradient was changed by this pass."
        )
    else:
        changed = "no gradient was changed by this pass."
    return BackwardError(
        f"backward: the closure of op '{op_name}' for its input {i} ({inp.describe()}) "
        f"raised {type(e).__name__}: {e}. Backprop stopped; {changed}"
    )


class Pass:
    """The arguments of one backward pass, checked before anything else happens, and the
    state the serial loop shares with ``hand_over``.

    Attributes:
        bufs: The pass's gradient buffers (``initial_buffers`` makes them).
        done: Final gradients kept for the end of the pass: ``(node, g)``.
        handed: Leaves ``hand_over`` finished in a streaming pass, not yielded yet.
        deliver: What a streaming pass does with a leaf's final gradient: ``commit`` (add
            it into ``.grad``) or the caller's ``sink``.
        stream: Whether final leaf gradients are delivered as soon as they are final.
        thread: The thread running the serial loop; 0 for a concurrent pass, which
            takes nothing through ``hand_over``.
    """

    __slots__ = (
        "__weakref__",
        "added",
        "atomic",
        "borrowed",
        "bufs",
        "deliver",
        "done",
        "handed",
        "keep",
        "leaky",
        "ledger",
        "plan",
        "retain_graph",
        "roots",
        "seeds",
        "stream",
        "targets",
        "thread",
    )

    def __init__(
        self,
        roots: Sequence[Variable],
        grads: Sequence[Any] | None,
        retain: Iterable[Variable] | bool,
        targets: set[Node] | None,
        measure: bool,
        retain_graph: bool = False,
    ) -> None:
        if grads is not None and (
            not hasattr(grads, "__len__") or (isinstance(grads, np.ndarray) and not grads.ndim)
        ):
            raise LampyTypeError(
                f"backward: grads must be a sequence with one grad per root ({len(roots)} "
                f"roots), got {type(grads).__name__}; for one root write "
                "lampy.backward([root], [g]) or root.backward(g)."
            )
        if grads is not None and len(grads) != len(roots):
            raise LampyError(
                f"backward: {len(roots)} roots but {len(grads)} grads; pass one grad per "
                "root (None seeds 1 for a scalar root)."
            )
        if retain is True or retain is False:
            retain_graph, retain = retain_graph or retain, ()
        keep: set[Node] = set()
        for v in retain:
            if not is_variable(v):
                raise LampyTypeError(f"backward: retain= takes Variables, got {type(v).__name__}.")
            v.value  # noqa: B018 - raises ReleasedError for a released Variable
            keep.add(v.node)
        # The caller's array is only read when it seeds the one root, which is an op
        # result nothing adds into and not retained; otherwise it is copied.
        borrow = len(roots) == 1 and roots[0].node.edges is not None and roots[0].node not in keep
        self.seeds = [
            _seed(r, None if grads is None else grads[i], borrow) for i, r in enumerate(roots)
        ]
        self.roots = [r.node for r in roots]
        self.keep = keep
        self.targets = targets
        self.borrowed = self.roots[0] if borrow else None
        self.plan = _plan(self.roots, targets, measure)
        self.retain_graph = retain_graph
        self.leaky = False
        owner = self.roots[0].scope
        if targets is None and not retain_graph and owner is not None and self.plan.pending:
            self.leaky = owner.note_backward(frozenset(self.plan.pending))
        scope = current_or_none()
        if scope is None or not scope.is_open:
            scope = self.roots[0].scope
        assert scope is not None  # _plan raised for a released root
        self.ledger: Ledger = scope.ledger
        self.bufs: dict[Node, Grad] = {}
        self.done: list[tuple[Node, Grad]] = []
        self.handed: list[Node] = []
        self.deliver: Callable[[Node, Grad], None] = commit
        self.stream = False
        self.thread = 0
        self.atomic = True
        self.added = 0

    def serve(self, stream: bool, sink: Callable[[Node, Grad], None] | None) -> None:
        """Mark this pass as run by the serial loop in the calling thread."""
        self.stream = stream or sink is not None
        ledger = self.ledger
        if sink is None:

            def deliver(node: Node, g: Grad) -> None:
                commit(node, g, ledger)

        else:

            def deliver(node: Node, g: Grad) -> None:
                if type(g) is _ndarray:  # it leaves this pass for the sink's owner
                    _unstage(ledger, g.nbytes)
                sink(node, g)

        self.deliver = deliver
        self.thread = threading.get_ident()

    def hand_over(self, leaf: Node, g: Grad) -> bool:
        """Finish ``leaf``'s gradient with ``g`` now, ahead of the loop, if ``g`` is all of it.

        For a closure that works out the gradients of several leaves at once
        (``lampy.remat``'s recomputation) before the loop serves their edges: rather
        than holding them all until then, it hands each over as soon as it is final. It
        is taken when the edge from the closure's op is the leaf's last edge not served
        yet and no contribution came before (``g`` is then the leaf's whole gradient in
        this pass, as the loop would have made it): ``g`` is delivered (streaming) or
        kept for the end, exactly as the loop would, and the edge counts as served, so
        the loop skips it. A streaming pass yields the leaf the next time the loop
        yields, after the op; so if a closure raises before that, the leaf's ``.grad``
        keeps this pass's gradient without the leaf having been yielded. A leaf outside
        the pass's ``targets`` is dropped (the loop skips its edge too).

        Call it only from a closure the pass is running, and never for an edge the loop
        has served already (the closure's own).

        Returns:
            Whether ``g`` was taken (or dropped). False (nothing changed) when the leaf
            has other edges left or a contribution already, or the pass is concurrent,
            or the caller runs in another thread: the closure then returns ``g`` when
            the loop serves the edge.
        """
        if self.thread != threading.get_ident():
            return False
        targets = self.targets
        if targets is not None and leaf not in targets:
            return True
        pending = self.plan.pending
        if pending.get(leaf) != 1 or leaf in self.bufs:
            return False
        pending[leaf] = 0  # the loop sees -1 when it reaches the edge and skips it
        if type(g) is _ndarray:  # staged in this pass from now on
            _stage(self.ledger, g.nbytes)
        if self.stream:
            self.deliver(leaf, g)
            self.handed.append(leaf)
        elif not self.atomic and leaf.grad is not None:  # accumulated: added at once
            commit(leaf, g, self.ledger)
            self.added += 1
        else:
            self.done.append((leaf, g))
        return True

    def initial_buffers(self) -> dict[Node, Grad]:
        """The pass's gradient buffers, holding the seeds (summed for a repeated root)."""
        bufs: dict[Node, Grad] = {}
        for root, seed in zip(self.roots, self.seeds, strict=True):
            if root.edges is None and self.targets is not None and root not in self.targets:
                continue
            if root in bufs:
                bufs[root] += seed
            else:
                bufs[root] = seed
                # a seed the pass made: counted while staged (but for one of another
                # namespace: those are not counted in a pass, see lampy._namespaces)
                if root is not self.borrowed and type(seed) is _ndarray:
                    _stage(self.ledger, seed.nbytes)
        self.seeds = []
        self.bufs = bufs
        return bufs


RUNNING: ContextVar[Pass | None] = ContextVar("lampy_running_pass", default=None)
"""The pass whose loop is running in this context (set by ``_propagate`` while it
advances the loop, not while the caller handles what it yields): the pass that calls
the closures running now, for ``Pass.hand_over``."""
