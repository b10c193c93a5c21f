"""The operators and numpy-style methods of Variable, as a mixin of their own.

``lampy.Variable`` (``_variable.py``) inherits them, with the PyTorch tensor methods a
PyTorch user types first (``x.exp()``, ``x.sum(dim=1)``, ``x.view(2, 3)``,
``x.detach()``...). Each one forwards to an op function of ``lampy.ops`` or
``lampy.nn.functional``; those packages provide the functions when they are imported
(``provide_operators``), so this engine package does not import the libraries built on
it.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError

if TYPE_CHECKING:
    from lampy.autograd._variable import Variable
    from lampy.ops._sorting import TopK


_V = TypeVar("_V", bound="VariableOperators")


class _OpFunctions:
    """The op functions behind the methods, set by ``provide_operators``.

    ``lampy.ops`` provides most of them and ``lampy.nn.functional`` the neural ones
    (``sigmoid``, ``relu``, ``softmax``, ``log_softmax``); a method whose function was
    not provided yet raises a ``lampy.LampyTypeError`` naming it.
    """

    abs: Callable[..., Variable]
    add: Callable[..., Variable]
    amax: Callable[..., Variable]
    amin: Callable[..., Variable]
    argmax: Callable[..., Any]
    argmin: Callable[..., Any]
    argsort: Callable[..., Any]
    astype: Callable[..., Variable]
    broadcast_to: Callable[..., Variable]
    clip: Callable[..., Variable]
    compress: Callable[..., Variable]
    copy: Callable[..., Variable]
    cos: Callable[..., Variable]
    cumprod: Callable[..., Variable]
    cumsum: Callable[..., Variable]
    diagonal: Callable[..., Variable]
    divide: Callable[..., Variable]
    dot: Callable[..., Variable]
    equal: Callable[..., Any]
    exp: Callable[..., Variable]
    expand_dims: Callable[..., Variable]
    expm1: Callable[..., Variable]
    gather: Callable[..., Variable]
    getitem: Callable[..., Variable]
    greater: Callable[..., np.ndarray]
    greater_equal: Callable[..., np.ndarray]
    index_select: Callable[..., Variable]
    less: Callable[..., np.ndarray]
    less_equal: Callable[..., np.ndarray]
    log: Callable[..., Variable]
    log1p: Callable[..., Variable]
    log_softmax: Callable[..., Variable]
    logsumexp: Callable[..., Variable]
    masked_fill: Callable[..., Variable]
    matmul: Callable[..., Variable]
    matrix_transpose: Callable[..., Variable]
    mean: Callable[..., Variable]
    multiply: Callable[..., Variable]
    negative: Callable[..., Variable]
    not_equal: Callable[..., Any]
    permute_dims: Callable[..., Variable]
    power: Callable[..., Variable]
    prod: Callable[..., Variable]
    ravel: Callable[..., Variable]
    reciprocal: Callable[..., Variable]
    relu: Callable[..., Variable]
    remainder: Callable[..., Variable]
    repeat: Callable[..., Variable]
    reshape: Callable[..., Variable]
    round: Callable[..., Variable]
    sigmoid: Callable[..., Variable]
    sign: Callable[..., Variable]
    sin: Callable[..., Variable]
    softmax: Callable[..., Variable]
    split: Callable[..., list[Variable]]
    sqrt: Callable[..., Variable]
    square: Callable[..., Variable]
    squeeze: Callable[..., Variable]
    std: Callable[..., Variable]
    subtract: Callable[..., Variable]
    sum: Callable[..., Variable]
    swapaxes: Callable[..., Variable]
    take: Callable[..., Variable]
    tanh: Callable[..., Variable]
    topk: Callable[..., TopK]
    trace: Callable[..., Variable]
    transpose: Callable[..., Variable]
    var: Callable[..., Variable]

    if not TYPE_CHECKING:  # at run time only, so that mypy still checks the names above

        def __getattr__(self, name: str) -> Callable[..., Any]:
            if name in _OpFunctions.__annotations__:
                raise LampyTypeError(
                    f"Variable: the function {name!r} behind this method was not provided; "
                    "it is provided when lampy.ops and lampy.nn.functional are imported: "
                    "`import lampy` first."
                )
            raise AttributeError(name)


_ops = _OpFunctions()


def provide_operators(**functions: Callable[..., Any]) -> None:
    """Give the methods some of their op functions (called by ``lampy.ops`` and
    ``lampy.nn.functional`` on import).

    Each package provides its own functions; a method whose function is still missing
    raises a ``lampy.LampyTypeError`` naming it when it is called.

    Raises:
        LampyTypeError: if a name is not one of the methods' functions (nothing is set).
    """
    unknown = set(functions) - set(_OpFunctions.__annotations__)
    if unknown:
        raise LampyTypeError(
            f"provide_operators: unknown names {sorted(unknown)}; add them to the "
            "annotations of lampy.autograd._operators._OpFunctions first."
        )
    for name, fn in functions.items():
        setattr(_ops, name, fn)
        dunder = _DIRECT.get(name)
        if dunder is not None:
            # ``x * y`` calls ``multiply(x, y)`` itself: no forwarding frame per op.
            setattr(VariableOperators, dunder, fn)


# Operators whose method is the op function itself once it is provided (the
# definitions in VariableOperators forward to it until then).
_DIRECT = {
    "add": "__add__",
    "subtract": "__sub__",
    "multiply": "__mul__",
    "divide": "__truediv__",
    "matmul": "__matmul__",
    "negative": "__neg__",
    "getitem": "__getitem__",
}


class VariableOperators:
    """Python operators and numpy-style methods of a Variable, forwarding to ``lampy.ops``."""

    __slots__ = ()

    # Numpy defers to our reflected operators: ``ndarray * Variable`` calls __rmul__.
    __array_ufunc__ = None

    if TYPE_CHECKING:

        @property
        def value(self) -> np.ndarray: ...
        @property
        def shape(self) -> tuple[int, ...]: ...
        @property
        def ndim(self) -> int: ...
        @property
        def size(self) -> int: ...
        @property
        def needs_grad(self) -> bool: ...

    # Arithmetic operators: numpy broadcasting, arrays and scalars wrapped as constants.
    def __add__(self, other: Any) -> Variable:
        return _ops.add(self, other)

    def __radd__(self, other: Any) -> Variable:
        return _ops.add(other, self)

    def __sub__(self, other: Any) -> Variable:
        return _ops.subtract(self, other)

    def __rsub__(self, other: Any) -> Variable:
        return _ops.subtract(other, self)

    def __mul__(self, other: Any) -> Variable:
        return _ops.multiply(self, other)

    def __rmul__(self, other: Any) -> Variable:
        return _ops.multiply(other, self)

    def __truediv__(self, other: Any) -> Variable:
        return _ops.divide(self, other)

    def __rtruediv__(self, other: Any) -> Variable:
        return _ops.divide(other, self)

    def __pow__(self, other: Any) -> Variable:
        return _ops.power(self, other)

    def __rpow__(self, other: Any) -> Variable:
        return _ops.power(other, self)

    def __mod__(self, other: Any) -> Variable:
        return _ops.remainder(self, other)

    def __rmod__(self, other: Any) -> Variable:
        return _ops.remainder(other, self)

    def __matmul__(self, other: Any) -> Variable:
        return _ops.matmul(self, other)

    def __rmatmul__(self, other: Any) -> Variable:
        return _ops.matmul(other, self)

    def __neg__(self) -> Variable:
        return _ops.negative(self)

    def __pos__(self: _V) -> _V:
        return self

    def __getitem__(self, index: Any) -> Variable:
        return _ops.getitem(self, index)

    # Comparisons give plain boolean arrays (they have no gradient), as lampy.equal etc.
    def __eq__(self, other: object) -> Any:
        return _ops.equal(self, other)

    def __ne__(self, other: object) -> Any:
        return _ops.not_equal(self, other)

    def __lt__(self, other: Any) -> np.ndarray:
        return _ops.less(self, other)

    def __le__(self, other: Any) -> np.ndarray:
        return _ops.less_equal(self, other)

    def __gt__(self, other: Any) -> np.ndarray:
        return _ops.greater(self, other)

    def __ge__(self, other: Any) -> np.ndarray:
        return _ops.greater_equal(self, other)

    # ------------------------------------------------------------ numpy-style methods
    @property
    def T(self) -> Variable:
        """The transpose (axes reversed), as ``numpy.ndarray.T``."""
        return _ops.transpose(self)

    @property
    def mT(self) -> Variable:
        """The matrix transpose (last two axes swapped), as ``numpy.ndarray.mT``."""
        return _ops.matrix_transpose(self)

    def reshape(self, *shape: Any, order: str = "C") -> Variable:
        """Same as ``lampy.reshape``; accepts ``v.reshape(2, 3)`` and ``v.reshape((2, 3))``."""
        return _ops.reshape(self, _shape_arg(shape), order=order)

    def transpose(self, *axes: Any) -> Variable:
        """Same as ``lampy.transpose``; accepts ``v.transpose(1, 0)`` and a tuple."""
        perm: Any = axes
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            perm = axes[0]
        return _ops.transpose(self, perm or None)

    def sum(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        *,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.sum`` (``out`` must be None: Variables are immutable)."""
        _no_out("sum", out)
        return _ops.sum(self, axis, dtype, keepdims, dim=dim, keepdim=keepdim)

    def mean(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        *,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.mean`` (``out`` must be None: Variables are immutable)."""
        _no_out("mean", out)
        return _ops.mean(self, axis, dtype, keepdims, dim=dim, keepdim=keepdim)

    def var(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        ddof: int = 0,
        keepdims: bool = False,
    ) -> Variable:
        """Same as ``lampy.var`` (no ``dim=``: PyTorch's ``var`` divides by ``n - 1``)."""
        _no_out("var", out)
        return _ops.var(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def std(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        ddof: int = 0,
        keepdims: bool = False,
    ) -> Variable:
        """Same as ``lampy.std`` (no ``dim=``: PyTorch's ``std`` divides by ``n - 1``)."""
        _no_out("std", out)
        return _ops.std(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def prod(
        self,
        axis: Any = None,
        dtype: Any = None,
        out: None = None,
        keepdims: bool = False,
        *,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.prod`` (``out`` must be None: Variables are immutable)."""
        _no_out("prod", out)
        return _ops.prod(self, axis, dtype, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def max(
        self,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = True,
    ) -> Variable:
        """Same as ``lampy.amax`` (no ``dim=``: PyTorch's ``max(dim)`` returns indices too)."""
        _no_out("max", out)
        return _ops.amax(self, axis, keepdims=keepdims, initial=initial, where=where)

    def min(
        self,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        initial: Any = None,
        where: Any = True,
    ) -> Variable:
        """Same as ``lampy.amin`` (no ``dim=``: PyTorch's ``min(dim)`` returns indices too)."""
        _no_out("min", out)
        return _ops.amin(self, axis, keepdims=keepdims, initial=initial, where=where)

    def amax(
        self,
        axis: Any = None,
        *,
        keepdims: bool = False,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.amax``."""
        return _ops.amax(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def amin(
        self,
        axis: Any = None,
        *,
        keepdims: bool = False,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.amin``."""
        return _ops.amin(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def argmax(
        self,
        axis: Any = None,
        out: None = None,
        *,
        keepdims: bool = False,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Any:
        """Same as ``lampy.argmax``: integer indices as numpy values, not a Variable."""
        _no_out("argmax", out)
        return _ops.argmax(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def argmin(
        self,
        axis: Any = None,
        out: None = None,
        *,
        keepdims: bool = False,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Any:
        """Same as ``lampy.argmin``: integer indices as numpy values, not a Variable."""
        _no_out("argmin", out)
        return _ops.argmin(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def logsumexp(
        self,
        axis: Any = None,
        *,
        keepdims: bool = False,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.logsumexp``."""
        return _ops.logsumexp(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def cumsum(
        self, axis: Any = None, dtype: Any = None, out: None = None, *, dim: Any = None
    ) -> Variable:
        """Same as ``lampy.cumsum``."""
        _no_out("cumsum", out)
        return _ops.cumsum(self, axis, dtype, dim=dim)

    def cumprod(
        self, axis: Any = None, dtype: Any = None, out: None = None, *, dim: Any = None
    ) -> Variable:
        """Same as ``lampy.cumprod``."""
        _no_out("cumprod", out)
        return _ops.cumprod(self, axis, dtype, dim=dim)

    def take(
        self, indices: Any, axis: Any = None, out: None = None, mode: str = "raise"
    ) -> Variable:
        """Same as ``lampy.take``."""
        _no_out("take", out)
        return _ops.take(self, indices, axis, mode=mode)

    def compress(self, condition: Any, axis: Any = None, out: None = None) -> Variable:
        """Same as ``lampy.compress``."""
        _no_out("compress", out)
        return _ops.compress(condition, self, axis)

    def all(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Whether all elements along ``axis`` are true, as numpy (a numpy result)."""
        return np.all(self.value, axis=axis, keepdims=keepdims)

    def any(self, axis: Any = None, keepdims: bool = False) -> Any:
        """Whether any element along ``axis`` is true, as numpy (a numpy result)."""
        return np.any(self.value, axis=axis, keepdims=keepdims)

    def nonzero(self) -> tuple[np.ndarray, ...]:
        """Indices of the nonzero elements, as ``numpy.nonzero`` (numpy arrays)."""
        return np.nonzero(self.value)

    def argsort(
        self,
        axis: int | None = -1,
        kind: Any = None,
        *,
        stable: Any = None,
        dim: int | None = None,
    ) -> Any:
        """Same as ``lampy.argsort``: integer indices as a numpy array, not a Variable.

        (``ndarray.sort`` sorts in place and ``torch.Tensor.sort`` returns indices too,
        so Variables have no ``sort`` method; use ``lampy.sort``.)
        """
        return _ops.argsort(self, axis, kind, stable=stable, dim=dim)

    def topk(self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True) -> TopK:
        """Same as ``lampy.topk``: the values (a Variable) and their indices."""
        return _ops.topk(self, k, dim, largest, sorted)

    def ravel(self, order: str = "C") -> Variable:
        """Same as ``lampy.ravel``."""
        return _ops.ravel(self, order)

    def flatten(self, start_dim: int | str = 0, end_dim: int = -1, *, order: str = "C") -> Variable:
        """Axes ``start_dim..end_dim`` merged into one, by ``lampy.reshape`` (PyTorch's).

        ``x.flatten()`` is numpy's (same as ``lampy.ravel``), and a string first argument
        is numpy's ``order``: ``x.flatten("F")``.

        Raises:
            ShapeError: if a dim is out of range or ``start_dim`` comes after ``end_dim``.
        """
        if isinstance(start_dim, str):
            order, start_dim = start_dim, 0
        s = self.shape
        start = _axis("flatten", "start_dim", start_dim, s)
        end = _axis("flatten", "end_dim", end_dim, s)
        if start > end:
            raise ShapeError(
                f"flatten: start_dim ({start_dim}) comes after end_dim ({end_dim}) for a "
                f"Variable of shape {s}."
            )
        if start == 0 and end >= len(s) - 1:
            return _ops.ravel(self, order)
        return _ops.reshape(self, (*s[:start], math.prod(s[start : end + 1]), *s[end + 1 :]), order)

    def squeeze(self, axis: Any = None, *, dim: Any = None) -> Variable:
        """Same as ``lampy.squeeze``."""
        return _ops.squeeze(self, axis, dim=dim)

    def swapaxes(self, axis1: int, axis2: int) -> Variable:
        """Same as ``lampy.swapaxes``."""
        return _ops.swapaxes(self, axis1, axis2)

    def repeat(self, repeats: Any, axis: Any = None) -> Variable:
        """Same as ``lampy.repeat`` (numpy's, not ``torch.Tensor.repeat``, which tiles)."""
        return _ops.repeat(self, repeats, axis)

    def __abs__(self) -> Variable:
        return _ops.abs(self)

    def astype(self, dtype: Any, copy: bool = True) -> Variable:
        """Same as ``lampy.astype``: a float dtype keeps the gradient, others give a constant."""
        return _ops.astype(self, dtype, copy=copy)

    def copy(self) -> Variable:
        """Same as ``lampy.copy``."""
        return _ops.copy(self)

    def tolist(self) -> Any:
        """The value as nested Python lists."""
        return self.value.tolist()

    def clip(self, min: Any = None, max: Any = None) -> Variable:
        """Same as ``lampy.clip`` with ``min`` and ``max`` bounds."""
        return _ops.clip(self, min=min, max=max)

    def round(self, decimals: int = 0) -> Variable:
        """Same as ``lampy.round`` (zero gradient)."""
        return _ops.round(self, decimals)

    def dot(self, b: Any) -> Variable:
        """Same as ``lampy.dot``."""
        return _ops.dot(self, b)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Variable:
        """Same as ``lampy.trace``."""
        return _ops.trace(self, offset, axis1, axis2, dtype)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
        """Same as ``lampy.diagonal``."""
        return _ops.diagonal(self, offset, axis1, axis2)

    # ------------------------------------------- PyTorch's tensor methods: elementwise
    def exp(self) -> Variable:
        """Same as ``lampy.exp``."""
        return _ops.exp(self)

    def log(self) -> Variable:
        """Same as ``lampy.log``."""
        return _ops.log(self)

    def log1p(self) -> Variable:
        """Same as ``lampy.log1p``."""
        return _ops.log1p(self)

    def expm1(self) -> Variable:
        """Same as ``lampy.expm1``."""
        return _ops.expm1(self)

    def sqrt(self) -> Variable:
        """Same as ``lampy.sqrt``."""
        return _ops.sqrt(self)

    def square(self) -> Variable:
        """Same as ``lampy.square``."""
        return _ops.square(self)

    def tanh(self) -> Variable:
        """Same as ``lampy.tanh``."""
        return _ops.tanh(self)

    def sin(self) -> Variable:
        """Same as ``lampy.sin``."""
        return _ops.sin(self)

    def cos(self) -> Variable:
        """Same as ``lampy.cos``."""
        return _ops.cos(self)

    def sign(self) -> Variable:
        """Same as ``lampy.sign`` (zero gradient)."""
        return _ops.sign(self)

    def reciprocal(self) -> Variable:
        """Same as ``lampy.reciprocal``."""
        return _ops.reciprocal(self)

    def abs(self) -> Variable:
        """Same as ``lampy.abs``."""
        return _ops.abs(self)

    def neg(self) -> Variable:
        """Same as ``lampy.negative`` (``-x``)."""
        return _ops.negative(self)

    def pow(self, exponent: Any) -> Variable:
        """Same as ``lampy.power`` (``x ** exponent``)."""
        return _ops.power(self, exponent)

    def clamp(self, min: Any = None, max: Any = None) -> Variable:
        """Same as ``lampy.clip`` with ``min`` and ``max`` bounds (PyTorch's name)."""
        return _ops.clip(self, min=min, max=max)

    def add(self, other: Any) -> Variable:
        """Same as ``lampy.add`` (``x + other``)."""
        return _ops.add(self, other)

    def sub(self, other: Any) -> Variable:
        """Same as ``lampy.subtract`` (``x - other``)."""
        return _ops.subtract(self, other)

    def mul(self, other: Any) -> Variable:
        """Same as ``lampy.multiply`` (``x * other``)."""
        return _ops.multiply(self, other)

    def div(self, other: Any) -> Variable:
        """Same as ``lampy.divide`` (``x / other``)."""
        return _ops.divide(self, other)

    def matmul(self, other: Any) -> Variable:
        """Same as ``lampy.matmul`` (``x @ other``)."""
        return _ops.matmul(self, other)

    def mm(self, other: Any) -> Variable:
        """Same as ``lampy.matmul`` for two matrices (2-d operands, as PyTorch's ``mm``).

        Raises:
            ShapeError: if an operand is not 2-d.
        """
        _check_ndim("mm", 2, self, other)
        return _ops.matmul(self, other)

    def bmm(self, other: Any) -> Variable:
        """Same as ``lampy.matmul`` for two batches of matrices (3-d, as PyTorch's ``bmm``).

        Raises:
            ShapeError: if an operand is not 3-d.
        """
        _check_ndim("bmm", 3, self, other)
        return _ops.matmul(self, other)

    def masked_fill(self, mask: Any, value: Any) -> Variable:
        """Same as ``lampy.masked_fill``: ``value`` where ``mask`` is true."""
        return _ops.masked_fill(self, mask, value)

    def sigmoid(self) -> Variable:
        """Same as ``lampy.nn.functional.sigmoid``."""
        return _ops.sigmoid(self)

    def relu(self) -> Variable:
        """Same as ``lampy.nn.functional.relu``."""
        return _ops.relu(self)

    def softmax(self, dim: int) -> Variable:
        """Same as ``lampy.nn.functional.softmax`` along ``dim``."""
        return _ops.softmax(self, dim)

    def log_softmax(self, dim: int) -> Variable:
        """Same as ``lampy.nn.functional.log_softmax`` along ``dim``."""
        return _ops.log_softmax(self, dim)

    # ------------------------------------------------- PyTorch's tensor methods: shape
    def unsqueeze(self, dim: int) -> Variable:
        """Same as ``lampy.expand_dims``: a new axis of length 1 at ``dim``."""
        return _ops.expand_dims(self, dim)

    def permute(self, *dims: Any) -> Variable:
        """Same as ``lampy.permute_dims``; accepts ``x.permute(1, 0)`` and a tuple."""
        return _ops.permute_dims(self, _shape_arg(dims))

    def view(self, *shape: Any) -> Variable:
        """Same as ``lampy.reshape`` (values are immutable, so a view and a copy are alike)."""
        return _ops.reshape(self, _shape_arg(shape))

    def view_as(self, other: Any) -> Variable:
        """Same as ``lampy.reshape`` to ``other``'s shape."""
        return _ops.reshape(self, np.shape(other))

    def reshape_as(self, other: Any) -> Variable:
        """Same as ``lampy.reshape`` to ``other``'s shape."""
        return _ops.reshape(self, np.shape(other))

    def expand(self, *sizes: Any) -> Variable:
        """Same as ``lampy.broadcast_to``, where a size of ``-1`` keeps this axis' size.

        Raises:
            ShapeError: if ``-1`` stands for a new leading axis.
        """
        new = tuple(operator.index(n) for n in _shape_arg(sizes))
        lead = len(new) - self.ndim
        if any(n == -1 for n in new[: max(lead, 0)]):
            raise ShapeError(
                f"expand: -1 keeps an existing axis' size, it cannot stand for the new "
                f"leading axes; got sizes {new} for a Variable of shape {self.shape}."
            )
        if lead >= 0:
            new = tuple(self.shape[i - lead] if n == -1 else n for i, n in enumerate(new))
        return _ops.broadcast_to(self, new)

    def expand_as(self, other: Any) -> Variable:
        """Same as ``lampy.broadcast_to`` to ``other``'s shape."""
        return _ops.broadcast_to(self, np.shape(other))

    def t(self) -> Variable:
        """Same as ``lampy.matrix_transpose`` for 2-d; 0-d and 1-d are returned as they are.

        Raises:
            ShapeError: for more than 2 dimensions (use ``mT`` or ``permute``).
        """
        if self.ndim > 2:
            raise ShapeError(
                f"t: transposes up to 2 dimensions, got shape {self.shape}; use x.mT to "
                "swap the last two axes, or x.permute(...)."
            )
        return _ops.matrix_transpose(self) if self.ndim == 2 else _ops.reshape(self, self.shape)

    def chunk(self, chunks: int, dim: int = 0) -> tuple[Variable, ...]:
        """Same as ``lampy.split`` into pieces of ``ceil(n / chunks)`` (PyTorch's sizes:
        the last may be smaller, and there may be fewer than ``chunks``).

        Raises:
            LampyValueError: if ``chunks`` is less than 1.
        """
        chunks = operator.index(chunks)
        if chunks < 1:
            raise LampyValueError(f"chunk: chunks must be at least 1, got {chunks}.")
        n = self.shape[_axis("chunk", "dim", dim, self.shape)]
        step = max(-(-n // chunks), 1)
        return tuple(_ops.split(self, list(range(step, n, step)), axis=dim))

    def gather(self, dim: int, index: Any) -> Variable:
        """Same as ``lampy.gather``."""
        return _ops.gather(self, dim, index)

    def index_select(self, dim: int, index: Any) -> Variable:
        """Same as ``lampy.index_select``."""
        return _ops.index_select(self, dim, index)

    # ------------------------------------- PyTorch's tensor methods: autograd and dtypes
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this Variable: ``needs_grad``, PyTorch's name."""
        return self.needs_grad

    def detach(self) -> Variable:
        """Same as ``lampy.const`` of the value: no gradient flows through it.

        The value of an op result is shared (no copy). A leaf's value (a param's, which
        an optimizer changes in place) or a view of another array is copied: a graph
        that read the detached value must not see a later in-place write, which it could
        not detect (PyTorch shares the memory and raises at backward instead).
        """
        from lampy.autograd._variable import const  # _variable is built on this module

        value = self.value
        node = self.node  # type: ignore[attr-defined]
        return const(value, copy=node.params is None or value.base is not None)

    def dim(self) -> int:
        """The number of dimensions, ``ndim``."""
        return self.ndim

    def numel(self) -> int:
        """The number of elements, ``size``."""
        return self.size

    def clone(self) -> Variable:
        """Same as ``lampy.copy``: a copy with a gradient path."""
        return _ops.copy(self)

    def double(self) -> Variable:
        """Same as ``lampy.astype`` to float64."""
        return _ops.astype(self, np.float64)

    def half(self) -> Variable:
        """Same as ``lampy.astype`` to float16."""
        return _ops.astype(self, np.float16)

    def type_as(self, other: Any) -> Variable:
        """Same as ``lampy.astype`` to ``other``'s dtype."""
        return _ops.astype(self, other.dtype if hasattr(other, "dtype") else np.result_type(other))

    def to(self, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False) -> Variable:
        """Same as ``lampy.astype``: ``x.to(np.float32)``, ``x.to(other)`` (its dtype);
        ``x.to("cpu")`` is ``x``.

        Raises:
            LampyValueError: for a device other than the CPU (lampy runs on numpy).
        """
        for a in args:
            if isinstance(a, str) and not _is_dtype_name(a):
                device = a
            elif hasattr(a, "dtype") and not isinstance(a, np.dtype | type):
                dtype = a.dtype
            else:
                dtype = a
        if device is not None and str(device).split(":")[0] != "cpu":
            raise LampyValueError(
                f"to: lampy runs on numpy, on the CPU; there is no device {device!r}. "
                "Drop the .to(device) call (x.to('cpu') and x.cpu() return x)."
            )
        if dtype is None:
            return _ops.copy(self) if copy else self  # type: ignore[return-value]
        return _ops.astype(self, dtype, copy=copy)

    def cpu(self: _V) -> _V:
        """This Variable itself: lampy runs on numpy, on the CPU."""
        return self

    def contiguous(self: _V) -> _V:
        """This Variable itself (values are immutable, so their layout does not matter)."""
        return self

    def float(self) -> Variable:
        """Same as ``lampy.astype`` to float32."""
        return _ops.astype(self, np.float32)


def _shape_arg(args: tuple[Any, ...]) -> Any:
    """``(2, 3)`` from ``f(2, 3)`` and ``f((2, 3))``."""
    if len(args) == 1 and not isinstance(args[0], int | np.integer):
        return args[0]
    return args


def _axis(name: str, what: str, d: Any, shape: tuple[int, ...]) -> int:
    """``d`` as an axis in ``[0, ndim)`` (a 0-d value counts as 1-d, as PyTorch)."""
    k, n = operator.index(d), max(len(shape), 1)
    if not -n <= k < n:
        raise ShapeError(
            f"{name}: {what} {k} is out of range for a Variable of shape {shape} "
            f"({len(shape)} dimensions)."
        )
    return k % n


def _check_ndim(name: str, ndim: int, *operands: Any) -> None:
    shapes = [np.shape(x) for x in operands]
    if any(len(s) != ndim for s in shapes):
        raise ShapeError(
            f"{name}: takes {ndim}-d operands, got shapes {shapes}; use x.matmul(other) "
            "(x @ other) to broadcast."
        )


def _is_dtype_name(s: str) -> bool:
    try:
        np.dtype(s)
    except TypeError:
        return False
    return True


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise LampyTypeError(
            f"{name}: out= is not supported, Variables are immutable; use the returned Variable."
        )


__all__ = ["VariableOperators", "provide_operators"]
