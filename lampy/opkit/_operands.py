"""Turning op arguments into numpy values, and pairing Variables with closures."""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import Any

import numpy as np

from lampy import _memory
from lampy._errors import (
    DTypeError,
    LampyValueError,
    ShapeError,
    describe,
    not_real,
    shape_mismatch,
)
from lampy._memory import owner, set_writeable
from lampy.autograd import _ledger
from lampy.autograd._complex import complex_kind, no_complex, no_complex_input
from lampy.autograd._edge import CONTRIBUTION, PLAIN, WITH_SAVED
from lampy.autograd._grad_mode import GRAD_ENABLED
from lampy.autograd._higher import Vjp
from lampy.autograd._node import Node
from lampy.autograd._saved import note_fresh_owner
from lampy.autograd._unbroadcast import Contribution
from lampy.autograd._variable import Backward, Operand, Param, Variable, op

_ndarray = np.ndarray
_PY_NUMBERS = (int, float)
# numpy 2's ufuncs keep an array's float dtype next to a Python number (NEP 50).
_WEAK_PY_SCALARS = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
_reaches_writable = _memory.reaches_writable
_private_copy = _memory.private_copy


_NUMERIC = frozenset("biufc")  # dtype kinds ops compute on: bool, ints, floats, complex
# The native numeric dtypes: a set lookup is cheaper than reading ``dtype.kind``.
_NUMERIC_DTYPES = frozenset(
    np.dtype(c) for c in np.typecodes["All"] if np.dtype(c).kind in _NUMERIC
)
_NUMERIC_SCALARS = (np.number, np.bool_)
_NUMPY_SCALAR_TYPES = frozenset(d.type for d in _NUMERIC_DTYPES)
_REAL_SCALAR_TYPES = frozenset(d.type for d in _NUMERIC_DTYPES if d.kind != "c")


def value_of(x: Any, saved: bool = True, name: str = "a lampy op") -> Any:
    """The numpy value of an op argument: a Variable's value, or ``x`` as a constant.

    A Variable's value comes as the engine holds it: a read-only ndarray, or for a 0-d
    op result a numpy scalar (which numpy's functions take as they take a 0-d array).
    A writable numpy array is copied (into a read-only array), as ``lampy.const`` does:
    closures keep what they need for backward, so a later change to the caller's array
    must not reach the gradient. So is a read-only *view* of memory that is still
    writable elsewhere (``np.broadcast_to(a, ...)``, ``sliding_window_view(a, ...)`` of a
    writable ``a``): the memory it spans is copied once and the view laid over the
    copy, so a broadcast does not grow into a full array. A read-only array whose memory
    nothing can write is used as it is, without a copy.
    Python and numpy scalars are returned unchanged. An op that does not keep this
    operand for backward passes ``saved=False``: it then gets a read-only view of the
    caller's array, without the copy (its forward result is computed now, and
    ``lampy.op`` copies a result that is itself a view of writable memory). For a
    Variable, ``saved=False`` is the op's promise that neither its closures nor its
    result (a new array, not a view) hold the value: memory accounting then refunds
    the value as soon as the Variable is gone, without checking (``Node.held``).

    Args:
        x: A Variable, an array-like or a scalar.
        saved: Whether a backward closure of the op keeps (a view of) this value.
        name: The op's name, which the errors start with (``"sum: an operand is
            'abc' (str, ...)"``); only read when raising. ``value_of(x, name="sum")``,
            or with ``saved`` too, both positionally: ``value_of(x, False, "tanh")``
            (keywords would cost the caller one more bytecode).

    Raises:
        LampyTypeError: ``x`` is not numbers: a string, None, an object, an array of
            strings, objects or dates (numpy would raise a bare ``TypeError`` or
            ``UFuncTypeError``, or compute on Python objects).
        LampyValueError: ``x`` is a ragged nested list.
    """
    if type(x) is Variable:
        node = x.node
        v = node.value  # as the engine holds it: a numpy scalar for a 0-d op result
        if v is None:
            raise node.released_error(".value")
        if saved:
            node.mark_shared()  # the op may keep it (its refund then checks)
        return v
    if isinstance(x, _ndarray):
        if type(x) is not _ndarray:  # a subclass (matrix, masked array...): plain data
            x = np.asarray(x).view(_ndarray)
        dtype = x.dtype
        if dtype not in _NUMERIC_DTYPES and dtype.kind not in _NUMERIC:
            raise not_numbers(name, x, x)
        if x.flags.writeable:
            x = x.copy(order="K") if saved else x.view()  # numpy's layout kept
            x.flags.writeable = False
        elif saved and x.base is not None and _reaches_writable(x):
            x = _private_copy(x)  # a read-only view of memory the caller can still write
            x.flags.writeable = False
        return x
    if isinstance(x, (bool, int, float, complex)):
        return x
    if isinstance(x, _NUMERIC_SCALARS):
        return x
    if isinstance(x, np.generic):
        raise not_numbers(name, x, x)
    try:
        a = np.asarray(x)
    except ValueError as e:  # a ragged list
        raise LampyValueError(
            f"{name}: an operand could not be made an array ({e}). Give arrays of "
            "one shape (nested lists of equal lengths)."
        ) from None
    if a.dtype.kind not in _NUMERIC:
        raise not_numbers(name, x, a)
    return a


def not_numbers(name: str, x: Any, a: Any) -> DTypeError:
    """The error for an operand ``x`` (numpy value ``a``) of op ``name`` whose dtype is not
    numeric (a `DTypeError`, so also a `LampyTypeError` and a ``TypeError``)."""
    shown = repr(x) if len(repr(x)) <= 40 else f"{repr(x)[:37]}..."
    return DTypeError(
        f"{name}: an operand is {shown} ({type(x).__name__}, numpy dtype "
        f"{a.dtype}); lampy ops compute on numbers: Variables, numeric arrays, Python "
        "numbers. Convert strings and objects first, e.g. numpy.asarray(x, dtype=float)."
    )


def values_of(
    x1: Any, x2: Any, saved1: bool = True, saved2: bool = True, name: str = "a lampy op"
) -> tuple[Any, Any]:
    """The values of a binary op's two arguments, numpy-promoted the way numpy 2 does
    (``value_of(x1, saved1, name)`` and ``value_of(x2, saved2, name)``).

    A Python int or float next to a float array takes that array's dtype, so a Python
    number never turns float32 into float64 (also with numpy 1.x and for 0-d values).
    """
    a = value_of(x1, saved1, name)
    b = value_of(x2, saved2, name)
    ta, tb = type(a), type(b)
    if ta in _PY_NUMBERS and tb is _ndarray and b.dtype.kind == "f":
        a = b.dtype.type(a)
    elif tb in _PY_NUMBERS and ta is _ndarray and a.dtype.kind == "f":
        b = a.dtype.type(b)
    return a, b


def apply_binary(
    name: str,
    ufunc: Any,
    x1: Any,
    x2: Any,
    operator: Callable[[Any, Any], Any] | None = None,
    keep1: bool = True,
    keep2: bool = True,
) -> tuple[Any, Any, Any]:
    """``values_of(x1, x2, name=name)`` and ``ufunc`` applied to them; a broadcasting failure is a
    ShapeError naming ``name`` and both shapes, raised before anything is recorded.

    ``operator`` is the Python operator that calls ``ufunc`` (``operator.mul`` for
    ``np.multiply``): given, it computes the value when an operand is a numpy scalar,
    where numpy's scalar arithmetic gives the ufunc's result much faster. ``keep1`` and
    ``keep2`` are ``value_of``'s ``saved`` for each operand: False when the op keeps
    neither that operand's value nor a view of it.

    Returns:
        ``(a, b, value)``: the two operand values and the result.
    """
    if _WEAK_PY_SCALARS:  # a ufunc itself keeps a float array's dtype next to a number
        # value_of(x1, keep1, name), value_of(x2, keep2, name), with a Variable's value and a Python
        # number read here directly (a released Variable's None goes to value_of, which
        # raises)
        t = type(x1)
        if t is Variable:
            node = x1.node
            a = node.value
            if keep1:
                node.mark_shared()
        else:
            a = x1 if t is float or t is int else None
        if a is None:
            a = value_of(x1, keep1, name)
        t = type(x2)
        if t is Variable:
            node = x2.node
            b = node.value
            if keep2:
                node.mark_shared()
        else:
            b = x2 if t is float or t is int else None
        if b is None:
            b = value_of(x2, keep2, name)
    else:
        a, b = values_of(x1, x2, keep1, keep2, name)
    if _ledger.open_budgets:  # a scope has a budget: check the output's size first
        try:
            shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        except ValueError:
            raise broadcast_error(name, a, b) from None
        _ledger.reserve(name, shape, np.result_type(a, b))
    try:
        if operator is not None and (
            type(a) in _NUMPY_SCALAR_TYPES or type(b) in _NUMPY_SCALAR_TYPES
        ):
            # numpy's scalar arithmetic: the ufunc's loop and result, bit for bit, at a
            # tenth of a ufunc call's cost on scalars (0-d values are numpy scalars)
            value = operator(a, b)
            if type(value) is complex:  # a Python complex next to numpy.float64
                value = np.complex128(value)
        else:
            value = ufunc(a, b)
    except ValueError:
        raise broadcast_error(name, a, b) from None
    except TypeError as e:  # numpy's ufunc has no loop for these dtypes
        raise DTypeError(
            f"{name}: numpy's {name} does not take operands {describe(a)} and {describe(b)} ({e})."
        ) from None
    if type(value) not in _REAL_SCALAR_TYPES and value.dtype.kind in "cO":
        real_result(name, value, x1, x2)
    return a, b, value


def apply_unary(ufunc: Any, a: Any, name: str | None = None) -> Any:
    """``ufunc(a)`` for an elementwise op of one operand, its output's size checked first
    against the budgets of the current scope (``lampy.MemoryBudgetError``, named ``name``,
    by default the ufunc's name), so a refused output is never allocated."""
    if _ledger.open_budgets:
        dtype = np.result_type(a)
        resolve = getattr(ufunc, "resolve_dtypes", None)  # None: not a ufunc (np.sinc)
        if resolve is not None:
            with contextlib.suppress(TypeError, ValueError):  # no loop: ufunc(a) raises
                dtype = resolve((dtype, None))[-1]
        _ledger.reserve(name or ufunc.__name__, np.shape(a), dtype)
    return ufunc(a)


def reserve_output(name: str, shape: tuple[int, ...], dtype: Any) -> None:
    """Check, before allocating, that op ``name``'s output of ``shape`` and ``dtype`` fits
    the budgets of the current scope (``lampy.MemoryBudgetError`` if not); a no-op when no
    scope has a budget.

    Ops whose output size is known before they compute it call this first, so a refused
    output is never allocated.
    """
    if _ledger.open_budgets:
        _ledger.reserve(name, shape, dtype)


def param_of(x: Any, fn: Backward, vjp: Vjp | None = None) -> Param | None:
    """``x.zip_backward(fn)`` if ``x`` is a Variable that needs a gradient, else None.

    ``vjp(g, out)``, if given, is the same contribution written with lampy ops (see
    ``contrib_of``). A ``lampy.contribution(...)`` closure gives a ``CONTRIBUTION`` edge,
    as ``zip_backward`` does: the engine takes its result as the input's first buffer
    (no zero-filled buffer to add it into)."""
    if type(x) is Variable:
        node = x.node
        if node.needs_grad:
            if type(fn) is Contribution:
                return (node, fn.fn, CONTRIBUTION, fn.fresh, vjp)  # contribution_edge
            return (node, fn, PLAIN, False, vjp)  # plain_edge, inlined
    return None


def contrib_of(
    x: Any, fn: Callable[[np.ndarray], Any], fresh: bool = True, vjp: Vjp | None = None
) -> Param | None:
    """``x.zip_backward(contribution(fn, fresh=fresh))`` if ``x`` is a Variable that needs
    a gradient, else None: a ``CONTRIBUTION`` edge, no ``Contribution`` object built.

    ``vjp(g, out)``, if given, computes the same contribution with lampy ops, so that a
    differentiable backward pass (``create_graph=True``, ``lampy.hessian``...) records it:
    ``g`` is the cotangent (a Variable or a numpy constant), ``out`` the op's node; saved
    operands come back into the graph with ``graph_value(node, value)``. Without it, such
    a pass raises ``NoSecondOrderError`` naming the op."""
    if type(x) is Variable:
        node = x.node
        if node.needs_grad:
            return (node, fn, CONTRIBUTION, fresh, vjp)  # contribution_edge
    return None


def node_of(x: Any) -> Node | None:
    """``x.node`` if ``x`` is a Variable that needs a gradient, else None: what a vjp keeps
    of an operand, for ``graph_value(node, value)`` (a node, not the Variable, so that the
    Variable's value is returned once it is gone, as without a vjp)."""
    if type(x) is Variable:
        node = x.node
        if node.needs_grad:
            return node
    return None


def contrib_with(
    x: Any, fn: Callable[[Any, Any], Any], saved: Any, fresh: bool = True
) -> Param | None:
    """``contrib_of(x, lambda g: fn(g, saved), fresh)`` without the closure: a
    ``WITH_SAVED`` edge, or None if ``x`` needs no gradient.

    For the elementwise ops, whose backward is a module-level function of ``g`` and
    one saved value: an op records one edge per input instead of an edge, a closure,
    its cell and the cell's tuple (fewer objects to make, and for the cyclic garbage
    collector to track). ``saved`` is what the param keeps, which memory accounting
    reads (``Node.held``): the op's own value (or a view of it), or an operand's value
    read with ``value_of(x, saved=True)``, or a constant."""
    if type(x) is Variable:
        node = x.node
        if node.needs_grad:
            return (node, fn, WITH_SAVED, fresh, saved)  # saved_edge, inlined
    return None


def times(g: Any, c: Any) -> Any:
    """``g * c``: the contribution of an input whose derivative is ``c`` (for
    ``contrib_with(x, times, c)``)."""
    return g * c


def over(g: Any, c: Any) -> Any:
    """``g / c``: the contribution of an input whose derivative is ``1 / c``."""
    return g / c


def frozen(value: np.ndarray, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` (reshaped to ``shape`` if given), made read-only first so that
    ``lampy.op`` takes it without a copy (it copies views of writable memory).

    ``value`` may be a view (an index, a reshape) of an array whose memory nothing else
    will write: that array, which owns the memory, is made read-only too. Only pass
    arrays the calling op made itself, never views of its inputs. When the result is a
    view, the array owning its memory is noted for the next op whose value is a view:
    call ``frozen`` just before ``op``, which then charges that memory to the op even
    when no input needs a gradient (with no params, ``op`` could not tell it from a
    view of an input's value).
    """
    base = value.base
    if type(base) is np.ndarray:
        set_writeable(base, False)
    set_writeable(value, False)
    out = value if shape is None or value.shape == shape else value.reshape(shape)
    if out is not value:
        set_writeable(out, False)  # (a reshape that had to copy: a new array)
    if out.base is not None:  # a view: lampy.op charges the memory it views to the op
        note_fresh_owner(owner(out))
    return out


_sign, _isnan = np.sign, np.isnan


def sign_or_zero(a: Operand) -> Any:
    """``sign(a)`` with 0 where ``a`` is nan (PyTorch's ``sgn``; numpy's ``sign`` gives
    nan): a new array (or a scalar for a 0-d ``a``) that nothing else references."""
    s = _sign(a)
    if np.ndim(s) == 0:
        return s if s == s else type(s)(0)
    if s.dtype.kind in "fc" and _isnan(s.sum()):  # signs are -1, 0, 1: nan iff one is
        np.copyto(s, 0, where=_isnan(s))
    return s


def needs_grad(x: Any) -> bool:
    """Whether ``x`` is a Variable that needs a gradient."""
    return type(x) is Variable and x.node.needs_grad


def real_result(name: str, value: Any, *operands: Any) -> None:
    """Raise a DTypeError if ``value`` is an object array, or complex and op ``name`` is
    not declared for complex values (``complex_rule``), while one of the ``operands`` is
    a Variable that needs a gradient (and grad mode is on).

    Recording such a result would silently drop the gradient (or give the real rule's
    wrong one). Call it on an op's value before recording it; it costs one dtype check.
    """
    kind = getattr(value, "dtype", _FLOAT).kind
    if kind not in "cO" or not GRAD_ENABLED.get():
        return
    if kind == "c" and complex_kind(name) is not None:  # an op declared for complex values
        return
    if not any(type(x) is Variable and x.needs_grad for x in _flat(operands)):
        return
    constants = (
        np.asarray(value_of(x, name=name))
        for x in _flat(operands)
        if isinstance(x, (_ndarray, Variable, list, bool, int, float, complex, np.generic))
        and not needs_grad(x)
    )
    culprits = [f"the constant operand {describe(v)}" for v in constants if v.dtype.kind in "cO"]
    if kind == "c":
        raise no_complex(name, value.dtype)
    raise not_real(name, value.dtype, " and ".join(culprits))


_FLOAT = np.dtype(np.float64)


def _flat(operands: Any) -> list[Any]:
    """The operands, with (nested) lists and tuples of operands unpacked."""
    flat: list[Any] = []
    for x in operands:
        if type(x) in (list, tuple):
            flat.extend(_flat(x))
        else:
            flat.append(x)
    return flat


def no_complex_into_real(name: str, what: str, target: Any, value: Any) -> None:
    """Raise a DTypeError if a complex ``value`` would be written into a real ``target``
    (numpy's assignment drops the imaginary part with a ``ComplexWarning``)."""
    if np.iscomplexobj(value) and not np.iscomplexobj(target):
        raise DTypeError(
            f"{name}: {what} is complex ({np.result_type(value)}) but the array is real "
            f"({np.result_type(target)}); writing it would drop the imaginary part. Cast the "
            "array first, e.g. `x.astype(numpy.complex128)`."
        )


def real_operands(name: str, *operands: Any) -> None:
    """Raise a DTypeError if an operand is a complex Variable that needs a gradient (and
    grad mode is on): for an op whose value is real but whose backward rule holds for
    real inputs only (``lampy.op`` sees only complex values)."""
    for x in operands:
        if type(x) is Variable and x.node.needs_grad and x.dtype.kind == "c" and GRAD_ENABLED.get():
            raise no_complex_input(name, x.dtype)


def array_of(name: str, x: Any) -> Any:
    """``x`` as an op operand where numpy takes an array-like: a (nested) list or tuple
    holding Variables becomes one Variable, stacked as ``numpy.array`` stacks its items,
    so that gradients reach every Variable in it. Anything else is returned unchanged.

    Raises:
        ShapeError: if the items do not have one shape (a ragged sequence).
    """
    if type(x) not in (list, tuple) or not any(type(v) is Variable for v in _flat([x])):
        return x
    found: list[tuple[tuple[int, ...], Variable]] = []
    nested = _unpack(x, (), found)
    try:
        value = np.array(nested)
    except ValueError:
        shapes = ", ".join(str(np.shape(v.value)) for _, v in found)
        raise ShapeError(
            f"{name}: the sequence does not make a rectangular array (its Variables have "
            f"shapes {shapes}); numpy stacks the items of a sequence, so they must all have "
            "one shape. Reshape or pad them first, or use lampy.concatenate."
        ) from None
    real_result(name, value, *(v for _, v in found))
    return op(
        name,
        value,
        *(contrib_of(v, _picker(path), False, _picker_vjp(path)) for path, v in found),
    )


def _unpack(x: Any, path: tuple[int, ...], found: list[Any]) -> Any:
    """A copy of the nest ``x`` with Variables replaced by their values; ``found``
    collects each Variable with its index path."""
    if type(x) is Variable:
        found.append((path, x))
        return x.value
    if type(x) in (list, tuple):
        return [_unpack(item, (*path, i), found) for i, item in enumerate(x)]
    return x


def _picker(path: tuple[int, ...]) -> Callable[[np.ndarray], np.ndarray]:
    return lambda g: g[path]


def _picker_vjp(path: tuple[int, ...]) -> Vjp:
    return lambda g, out: g[path]  # a Variable's getitem: recorded


def broadcast_error(name: str, a: Any, b: Any) -> Exception:
    return shape_mismatch(
        name,
        np.asarray(a),
        np.asarray(b),
        detail="Numpy broadcasting needs each pair of trailing dimensions to be equal or 1; "
        "reshape or expand_dims one of them so that they line up.",
    )


class _NoValue:
    """Marks a keyword argument that was not passed (numpy's ``np._NoValue``)."""

    def __repr__(self) -> str:
        return "<no value>"


NO_VALUE: Any = _NoValue()
