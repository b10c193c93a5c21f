"""The operators and numpy-style methods of Variable, as a mixin of their own.

``lampy.Variable`` (``_variable.py``) inherits them, with the PyTorch tensor methods a
PyTorch user types first (``x.exp()``, ``x.sum(dim=1)``, ``x.view(2, 3)``,
``x.detach()``...). Each one forwards to an op function of ``lampy.ops`` or
``lampy.nn.functional``; those packages provide the functions when they are imported
(``provide_operators``), so this engine package does not import the libraries built on
it.
"""

from __future__ import annotations

import itertools
import math
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, NoReturn, TypeVar

import numpy as np

from lampy._errors import AmbiguousMethodError, LampyTypeError, LampyValueError, ShapeError
from lampy.autograd._shared_names import (
    MinMax,
    advise,
    ambiguous,
    axis_index,
    axis_or_dim,
    dtype_name,
    is_dtype_like,
    is_dtype_name,
    is_int,
    no_out,
    read_extreme,
    read_moments,
    read_repeat,
    shape_arg,
    shape_ints,
)

if TYPE_CHECKING:
    from lampy.autograd._variable import Variable
    from lampy.ops import TopK


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
    maximum: Callable[..., Variable]
    minimum: Callable[..., Variable]
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
    take_along_axis: Callable[..., Variable]
    tanh: Callable[..., Variable]
    tile: Callable[..., Variable]
    topk: Callable[..., TopK]
    trace: Callable[..., Variable]
    transpose: Callable[..., Variable]
    var: Callable[..., Variable]


def _not_provided(name: str) -> Callable[..., Any]:
    """The stand-in for an op function until ``provide_operators`` gives it: a class
    attribute the instance's own shadows (no ``__getattr__``, which would slow every
    method's lookup of its function)."""

    def missing(*args: Any, **kwargs: Any) -> Any:
        raise LampyTypeError(
            f"Variable: the function {name!r} behind this method was not provided; it is "
            "provided when lampy.ops and lampy.nn.functional are imported: `import lampy` "
            "first."
        )

    return staticmethod(missing)


for _name in _OpFunctions.__annotations__:
    setattr(_OpFunctions, _name, _not_provided(_name))

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
        """Same as ``lampy.reshape``; accepts ``v.reshape(2, 3)`` and ``v.reshape((2, 3))``.

        Raises:
            LampyTypeError: if the shape is not ints.
        """
        return _ops.reshape(self, shape_ints("reshape", shape, self.shape), order=order)

    def transpose(self, *axes: Any, dim0: int | None = None, dim1: int | None = None) -> Variable:
        """numpy's ``transpose`` (a permutation, or reversed axes), or PyTorch's swap of
        two axes where numpy's reading cannot apply.

        ``x.transpose()``, ``x.transpose((1, 0, 2))`` and ``x.transpose(1, 0, 2)`` are
        numpy's. Two axes on a Variable that is not 2-d, or ``dim0=``/``dim1=``, are
        PyTorch's swap (``lampy.swapaxes``); on a 2-d Variable, ``(1, 0)`` means the same
        in both. ``x.transpose(0, 1)`` or ``(-2, -1)`` on a 2-d Variable is numpy's
        identity but PyTorch's swap, so it raises, showing both spellings.

        Raises:
            AmbiguousMethodError: for two axes that numpy and PyTorch read differently.
        """
        if dim0 is not None or dim1 is not None:
            if axes or dim0 is None or dim1 is None:
                raise LampyTypeError(
                    f"transpose: PyTorch's form takes two axes, dim0 and dim1; got {axes!r}, "
                    f"dim0={dim0!r}, dim1={dim1!r}."
                )
            return _ops.swapaxes(self, dim0, dim1)
        if len(axes) == 2 and all(is_int(a) for a in axes):
            a, b = (operator.index(d) for d in axes)
            if self.ndim != 2 or a % 2 == b % 2:  # numpy would raise: PyTorch's swap
                return _ops.swapaxes(self, a, b)
            if (a % 2, b % 2) == (0, 1) and min(a, b) >= -2 and max(a, b) < 2:
                raise AmbiguousMethodError(
                    ambiguous(
                        f"transpose({a}, {b})",
                        self.shape,
                        "numpy reads the axes as a permutation, which leaves a 2-d Variable "
                        "as it is; PyTorch swaps the two axes",
                        numpy="x (nothing to do), or x.transpose((0, 1))",
                        torch=f"x.swapaxes({a}, {b}), x.mT or x.T",
                    )
                )
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
        no_out("sum", out)
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
        no_out("mean", out)
        return _ops.mean(self, axis, dtype, keepdims, dim=dim, keepdim=keepdim)

    def var(self, *args: Any, **kwargs: Any) -> Variable:
        """The variance: numpy's ``var`` with ``ddof=``, PyTorch's with ``correction=``
        or ``unbiased=``, and ``dim=``/``keepdim=`` PyTorch's.

        numpy divides by ``n`` by default and PyTorch by ``n - 1``, and PyTorch takes
        numpy's ``axis=`` too, so ``x.var()``, ``x.var(1)`` and ``x.var(axis=1)`` would
        mean different numbers to the two; they raise, showing both spellings. Say the
        divisor (``ddof=0``, ``correction=1``, ``unbiased=True``) or use ``dim=``.

        Raises:
            AmbiguousMethodError: when neither the divisor nor PyTorch's ``dim=`` is given.
        """
        axis, dtype, ddof, keepdims = read_moments("var", self.shape, args, kwargs)
        return _ops.var(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def std(self, *args: Any, **kwargs: Any) -> Variable:
        """The standard deviation: numpy's ``std`` with ``ddof=``, PyTorch's with
        ``correction=`` or ``unbiased=``, and ``dim=``/``keepdim=`` PyTorch's.

        As ``lampy.Variable.var``: a call that does not say the divisor, in either
        library's words, raises showing both spellings.

        Raises:
            AmbiguousMethodError: when neither the divisor nor PyTorch's ``dim=`` is given.
        """
        axis, dtype, ddof, keepdims = read_moments("std", self.shape, args, kwargs)
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
        no_out("prod", out)
        return _ops.prod(self, axis, dtype, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def max(self, *args: Any, **kwargs: Any) -> Any:
        """numpy's ``max`` over everything or with numpy-only arguments, PyTorch's
        ``max(dim=...)`` (values and indices) and ``max(other)`` (elementwise).

        ``x.max()`` is the same in both libraries. With ``dim=`` (or ``keepdim=``, or a
        bool ``keepdim`` after the axis) it returns PyTorch's ``(values, indices)``, a
        ``MinMax`` pair whose values are differentiable (the gradient goes to the
        index, as PyTorch); with ``initial=``, ``where=`` or ``keepdims=`` numpy's
        ``amax``; given a Variable or array, ``lampy.maximum``. An axis alone
        (``x.max(1)``, ``x.max(axis=1)``) is an array for numpy and values and indices
        for PyTorch: it raises, showing ``x.amax(axis=1)`` and ``x.max(dim=1)``.

        Raises:
            AmbiguousMethodError: for an axis without a sign of either library.
        """
        return _extreme("max", self, args, kwargs)

    def min(self, *args: Any, **kwargs: Any) -> Any:
        """numpy's ``min`` over everything or with numpy-only arguments, PyTorch's
        ``min(dim=...)`` (values and indices) and ``min(other)`` (elementwise).

        ``x.min()`` is the same in both libraries. With ``dim=`` (or ``keepdim=``, or a
        bool ``keepdim`` after the axis) it returns PyTorch's ``(values, indices)``, a
        ``MinMax`` pair whose values are differentiable (the gradient goes to the
        index, as PyTorch); with ``initial=``, ``where=`` or ``keepdims=`` numpy's
        ``amin``; given a Variable or array, ``lampy.minimum``. An axis alone
        (``x.min(1)``, ``x.min(axis=1)``) is an array for numpy and values and indices
        for PyTorch: it raises, showing ``x.amin(axis=1)`` and ``x.min(dim=1)``.

        Raises:
            AmbiguousMethodError: for an axis without a sign of either library.
        """
        return _extreme("min", self, args, kwargs)

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
        no_out("argmax", out)
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
        no_out("argmin", out)
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
        no_out("cumsum", out)
        return _ops.cumsum(self, axis, dtype, dim=dim)

    def cumprod(
        self, axis: Any = None, dtype: Any = None, out: None = None, *, dim: Any = None
    ) -> Variable:
        """Same as ``lampy.cumprod``."""
        no_out("cumprod", out)
        return _ops.cumprod(self, axis, dtype, dim=dim)

    def take(
        self, indices: Any, axis: Any = None, out: None = None, mode: str = "raise"
    ) -> Variable:
        """Same as ``lampy.take``."""
        no_out("take", out)
        return _ops.take(self, indices, axis, mode=mode)

    def compress(self, condition: Any, axis: Any = None, out: None = None) -> Variable:
        """Same as ``lampy.compress``."""
        no_out("compress", out)
        return _ops.compress(condition, self, axis)

    def all(
        self,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        *,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Any:
        """Whether all elements along ``axis`` (PyTorch's ``dim``) are true: a numpy
        result (the same in both libraries)."""
        no_out("all", out)
        axis = axis_or_dim("all", axis, dim)
        return np.all(self.value, axis=axis, keepdims=keepdim if keepdim is not None else keepdims)

    def any(
        self,
        axis: Any = None,
        out: None = None,
        keepdims: bool = False,
        *,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Any:
        """Whether any element along ``axis`` (PyTorch's ``dim``) is true: a numpy
        result (the same in both libraries)."""
        no_out("any", out)
        axis = axis_or_dim("any", axis, dim)
        return np.any(self.value, axis=axis, keepdims=keepdim if keepdim is not None else keepdims)

    def nonzero(self, *, as_tuple: bool | None = None) -> Any:
        """The indices of the nonzero elements: numpy's tuple of index arrays with
        ``as_tuple=True``, PyTorch's ``(count, ndim)`` array with ``as_tuple=False``.

        ``x.nonzero()`` is numpy's tuple but PyTorch's 2-d array, so it raises showing
        both spellings.

        Raises:
            AmbiguousMethodError: when ``as_tuple`` is not given.
        """
        if as_tuple is None:
            raise AmbiguousMethodError(
                ambiguous(
                    "nonzero()",
                    self.shape,
                    "numpy returns a tuple of index arrays, one per axis; PyTorch returns "
                    "one (count, ndim) array",
                    numpy="x.nonzero(as_tuple=True) or lampy.nonzero(x)",
                    torch="x.nonzero(as_tuple=False) or np.argwhere(x.value)",
                )
            )
        return np.nonzero(self.value) if as_tuple else np.argwhere(self.value)

    def argsort(
        self,
        axis: int | None = -1,
        kind: Any = None,
        *,
        stable: Any = None,
        dim: int | None = None,
        descending: bool = False,
    ) -> Any:
        """Same as ``lampy.argsort``: integer indices as a numpy array, not a Variable.

        PyTorch's ``dim=``, ``descending=`` and ``x.argsort(dim, descending)`` (a bool
        second argument) are accepted; descending order keeps equal elements in order
        when ``stable=True``, as PyTorch.
        """
        if isinstance(kind, bool):  # PyTorch's argsort(dim, descending)
            kind, descending = None, kind
        if not descending:
            return _ops.argsort(self, axis, kind, stable=stable, dim=dim)
        axis = axis_or_dim("argsort", axis, dim, default=-1)
        x = np.asarray(self.value)
        if axis is None:
            x, axis = x.reshape(-1), 0
        # Sorting the negated order keeps ties first-to-last, as PyTorch's stable sort.
        n = x.shape[axis] if x.ndim else 1
        rev = np.flip(x, axis) if x.ndim else x
        idx = np.argsort(rev, axis=axis, kind=kind, stable=True if stable else stable)
        idx = np.flip(idx, axis) if x.ndim else idx
        return (n - 1 - idx) if x.ndim else idx

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
        start = axis_index("flatten", "start_dim", start_dim, s)
        end = axis_index("flatten", "end_dim", end_dim, s)
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

    def repeat(self, *args: Any, **kwargs: Any) -> Variable:
        """numpy's ``repeat`` (each element ``repeats`` times along ``axis``), or PyTorch's
        ``repeat`` (the whole Variable tiled, ``lampy.tile``) where numpy's cannot apply.

        ``x.repeat(2, axis=1)`` is numpy's, ``x.repeat(2, 1, 1)`` (three sizes) PyTorch's.
        Where both readings apply and give different results (``x.repeat(2, 1)`` on a
        2-d Variable, ``x.repeat(2)`` on a 1-d one), it raises showing both spellings.

        Raises:
            AmbiguousMethodError: where numpy's and PyTorch's readings differ.
        """
        return _repeat(self, args, kwargs)

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
        return _ops.permute_dims(self, shape_arg(dims))

    def view(self, *shape: Any) -> Variable:
        """Same as ``lampy.reshape`` (values are immutable, so a view and a copy are alike).

        ``x.view(np.float32)`` (numpy's and PyTorch's reinterpretation of the bytes as
        another dtype) has no gradient, and raises.

        Raises:
            LampyTypeError: for a dtype, or a shape that is not ints.
        """
        if len(shape) == 1 and is_dtype_like(shape[0]):
            raise LampyTypeError(
                f"view({dtype_name(shape[0])}): reinterpreting the bytes of a Variable of shape "
                f"{self.shape} and dtype {self.value.dtype} as another dtype has no "
                "gradient. For a cast, use x.astype(dtype); for the raw bits, "
                "x.value.view(dtype) (a numpy array). x.view(*shape) is PyTorch's reshape."
            )
        return _ops.reshape(self, shape_ints("view", shape, self.shape))

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
        new = tuple(operator.index(n) for n in shape_arg(sizes))
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
        n = self.shape[axis_index("chunk", "dim", dim, self.shape)]
        step = max(-(-n // chunks), 1)
        return tuple(_ops.split(self, list(range(step, n, step)), axis=dim))

    def gather(self, dim: int, index: Any) -> Variable:
        """Same as ``lampy.gather``."""
        return _ops.gather(self, dim, index)

    def index_select(self, dim: int, index: Any) -> Variable:
        """Same as ``lampy.index_select``."""
        return _ops.index_select(self, dim, index)

    def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Variable, ...]:
        """PyTorch's ``split``: pieces of ``split_size`` along ``dim`` (the last may be
        smaller), or of the sizes in a list. (numpy arrays have no ``split`` method;
        ``lampy.split(x, n)`` is numpy's function, ``n`` equal sections.)

        Raises:
            LampyValueError: if a size is negative, or the sizes do not add up to the axis.
        """
        ax = axis_index("split", "dim", dim, self.shape)
        n = self.shape[ax] if self.ndim else 1
        if is_int(split_size_or_sections):
            step = operator.index(split_size_or_sections)
            if step < 1 and not (step == 0 and n == 0):
                raise LampyValueError(
                    f"split: split_size must be at least 1, got {step} (PyTorch's split "
                    "takes the size of each piece; x.chunk(k) gives k pieces)."
                )
            cuts = list(range(step, n, step)) if step else []
        else:
            sizes = [operator.index(k) for k in split_size_or_sections]
            if any(k < 0 for k in sizes) or sum(sizes) != n:
                raise LampyValueError(
                    f"split: the sizes {sizes} must be >= 0 and add up to {n}, the length of "
                    f"dim {dim} of a Variable of shape {self.shape}."
                )
            cuts = list(itertools.accumulate(sizes))[:-1]
        return tuple(_ops.split(self, cuts, axis=ax))

    def sort(self, *args: Any, **kwargs: Any) -> NoReturn:
        """Raises: numpy's ``sort`` sorts in place (Variables are immutable) and PyTorch's
        returns values and indices; the message shows both ways.

        Raises:
            AmbiguousMethodError: always.
        """
        raise AmbiguousMethodError(
            ambiguous(
                "sort(...)",
                self.shape,
                "numpy sorts the array in place and returns None (a Variable cannot "
                "change), PyTorch returns (values, indices)",
                numpy="x = lampy.sort(x, axis=-1)",
                torch="i = x.argsort(dim=-1, descending=False); "
                "values = lampy.take_along_axis(x, i, dim=-1)",
            )
        )

    def __setitem__(self, index: Any, value: Any) -> NoReturn:
        raise LampyTypeError(
            f"x[...] = ...: a Variable (shape {self.shape}) is immutable, so that the graph "
            "that read it stays right. Make a new Variable: x.masked_fill(mask, value) "
            "for `x[mask] = value`, lampy.where(mask, new, x) for values from another "
            "array; for a param's values (initialisation), write in place with "
            "`with lampy.in_place([p]) as (a,): a[...] = ...` or lampy.nn.init.*_."
        )

    @property
    def itemsize(self) -> int:
        """Bytes per element, as ``numpy.ndarray.itemsize`` and PyTorch's ``itemsize``."""
        return int(self.value.dtype.itemsize)

    @property
    def nbytes(self) -> int:
        """Bytes of the value, as ``numpy.ndarray.nbytes`` and PyTorch's ``nbytes``."""
        return int(self.size) * self.itemsize

    @property
    def device(self) -> str:
        """``"cpu"``: lampy runs on numpy (``numpy.ndarray.device`` says so too)."""
        return "cpu"

    @property
    def real(self: _V) -> _V:
        """This Variable itself: lampy's Variables hold real numbers."""
        return self

    def conj(self: _V) -> _V:
        """This Variable itself: the conjugate of a real number is itself."""
        return self

    # ------------------------------------- PyTorch's tensor methods: autograd and dtypes
    @property
    def requires_grad(self) -> bool:
        """Whether gradients flow to this Variable: ``needs_grad``, PyTorch's name."""
        return self.needs_grad

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
            if isinstance(a, str) and not is_dtype_name(a):
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


def _check_ndim(name: str, ndim: int, *operands: Any) -> None:
    shapes = [np.shape(x) for x in operands]
    if any(len(s) != ndim for s in shapes):
        raise ShapeError(
            f"{name}: takes {ndim}-d operands, got shapes {shapes}; use x.matmul(other) "
            "(x @ other) to broadcast."
        )


def _extreme(name: str, x: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    """``x.max(...)``/``x.min(...)`` computed as ``read_extreme`` reads the call."""
    form, a, b = read_extreme(name, x.shape, args, kwargs)
    if form == "elementwise":
        return (_ops.maximum if name == "max" else _ops.minimum)(x, a)
    if form == "numpy":
        return (_ops.amax if name == "max" else _ops.amin)(x, a, **b)
    arg = _ops.argmax if name == "max" else _ops.argmin
    idx = np.asarray(arg(x, a, keepdims=True)).astype(np.int64)
    values = _ops.take_along_axis(x, idx, a)  # the gradient goes to the index, as PyTorch
    if not b:
        idx = np.squeeze(idx, a)
        values = _ops.squeeze(values, a)
    return MinMax(values, idx)


def _repeat(x: Any, args: tuple[Any, ...], kwargs: dict[str, Any]) -> Variable:
    """``x.repeat(...)`` computed as ``read_repeat`` reads the call."""
    form, a, b = read_repeat(x.shape, args, kwargs)
    return _ops.repeat(x, a, b) if form == "numpy" else _ops.tile(x, a)


# PyTorch's and numpy's names that lampy lacks: reading one raises AttributeError with
# advice (installed descriptors: a __getattr__ would slow every attribute read).
advise(VariableOperators)

__all__ = ["VariableOperators", "provide_operators"]
