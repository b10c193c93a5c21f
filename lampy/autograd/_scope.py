"""Scopes: the owners of Variables, releasing them deterministically on exit.

A Scope owns the ``lampy.autograd.Node`` of every Variable made while it is current.
It talks to nodes through three calls only: ``register`` (a new node is owned here),
``lampy.autograd.Node.release`` (on exit) and ``lampy.autograd.Node.detach`` (a kept op
result becomes a constant).
"""

from __future__ import annotations

import contextlib
from types import TracebackType
from typing import Any, TypeVar

from lampy import _memory
from lampy._errors import LampyError, no_scope
from lampy._tree import leaves
from lampy.autograd import _ledger
from lampy.autograd._budget_units import parse_bytes
from lampy.autograd._current import CURRENT as _CURRENT
from lampy.autograd._current import current_or_none as current_or_none
from lampy.autograd._ledger import Ledger, MemoryStats
from lampy.autograd._node import Node

T = TypeVar("T")

_NEW, _OPEN, _CLOSED = 0, 1, 2

_charge = _ledger.charge_value

OUT_OF_ORDER = (
    "Scope.__exit__: scopes exited out of order: {count} scope(s) entered inside this one "
    "were still open. They were closed too (their Variables released), and the current "
    "scope is now this scope's parent. The usual cause is a generator that opens a scope "
    "and yields inside it: the caller's code then runs inside the generator's scope, "
    "whose exit releases the caller's Variables. Open the scope around the loop that "
    "consumes the generator instead, and yield numpy arrays (or Variables of an enclosing "
    "scope); see 'Scopes and generators' in the docs."
)


class Scope:
    """Owner of the Variables created while it is the current scope.

    Use it as a context manager. Every Variable created inside the ``with`` block
    (params, constants and op results) belongs to the innermost active scope. When
    the block exits, normally or by an exception, the scope releases them all: their
    values, gradient buffers and ops are dropped at once, so their memory is back
    before the ``with`` statement returns. Later use of a released Variable raises
    ``lampy.ReleasedError``. Move what must outlive the block to the parent scope
    with ``lampy.Scope.keep``.

    The current scope is tracked with a ``contextvars.ContextVar``, so each
    thread and each asyncio task has its own stack of scopes; ``lampy.parallel_map``
    runs work in other threads under the caller's scope.

    Args:
        keep_values: Keep the value of every Variable until the scope exits, even of
            Variables no Python object refers to any more (by default their memory
            returns as soon as nothing can read it). Anomaly detection uses this to
            inspect every value of a graph.
        budget: The most memory the scope and its children may own: an int (bytes) or
            a string with a unit (``"1.5 GiB"``, ``"200 MB"``). An op that would go past
            it raises ``lampy.MemoryBudgetError`` (before allocating where it knows its
            output size in advance) and leaves the scope intact. See ``lampy.Scope.memory``.

    Examples:
        >>> import lampy
        >>> with lampy.Scope() as outer:
        ...     w = lampy.param([1.0, 2.0])
        ...     with lampy.Scope() as inner:
        ...         loss = (w * w).sum()
        ...         loss.backward()
        ...         kept = inner.keep(loss)  # survives the inner block
        ...     print(kept.item(), w.grad)
        5.0 [2. 4.]
    """

    __slots__ = (
        "__weakref__",
        "_handed",
        "_last_pass",
        "_nodes",
        "_parent",
        "_state",
        "_warned",
        "keep_values",
        "ledger",
    )

    def __init__(self, *, keep_values: bool = False, budget: int | str | None = None) -> None:
        self._nodes: list[Node] = []
        self._handed: set[Node] = set()  # moved to the parent with their graph (hand_over)
        self._parent: Scope | None = None
        self._state = _NEW
        self._last_pass: tuple[frozenset[Node], int] | None = None
        self._warned = False
        self.keep_values = keep_values
        limit = None if budget is None else parse_bytes(budget)
        self.ledger = Ledger(self, limit)
        """The scope's byte count, changed by ``lampy._memory`` only (read
        ``lampy.Scope.memory``)."""

    @staticmethod
    def current() -> Scope:
        """Return the innermost active scope of this thread or task.

        Raises:
            NoScopeError: if no scope is active.
        """
        scope: Scope | None = _CURRENT.get()
        if scope is None:
            raise no_scope("Scope.current()")
        return scope

    @property
    def parent(self) -> Scope | None:
        """The scope that was current when this one was entered (None for a root scope)."""
        return self._parent

    @property
    def is_open(self) -> bool:
        """Whether the ``with`` block of this scope is running."""
        return self._state == _OPEN

    def __len__(self) -> int:
        """Number of graph nodes (Variables made here) this scope owns now."""
        return sum(1 for n in self._nodes if n.scope is self)

    @property
    def nbytes(self) -> int:
        """Bytes held by the values and gradient buffers of the nodes this scope owns.

        A view shares memory with the array it views; both are counted.
        """
        return sum(n.nbytes for n in self._nodes if n.scope is self)

    @property
    def memory(self) -> MemoryStats:
        """What this scope and its children own now and at most: ``live_bytes``,
        ``peak_bytes``, ``arrays`` (see ``lampy/autograd/_ledger.py`` for what is counted: values
        lampy allocated, gradient buffers, optimizer state; a view counts 0 bytes, its
        memory being counted with the array that owns it).

        Examples:
            >>> import numpy as np, lampy
            >>> with lampy.Scope() as s:
            ...     x = lampy.param(np.zeros(1000))
            ...     print(s.memory.live_bytes, s.memory.arrays)
            8000 1
        """
        return self.ledger.stats()

    def reset_peak(self) -> None:
        """Start measuring ``memory.peak_bytes`` afresh from the live bytes now."""
        _ledger.reset_peak(self.ledger)

    def owned_nodes(self) -> list[Node]:
        """The nodes this scope owns now (not its children's)."""
        return [n for n in self._nodes if n.scope is self]

    def note_backward(self, leaves: frozenset[Node]) -> bool:
        """Note a backward pass (that does not retain the graph) from a root this scope
        owns, reaching ``leaves``; return True, once per scope, when it looks like a
        training loop without a scope per step: the same params as this scope's last
        pass, changed in place since (an optimizer step), so each step's graph stays
        owned here until the scope exits. Two losses of one step (a GAN's) reach
        different params; passes of gradient accumulation find the params unchanged."""
        versions = sum(n.version for n in leaves)
        last, self._last_pass = self._last_pass, (leaves, versions)
        if self._warned or last is None or last[0] != leaves or last[1] == versions:
            return False
        self._warned = True
        return True

    # ------------------------------------------------------------------ ownership
    def register(self, node: Node, nbytes: int = -1) -> None:
        """Own ``node`` (called by ``lampy.op``, ``lampy.param`` and ``lampy.const``).

        ``nbytes`` is what its value is charged when the caller knows (``lampy.op``: a
        new array's ``nbytes``, 0 for a numpy scalar), -1 for ``lampy._memory`` to tell.

        Safe against a concurrent exit from another thread: a node registered while the
        scope closes is released here, and the caller gets a clear error. A node that
        would take the scope past its budget is released and ``lampy.MemoryBudgetError`` raised.
        """
        self._nodes.append(node)
        if self._state != _OPEN:  # checked after appending: see _close
            node.release()
            with contextlib.suppress(ValueError):  # _close took the list and released it
                self._nodes.remove(node)
            raise closed_scope(self, f"op '{node.name}'")
        if nbytes == node.charged >= 0 and _memory.PROFILE is None:  # op(): Node(charged=)
            if not nbytes:
                return  # a numpy scalar, or a view of an input's value: nothing to charge
            ledger = self.ledger
            if ledger.fast:
                ledger.live += nbytes  # charge_value's fast path, once per op
                return
        try:
            _charge(self.ledger, node, nbytes)
        except BaseException:
            node.release()
            with contextlib.suppress(ValueError):
                self._nodes.remove(node)
            raise

    def __enter__(self) -> Scope:
        if self._state != _NEW:
            raise LampyError(
                "Scope.__enter__: this Scope was already entered; a Scope is used for one "
                "`with` block only. Create a new one: `with lampy.Scope(): ...`."
            )
        parent = self._parent = _CURRENT.get()
        _ledger.open_ledger(self.ledger, None if parent is None else parent.ledger)
        _CURRENT.set(self)
        self._state = _OPEN
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        current = _CURRENT.get()
        if self._state != _OPEN:
            # Already closed (by an enclosing scope's out-of-order exit, or from another
            # thread): only make sure this context does not keep pointing at it.
            if current is self:
                _CURRENT.set(_open_ancestor(self))
            return
        nested: list[Scope] = []
        s = current
        while s is not None and s is not self:
            nested.append(s)
            s = s._parent
        if s is self:
            for inner in nested:  # innermost first
                inner._close()
            _CURRENT.set(_open_ancestor(self))
        self._close()
        if s is not self:
            raise LampyError(
                "Scope.__exit__: this scope is not current here: it was entered in another "
                "thread, asyncio task or copied context than the one exiting it. Its "
                "Variables were released; enter and exit a scope in the same `with` block."
            )
        if nested:
            error = LampyError(OUT_OF_ORDER.format(count=len(nested)))
            if exc is None:
                raise error
            if hasattr(exc, "add_note"):  # Python 3.11+: keep the original exception
                exc.add_note(str(error))

    def _close(self) -> None:
        # The state changes before the list is taken: a node appended concurrently
        # (register) either lands in the list released below, or sees _CLOSED itself.
        self._state = _CLOSED
        self._last_pass = None
        nodes = self._nodes
        self._nodes = []
        kept = [n for n in nodes if n.scope is not self and n.scope is not None]
        _ledger.close_ledger(self.ledger, kept)
        handed, self._handed = self._handed, set()
        for n in nodes:
            if n.scope is self:
                n.release()
            elif n not in handed:
                n.detach()  # kept: it lives on in an enclosing scope
        nodes.clear()

    # ------------------------------------------------------------------ keep
    def keep(self, obj: T) -> T:
        """Move the Variables in ``obj`` to the parent scope and return ``obj``.

        ``obj`` may be a Variable or any tree holding Variables (``lampy.tree``'s rules:
        tuples, lists, dicts, sets, namedtuples, attrs records, dataclasses, modules and
        other objects with ``__lampy_children__()``, types registered with
        ``lampy.tree.register``); the same object is returned. Other objects are not
        looked into. When this scope
        exits, each kept Variable keeps its value (and its gradient, if it has one) and
        is detached from the released graph: it becomes a leaf of the parent scope. A
        param stays a param; a kept op result becomes a constant.

        Variables already owned by an enclosing scope are left where they are.

        Raises:
            LampyError: if this scope is not open, has no parent scope, or a Variable
                belongs to a scope nested inside this one.
            ReleasedError: if a Variable was already released.
        """
        if self._state != _OPEN:
            raise LampyError(
                "Scope.keep: this scope is not open; call keep inside its `with` block, "
                "before it exits."
            )
        parent = self._parent
        if parent is None:
            raise LampyError(
                "Scope.keep: this is a root scope, there is no parent scope to move Variables "
                "to. Open an enclosing `with lampy.Scope():` around it, or copy the data out "
                "with `v.value.copy()`."
            )
        nodes = _nodes_in(obj)
        for n in nodes:  # all checked before any moves: a failed keep moves nothing
            self._check_movable(n)
        for n in nodes:
            if n.scope is self:
                n.move_to(parent)
                parent._nodes.append(n)
        return obj

    def hand_over(self) -> None:
        """Give everything this scope owns now, graphs included, to the parent scope: at
        exit nothing of it is released or detached, and the parent releases it at its own
        exit. ``lampy.grad`` does this when its result is a Variable that an enclosing
        computation will differentiate (higher-order gradients).

        Raises:
            LampyError: if this scope is not open or has no parent scope.
        """
        parent = self._parent
        if self._state != _OPEN or parent is None:
            raise LampyError(
                "Scope.hand_over: the scope must be open and have a parent scope to hand "
                "its Variables to."
            )
        for n in self._nodes:
            if n.scope is self:
                n.move_to(parent)
                parent._nodes.append(n)
                self._handed.add(n)

    def _check_movable(self, n: Node) -> None:
        owner = n.scope
        if owner is self:
            return
        if owner is None:
            raise n.released_error("Scope.keep")
        ancestor = self._parent
        while ancestor is not None:
            if ancestor is owner:
                return
            ancestor = ancestor._parent
        raise LampyError(
            "Scope.keep: this Variable belongs to another scope that is not an enclosing "
            "one (for example a scope nested inside this one). Call keep on the scope that "
            "owns it."
        )

    def __repr__(self) -> str:
        state = ("new", "open", "closed")[self._state]
        return f"<lampy.Scope {state}, {len(self)} nodes at {id(self):#x}>"


def _open_ancestor(scope: Scope) -> Scope | None:
    """The nearest enclosing scope of ``scope`` that is still open, or None."""
    s = scope._parent
    while s is not None and s._state != _OPEN:
        s = s._parent
    return s


def _nodes_in(obj: Any) -> list[Node]:
    """The node of every Variable among the leaves of the tree ``obj`` (``lampy.tree``'s
    rules: tuples, lists, dicts, sets, namedtuples, attrs records, dataclasses,
    ``__lampy_children__()`` objects such as ``lampy.nn.Module`` and registered types)."""
    found = []
    for leaf in leaves(obj):
        node = leaf if type(leaf) is Node else getattr(leaf, "node", None)
        if type(node) is Node:
            found.append(node)
    return found


def closed_scope(scope: Scope | None, what: str) -> LampyError:
    """The error for making a Variable where the current scope is missing or closed."""
    if scope is None:
        return no_scope(what)
    return LampyError(
        f"{what}: the current scope has already exited (this code runs in another thread "
        "or in a context copied while it was open, such as an asyncio task or "
        "contextvars.copy_context(), and the scope's `with` block ended first). Open a "
        "scope where the Variables are made: `with lampy.Scope(): ...`, and wait for "
        "helper threads (lampy.parallel_map does) before the scope exits."
    )


__all__ = ["Scope", "closed_scope", "current_or_none"]
