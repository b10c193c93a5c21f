"""Variable's operators and methods: their declarations, and those that call no op.

``lampy.Variable`` (``_variable.py``) inherits ``VariableOperators``. Most of its
operators and methods are ops of ``lampy.ops`` and ``lampy.nn.functional`` (``x * y`` is
``lampy.multiply(x, y)`` itself, ``x.exp()`` is ``lampy.exp(x)``) or translate their
arguments for one (``x.sum(dim=1)``, ``x.view(2, 3)``...). Those packages are built on
this engine, so the table of these methods, ``lampy._methods.METHODS``, sits one floor
above them, and ``lampy/__init__.py`` installs it on ``Variable`` once. Type checkers
read their signatures here, in ``VariableMethods``, a class of declarations that
``VariableOperators`` inherits for them only; a test checks that the installed methods
have these names and signatures.

What is defined here calls no op: ``tolist``, ``all``, ``any``, ``nonzero``, ``sort``,
``dim``, ``numel``, ``cpu``...; and the advice for PyTorch's and numpy's names that lampy
does not have (``lampy._shared_names.advise``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple, NoReturn, TypeVar

import numpy as np

from lampy._errors import AmbiguousMethodError, LampyTypeError
from lampy._shared_names import advise, ambiguous, axis_or_dim, no_out

if TYPE_CHECKING:
    from lampy.autograd._variable import Operand, Variable

    # Declarations for type checkers only (at run time the installed functions are the
    # methods); tests/autograd/test_methods_table.py reads them from this file's source.
    class TopK(NamedTuple):
        """``lampy.TopK`` (what ``x.topk`` returns) as type checkers see it here: the engine
        does not import ``lampy.ops``, which is built on it. The same fields (a test checks)."""

        values: Variable
        indices: np.ndarray

    class VariableMethods:
        """The signatures of the operators and methods ``lampy._methods`` installs on
        ``lampy.Variable``. Each is an op of ``lampy.ops`` or ``lampy.nn.functional``
        itself, or a function of ``lampy._methods`` or ``lampy._translating`` that calls
        one; their docstrings are there."""

        __slots__ = ()

        def __add__(self, other: Any) -> Variable: ...
        def __radd__(self, other: Any) -> Variable: ...
        def __sub__(self, other: Any) -> Variable: ...
        def __rsub__(self, other: Any) -> Variable: ...
        def __mul__(self, other: Any) -> Variable: ...
        def __rmul__(self, other: Any) -> Variable: ...
        def __truediv__(self, other: Any) -> Variable: ...
        def __rtruediv__(self, other: Any) -> Variable: ...
        def __pow__(self, other: Any) -> Variable: ...
        def __rpow__(self, other: Any) -> Variable: ...
        def __mod__(self, other: Any) -> Variable: ...
        def __rmod__(self, other: Any) -> Variable: ...
        def __matmul__(self, other: Any) -> Variable: ...
        def __rmatmul__(self, other: Any) -> Variable: ...
        def __neg__(self) -> Variable: ...
        def __getitem__(self, index: Any) -> Variable: ...
        def __eq__(self, other: object) -> Any: ...
        def __ne__(self, other: object) -> Any: ...
        def __lt__(self, other: Any) -> np.ndarray: ...
        def __le__(self, other: Any) -> np.ndarray: ...
        def __gt__(self, other: Any) -> np.ndarray: ...
        def __ge__(self, other: Any) -> np.ndarray: ...
        @property
        def T(self) -> Variable: ...
        @property
        def mT(self) -> Variable: ...
        def reshape(self, *shape: Any, order: str = "C") -> Variable: ...
        def transpose(
            self, *axes: Any, dim0: int | None = None, dim1: int | None = None
        ) -> Variable: ...
        def sum(
            self,
            axis: Any = None,
            dtype: Any = None,
            out: None = None,
            keepdims: bool = False,
            *,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Variable: ...
        def mean(
            self,
            axis: Any = None,
            dtype: Any = None,
            out: None = None,
            keepdims: bool = False,
            *,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Variable: ...
        def var(self, *args: Any, **kwargs: Any) -> Variable: ...
        def std(self, *args: Any, **kwargs: Any) -> Variable: ...
        def prod(
            self,
            axis: Any = None,
            dtype: Any = None,
            out: None = None,
            keepdims: bool = False,
            *,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Variable: ...
        def max(self, *args: Any, **kwargs: Any) -> Any: ...
        def min(self, *args: Any, **kwargs: Any) -> Any: ...
        def amax(
            self,
            axis: Any = None,
            *,
            keepdims: bool = False,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Variable: ...
        def amin(
            self,
            axis: Any = None,
            *,
            keepdims: bool = False,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Variable: ...
        def argmax(
            self,
            axis: Any = None,
            out: None = None,
            *,
            keepdims: bool = False,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Any: ...
        def argmin(
            self,
            axis: Any = None,
            out: None = None,
            *,
            keepdims: bool = False,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Any: ...
        def logsumexp(
            self,
            axis: Any = None,
            *,
            keepdims: bool = False,
            dim: Any = None,
            keepdim: bool | None = None,
        ) -> Variable: ...
        def cumsum(
            self, axis: Any = None, dtype: Any = None, out: None = None, *, dim: Any = None
        ) -> Variable: ...
        def cumprod(
            self, axis: Any = None, dtype: Any = None, out: None = None, *, dim: Any = None
        ) -> Variable: ...
        def take(
            self, indices: Any, axis: Any = None, out: None = None, mode: str = "raise"
        ) -> Variable: ...
        def compress(self, condition: Any, axis: Any = None, out: None = None) -> Variable: ...
        def argsort(
            self,
            axis: int | None = -1,
            kind: Any = None,
            *,
            stable: Any = None,
            dim: int | None = None,
            descending: bool = False,
        ) -> Any: ...
        def topk(
            self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
        ) -> TopK: ...
        def ravel(self, order: str = "C") -> Variable: ...
        def flatten(
            self, start_dim: int | str = 0, end_dim: int = -1, *, order: str = "C"
        ) -> Variable: ...
        def squeeze(self, axis: Any = None, *, dim: Any = None) -> Variable: ...
        def swapaxes(self, axis1: int, axis2: int) -> Variable: ...
        def repeat(self, *args: Any, **kwargs: Any) -> Variable: ...
        def __abs__(self) -> Variable: ...
        def astype(self, dtype: Any, copy: bool = True) -> Variable: ...
        def copy(self) -> Variable: ...
        def clip(self, min: Any = None, max: Any = None) -> Variable: ...
        def round(self, decimals: int = 0) -> Variable: ...
        def dot(self, b: Operand) -> Variable: ...
        def trace(
            self, offset: int = 0, axis1: int = 0, axis2: int = 1, dtype: Any = None
        ) -> Variable: ...
        def diagonal(self, offset: int = 0, axis1: int = 0, axis2: int = 1) -> Variable: ...
        @property
        def real(self) -> Variable: ...
        @property
        def imag(self) -> Variable: ...
        def conj(self) -> Variable: ...
        def conjugate(self) -> Variable: ...
        def angle(self, deg: bool = False) -> Variable: ...
        def exp(self) -> Variable: ...
        def log(self) -> Variable: ...
        def log1p(self) -> Variable: ...
        def expm1(self) -> Variable: ...
        def sqrt(self) -> Variable: ...
        def square(self) -> Variable: ...
        def tanh(self) -> Variable: ...
        def sin(self) -> Variable: ...
        def cos(self) -> Variable: ...
        def sign(self) -> Variable: ...
        def reciprocal(self) -> Variable: ...
        def abs(self) -> Variable: ...
        def neg(self) -> Variable: ...
        def pow(self, exponent: Any) -> Variable: ...
        def clamp(self, min: Any = None, max: Any = None) -> Variable: ...
        def add(self, other: Any) -> Variable: ...
        def sub(self, other: Any) -> Variable: ...
        def mul(self, other: Any) -> Variable: ...
        def div(self, other: Any) -> Variable: ...
        def matmul(self, other: Any) -> Variable: ...
        def mm(self, other: Any) -> Variable: ...
        def bmm(self, other: Any) -> Variable: ...
        def masked_fill(self, mask: Any, value: Operand) -> Variable: ...
        def sigmoid(self) -> Variable: ...
        def relu(self) -> Variable: ...
        def softmax(self, dim: int) -> Variable: ...
        def log_softmax(self, dim: int) -> Variable: ...
        def unsqueeze(self, dim: int) -> Variable: ...
        def permute(self, *dims: Any) -> Variable: ...
        def view(self, *shape: Any) -> Variable: ...
        def view_as(self, other: Any) -> Variable: ...
        def reshape_as(self, other: Any) -> Variable: ...
        def expand(self, *sizes: Any) -> Variable: ...
        def expand_as(self, other: Any) -> Variable: ...
        def t(self) -> Variable: ...
        def chunk(self, chunks: int, dim: int = 0) -> tuple[Variable, ...]: ...
        def gather(self, dim: int, index: Any) -> Variable: ...
        def index_select(self, dim: int, index: Any) -> Variable: ...
        def split(self, split_size_or_sections: Any, dim: int = 0) -> tuple[Variable, ...]: ...
        def clone(self) -> Variable: ...
        def double(self) -> Variable: ...
        def half(self) -> Variable: ...
        def type_as(self, other: Any) -> Variable: ...
        def to(
            self, *args: Any, dtype: Any = None, device: Any = None, copy: bool = False
        ) -> Variable: ...
        def float(self) -> Variable: ...

    _Declared = VariableMethods
else:
    _Declared = object


_V = TypeVar("_V", bound="VariableOperators")


class VariableOperators(_Declared):
    """Python operators and numpy-style methods of a Variable: declared in
    ``VariableMethods``, installed by ``lampy._methods``; those below call no op."""

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

    def __pos__(self: _V) -> _V:
        return self

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

    def tolist(self) -> Any:
        """The value as nested Python lists."""
        return self.value.tolist()

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
    def requires_grad(self) -> bool:
        """Whether gradients flow to this Variable: ``needs_grad``, PyTorch's name."""
        return self.needs_grad

    def dim(self) -> int:
        """The number of dimensions, ``ndim``."""
        return self.ndim

    def numel(self) -> int:
        """The number of elements, ``size``."""
        return self.size

    def cpu(self: _V) -> _V:
        """This Variable itself: lampy runs on numpy, on the CPU."""
        return self

    def contiguous(self: _V) -> _V:
        """This Variable itself (values are immutable, so their layout does not matter)."""
        return self


# PyTorch's and numpy's names that lampy lacks: reading one raises AttributeError with
# advice (installed descriptors: a __getattr__ would slow every attribute read).
advise(VariableOperators)

__all__ = ["TopK", "VariableMethods", "VariableOperators"]
