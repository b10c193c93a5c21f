"""Variables whose values are arrays of another namespace of the array API standard
(``array_api_strict``, CuPy...): made, recorded and updated here, then backpropagated,
owned and counted by the same engine as numpy's (issue 29's prototype; experimental).

Three entry points, which ``lampy.experimental.array_api`` is built on:
``namespace_leaf`` (a param or a constant), ``namespace_op`` (``lampy.op`` for a value
of another namespace) and ``replace_values`` (the functional twin of ``lampy.in_place``).
Their nodes are ordinary ``Node`` records owned by a ``Scope``; their params are the
ordinary edges; the ledger charges their values' bytes. What differs is kept to the
branches a numpy array never takes (see ``lampy._namespaces``): their closures are
contributions (``fn(g)`` returning the input's gradient, never adding into a buffer),
the engine adds them out of place, and a pass does not stage their buffers in its
ledger (the values, what closures saved and the ``.grad`` buffers are counted).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

import numpy as np

from lampy._errors import DTypeError, LampyTypeError, ShapeError, no_scope, not_float
from lampy._namespaces import is_foreign, namespace_name, namespace_of, nbytes, numpy_dtype
from lampy.autograd import _ledger
from lampy.autograd._edge import WITH_SAVED
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._inplace import in_place
from lampy.autograd._node import HELD_BY_OP, PRIVATE, SHARED, Node, Param
from lampy.autograd._saved import namespace_kept_bytes
from lampy.autograd._scope import Scope, closed_scope, current_or_none
from lampy.autograd._variable import Variable, _not_real, _params, _variable, op


def _open_scope(what: str) -> Scope:
    scope: Scope | None = current_or_none()
    if scope is None:
        raise no_scope(what)
    if not scope.is_open:
        raise closed_scope(scope, what)
    return scope


def _refuse_numpy(what: str, x: Any) -> None:
    if not is_foreign(x):
        raise LampyTypeError(
            f"{what}: expected an array of an array API namespace other than numpy (an "
            f"array_api_strict or CuPy array...), got {type(x).__name__}. For numpy arrays "
            "use lampy.param / lampy.const; lampy.experimental.array_api's param and const "
            "take both."
        )


def namespace_leaf(what: str, x: Any, needs_grad: bool) -> Variable:
    """A leaf Variable (``what`` is ``"param"`` or ``"const"``) holding a copy of ``x``, an
    array of another namespace, on ``x``'s device, owned by the current scope.

    The copy is the scope's (the standard has no read-only flag, so the engine cannot
    stop a caller writing into an array it shares): charged its bytes in the scope's
    ledger until the scope exits.

    Raises:
        LampyTypeError: ``x`` is not an array of another namespace.
        DTypeError: a param whose dtype is not real floating.
        NoScopeError: no scope is open.
    """
    scope = _open_scope(f"lampy.experimental.array_api.{what}()")
    _refuse_numpy(f"lampy.experimental.array_api.{what}", x)
    xp = namespace_of(x)
    if needs_grad and not xp.isdtype(x.dtype, "real floating"):
        raise not_float(f"lampy.experimental.array_api.{what}", x.dtype)
    arr = xp.asarray(x, copy=True)
    n = nbytes(arr)
    node = Node.of_namespace(arr, None, needs_grad, scope, what, numpy_dtype(arr), charged=n)
    scope.register(node, n)
    var = _variable(node)
    if needs_grad:
        node.set_handle(weakref.ref(var))
    return var


def namespace_op(name: str, value: Any, *params: Param | None) -> Variable:
    """``lampy.op`` for an op whose value may be an array of another namespace: record it
    (a numpy value, or a number, goes to ``lampy.op`` itself, so the numpy path is
    lampy's own).

    The params are the usual edges, and must be contributions (``contrib_of``,
    ``contrib_with``): each returns its input's gradient, of the input's shape and dtype,
    in the input's namespace. The value is charged its bytes, and the arrays of its
    namespace the params saved beyond the graph's values are counted until they are
    freed with the params (``Node.kept``).

    Raises:
        NoScopeError: no scope is open.
        ReleasedError: an input was released.
        DTypeError: the value is complex while an input needs a gradient.
    """
    if not is_foreign(value):  # numpy's (or a number): lampy's own path
        return op(name, value, *params)
    scope = _open_scope(f"op '{name}'")
    dtype = numpy_dtype(value)
    n = nbytes(value)
    if not GRAD_ENABLED.get():  # as lampy.op: no op recorded
        node = Node.of_namespace(value, None, False, scope, name, dtype, None, n)
        scope.register(node, n)
        return _variable(node)
    checked, versions = _params(name, params)
    if checked and dtype.kind != "f":
        if dtype.kind not in "iub":  # complex: the gradient would be lost
            raise _not_real(name, dtype)
        checked, versions = (), None  # an integer or boolean result is a constant
    node = Node.of_namespace(
        value, checked, bool(checked), scope, name, dtype, versions, n, _held(checked, value)
    )
    scope.register(node, n)
    if checked and (kept := namespace_kept_bytes(checked, value)):
        _ledger.charge_kept(scope.ledger, node, kept)
    return _variable(node)


def _held(params: tuple[Param, ...], value: Any) -> int:
    """Who else may hold the value (``Node.held``), as ``lampy.op`` decides it: nothing
    (``PRIVATE``) when every edge saves only what it shows, the op's own edges when one
    saves the value itself (``HELD_BY_OP``), anything when a closure might (``SHARED``).
    The standard has no views, so only the value itself is recognised."""
    held = PRIVATE
    for _, _, kind, _, saved in params:
        if kind != WITH_SAVED:
            return SHARED
        if saved is value:
            held = HELD_BY_OP
    return held


def replace_values(params: Iterable[Variable], values: Iterable[Any]) -> None:
    """Give leaves new values, the functional twin of ``lampy.in_place``: an optimizer's
    update over a namespace whose arrays may not be written in place (the array API
    standard makes in-place updates optional; JAX has none).

    Each new value must be an array of the leaf's namespace, device, shape and dtype;
    every one is checked before any leaf changes. A leaf of another namespace then holds
    the new array (its bytes replace the old ones in the ledger: the same count); a numpy
    leaf is written in place through ``lampy.in_place``, as lampy's optimizers do. Either
    way the leaf's version goes up by one, so a graph that read the old value raises
    ``StaleGraphError`` at backward instead of giving gradients of the new one.

    Raises:
        LampyTypeError: a param is not a leaf Variable, or a value is not an array of the
            param's namespace and device.
        ShapeError: a value's shape or dtype differs from its param's.
        ReleasedError: a param was released.
    """
    pairs = list(zip(params, values, strict=True))
    for p, v in pairs:
        _check_replacement(p, v)
    numpy_pairs = [(p, v) for p, v in pairs if type(p.node.value) is np.ndarray]
    if numpy_pairs:
        with in_place([p for p, _ in numpy_pairs]) as opened:
            for a, (_, v) in zip(opened, numpy_pairs, strict=True):
                np.copyto(a, v)
    for p, v in pairs:
        if type(p.node.value) is not np.ndarray:
            p.node.replace_value(v)


def _check_replacement(p: Any, v: Any) -> None:
    if type(p) is not Variable:
        raise LampyTypeError(f"replace_values: expected Variables, got {type(p).__name__}.")
    node = p.node
    old = node.value
    if old is None:
        raise node.released_error("replace_values")
    if node.params is not None:
        raise LampyTypeError(
            f"replace_values: only leaves (params and constants) take new values, not a "
            f"Variable made by {node.describe()}: its value belongs to a graph."
        )
    xp = namespace_of(old)
    if namespace_of(v) is not xp or (xp is not np and v.device != old.device):
        raise LampyTypeError(
            f"replace_values: the param ({node.describe()}) is an array of "
            f"{namespace_name(xp)} on device {getattr(old, 'device', 'cpu')}, the new value "
            f"of {namespace_name(namespace_of(v))} on device {getattr(v, 'device', 'cpu')}; "
            "lampy does not move arrays between libraries or devices."
        )
    if tuple(v.shape) != tuple(node.shape):
        raise ShapeError(
            f"replace_values: the param ({node.describe()}) cannot take a value of shape "
            f"{tuple(v.shape)}: its shape must stay."
        )
    if numpy_dtype(v) != node.dtype:
        raise DTypeError(
            f"replace_values: the param ({node.describe()}) cannot take a value of dtype "
            f"{v.dtype}: its dtype must stay (cast the new value first)."
        )


__all__ = ["namespace_leaf", "namespace_op", "replace_values"]
