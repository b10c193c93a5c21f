"""The operators and numpy-style methods of Variable, as a mixin of their own.

`Variable` (``_variable.py``) inherits them. Each one forwards to an op function of
`lampy.ops`; those functions are provided by `lampy.ops` when it is imported
(``provide_operators``), so this engine package does not import the op library that is
built on it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from lampy._errors import LampyTypeError

if TYPE_CHECKING:
    from lampy.autograd._variable import Variable


_V = TypeVar("_V", bound="VariableOperators")


class _OpFunctions:
    """The op functions behind the operators, set once by `provide_operators`."""

    abs: Callable[..., Variable]
    add: Callable[..., Variable]
    amax: Callable[..., Variable]
    amin: Callable[..., Variable]
    argmax: Callable[..., Any]
    argmin: Callable[..., Any]
    argsort: Callable[..., Any]
    astype: Callable[..., Variable]
    clip: Callable[..., Variable]
    compress: Callable[..., Variable]
    copy: Callable[..., Variable]
    cumprod: Callable[..., Variable]
    cumsum: Callable[..., Variable]
    diagonal: Callable[..., Variable]
    divide: Callable[..., Variable]
    dot: Callable[..., Variable]
    equal: Callable[..., Any]
    getitem: Callable[..., Variable]
    greater: Callable[..., np.ndarray]
    greater_equal: Callable[..., np.ndarray]
    less: Callable[..., np.ndarray]
    less_equal: Callable[..., np.ndarray]
    matmul: Callable[..., Variable]
    matrix_transpose: Callable[..., Variable]
    mean: Callable[..., Variable]
    multiply: Callable[..., Variable]
    negative: Callable[..., Variable]
    not_equal: Callable[..., Any]
    power: Callable[..., Variable]
    prod: Callable[..., Variable]
    remainder: Callable[..., Variable]
    ravel: Callable[..., Variable]
    repeat: Callable[..., Variable]
    reshape: Callable[..., Variable]
    round: Callable[..., Variable]
    squeeze: Callable[..., Variable]
    std: Callable[..., Variable]
    subtract: Callable[..., Variable]
    sum: Callable[..., Variable]
    swapaxes: Callable[..., Variable]
    take: Callable[..., Variable]
    trace: Callable[..., Variable]
    transpose: Callable[..., Variable]
    var: Callable[..., Variable]


_ops = _OpFunctions()


def provide_operators(**functions: Callable[..., Any]) -> None:
    """Give the operators their op functions (called by `lampy.ops` on import).

    Raises:
        LampyTypeError: if a name is not an operator's function, or one is missing.
    """
    expected = set(_OpFunctions.__annotations__)
    unknown = set(functions) - expected
    if unknown:
        raise LampyTypeError(f"provide_operators: unknown names {sorted(unknown)}")
    for name, fn in functions.items():
        setattr(_ops, name, fn)
    missing = [n for n in sorted(expected) if not hasattr(_ops, n)]
    if missing:
        raise LampyTypeError(f"provide_operators: no function given for {missing}")


class VariableOperators:
    """Python operators and numpy-style methods of a Variable, forwarding to `lampy.ops`."""

    __slots__ = ()

    # Numpy defers to our reflected operators: ``ndarray * Variable`` calls __rmul__.
    __array_ufunc__ = None

    if TYPE_CHECKING:

        @property
        def value(self) -> np.ndarray: ...

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

    # numpy-style methods
    @property
    def T(self) -> Variable:
        """The transpose (axes reversed), as ``numpy.ndarray.T``."""
        return _ops.transpose(self)

    def reshape(self, *shape: Any, order: str = "C") -> Variable:
        """Same as [lampy.reshape][]; accepts ``v.reshape(2, 3)`` and ``v.reshape((2, 3))``."""
        new: Any = shape
        if len(shape) == 1 and not isinstance(shape[0], int):
            new = shape[0]
        return _ops.reshape(self, new, order=order)

    def transpose(self, *axes: Any) -> Variable:
        """Same as [lampy.transpose][]; accepts ``v.transpose(1, 0)`` and a tuple."""
        perm: Any = axes
        if len(axes) == 1 and (axes[0] is None or not isinstance(axes[0], int)):
            perm = axes[0]
        return _ops.transpose(self, perm or None)

    def sum(
        self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False
    ) -> Variable:
        """Same as [lampy.sum][] (``out`` must be None: Variables are immutable)."""
        _no_out("sum", out)
        return _ops.sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(
        self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False
    ) -> Variable:
        """Same as [lampy.mean][] (``out`` must be None: Variables are immutable)."""
        _no_out("mean", out)
        return _ops.mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

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
        return _ops.var(self, axis, dtype, ddof=ddof, keepdims=keepdims)

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
        return _ops.std(self, axis, dtype, ddof=ddof, keepdims=keepdims)

    def prod(
        self, axis: Any = None, dtype: Any = None, out: None = None, keepdims: bool = False
    ) -> Variable:
        """Same as [lampy.prod][]."""
        _no_out("prod", out)
        return _ops.prod(self, axis, dtype, keepdims=keepdims)

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
        return _ops.amax(self, axis, keepdims=keepdims, initial=initial, where=where)

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
        return _ops.amin(self, axis, keepdims=keepdims, initial=initial, where=where)

    def argmax(self, axis: Any = None, out: None = None, *, keepdims: bool = False) -> Any:
        """Same as [lampy.argmax][]: integer indices as numpy values, not a Variable."""
        _no_out("argmax", out)
        return _ops.argmax(self, axis, keepdims=keepdims)

    def argmin(self, axis: Any = None, out: None = None, *, keepdims: bool = False) -> Any:
        """Same as [lampy.argmin][]: integer indices as numpy values, not a Variable."""
        _no_out("argmin", out)
        return _ops.argmin(self, axis, keepdims=keepdims)

    def cumsum(self, axis: Any = None, dtype: Any = None, out: None = None) -> Variable:
        """Same as [lampy.cumsum][]."""
        _no_out("cumsum", out)
        return _ops.cumsum(self, axis, dtype)

    def cumprod(self, axis: Any = None, dtype: Any = None, out: None = None) -> Variable:
        """Same as [lampy.cumprod][]."""
        _no_out("cumprod", out)
        return _ops.cumprod(self, axis, dtype)

    def take(
        self, indices: Any, axis: Any = None, out: None = None, mode: str = "raise"
    ) -> Variable:
        """Same as [lampy.take][]."""
        _no_out("take", out)
        return _ops.take(self, indices, axis, mode=mode)

    def compress(self, condition: Any, axis: Any = None, out: None = None) -> Variable:
        """Same as [lampy.compress][]."""
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

    def argsort(self, axis: int = -1, kind: Any = None, *, stable: Any = None) -> Any:
        """Same as [lampy.argsort][]: integer indices as a numpy array, not a Variable.

        (``ndarray.sort`` sorts in place, so Variables have no ``sort`` method; use
        [lampy.sort][].)
        """
        return _ops.argsort(self, axis, kind, stable=stable)

    @property
    def mT(self) -> Variable:
        """The matrix transpose (last two axes swapped), as ``numpy.ndarray.mT``."""
        return _ops.matrix_transpose(self)

    def ravel(self, order: str = "C") -> Variable:
        """Same as [lampy.ravel][]."""
        return _ops.ravel(self, order)

    def flatten(self, order: str = "C") -> Variable:
        """Same as [lampy.ravel][] (values are immutable, so a copy and a view are alike)."""
        return _ops.ravel(self, order)

    def squeeze(self, axis: Any = None) -> Variable:
        """Same as [lampy.squeeze][]."""
        return _ops.squeeze(self, axis)

    def swapaxes(self, axis1: int, axis2: int) -> Variable:
        """Same as [lampy.swapaxes][]."""
        return _ops.swapaxes(self, axis1, axis2)

    def repeat(self, repeats: Any, axis: Any = None) -> Variable:
        """Same as [lampy.repeat][]."""
        return _ops.repeat(self, repeats, axis)

    def __abs__(self) -> Variable:
        return _ops.abs(self)

    def astype(self, dtype: Any, copy: bool = True) -> Variable:
        """Same as [lampy.astype][]: a float dtype keeps the gradient, others give a constant."""
        return _ops.astype(self, dtype, copy=copy)

    def copy(self) -> Variable:
        """Same as [lampy.copy][]."""
        return _ops.copy(self)

    def tolist(self) -> Any:
        """The value as nested Python lists."""
        return self.value.tolist()

    def clip(self, min: Any = None, max: Any = None) -> Variable:
        """Same as [lampy.clip][] with ``min`` and ``max`` bounds."""
        return _ops.clip(self, min=min, max=max)

    def round(self, decimals: int = 0) -> Variable:
        """Same as [lampy.round][] (zero gradient)."""
        return _ops.round(self, decimals)

    def dot(self, b: Any) -> Variable:
        """Same as [lampy.dot][]."""
        return _ops.dot(self, b)

    def trace(self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None) -> Variable:
        """Same as [lampy.trace][]."""
        return _ops.trace(self, offset, axis1, axis2, dtype)

    def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable:
        """Same as [lampy.diagonal][]."""
        return _ops.diagonal(self, offset, axis1, axis2)


def _no_out(name: str, out: Any) -> None:
    if out is not None:
        raise LampyTypeError(
            f"{name}: out= is not supported, Variables are immutable; use the returned Variable."
        )


__all__ = ["VariableOperators", "provide_operators"]
