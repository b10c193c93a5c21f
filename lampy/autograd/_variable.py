"""Variable and Op: the immutable records of the graph, and the ways to make them."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from lampy import _memory
from lampy._errors import (
    DTypeError,
    LampyError,
    LampyTypeError,
    ReleasedError,
    no_scope,
    not_float,
    released,
)
from lampy._scope import _CURRENT, _OPEN, Scope
from lampy.autograd._grad_mode import GRAD_ENABLED

if TYPE_CHECKING:
    from numpy.typing import ArrayLike, DTypeLike

Backward = Callable[[np.ndarray, np.ndarray], object]
"""A zip-backward closure ``(g, out)``: adds the input's gradient into ``out``.

It should return None; whatever it returns is ignored.
"""

Param = tuple["Variable", Backward]
"""An op param: an input Variable paired with its zip-backward closure."""


@attrs.frozen(eq=False)
class Op:
    """How a Variable was computed: the op's name and its params.

    Attributes:
        name: The op's name, used in error messages (``"matmul"``, ``"tanh"``...).
        params: One ``(input, closure)`` pair per input that needs a gradient. The
            closure takes ``(g, out)``: ``g`` is the gradient of the final output with
            respect to this op's value, ``out`` a buffer of the input's shape and dtype;
            it adds the input's gradient into ``out`` and returns None.
    """

    name: str
    params: tuple[Param, ...]


@attrs.frozen(eq=False, repr=False, weakref_slot=True)
class Variable:
    """An immutable node of the graph: a value, how it was computed, and its gradient.

    Variables are made by [param][], [const][] and ops ([op][lampy.op]), never by
    calling the class, and belong to the scope that was current when they were made.

    Attributes:
        op: The [Op][] that computed this Variable, or None for a leaf (a param or a
            constant) and for results computed under [lampy.no_grad][].
        needs_grad: Whether gradients flow to this Variable.
    """

    _value: np.ndarray | None = attrs.field(alias="_value")
    op: Op | None = attrs.field(alias="op")
    needs_grad: bool = attrs.field(alias="needs_grad")
    _scope: Scope | None = attrs.field(alias="_scope")
    _label: Any = attrs.field(alias="_label")  # op name; (name, shape, dtype) once released
    _grad: np.ndarray | None = attrs.field(default=None, alias="_grad")

    # Numpy defers to our reflected operators: ``ndarray * Variable`` calls __rmul__.
    __array_ufunc__ = None

    # ----------------------------------------------------------------- data access
    @property
    def value(self) -> np.ndarray:
        """The value, a read-only numpy array (copy it to modify it)."""
        v = self._value
        if v is None:
            raise self._released_error(".value")
        return v

    @property
    def grad(self) -> np.ndarray | None:
        """The accumulated gradient buffer, or None if no gradient reached it yet.

        Params (leaves that need a gradient) accumulate here across backward calls
        until [zero_grad][]. Op results hold a gradient only if they were named in
        ``retain=`` of a backward call.
        """
        if self._value is None:
            raise self._released_error(".grad")
        return self._grad

    @property
    def shape(self) -> tuple[int, ...]:
        """Shape of the value."""
        return self.value.shape

    @property
    def dtype(self) -> np.dtype[Any]:
        """Dtype of the value."""
        return self.value.dtype

    @property
    def ndim(self) -> int:
        """Number of dimensions of the value."""
        return self.value.ndim

    @property
    def size(self) -> int:
        """Number of elements of the value."""
        return self.value.size

    @property
    def is_leaf(self) -> bool:
        """Whether this Variable has no op with params (a param, a constant, or detached)."""
        return self.op is None or not self.op.params

    @property
    def is_released(self) -> bool:
        """Whether the scope that owned this Variable has exited."""
        return self._value is None

    def item(self) -> Any:
        """The single element of the value as a Python scalar."""
        return self.value.item()

    def numpy(self) -> np.ndarray:
        """A writable copy of the value, owned by the caller."""
        return np.array(self.value, copy=True)

    def zip_backward(self, fn: Backward) -> Param:
        """Pair this Variable with its zip-backward closure, as an op's param.

        Args:
            fn: ``fn(g, out)`` adds this input's gradient into ``out`` (a buffer of this
                Variable's shape and dtype), given ``g``, the gradient with respect to
                the op's value. It returns None.

        Returns:
            The ``(self, fn)`` pair to pass to [lampy.op][].
        """
        return (self, fn)

    def backward(self, grad: ArrayLike | None = None, *, retain: Any = ()) -> None:
        """Backpropagate from this Variable; see [lampy.backward][]."""
        from lampy.autograd._backprop import backward

        backward(self, None if grad is None else [grad], retain=retain)

    def zero_grad(self) -> None:
        """Fill the gradient buffer with zeros in place (the buffer is kept for reuse)."""
        if self._value is None:
            raise self._released_error(".zero_grad()")
        g = self._grad
        if g is not None:
            g.fill(0)

    # ------------------------------------------------------------ internal state
    def _set_grad(self, g: np.ndarray | None) -> None:
        object.__setattr__(self, "_grad", g)

    def _set_scope(self, scope: Scope) -> None:
        object.__setattr__(self, "_scope", scope)

    def _release(self) -> None:
        v = self._value
        if v is not None:  # remembered for error messages, formatted only when needed
            object.__setattr__(self, "_label", (self._label, v.shape, v.dtype))
        object.__setattr__(self, "_value", None)
        object.__setattr__(self, "_grad", None)
        object.__setattr__(self, "op", None)
        object.__setattr__(self, "_scope", None)

    def _detach(self) -> None:
        if self.op is not None:
            object.__setattr__(self, "op", None)
            object.__setattr__(self, "needs_grad", False)

    def _nbytes(self) -> int:
        v, g = self._value, self._grad
        return (0 if v is None else v.nbytes) + (0 if g is None else g.nbytes)

    def _description(self) -> str:
        label = self._label
        if isinstance(label, tuple):
            name, shape, dtype = label
            return f"'{name}', shape {shape}, dtype {dtype}"
        return f"'{label}'"

    def _released_error(self, use: str) -> ReleasedError:
        return released(self._description(), use)

    # ------------------------------------------------------------- python protocol
    def __repr__(self) -> str:
        v = self._value
        if v is None:
            return f"Variable(<released>, made by {self._description()})"
        how = "param" if self.needs_grad and self.op is None else self._label
        body = np.array2string(v, separator=", ", prefix="Variable(", threshold=20)
        return f"Variable({body}, dtype={v.dtype}, {how}, needs_grad={self.needs_grad})"

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
        if self.needs_grad:
            raise LampyTypeError(
                "numpy cannot use a Variable that needs a gradient as an array: the gradient "
                "would be silently lost. Use lampy's ops (lampy.exp, lampy.sum...) on it, or "
                "take `v.value` explicitly if you mean to leave the graph."
            )
        v = self.value
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    # Arithmetic operators: numpy broadcasting, arrays and scalars wrapped as constants.
    def __add__(self, other: Any) -> Variable:
        return _arith.add(self, other)

    def __radd__(self, other: Any) -> Variable:
        return _arith.add(other, self)

    def __sub__(self, other: Any) -> Variable:
        return _arith.subtract(self, other)

    def __rsub__(self, other: Any) -> Variable:
        return _arith.subtract(other, self)

    def __mul__(self, other: Any) -> Variable:
        return _arith.multiply(self, other)

    def __rmul__(self, other: Any) -> Variable:
        return _arith.multiply(other, self)

    def __truediv__(self, other: Any) -> Variable:
        return _arith.divide(self, other)

    def __rtruediv__(self, other: Any) -> Variable:
        return _arith.divide(other, self)

    def __pow__(self, other: Any) -> Variable:
        return _arith.power(self, other)

    def __rpow__(self, other: Any) -> Variable:
        return _arith.power(other, self)

    def __matmul__(self, other: Any) -> Variable:
        return _linalg.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Variable:
        return _linalg.matmul(other, self)

    def __neg__(self) -> Variable:
        return _arith.negative(self)

    def __pos__(self) -> Variable:
        return self

    def __getitem__(self, index: Any) -> Variable:
        return _indexing.getitem(self, index)

    # Comparisons give plain boolean arrays (they have no gradient), as lampy.equal etc.
    def __eq__(self, other: object) -> Any:
        return _comparison.equal(self, other)

    def __ne__(self, other: object) -> Any:
        return _comparison.not_equal(self, other)

    def __lt__(self, other: Any) -> np.ndarray:
        return _comparison.less(self, other)

    def __le__(self, other: Any) -> np.ndarray:
        return _comparison.less_equal(self, other)

    def __gt__(self, other: Any) -> np.ndarray:
        return _comparison.greater(self, other)

    def __ge__(self, other: Any) -> np.ndarray:
        return _comparison.greater_equal(self, other)

    # numpy-style methods
    @property
    def T(self) -> Variable:
        """The transpose (axes reversed), as ``numpy.ndarray.T``."""
        return _shape.transpose(self)

    def reshape(self, *shape: Any, order: str = "C") -> Variable:
        """Same as [lampy.reshape][]; accepts ``v.reshape(2, 3)`` and ``v.reshape((2, 3))``."""
        new: Any = shape
        if len(shape) == 1 and not isinstance(shape[0], int):
            new = shape[0]
        return _shape.reshape(self, new, order=order)

    def transpose(self, *axes: Any) -> Variable:
        """Same as [lampy.transpose][]; accepts ``v.transpose(1, 0)`` and a tuple."""
        perm: Any = axes
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            perm = axes[0]
        return _shape.transpose(self, perm or None)

    def sum(
        self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False
    ) -> Variable:
        """Same as [lampy.sum][] (``out`` must be None: Variables are immutable)."""
        _no_out("sum", out)
        return _reductions.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(
        self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False
    ) -> Variable:
        """Same as [lampy.mean][] (``out`` must be None: Variables are immutable)."""
        _no_out("mean", out)
        return _reductions.mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def var(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        ddof: int = 0,
        keepdims: bool = False,
    ) -> Variable:
        """Same as [lampy.var][]."""
        _no_out("var", out)
        return _reductions.var(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def std(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        ddof: int = 0,
        keepdims: bool = False,
    ) -> Variable:
        """Same as [lampy.std][]."""
        _no_out("std", out)
        return _reductions.std(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def prod(
        self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False
    ) -> Variable:
        """Same as [lampy.prod][]."""
        _no_out("prod", out)
        return _reductions.prod(self, axis, dtype, keepdims=keepdims)

    def max(
        self,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = True,
    ) -> Variable:
        """Same as [lampy.amax][]."""
        _no_out("max", out)
        return _extremes.amax(self, axis, keepdims=keepdims, initial=initial, where=where)

    def min(
        self,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = True,
    ) -> Variable:
        """Same as [lampy.amin][]."""
        _no_out("min", out)
        return _extremes.amin(self, axis, keepdims=keepdims, initial=initial, where=where)

    def argmax(self, axis: Any = None, out: None = None, *, keepdims: bool = False) -> Any:
        """Same as [lampy.argmax][]: integer indices as numpy values, not a Variable."""
        _no_out("argmax", out)
        return _extremes.argmax(self, axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: None = None, *, keepdims: bool = False) -> Any:
        """Same as [lampy.argmin][]: integer indices as numpy values, not a Variable."""
        _no_out("argmin", out)
        return _extremes.argmin(self, axis, keepdims=keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: None = None) -> Variable:
        """Same as [lampy.cumsum][]."""
        _no_out("cumsum", out)
        return _cumulative.cumsum(self, axis, dtype)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: None = None) -> Variable:
        """Same as [lampy.cumprod][]."""
        _no_out("cumprod", out)
        return _cumulative.cumprod(self, axis, dtype)

    def take(
        self, indices: Any, axis: Any = None, out: None = None, mode: str = "raise"
    ) -> Variable:
        """Same as [lampy.take][]."""
        _no_out("take", out)
        return _indexing.take(self, indices, axis, mode=mode)

    def compress(self, condition: Any, axis: Any = None, out: None = None) -> Variable:
        """Same as [lampy.compress][]."""
        _no_out("compress", out)
        return _indexing.compress(condition, self, axis)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Whether all elements along ``axis`` are true, as numpy (a numpy result)."""
        return np.all(self.value, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Whether any element along ``axis`` is true, as numpy (a numpy result)."""
        return np.any(self.value, axis=axis, keepdims=keepdims)

    def nonzero(self) -> tuple[np.ndarray, ...]:
        """Indices of the nonzero elements, as ``numpy.nonzero`` (numpy arrays)."""
        return np.nonzero(self.value)

    def argsort(self, axis: int = -1, kind: Any = None, *, stable: Any = None) -> Any:
        """Same as [lampy.argsort][]: integer indices as a numpy array, not a Variable.

        (``ndarray.sort`` sorts in place, so Variables have no ``sort`` method; use
        [lampy.sort][].)
        """
        return _sorting.argsort(self, axis, kind, stable=stable)

    @property
    def mT(self) -> Variable:
        """The matrix transpose (last two axes swapped), as ``numpy.ndarray.mT``."""
        return _shape.matrix_transpose(self)

    def ravel(self, order: str = "C") -> Variable:
        """Same as [lampy.ravel][]."""
        return _shape.ravel(self, order)

    def flatten(self, order: str = "C") -> Variable:
        """Same as [lampy.ravel][] (values are immutable, so a copy and a view are alike)."""
        return _shape.ravel(self, order)

    def squeeze(self, axis: Any = None) -> Variable:
        """Same as [lampy.squeeze][]."""
        return _shape.squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Variable:
        """Same as [lampy.swapaxes][]."""
        return _shape.swapaxes(self, axis1, axis2)

    def repeat(self, repeats: Any, axis: Any = None) -> Variable:
        """Same as [lampy.repeat][]."""
        return _pad.repeat(self, repeats, axis)

    def __abs__(self) -> Variable:
        return _magnitude.abs(self)

    def astype(self, dtype: Any, copy: bool = True) -> Variable:
        """Same as [lampy.astype][]: a float dtype keeps the gradient, others give a constant."""
        return _cast.astype(self, dtype, copy=copy)

    def copy(self) -> Variable:
        """Same as [lampy.copy][]."""
        return _cast.copy(self)

    def tolist(self) -> Any:
        """The value as nested Python lists."""
        return self.value.tolist()

    def clip(self, min: Any = None, max: Any = None) -> Variable:
        """Same as [lampy.clip][] with ``min`` and ``max`` bounds."""
        return _magnitude.clip(self, min=min, max=max)

    def round(self, decimals: int = 0) -> Variable:
        """Same as [lampy.round][] (zero gradient)."""
        return _rounding.round(self, decimals)

    def dot(self, b: Any) -> Variable:
        """Same as [lampy.dot][]."""
        return _linalg.dot(self, b)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Variable:
        """Same as [lampy.trace][]."""
        return _diagonal.trace(self, offset, axis1, axis2, dtype)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
        """Same as [lampy.diagonal][]."""
        return _diagonal.diagonal(self, offset, axis1, axis2)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise LampyTypeError(
            f"{name}: out= is not supported, Variables are immutable; use the returned Variable."
        )


# Fast constructors for the hot path of every op: the same records as
# ``Variable(...)`` / ``Op(...)`` (every field set), without the generic attrs __init__,
# which sets frozen fields through object.__setattr__ (about 0.3 µs per op saved).
_object_new = object.__new__
_set_value, _set_op, _set_needs, _set_scope, _set_label, _set_grad = (
    Variable.__dict__[k].__set__
    for k in ("_value", "op", "needs_grad", "_scope", "_label", "_grad")
)
_set_op_name, _set_op_params = (Op.__dict__[k].__set__ for k in ("name", "params"))


def _new_variable(
    value: np.ndarray, node_op: Op | None, needs_grad: bool, scope: Scope, label: str
) -> Variable:
    v = _object_new(Variable)
    _set_value(v, value)
    _set_op(v, node_op)
    _set_needs(v, needs_grad)
    _set_scope(v, scope)
    _set_label(v, label)
    _set_grad(v, None)
    return v


def _new_op(name: str, params: tuple[Param, ...]) -> Op:
    o = _object_new(Op)
    _set_op_name(o, name)
    _set_op_params(o, params)
    return o


_own = _memory.own_value


def op(name: str, value: ArrayLike, *params: Param | None) -> Variable:
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

    Returns:
        The output Variable. It needs a gradient if some param's input does, grad
            mode is on and the value has a floating dtype; otherwise no closures are
            recorded.

    Raises:
        NoScopeError: if no scope is active.
        ReleasedError: if an input was released.

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
    scope = _CURRENT.get()
    if scope is None or scope._state != _OPEN:
        raise _scope_error(scope, f"op '{name}'")
    arr: np.ndarray = _own(value)
    if GRAD_ENABLED.get():
        kept = []
        for p in params:
            if p is None:
                continue
            inp = p[0]
            if type(inp) is not Variable or len(p) != 2:
                raise _bad_param(name, p)
            if inp.needs_grad:
                if inp._value is None:
                    raise inp._released_error(f"op '{name}'")
                kept.append(p)
        if kept and arr.dtype.kind == "f":
            var = _new_variable(arr, _new_op(name, tuple(kept)), True, scope, name)
        else:
            var = _new_variable(arr, _new_op(name, ()), False, scope, name)
    else:
        var = _new_variable(arr, None, False, scope, name)
    scope._owned.append(var)
    return var


def _scope_error(scope: Scope | None, what: str) -> LampyError:
    if scope is None:
        return no_scope(what)
    return LampyError(
        f"{what}: the current scope has already exited (this code runs in a context copied "
        "while it was open, such as an asyncio task or contextvars.copy_context()). Open a "
        "scope where the Variables are made: `with lampy.Scope(): ...`."
    )


def _bad_param(name: str, p: Any) -> LampyTypeError:
    return LampyTypeError(
        f"op '{name}': each param must be the pair `input.zip_backward(closure)` with a "
        f"Variable input, got {type(p).__name__} {p!r:.80}."
    )


def _leaf(what: str, x: Any, dtype: Any, needs_grad: bool, copy: bool = True) -> Variable:
    scope = _CURRENT.get()
    if scope is None or scope._state != _OPEN:
        raise _scope_error(scope, f"lampy.{what}()")
    if type(x) is Variable:
        x = x.value
    try:
        arr = np.array(x, dtype=dtype, copy=True) if copy else np.asarray(x, dtype=dtype)
    except (TypeError, ValueError) as e:
        raise DTypeError(
            f"lampy.{what}: cannot make an array of {type(x).__name__} "
            f"(dtype={dtype}): {e}. Pass a numpy array, a nested list of numbers or a scalar."
        ) from e
    if arr.dtype == object:
        raise DTypeError(
            f"lampy.{what}: the input became an object array; pass numbers, not "
            "Variables or mixed objects (use lampy.stack to combine Variables)."
        )
    if needs_grad and arr.dtype.kind != "f":
        raise not_float(f"lampy.{what}", arr.dtype)
    var = _new_variable(_own(arr, shared=not copy), None, needs_grad, scope, what)
    scope._owned.append(var)
    return var


def param(
    x: ArrayLike | Variable, dtype: DTypeLike | None = None, *, copy: bool = True
) -> Variable:
    """A leaf Variable that needs a gradient, owned by the current scope.

    Args:
        x: An array, array-like or Python scalar; it is copied, so later changes to
            ``x`` do not reach the graph. float32 stays float32; Python floats and lists
            of them give float64.
        dtype: A floating dtype to cast to.
        copy: With ``copy=False`` an ndarray of the right dtype is used without a copy
            (through a read-only view), saving the copy's time and memory. You then
            promise not to change ``x`` while the Variable lives: a change would reach
            the value, and the gradients computed from it.

    Raises:
        DTypeError: (a ``TypeError``) if the dtype is not floating (integers and bools
            carry no gradient).
        NoScopeError: if no scope is active.
    """
    return _leaf("param", x, dtype, True, copy)


def const(
    x: ArrayLike | Variable, dtype: DTypeLike | None = None, *, copy: bool = True
) -> Variable:
    """A leaf Variable that needs no gradient, owned by the current scope.

    Args:
        x: An array, array-like or Python scalar, of any dtype; it is copied.
        dtype: A dtype to cast to.
        copy: ``copy=False`` uses an ndarray of the right dtype without a copy (see
            [param][lampy.param]): you promise not to change it while the Variable lives.

    Raises:
        NoScopeError: if no scope is active.
    """
    return _leaf("const", x, dtype, False, copy)


__all__ = ["Backward", "Op", "Param", "Variable", "const", "op", "param"]

# The operator methods above call into the op library, which itself builds on this
# module; it is imported last so that its modules can import the names defined here.
from lampy.ops import _arithmetic as _arith  # noqa: E402
from lampy.ops import (  # noqa: E402
    _cast,
    _comparison,
    _cumulative,
    _diagonal,
    _indexing,
    _linalg,
    _magnitude,
    _pad,
    _reductions,
    _rounding,
    _shape,
    _sorting,
)
from lampy.ops import _extreme_reductions as _extremes  # noqa: E402
