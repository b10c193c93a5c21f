"""The ledger: the bytes every scope owns, counted where they are allocated and freed.

Accounting. Each ``lampy.Scope`` has a ``Ledger``: the bytes of the arrays its nodes
own, and its children's, now (``live``) and at most so far (``peak``). A value is
charged when its node is registered, a gradient buffer when it is committed into a
node's ``.grad``, an optimizer's state and scratch when allocated (``charge_state``, refunded
by ``refund_state`` when the optimizer closes or is collected). A value
whose Variable is gone is refunded as soon as its memory is actually freed (no backward
closure saved it); otherwise it stays charged until its scope exits. A scope's exit
refunds everything it owned at once (what it kept moves to the parent). A *view* (an
array whose memory belongs to another array: a reshape, a transpose, a basic-indexing
slice, a param made with ``copy=False``) is charged 0 bytes: its memory is counted once,
with the array that owns it, if lampy allocated that one. A 0-d op result is held as a
numpy scalar, an immutable Python object like the node itself, not an array: it is
charged 0 bytes and not counted in ``arrays``. A gradient buffer is charged its
``nbytes``. ``arrays`` counts the arrays that hold bytes (an empty array is not one).

A charge or refund changes the ledger of the node's own scope only: an op costs the
same at any depth of nesting. The enclosing ledgers take their children's changes in
when they are read (``Ledger.stats``, a budget check, an event of their own, a child's
exit): each child remembers what its parent already counts of it and the most it held
since (``high``: live is at a peak just before a decrease, so decreases are where it is
noted, with one comparison), so a parent's ``live`` is exact when read and its ``peak``
is exact for scopes nested in one thread (with child scopes open in several threads at
once, a parent's ``peak`` is an upper bound: each child's peak is added to the others'
counts as read). A ledger's own ``peak`` takes ``high`` in whenever ``high`` restarts.
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from lampy import _memory
from lampy._errors import MemoryBudgetError
from lampy._namespaces import nbytes as _nbytes
from lampy.autograd._current import current_or_none
from lampy.autograd._node import HELD_BY_OP, PRIVATE

if TYPE_CHECKING:
    from lampy.autograd._node import Node

_zeros = np.zeros
_ref = weakref.ref
_ndarray = np.ndarray


@attrs.frozen
class MemoryStats:
    """What a scope owns, with its children: a snapshot of its ``Ledger``.

    Attributes:
        live_bytes: Bytes of the arrays the scope and its open children own now.
        peak_bytes: The most ``live_bytes`` has been since the scope was entered (or
            since ``lampy.Scope.reset_peak``).
        arrays: How many arrays those live bytes are (views and empty arrays, which
            hold no bytes, are not counted).
        budget: The scope's own budget in bytes, or None.
    """

    live_bytes: int
    peak_bytes: int
    arrays: int
    budget: int | None


class Ledger:
    """The byte count of one scope, its children included; changed only by this module.

    Attributes:
        live: Bytes owned now by the scope and, as far as taken in (``_pull``), its open
            children.
        peak: The largest ``live`` up to the last restart of ``high`` (so the scope's
            peak is the largest of ``peak``, ``high`` and ``live``).
        high: The most ``live`` was, just before a decrease, since ``high`` last
            restarted (when the ledger was pushed into its parent, or read).
        arrays: The number of gradient buffers and optimizer state arrays counted in
            ``live`` (values are counted where they are: ``value_arrays``).
        budget: The scope's own limit in bytes, or None.
        parent: The enclosing scope's ledger, or None.
        children: The ledgers of the open child scopes.
        pushed_live: What ``parent.live`` counts of this ledger (``pushed_arrays``:
            of its arrays).
        limits: This ledger and its ancestors that have a budget (checked on charges).
        fast: No open children and no limits: a charge or refund then changes
            ``live`` alone, without the lock.
        owner: A weak reference to the Scope (for the budget error's largest owners).
    """

    __slots__ = (
        "arrays",
        "budget",
        "children",
        "fast",
        "high",
        "limits",
        "live",
        "owner",
        "parent",
        "peak",
        "pushed_arrays",
        "pushed_live",
    )

    def __init__(self, owner: Any, budget: int | None) -> None:
        self.owner = _ref(owner)
        self.budget = budget
        self.live = 0
        self.peak = 0
        self.high = 0
        self.arrays = 0
        self.parent: Ledger | None = None
        self.children: list[Ledger] = []
        self.pushed_live = 0
        self.pushed_arrays = 0
        self.limits: tuple[Ledger, ...] = ()
        self.fast = True

    def stats(self) -> MemoryStats:
        with _LOCK:
            _pull(self)
            live = self.live
            peak = max(self.peak, self.high, live)
            return MemoryStats(live, peak, self.arrays + value_arrays(self), self.budget)


def value_arrays(ledger: Ledger) -> int:
    """How many values the ledger's scope and its open children count now: their nodes
    whose ``charged`` is not 0 (a refund sets it to 0, or, for a ``PRIVATE`` value, drops
    the value). Counted when read, so that a charge or a refund, once per op, changes
    one number (``live``) instead of two."""
    scope = ledger.owner()
    total = 0
    if scope is not None:
        for n in scope.owned_nodes():  # a PRIVATE value dropped was refunded with it
            if n.charged and (n.value is not None or n.held != PRIVATE):
                total += 1
    for child in ledger.children:
        total += value_arrays(child)
    return total


# Taking children's counts into their parents (reads, events of an enclosing scope,
# exits) happens under this lock; an op's own charge touches only its scope's ledger.
_LOCK = threading.RLock()


def _pull(ledger: Ledger) -> None:
    """Take the changes of ``ledger``'s open descendants into its ``live`` and ``high``."""
    for child in ledger.children:
        if child.children:
            _pull(child)
        _push(child, ledger)


def _push(child: Ledger, parent: Ledger) -> None:
    """Move ``child``'s changes since its last push into ``parent``."""
    live = child.live
    high = child.high
    if high > child.peak:
        child.peak = high
    top = high if high > live else live
    seen = parent.live + top - child.pushed_live  # the parent's count at the child's peak
    if seen > parent.high:
        parent.high = seen
    parent.live += live - child.pushed_live
    parent.arrays += child.arrays - child.pushed_arrays
    child.pushed_live = live
    child.pushed_arrays = child.arrays
    child.high = 0


def reset_peak(ledger: Ledger) -> None:
    """Start measuring ``ledger``'s peak afresh from its live bytes now."""
    with _LOCK:
        _pull(ledger)
        if ledger.parent is not None:
            _push(ledger, ledger.parent)  # the parent keeps the peak it has not seen yet
        ledger.peak = ledger.live
        ledger.high = 0


open_budgets = 0
"""How many ledgers with a budget are open (ops check sizes in advance only when > 0)."""


def budgets_open() -> bool:
    """Whether any scope with a budget is open (ops then check sizes before allocating)."""
    return open_budgets > 0


def open_ledger(ledger: Ledger, parent: Ledger | None) -> None:
    """Link ``ledger`` under ``parent`` when its scope is entered."""
    global open_budgets
    ledger.parent = parent
    if parent is not None:
        with _LOCK:
            parent.children.append(ledger)
            parent.fast = False
    inherited = () if parent is None else parent.limits
    if ledger.budget is not None:
        ledger.limits = (ledger, *inherited)
        open_budgets += 1
    else:
        ledger.limits = inherited
    ledger.fast = not ledger.limits


def close_ledger(ledger: Ledger, kept: list[Node]) -> None:
    """Refund everything a closing scope owned, except the ``kept`` nodes (moved to the
    parent, which keeps counting them)."""
    global open_budgets
    keep_bytes = keep_arrays = 0
    for node in kept:
        if node.value is None:
            node.charged = 0  # held elsewhere when its Variable went: refunded here
        b, a = _node_bytes(node)
        keep_bytes += b
        keep_arrays += a
    with _LOCK:
        _pull(ledger)
        if ledger.live > ledger.peak:
            ledger.peak = ledger.live
        parent = ledger.parent
        if parent is not None:
            _push(ledger, parent)  # the parent counts all of it, its peak included
            _change(parent, keep_bytes - ledger.live, keep_arrays - ledger.arrays)
            parent.children.remove(ledger)
            parent.fast = not parent.children and not parent.limits
        ledger.live = ledger.arrays = ledger.pushed_live = ledger.pushed_arrays = 0
    if ledger.budget is not None:
        open_budgets -= 1


def _node_bytes(node: Node) -> tuple[int, int]:
    """The bytes a node's value and gradient are counted, and its gradient's array (values
    are counted in ``arrays`` where they are, by ``value_arrays``)."""
    n = a = 0
    if node.value is not None and node.charged:
        n = node.charged
    g = node.grad
    if g is not None and (nb := _nbytes(g)):
        n += nb
        a = 1
    return n, a


def _change(ledger: Ledger, n: int, arrays: int) -> None:
    """Add ``n`` bytes (``arrays`` arrays) to ``ledger``, its children's changes taken in
    first (so that its peak stays exact); for everything but an op's own charge."""
    with _LOCK:
        _pull(ledger)
        live = ledger.live
        if n < 0 and live > ledger.high:  # a decrease: live was at a peak just before it
            ledger.high = live
        ledger.live = live + n
        ledger.arrays += arrays


def charge_value(ledger: Ledger, node: Node, n: int = -1) -> None:
    """Charge a newly registered node's value (``node.charged``, 0 until then): ``n``
    bytes when the caller knows (``lampy.op``, for a new array it made read-only: its
    ``nbytes``; 0 for a numpy scalar), else (-1) its ``nbytes`` if it is an array that
    owns its memory; past a budget, refund it and raise."""
    if n < 0:
        v = node.value
        n = v.nbytes if type(v) is _ndarray and v.base is None else 0  # not a view
    node.charged = n
    if n:
        if ledger.fast:  # the common case, once per op: no peak to note, nothing to check
            ledger.live += n
        else:
            _charge_checked(ledger, node, n)
    if _memory.PROFILE is not None:
        _memory.PROFILE.value(node)


def _charge_checked(ledger: Ledger, node: Node, n: int) -> None:
    """A charge in a scope with open children or under a budget."""
    with _LOCK:
        _change(ledger, n, 0)
        for limited in ledger.limits:
            _pull(limited)
            if limited.budget is not None and limited.live > limited.budget:
                _change(ledger, -n, 0)
                node.charged = 0
                _pull(limited)  # the message's live bytes without the dropped array
                raise budget_error(limited, node.name, node.shape, node.dtype, n, after=True)


def charge_grads(pairs: Iterable[tuple[Node, int]]) -> None:
    """Charge gradient buffers that became ``.grad``, given as ``(node, bytes)``, with one
    update per scope's ledger (a backward pass commits the gradients of all its params at
    once; never raises: backward is all-or-nothing, so a gradient computed is kept)."""
    _change_by_ledger((node, n, int(n > 0)) for node, n in pairs)


def drop_grad(node: Node) -> None:
    """``node.grad = None`` (``lampy.Variable.zero_grad``), refunding the buffer
    ``charge_grads`` charged."""
    g = node.take_grad()
    scope = node.scope
    if g is not None and scope is not None:
        n = _nbytes(g)
        _change(scope.ledger, -n, -int(n > 0))


def drop_grads(nodes: Iterable[Node]) -> None:
    """``drop_grad`` for each node, with one refund per scope's ledger (a model's or an
    optimizer's ``zero_grad``)."""
    dropped: list[tuple[Node, int, int]] = []
    for node in nodes:
        g = node.take_grad()
        if g is not None:
            try:
                n = g.nbytes
            except AttributeError:  # another namespace's array (the standard has no nbytes)
                n = _nbytes(g)
            dropped.append((node, -n, -(n > 0)))
    _change_by_ledger(dropped)


def _change_by_ledger(changes: Iterable[tuple[Node, int, int]]) -> None:
    """Add each ``(node, n, arrays)`` to the ledger of the node's scope, summed per
    ledger first: one update (and one peak noted) per ledger."""
    totals: dict[Ledger, list[int]] = {}
    for node, n, arrays in changes:
        scope = node.scope
        if scope is None:
            continue
        total = totals.get(scope.ledger)
        if total is None:
            totals[scope.ledger] = [n, arrays]
        else:
            total[0] += n
            total[1] += arrays
    for ledger, (n, arrays) in totals.items():
        _change(ledger, n, arrays)


def variable_gone(variable: Any) -> None:
    """``Variable.__del__``: nothing can read the value any more (the graph links nodes,
    not Variables), so the node drops it, and its memory returns now unless something
    else holds it or the scope keeps values; refund it if it is freed.

    Whether it is freed follows from ``node.held``: a value nothing else holds
    (``PRIVATE``) is freed now and refunded; one a param of the node's own op saved
    (``HELD_BY_OP``) lives until the scope releases the node, and stays charged until
    then; for one anything else may hold (``SHARED``: the caller read it, or an op that
    may keep it did) a weak reference tells. A value still held stays charged until
    its scope exits.
    """
    node = variable.node
    scope = node.scope
    if scope is None or scope.keep_values:
        return
    n = node.charged
    held = node.held
    if not n or held == HELD_BY_OP:  # nothing counted, or refunded when released
        node.value = None
        return
    if held:  # SHARED: refunded only if dropping the node's reference frees it
        v = node.value
        node.value = None
        try:
            base = v.base  # a view: what holds the memory is the array owning it
        except AttributeError:  # another namespace's array (the standard has no views)
            base = None
        while type(base) is _ndarray:
            v, base = base, base.base
        r = _ref(v)
        del v, base
        alive = r()
        if alive is not None:  # held elsewhere (a consumer's closure): refunded when freed
            node.watch_value(_ref(alive, functools.partial(_value_freed, node)))
            return
        node.charged = 0  # refunded: no longer one of the scope's value_arrays
    else:
        node.value = None  # PRIVATE and dropped: refunded, not a value_array either
    ledger = scope.ledger
    if ledger.fast:  # _change(ledger, -n, 0), inlined: once per op result
        live = ledger.live
        if live > ledger.high:
            ledger.high = live
        ledger.live = live - n
    else:
        _change(ledger, -n, 0)


def _value_freed(node: Node, _: object) -> None:
    """The weak-reference callback of a dead Variable's value that something else held
    (``variable_gone``): the last holder (say a backward closure, dropped when its pass
    ran it) let it go, so its memory is back: refund it."""
    with _LOCK:
        scope = node.scope
        if scope is None or not scope.is_open or not node.unwatch():
            return  # released, or being released: the scope's exit refunds it
        refund_value(node)


def refund_value(node: Node) -> None:
    """Refund the value of ``node``, whose memory was just freed (its Variable is gone and
    the last holder let it go: ``Node.spend`` or ``_value_freed``)."""
    n = node.charged
    if n and node.scope is not None:
        node.charged = 0
        refund(node, n)


def refund(node: Node, n: int) -> None:
    """Refund ``n`` bytes of ``node``'s that were just freed (``Node.spend``)."""
    scope = node.scope
    if scope is not None:
        ledger = scope.ledger
        if ledger.fast:  # _decrease, inlined: once per spent node that freed something
            live = ledger.live
            if live > ledger.high:
                ledger.high = live
            ledger.live = live - n
        else:
            _change(ledger, -n, 0)


def _decrease(ledger: Ledger, n: int, arrays: int) -> None:
    """``_change(ledger, -n, -arrays)``, without the lock when the ledger is fast: live
    was at a peak just before a decrease, which ``high`` notes."""
    if ledger.fast:
        live = ledger.live
        if live > ledger.high:
            ledger.high = live
        ledger.live = live - n
        ledger.arrays -= arrays
    else:
        _change(ledger, -n, -arrays)


def charge_kept(ledger: Ledger, node: Node, n: int) -> None:
    """Count the ``n`` bytes the op's params of a new ``node`` saved beyond the graph's
    values (``node.kept``), until the params are dropped. Never raises: the arrays exist
    already; the next allocation is checked against the budget with them."""
    node.count_kept(n)
    if ledger.fast:
        ledger.live += n
    else:
        _change(ledger, n, 0)


def stage(ledger: Ledger, n: int, arrays: int = 1) -> None:
    """Count a gradient buffer of ``n`` bytes (or ``arrays`` buffers of ``n`` bytes in
    all) that a backward pass made (staged until it becomes a ``.grad`` or is dropped),
    in the ledger of the pass's scope."""
    if not n:
        return  # an empty array holds no bytes and is not counted
    if ledger.fast:
        ledger.live += n
        ledger.arrays += arrays
    else:
        _change(ledger, n, arrays)


def unstage(ledger: Ledger, n: int) -> None:
    """Refund a staged gradient buffer of ``n`` bytes (dropped, or become a ``.grad``,
    which its node's scope then counts)."""
    if n:
        _decrease(ledger, n, 1)


def check_room(ledger: Ledger, name: str, shape: tuple[int, ...], dtype: Any) -> None:
    """Raise ``lampy.MemoryBudgetError`` if an array of ``shape`` and ``dtype`` would take
    ``ledger`` or an enclosing ledger past its budget (before the array is allocated)."""
    if not shape:
        return
    n = int(np.prod(shape, dtype=np.int64)) * np.dtype(dtype).itemsize
    for limited in ledger.limits:
        with _LOCK:
            _pull(limited)
        if limited.budget is not None and limited.live + n > limited.budget:
            raise budget_error(limited, name, tuple(shape), np.dtype(dtype), n, after=False)


def charge_state(node: Node, buf: np.ndarray, what: str) -> Ledger | None:
    """Charge ``buf``, an array an optimizer allocated for ``node`` (state or scratch), to
    the node's scope, checked against every budget first: past one, nothing is charged and
    ``MemoryBudgetError`` is raised. Returns the ledger charged (None: no scope), which
    the optimizer hands to ``refund_state`` when it lets the array go."""
    scope = node.scope
    n = buf.nbytes
    if scope is None or not n:
        return None
    ledger: Ledger = scope.ledger
    with _LOCK:
        _change(ledger, n, 1)
        for limited in ledger.limits:
            _pull(limited)
            if limited.budget is not None and limited.live > limited.budget:
                _change(ledger, -n, -1)
                _pull(limited)
                raise budget_error(limited, what, buf.shape, buf.dtype, n, after=True)
    if _memory.PROFILE is not None:
        _memory.PROFILE.state(buf, node)
    return ledger


def refund_state(ledger: Ledger, n: int) -> None:
    """Refund ``n`` bytes (one array) ``charge_state`` charged to ``ledger``; nothing if
    the ledger's scope has exited (its exit refunded everything it counted)."""
    scope = ledger.owner()
    if scope is not None and scope.is_open:
        _change(ledger, -n, -1)


def _current_ledger() -> Ledger | None:
    scope = current_or_none()
    return None if scope is None else scope.ledger


def reserve(name: str, shape: tuple[int, ...], dtype: Any) -> None:
    """Check, before allocating, that an output of ``shape`` and ``dtype`` fits every
    budget of the current scope; raise ``lampy.MemoryBudgetError`` if not.

    Ops whose output size is known in advance call it when ``budgets_open()``.
    """
    ledger = _current_ledger()
    if ledger is None or not ledger.limits:
        return
    check_room(ledger, name, shape, dtype)  # a 0-d result is a numpy scalar: not counted


def empty(name: str, shape: tuple[int, ...], dtype: Any) -> np.ndarray:
    """An uninitialised output buffer for op ``name``, checked against the budgets first."""
    if open_budgets:
        reserve(name, shape, dtype)
    return np.empty(shape, dtype)


def _fmt(n: float) -> str:
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if abs(n) >= size:
            return f"{n / size:.2f} {unit}"
    return f"{int(n)} B"


def budget_error(
    limited: Ledger, name: str, shape: tuple[int, ...], dtype: Any, n: int, after: bool
) -> MemoryBudgetError:
    """The error for op ``name`` asking ``n`` bytes past ``limited``'s budget."""
    live = limited.live
    chain: list[Ledger] = []
    ledger = _current_ledger()
    while ledger is not None:  # the budgeted scope and its children down to the current one
        chain.append(ledger)
        if ledger is limited:
            break
        ledger = ledger.parent
    if not chain or chain[-1] is not limited:
        chain = [limited]
    owners: list[Node] = []
    for ledger in chain:
        scope = ledger.owner()
        if scope is not None:
            owners.extend(scope.owned_nodes())
    sized = sorted(((_node_bytes(o)[0], o) for o in owners), key=lambda t: -t[0])
    top = [f"{o.describe()}: {_fmt(b)}" for b, o in sized[:5] if b > 0]
    listing = "; ".join(top) if top else "none"
    when = "" if not after else " (its size was not known in advance: the new array was dropped)"
    return MemoryBudgetError(
        f"op '{name}' asks {_fmt(n)} for an array of shape {shape}, dtype {dtype}{when}, "
        f"but its scope and children already own {_fmt(live)} of a budget of "
        f"{_fmt(limited.budget or 0)}. The largest owners: {listing}. Nothing was changed: "
        "the scope is intact. Save activation memory with lampy.remat(fn) or "
        "lampy.nn.remat_sequential(modules, x, segments=k), use a smaller batch, or raise "
        "the budget."
    )
