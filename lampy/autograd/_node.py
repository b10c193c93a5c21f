"""Node: the engine's mutable state of one Variable, apart from the immutable record."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

import attrs
import numpy as np

from lampy._errors import ReleasedError, released
from lampy._namespaces import nbytes as _nbytes
from lampy.autograd._edge import CONTRIBUTION, PLAIN, Edge, flat_edges, split_edges
from lampy.autograd._unbroadcast import Contribution

if TYPE_CHECKING:
    from lampy.autograd._scope import Scope

Backward = Callable[[np.ndarray, np.ndarray], object]
"""A zip-backward closure ``(g, out)``: adds the input's gradient into ``out``.

It should return None; whatever it returns is ignored.
"""

PRIVATE, HELD_BY_OP, SHARED = 0, 1, 2
"""``Node.held``: who else may hold a node's value array (``lampy.autograd._ledger``
decides from it how a dead Variable's value is refunded)."""

Param: TypeAlias = Edge
"""An op param: one differentiable input's node and how its gradient is computed (see
``lampy.autograd._edge``). ``Node.op`` shows every param as a ``(node, closure)`` pair."""


@attrs.frozen(eq=False)
class Op:
    """How a Variable was computed: the op's name and its params.

    ``lampy.Variable.op`` gives this record; the engine itself reads the same fields
    from the ``Node`` (``name``, ``params``, ``versions``), so recording an op makes no
    record object.

    Attributes:
        name: The op's name, used in error messages (``"matmul"``, ``"tanh"``...).
        params: One ``(input node, closure)`` pair per input that needs a gradient
            (made by ``input.zip_backward(closure)``). The closure takes ``(g, out)``:
            ``g`` is the gradient of the final output with respect to this op's value,
            ``out`` a buffer of the input's shape and dtype; it adds the input's
            gradient into ``out`` and returns None.
        versions: For each param whose input is a leaf, ``(node, version)``: the
            input's version (count of in-place writes) when the op read it. Backprop
            checks them, so a graph whose inputs were changed in place since is an
            error, not a silently wrong gradient. None when no input is a leaf.
    """

    name: str
    params: tuple[tuple[Node, Backward], ...]
    versions: tuple[tuple[Node, int], ...] | None = None


class _Spent(tuple[Param, ...]):
    """The type of ``SPENT``: an empty tuple that is not the empty tuple ``()``."""

    __slots__ = ()

    def __repr__(self) -> str:
        return "SPENT"


SPENT: tuple[Param, ...] = _Spent()
"""The params of a node whose closures a backward pass has run and dropped (a pass that
does not retain the graph): no gradient can flow through the node again. Distinct from
``()`` (an op result that needs no gradient) and from None (a leaf)."""


def _as_pair(e: Edge) -> tuple[Node, Backward]:
    """An edge as the ``(node, closure)`` pair ``lampy.Op`` shows."""
    node, fn, kind, fresh, saved = e
    if kind == PLAIN:
        return (node, fn)
    if kind == CONTRIBUTION:
        return (node, Contribution(fn, fresh))
    return (node, Contribution(lambda g: fn(g, saved), fresh))


class Node:
    """The state of one Variable that the engine changes, in one explicit mutable object.

    A ``lampy.Variable`` is a frozen record pointing to its Node; the graph links
    Nodes, never Variables (an op's params pair input Nodes with closures). So a value
    that no closure saved and no Python object can reach through a Variable any more is
    returned at once, while the graph keeps what backprop needs: op, shape, dtype.

    Only this class changes these fields, through the transitions below (``spend``,
    ``release``, ``detach``, ``mark_shared``, ``adopt_grad``...), with one exception:
    the memory ledger (``lampy.autograd._ledger``) writes the accounting fields
    ``charged`` and drops ``value`` directly on its hot path, once per op (a method
    call there would cost every op). What each field is:

    - ``value``: the forward value, read-only. Dropped (None) when the scope releases
      the node, or earlier, when the Variable is gone (nothing can read it then).
    - ``edges``: the op's params, one ``Edge`` per input that needs a gradient, held
      one after the other in one flat tuple (``lampy.autograd._edge.flat_edges``: a
      single edge is itself; edge ``j`` is ``edges[WIDTH * j : WIDTH * (j + 1)]``);
      None for a leaf, ``()`` for an op result that needs no gradient, ``SPENT`` once
      a pass ran and dropped them (``spend``). Dropped on release; a kept op result is
      detached (``edges`` None, ``needs_grad`` False). ``params`` gives them as a
      tuple of edges, ``op`` as a ``lampy.Op`` record. (Flat, so that a graph leaves
      the cyclic garbage collector two objects an op: the node and its edges.)
    - ``versions``: ``(leaf node, version)`` for each leaf input, as the op read it.
    - ``needs_grad``: whether gradients flow here.
    - ``grad``: the accumulated gradient of a leaf (or of a retained op result).
    - ``version``: how many in-place writes (``lampy.in_place``) the value has had.
    - ``scope``: the owning ``lampy.Scope``, None once released.
    - ``name``: the op's name (``"param"``, ``"const"``, ``"matmul"``...).
    - ``shape``, ``dtype``: of the value, kept for backprop and error messages.
    - ``handle``: for params, a weak reference to the Variable (for ``lampy.backward_iter``).
    - ``charged``: the bytes of ``value`` counted in the scope's memory (0 for a view
      and a numpy scalar); set by ``lampy.autograd._ledger`` when the scope registers the node.
    - ``kept``: the bytes of the arrays the op's params saved for backward beyond the
      values of the graph (an activation's mask, an attention's probabilities),
      counted in the scope's memory until the params are dropped (``spend``, release).
    - ``held``: who else may hold the value array, which decides how its refund is
      taken when the Variable is gone (``lampy.autograd._ledger.variable_gone``): ``PRIVATE`` (0,
      nothing else: refunded at once), ``HELD_BY_OP`` (1, a param of this node's own op
      saved it: it lives until the scope releases the node, refunded then) or
      ``SHARED`` (2, anything may: refunded if a weak reference shows it freed). ``op``
      sets 0 or 1 from params that show what they save; every read of the value that
      may keep it (``Variable.value``, the op library's ``value_of``) sets 2, and so does
      ``detach``.
    """

    __slots__ = (
        "__weakref__",
        "charged",
        "dtype",
        "edges",
        "grad",
        "grad_graph",
        "handle",
        "held",
        "kept",
        "name",
        "needs_grad",
        "scope",
        "shape",
        "value",
        "version",
        "versions",
        "watch",
    )

    def __init__(
        self,
        value: np.ndarray,
        params: tuple[Param, ...] | None,
        needs_grad: bool,
        scope: Scope,
        name: str,
        versions: tuple[tuple[Node, int], ...] | None = None,
        held: int = SHARED,
        charged: int = 0,
    ) -> None:
        self.value: np.ndarray | None = value
        self.held = held
        self.edges: tuple[Any, ...] | None = (
            (params[0] if len(params) == 1 else flat_edges(params)) if params else params
        )
        self.versions = versions
        self.needs_grad = needs_grad
        self.scope: Scope | None = scope
        self.name = name
        self.shape: tuple[int, ...] = value.shape
        self.dtype: np.dtype[Any] = value.dtype
        self.grad: np.ndarray | None = None
        self.version = 0
        self.handle: Any = None
        self.charged = charged
        self.kept = 0
        self.watch: Any = None

    @classmethod
    def of_namespace(
        cls,
        value: Any,
        params: tuple[Param, ...] | None,
        needs_grad: bool,
        scope: Scope,
        name: str,
        dtype: np.dtype[Any],
        versions: tuple[tuple[Node, int], ...] | None = None,
        charged: int = 0,
        held: int = SHARED,
    ) -> Node:
        """A node whose value is an array of another namespace (the array API standard's:
        the engine's namespace ops, in ``_namespaced.py``): ``dtype`` is numpy's dtype of
        the same element type, which the engine's sizes and messages read (the value keeps
        its own)."""
        node = cls(value, params, needs_grad, scope, name, versions, held, charged)
        node.dtype = dtype
        return node

    @property
    def params(self) -> tuple[Param, ...] | None:
        """The op's params as a tuple of edges (a new tuple each time; the engine reads
        the flat ``edges``): None for a leaf, ``()`` for an op result that needs no
        gradient, ``SPENT`` once a pass ran and dropped them."""
        edges = self.edges
        if not edges:  # None, () or SPENT
            return edges
        return split_edges(edges)

    @property
    def op(self) -> Op | None:
        """The op that computed the value as a ``lampy.Op`` record, None for a leaf
        (each contribution triple shown as the pair ``(node, Contribution(fn, fresh))``)."""
        edges = self.edges
        if edges is None:
            return None
        if edges is SPENT:  # run and dropped by a backward pass: the name stays
            return Op(self.name, ())
        return Op(self.name, tuple(_as_pair(p) for p in split_edges(edges)), self.versions)

    @property
    def is_released(self) -> bool:
        """Whether the owning scope has exited."""
        return self.scope is None

    @property
    def is_spent(self) -> bool:
        """Whether a backward pass that did not retain the graph has run this node's
        closures (and dropped them with the values they saved)."""
        return self.edges is SPENT

    @property
    def nbytes(self) -> int:
        """Bytes of the value and gradient buffer this node holds now."""
        v, g = self.value, self.grad
        return (0 if v is None else _nbytes(v)) + (0 if g is None else _nbytes(g))

    def describe(self) -> str:
        """``'matmul', shape (2, 3), dtype float64`` for messages."""
        return f"'{self.name}', shape {self.shape}, dtype {self.dtype}"

    def released_error(self, use: str) -> ReleasedError:
        """The ReleasedError for ``use`` (``".value"``, ``"op 'exp'"``) of this node."""
        return released(self.describe(), use)

    # ------------------------------------------------------------- transitions
    def mark_shared(self) -> None:
        """Something may now hold the value array besides the node (``Variable.value``,
        an op that may keep it, a view of it): its refund takes the weak-reference
        check when the Variable is gone."""
        self.held = SHARED

    def adopt_grad(self, g: Any) -> None:
        """Take ``g`` as the node's ``.grad``: a pass's final gradient (it had none), or,
        for a value of another namespace, the sum that replaces it (the engine never
        writes into such an array)."""
        self.grad = g

    def take_grad(self) -> np.ndarray | None:
        """Drop the ``.grad`` buffer (``zero_grad``) and return it, for its refund; a
        recorded gradient (``grad_graph``) goes with it."""
        g, self.grad = self.grad, None
        self.grad_graph = None
        return g

    def set_grad_graph(self, g: Any) -> None:
        """Hold ``g``, the recorded gradient of ``backward(create_graph=True)`` (a Variable),
        as ``grad_graph``. The slot is set only here and in ``take_grad``: read it with
        ``getattr(node, "grad_graph", None)``, so that making a node costs nothing more."""
        self.grad_graph = g

    def bump_version(self) -> None:
        """Count one in-place write into the value (``lampy.in_place``)."""
        self.version += 1

    def replace_value(self, value: Any) -> None:
        """Hold ``value``, a new array of the leaf's shape and dtype, as its value: the
        functional twin of an in-place write (the op kit's ``replace_values``), so its
        version goes up by one as ``lampy.in_place``'s exit does."""
        self.value = value
        self.version += 1

    def move_to(self, scope: Scope) -> None:
        """Belong to ``scope`` from now on (``Scope.keep``: an enclosing scope)."""
        self.scope = scope

    def set_handle(self, ref: Any) -> None:
        """Remember a param's Variable through the weak reference ``ref``."""
        self.handle = ref

    def watch_value(self, ref: Any) -> None:
        """Keep ``ref``, a weak reference whose callback refunds the value once whatever
        still held it when the Variable went lets it go (the ledger's)."""
        self.watch = ref

    def unwatch(self) -> bool:
        """Stop watching the value; whether it was watched (the ledger's)."""
        watched, self.watch = self.watch is not None, None
        return watched

    def count_kept(self, n: int) -> None:
        """Record the bytes the op's params keep beyond the graph's values (the ledger's)."""
        self.kept = n

    # Called by the backward pass only.
    def spend(self) -> int:
        """Drop the op's closures and what they saved, once a pass that does not retain
        the graph has run them: their memory returns now, not when the scope exits. The
        node keeps its value (while its Variable lives) and stays in the graph, so a
        later pass through it raises a clear error instead of a wrong gradient.

        Returns:
            The bytes freed with the params, which the scope's ledger counted: what
            they saved (``kept``), and the value if only the op's own param held it
            (its Variable is gone). The engine refunds them (``lampy.autograd._ledger.refund``).
        """
        self.edges = SPENT  # (versions stay: small, and never read again)
        freed = self.kept
        if freed:
            self.kept = 0
        if self.held == HELD_BY_OP:  # the params that held the value are gone
            self.held = PRIVATE
            if self.value is None:  # and the Variable too: the value is freed
                freed += self.charged
                self.charged = 0
        return freed

    # Called by the owning Scope only.
    def release(self) -> None:
        """Drop value, gradient and op: their memory returns now. Idempotent."""
        self.value = None
        self.grad = None
        self.edges = self.versions = None
        self.scope = None
        self.handle = None
        self.watch = None

    def detach(self) -> None:
        """Make a kept op result a constant: it keeps its value (and retained gradient)."""
        if self.edges is not None:
            self.edges = self.versions = None
            self.kept = 0
            self.needs_grad = False
            if self.held == HELD_BY_OP:  # the params that held the value are gone
                self.held = SHARED

    def __repr__(self) -> str:
        state = "released" if self.scope is None else "live"
        return f"Node({self.describe()}, {state})"


__all__ = ["HELD_BY_OP", "PRIVATE", "SHARED", "SPENT", "Backward", "Node", "Op", "Param"]
