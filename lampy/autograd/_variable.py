"""Variable and Op: the immutable records of the graph, and ``op``, which records one
(the leaves, ``param`` and ``const``, are in ``_leaves``)."""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn, TypeAlias

import attrs
import numpy as np
from numpy.typing import ArrayLike

from lampy import _memory
from lampy._errors import DTypeError, LampyTypeError, no_scope
from lampy._namespaces import is_foreign as _is_foreign
from lampy._namespaces import zeros_like
from lampy.autograd import _ledger
from lampy.autograd._backprop import backward
from lampy.autograd._complex import complex_kind, conjugated, no_complex
from lampy.autograd._edge import (
    CONTRIBUTION,
    NODE,
    PLAIN,
    WITH_SAVED,
    contribution_edge,
    is_edge,
    plain_edge,
)
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._node import HELD_BY_OP, PRIVATE, SHARED, SPENT, Backward, Node, Op, Param
from lampy.autograd._operators import VariableOperators
from lampy.autograd._saved import (
    FRESH_NOTES,
    declared_bytes,
    fresh_view_bytes,
    kept_bytes,
    view_bytes,
)
from lampy.autograd._scope import closed_scope, current_or_none
from lampy.autograd._shared_names import ElementCount
from lampy.autograd._unbroadcast import Contribution

if TYPE_CHECKING:
    from lampy.autograd._scope import Scope


@attrs.frozen(eq=False, repr=False, weakref_slot=True)
class Variable(VariableOperators):
    """An immutable node of the graph: a value, how it was computed, and its gradient.

    Variables are made by ``lampy.param``, ``lampy.const`` and ops (``lampy.op``), never by
    calling the class, and belong to the scope that was current when they were made.
    The record itself never changes; the engine's state of it (value, gradient buffer,
    version, owner) lives in its ``lampy.autograd.Node``, which the graph links.

    Attributes:
        node: The engine's state of this Variable, linked by the ops that use it.
    """

    node: Node
    __lampy_leaf__ = True  # a leaf of lampy.tree's walks, not an attrs record to open

    # ----------------------------------------------------------------- data access
    @property
    def value(self) -> np.ndarray:
        """The value, a read-only numpy array (copy it to modify it).

        The engine holds a 0-d op result as a numpy scalar (immutable, and ten times
        cheaper to compute with than a 0-d array); this property gives it as a read-only
        0-d array, made at each call. A value of another array namespace (the
        experimental ops of ``import lampy.experimental.array_api``) is that array
        itself.
        """
        node = self.node
        v = node.value
        if type(v) is _ndarray:
            node.mark_shared()  # the caller may keep the array
            return v
        if type(v) in _NUMPY_SCALARS:
            return _as_array(v)
        if v is None:
            raise node.released_error(".value")
        node.mark_shared()  # an array of another namespace, given as it is
        return v

    @property
    def grad(self) -> np.ndarray | None:
        """The accumulated gradient buffer, or None if no gradient reached it yet.

        Params (leaves that need a gradient) accumulate here across backward calls
        until ``lampy.Variable.zero_grad``. Op results hold a gradient only if they were named in
        ``retain=`` of a backward call.
        """
        node = self.node
        if node.scope is None:
            raise node.released_error(".grad")
        return node.grad

    @property
    def grad_graph(self) -> Variable | None:
        """The gradient that ``backward(create_graph=True)`` recorded (summed over such
        passes), as a Variable that can be differentiated again (PyTorch's ``.grad``
        after ``backward(create_graph=True)``); None without one. ``.grad`` holds its
        value. Reset by ``zero_grad``; owned by the scope the pass ran in."""
        node = self.node
        if node.scope is None:
            raise node.released_error(".grad_graph")
        g: Variable | None = getattr(node, "grad_graph", None)
        return g

    @property
    def op(self) -> Op | None:
        """The ``lampy.Op`` that computed this Variable, or None for a leaf (a param or a
        constant) and for results computed under ``lampy.no_grad``."""
        return self.node.op

    @property
    def needs_grad(self) -> bool:
        """Whether gradients flow to this Variable."""
        return self.node.needs_grad

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the value."""
        return self._held().shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """Dtype of the value."""
        return self._held().dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions of the value."""
        return self._held().ndim

    @property
    def size(self) -> ElementCount:
        """Number of elements of the value (numpy's ``size``); ``x.size()`` and
        ``x.size(dim)`` are PyTorch's (the shape, one axis' length)."""
        held = self._held()
        return ElementCount(held.size, held.shape)

    def _held(self) -> np.ndarray | np.generic:
        """The value as the engine holds it (a numpy scalar for a 0-d op result)."""
        v = self.node.value
        if v is None:
            raise self.node.released_error(".value")
        return v

    @property
    def is_leaf(self) -> bool:
        """Whether this Variable has no op with params (a param, a constant, or detached);
        an op result stays one after a backward pass has run (and dropped) its closures."""
        edges = self.node.edges
        return edges is None or (not edges and edges is not SPENT)

    @property
    def is_released(self) -> bool:
        """Whether the scope that owned this Variable has exited."""
        return self.node.scope is None

    @property
    def version(self) -> int:
        """How many times the value was changed in place (by ``lampy.in_place``)."""
        return self.node.version

    def item(self) -> Any:
        """The single element of the value as a Python scalar."""
        return self._held().item()

    def numpy(self) -> np.ndarray:
        """A writable copy of the value, owned by the caller."""
        return np.array(self._held(), copy=True)

    def zip_backward(self, fn: Backward) -> Param:
        """Pair this Variable with its zip-backward closure, as an op's param.

        Args:
            fn: ``fn(g, out)`` adds this input's gradient into ``out`` (a buffer of this
                Variable's shape and dtype), given ``g``, the gradient with respect to
                the op's value. It returns None.

        Returns:
            The ``Edge`` to pass to ``lampy.op`` (of kind ``CONTRIBUTION`` for a
            ``lampy.autograd.Contribution``).
        """
        if type(fn) is Contribution:
            return contribution_edge(self.node, fn.fn, fn.fresh)
        return plain_edge(self.node, fn)

    def backward(
        self,
        grad: ArrayLike | None = None,
        *,
        retain: Any = (),
        retain_graph: bool = False,
        workers: int | str | None = None,
        atomic: bool | None = None,
        create_graph: bool = False,
    ) -> None:
        """Backpropagate from this Variable; see ``lampy.backward``."""
        backward(
            self,
            None if grad is None else [grad],
            retain=retain,
            retain_graph=retain_graph,
            workers=workers,
            atomic=atomic,
            create_graph=create_graph,
        )

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradient: ``.grad`` becomes None (the default, as PyTorch's
        ``zero_grad``), or with ``set_to_none=False`` the buffer is kept and filled with
        zeros in place.

        With None, the next backward pass takes its gradient as the new buffer: no
        zero-filled buffer to add into, one pass over memory less per param.
        """
        node = self.node
        if node.scope is None:
            raise node.released_error(".zero_grad()")
        if set_to_none:
            _ledger.drop_grad(node)
            return
        g = node.grad
        if type(g) is _ndarray:
            g.fill(0)
        elif g is not None:  # another namespace's array: replaced, never written into
            node.adopt_grad(zeros_like(g))

    def detach(self) -> Variable:
        """Same as ``lampy.const`` of the value: no gradient flows through it.

        The value of an op result is shared (no copy). A leaf's value (a param's, which
        an optimizer changes in place) or a view of another array is copied: a graph
        that read the detached value must not see a later in-place write, which it could
        not detect (PyTorch shares the memory and raises at backward instead).
        """
        value = self.value
        copy = self.node.edges is None or value.base is not None
        scope = current_or_none()
        if scope is None:
            raise no_scope("lampy.Variable.detach()")
        if not scope.is_open:
            raise closed_scope(scope, "lampy.Variable.detach()")
        arr = np.array(value, copy=True) if copy else np.asarray(value)
        return _leaf_in(scope, "const", arr, False, not copy)

    # Nothing can read the value once the Variable is gone (the graph links nodes, not
    # Variables): lampy._memory drops it from the node, and refunds it if it is freed.
    __del__ = _ledger.variable_gone

    # ------------------------------------------------------------- python protocol
    def __repr__(self) -> str:
        node = self.node
        v = node.value
        if v is None:
            return f"Variable(<released>, made by {node.describe()})"
        how = "param" if node.needs_grad and node.edges is None else node.name
        if _is_foreign(v):  # an array of another namespace: its own repr
            body = repr(v)
        else:
            body = np.array2string(v, separator=", ", prefix="Variable(", threshold=20)
        return f"Variable({body}, dtype={v.dtype}, {how}, needs_grad={node.needs_grad})"

    __hash__ = object.__hash__

    def __len__(self) -> int:
        shape = self.shape
        if not shape:
            raise TypeError("len() of a 0-d Variable")
        return shape[0]

    def __bool__(self) -> bool:
        return bool(self.value)

    def __float__(self) -> float:
        return float(self.value)

    def __int__(self) -> int:
        return int(self.value)

    def __index__(self) -> int:
        return self.value.__index__()

    def __array__(self, dtype: Any = None, copy: bool | None = None) -> np.ndarray:
        v = self.value  # a released Variable raises ReleasedError here
        if self.node.needs_grad:
            raise LampyTypeError(
                "numpy cannot use a Variable that needs a gradient as an array: the gradient "
                "would be silently lost. Use lampy's ops (lampy.exp, lampy.sum...) on it, or "
                "take `v.value` explicitly if you mean to leave the graph."
            )
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    # Copies are new Variables of the current scope, so no copy escapes scope rules.
    def __copy__(self) -> Variable:
        return _copy_variable(self, "copy.copy")

    def __deepcopy__(self, memo: dict[int, Any]) -> Variable:
        return _copy_variable(self, "copy.deepcopy")

    def __reduce_ex__(self, protocol: Any) -> NoReturn:
        raise LampyTypeError(
            "pickle: a Variable cannot be pickled: it is a node of a graph owned by a scope, "
            "and graphs are not serialisable. Pickle its value (`v.value` or `v.numpy()`), "
            "or save a model's parameters with `lampy.save(path, model)`."
        )


Operand: TypeAlias = ArrayLike | Variable
"""What an op takes as an array operand: a Variable, or anything numpy makes an array of
(an ndarray, a Python number, a nested list of numbers) as a constant."""


def _copy_variable(v: Variable, how: str) -> Variable:
    """A new Variable of the current scope with a copy of ``v``'s value: a param's copy
    is a new param (its own gradient); any other Variable's copy is a constant."""
    node = v.node
    value = v.value
    scope = current_or_none()
    if scope is None:
        raise no_scope(how)
    if node.needs_grad and node.edges is None:
        return _leaf_in(scope, "param", np.array(value, copy=True), True, False)
    return _leaf_in(scope, "const", np.array(value, copy=True), False, False)


_own = _memory.own_value
_set_writeable = _memory.set_writeable
_grad_enabled = GRAD_ENABLED.get
_ndarray = np.ndarray


# The numpy scalar types of the numeric dtypes: the engine holds a 0-d op result as one.
_NUMPY_SCALARS = frozenset(
    np.dtype(c).type for c in np.typecodes["All"] if np.dtype(c).kind in "biufc"
)
_FLOAT_SCALARS = frozenset(t for t in _NUMPY_SCALARS if issubclass(t, np.floating))


def _held_0d(a: np.ndarray) -> Any:
    """A 0-d result as the engine holds it: a numpy scalar of its dtype (an immutable
    copy of the element, ten times cheaper to compute with than a 0-d array), or, for a
    dtype with no numeric scalar (strings, dates...), the array made read-only."""
    s = a[()]
    if type(s) in _NUMPY_SCALARS:
        return s
    return _own(a)


def _as_array(s: Any) -> np.ndarray:
    """A held numpy scalar as the read-only 0-d array ``Variable.value`` gives."""
    a = np.array(s)
    _memory.set_writeable(a, False)
    return a


_new = object.__new__
_init_node = Variable.__dict__["node"].__set__
"""The setter of the record's one slot, for ``_variable`` and ``op`` alone: what attrs'
``__init__`` of the frozen record does (``object.__setattr__``, which costs twice as
much: a wrapper call that copies its arguments), used once, on a Variable just made."""


def _variable(node: Node) -> Variable:
    """A new Variable of ``node``: the record's own constructor for the engine, once per
    op (attrs' ``__init__`` without the Python-level call)."""
    v: Variable = _new(Variable)
    _init_node(v, node)
    return v


def op(
    name: str,
    value: ArrayLike,
    *params: Param | None,
    keeps: Sequence[np.ndarray | None] | None = None,
) -> Variable:
    """Record an op: make its output Variable, owned by the current scope.

    This is the one way ops are defined, built-in ones included.

    Args:
        name: The op's name, shown in error messages.
        value: The forward result (taken over by the Variable and made read-only).
        *params: ``input.zip_backward(closure)`` for each differentiable input. Each
            ``closure(g, out)`` must *add* the input's gradient into ``out`` (an array of
            the input's shape and dtype) and return None; ``g`` has the shape of
            ``value``. Params whose input needs no gradient are dropped; ``None`` entries
            (inputs that are not Variables) are skipped.
        keeps: Optional: every array the params' closures keep (None entries skipped).
            The scope's memory counts what closures keep beyond the graph's values; by
            default it finds those arrays by looking into the closures' cells, and an
            op that declares them skips that scan (1 to 3 µs for an op of several
            closures). Declare exactly what the closures of the params given here
            capture: the test suite checks each declaration against the scan
            (``lampy.autograd._saved.CHECK_DECLARED``).

    Returns:
        The output Variable. It needs a gradient if some param's input does, grad
            mode is on and the value has a floating dtype; otherwise no closures are
            recorded.

    Raises:
        NoScopeError: if no scope is active.
        ReleasedError: if an input was released.
        DTypeError: if an input needs a gradient but the value is complex or not
            numeric (lampy's gradients are real: the gradient would be lost).

    Examples:
        >>> import numpy as np, lampy
        >>> def cube(x):
        ...     a = x.value
        ...     d_x = lambda g, out: np.add(out, g * 3 * a**2, out=out)
        ...     return lampy.op("cube", a**3, x.zip_backward(d_x))
        >>> with lampy.Scope():
        ...     x = lampy.param(2.0)
        ...     cube(x).backward()
        ...     print(x.grad)
        12.0
    """
    scope = current_or_none()
    if scope is None:
        raise no_scope(f"op '{name}'")
    arr: Any = value
    fresh = -1  # a view's bytes when the op noted its own array (frozen), for no params
    if type(value) is _ndarray and value.base is None and value.shape:  # a new array
        _set_writeable(value, False)  # own_value, inlined
        nbytes = value.nbytes  # what the value is charged (see Scope.register)
    elif type(value) in _NUMPY_SCALARS:  # a 0-d result of numpy's scalar arithmetic
        nbytes = 0
    else:  # a view, a 0-d array, a list: made read-only, charged by the ledger (-1)
        arr, nbytes = _held(value), -1
        if FRESH_NOTES and type(arr) is _ndarray and arr.base is not None:
            fresh = fresh_view_bytes(arr)  # taken now: a later view must not find it
    if not _grad_enabled():
        node = Node(arr, None, False, scope, name)
        scope.register(node, nbytes if fresh < 0 else fresh)
        return _variable(node)
    # The common case, in one pass: every param an edge whose node needs a gradient
    # (None entries, operands that are not Variables, dropped); else _params checks.
    versions: tuple[tuple[Node, int], ...] | None = None
    skipped = scan = False  # scan: a param may keep arrays beyond the graph's values
    held = PRIVATE  # who else holds the value: see Node.held
    for p in params:
        if p is None:
            skipped = True
            continue
        if type(p) is not tuple:
            break
        try:
            node, _, kind, _, saved = p
        except ValueError:  # a tuple of another length (a hand-built pair): _params
            break
        if type(node) is not Node or not node.needs_grad or node.scope is None:
            break
        if node.edges is None:  # a leaf: remember the version the op read
            pair = ((node, node.version),)
            versions = pair if versions is None else versions + pair
        if kind == WITH_SAVED:  # fn(g, saved) shows what it keeps
            if type(saved) is _ndarray:
                if saved is not arr and saved.base is not arr:
                    scan = True
                elif held == PRIVATE:
                    held = HELD_BY_OP  # the value, or a view of it
        elif kind == PLAIN or kind == CONTRIBUTION:  # noqa: SIM109 (no tuple built per op)
            # a closure: it may keep anything
            held, scan = SHARED, True
        else:
            break
    else:
        if skipped:  # drop the None entries (one constant operand of two: inline)
            if len(params) == 2:
                p = params[0]
                params = (p,) if p is not None else () if params[1] is None else (params[1],)
            else:
                params = tuple([p for p in params if p is not None])
        if params and (type(arr) in _FLOAT_SCALARS or arr.dtype.kind == "f"):
            if nbytes < 0 and type(arr) is _ndarray and arr.base is not None:
                nbytes = view_bytes(arr, params)  # type: ignore[arg-type]
            node = Node(arr, params, True, scope, name, versions, held, nbytes)  # type: ignore[arg-type]
            scope.register(node, nbytes)
            if scan and (
                kept := kept_bytes(params, arr)  # type: ignore[arg-type]
                if keeps is None
                else declared_bytes(keeps, params, arr)  # type: ignore[arg-type]
            ):
                _ledger.charge_kept(scope.ledger, node, kept)
            v: Variable = _new(Variable)  # _variable(node), inlined: once per op
            _init_node(v, node)
            return v
        return _result(scope, arr, name, params, versions, fresh)  # type: ignore[arg-type]
    checked, versions = _params(name, params)
    return _result(scope, arr, name, checked, versions, fresh)


def _held(value: Any) -> Any:
    """An op's value that is not a new array as the engine holds it: a view or an array
    made from a list read-only (``own_value``), a 0-d result a numpy scalar."""
    if type(value) is _ndarray and not value.shape:
        return _held_0d(value)
    arr = _own(value)
    return arr if arr.shape else _held_0d(arr)


def _params(
    name: str, params: tuple[Any, ...]
) -> tuple[tuple[Param, ...], tuple[tuple[Node, int], ...] | None]:
    """The params that need a gradient, checked, and the versions of leaf inputs. Takes
    edges and, from code that builds them by hand, ``(input, closure)`` pairs (the
    input a Variable or its node, the closure a ``(g, out)`` function or a
    ``lampy.autograd.Contribution``)."""
    kept: list[Param] = []
    versions: list[tuple[Node, int]] = []
    for p in params:
        if p is None:
            continue
        if not (is_edge(p) and type(p[0]) is Node and callable(p[1])):
            if type(p) is not tuple or len(p) != 2 or not callable(p[1]):
                _bad_param(name, p)
            node: Any = p[0]
            if type(node) is Variable:
                node = node.node
            elif type(node) is not Node:
                _bad_param(name, p)
            fn = p[1]
            if type(fn) is Contribution:
                p = contribution_edge(node, fn.fn, fn.fresh)
            else:
                p = plain_edge(node, fn)
        node = p[NODE]
        if node.needs_grad:
            if node.scope is None:
                raise node.released_error(f"op '{name}'")
            if node.edges is None:
                versions.append((node, node.version))
            kept.append(p)
    return tuple(kept), (tuple(versions) if versions else None)


def _result(
    scope: Scope,
    arr: np.ndarray,
    name: str,
    params: tuple[Param, ...],
    versions: tuple[tuple[Node, int], ...] | None,
    fresh: int = -1,
) -> Variable:
    """The op's output Variable, recorded in ``scope``; ``fresh``: for a view of the op's
    own new array, its bytes (``fresh_view_bytes``; -1 otherwise), charged when there are
    no params to tell (``view_bytes`` does when there are)."""
    if not params:
        node = Node(arr, (), False, scope, name)
    elif arr.dtype.kind == "f":
        node = Node(arr, params, True, scope, name, versions)
    elif arr.dtype.kind in "iub":  # an integer or boolean result is a constant, as numpy's
        node = Node(arr, (), False, scope, name)
    elif arr.dtype.kind == "c":  # declared ops only, a holomorphic op's closures conjugated
        if complex_kind(name) is None:
            raise no_complex(name, arr.dtype)
        node = Node(arr, conjugated(name, params), True, scope, name, versions)
    else:
        raise _not_real(name, arr.dtype)
    nbytes = -1 if params else fresh
    if params and type(arr) is _ndarray and arr.base is not None:
        nbytes = view_bytes(arr, params)
    scope.register(node, nbytes)
    if node.edges:
        kept = kept_bytes(node.params, arr)  # type: ignore[arg-type]
        if kept:
            _ledger.charge_kept(scope.ledger, node, kept)
    return _variable(node)


def _not_real(name: str, dtype: np.dtype[Any]) -> DTypeError:
    return DTypeError(
        f"op '{name}': its value has dtype {dtype} while an input needs a gradient; only "
        "float and complex values carry gradients. Compute it under lampy.no_grad() / from "
        "`v.value` if no gradient is needed."
    )


def _bad_param(name: str, p: Any) -> NoReturn:
    raise LampyTypeError(
        f"op '{name}': each param must be the pair `input.zip_backward(closure)` with a "
        f"Variable input, got {type(p).__name__} {p!r:.80}."
    )


def _leaf_in(scope: Scope, what: str, arr: Any, needs_grad: bool, shared: bool) -> Variable:
    node = Node(_own(arr, shared=shared), None, needs_grad, scope, what)
    scope.register(node)
    var = Variable(node)
    if needs_grad:
        node.set_handle(weakref.ref(var))
    return var


def variable_of(node: Node) -> Variable | None:
    """The Variable of a param's node, or None if it is gone (for ``lampy.backward_iter``)."""
    ref = node.handle
    return None if ref is None else ref()


__all__ = ["Backward", "Op", "Operand", "Param", "Variable", "op", "variable_of"]
