"""The table of ``lampy.Variable``'s operators and methods (``METHODS``), and ``install``,
which puts them on ``Variable``: called once, by ``lampy/__init__.py``.

``Variable`` (``lampy.autograd``) sits below the op libraries built on it, so its
methods are installed from here, one floor above ``lampy.ops`` and
``lampy.nn.functional``. Three kinds of entry:

- the op itself, where the method takes the op's arguments after the first: ``x * y``
  is ``lampy.multiply(x, y)`` and ``x.tanh()`` is ``lampy.tanh(x)``, with no frame in
  between (``OPS``);
- a one-line call of the op for a method whose arguments have other names or an
  ``out=`` (numpy's, which must be None), or that swaps its operands (``__radd__``)
  (``Forwarding``, below);
- a method that translates its arguments, numpy's and PyTorch's readings of a shared
  name among them (``lampy._translating.Translating``).

Type checkers read the signatures from ``lampy.autograd._operators.VariableMethods``;
``tests/autograd/test_methods_table.py`` checks that every installed method has its
declared signature.
"""

from __future__ import annotations

from collections.abc import Callable
from types import FunctionType
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy import ops
from lampy._errors import LampyTypeError
from lampy._shared_names import no_out
from lampy._translating import Translating
from lampy.autograd import Variable
from lampy.nn import functional as F
from lampy.ops import add, divide, matmul, multiply, power, remainder, subtract

if TYPE_CHECKING:
    from lampy.ops import TopK

    # Type checkers read the methods below as Variable's own (``self`` is a Variable, and
    # each is checked against its declaration in ``VariableMethods``).
    _MethodsOf = Variable
else:
    _MethodsOf = object

OPS: dict[str, Callable[..., Any] | property] = {
    # Operators: numpy broadcasting, arrays and scalars wrapped as constants.
    "__add__": add,
    "__sub__": subtract,
    "__mul__": multiply,
    "__truediv__": divide,
    "__pow__": power,
    "__mod__": remainder,
    "__matmul__": matmul,
    "__neg__": ops.negative,
    "__abs__": ops.abs,
    "__getitem__": ops.getitem,
    # Comparisons give plain boolean arrays (they have no gradient), as lampy.equal etc.
    "__eq__": ops.equal,
    "__ne__": ops.not_equal,
    "__lt__": ops.less,
    "__le__": ops.less_equal,
    "__gt__": ops.greater,
    "__ge__": ops.greater_equal,
    "T": property(ops.transpose, doc="The transpose (axes reversed), as ``numpy.ndarray.T``."),
    "mT": property(
        ops.matrix_transpose,
        doc="The matrix transpose (last two axes swapped), as ``numpy.ndarray.mT``.",
    ),
    "real": property(ops.real, doc="The real parts, as ``numpy.ndarray.real``."),
    "imag": property(ops.imag, doc="The imaginary parts, as ``numpy.ndarray.imag``."),
    # numpy's methods
    "conj": ops.conj,
    "conjugate": ops.conj,
    "copy": ops.copy,
    "diagonal": ops.diagonal,
    "dot": ops.dot,
    "logsumexp": ops.logsumexp,
    "ravel": ops.ravel,
    "round": ops.round,
    "squeeze": ops.squeeze,
    "swapaxes": ops.swapaxes,
    "trace": ops.trace,
    # PyTorch's: elementwise
    "abs": ops.abs,
    "angle": ops.angle,
    "cos": ops.cos,
    "exp": ops.exp,
    "expm1": ops.expm1,
    "log": ops.log,
    "log1p": ops.log1p,
    "neg": ops.negative,
    "reciprocal": ops.reciprocal,
    "sign": ops.sign,
    "sin": ops.sin,
    "sqrt": ops.sqrt,
    "square": ops.square,
    "tanh": ops.tanh,
    "masked_fill": ops.masked_fill,
    "clone": ops.copy,
    "sigmoid": F.sigmoid,
    "softmax": F.softmax,
    "log_softmax": F.log_softmax,
}
"""The methods that are their op: ``x.exp()`` calls ``lampy.exp(x)`` itself."""


class Forwarding(_MethodsOf):
    """Not a class to use: the namespace of the methods that call their op with the
    arguments renamed, reordered or checked (``out`` must be None), which ``install``
    puts on ``lampy.Variable``."""

    def __radd__(self, other: Any) -> Variable:
        return add(other, self)

    def __rsub__(self, other: Any) -> Variable:
        return subtract(other, self)

    def __rmul__(self, other: Any) -> Variable:
        return multiply(other, self)

    def __rtruediv__(self, other: Any) -> Variable:
        return divide(other, self)

    def __rpow__(self, other: Any) -> Variable:
        return power(other, self)

    def __rmod__(self, other: Any) -> Variable:
        return remainder(other, self)

    def __rmatmul__(self, other: Any) -> Variable:
        return matmul(other, self)

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
        return ops.sum(self, axis, dtype, keepdims, dim=dim, keepdim=keepdim)

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
        return ops.mean(self, axis, dtype, keepdims, dim=dim, keepdim=keepdim)

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
        return ops.prod(self, axis, dtype, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def amax(
        self,
        axis: Any = None,
        *,
        keepdims: bool = False,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.amax``."""
        return ops.amax(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def amin(
        self,
        axis: Any = None,
        *,
        keepdims: bool = False,
        dim: Any = None,
        keepdim: bool | None = None,
    ) -> Variable:
        """Same as ``lampy.amin``."""
        return ops.amin(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

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
        return ops.argmax(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

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
        return ops.argmin(self, axis, keepdims=keepdims, dim=dim, keepdim=keepdim)

    def cumsum(
        self, axis: Any = None, dtype: Any = None, out: None = None, *, dim: Any = None
    ) -> Variable:
        """Same as ``lampy.cumsum``."""
        no_out("cumsum", out)
        return ops.cumsum(self, axis, dtype, dim=dim)

    def cumprod(
        self, axis: Any = None, dtype: Any = None, out: None = None, *, dim: Any = None
    ) -> Variable:
        """Same as ``lampy.cumprod``."""
        no_out("cumprod", out)
        return ops.cumprod(self, axis, dtype, dim=dim)

    def take(
        self, indices: Any, axis: Any = None, out: None = None, mode: str = "raise"
    ) -> Variable:
        """Same as ``lampy.take``."""
        no_out("take", out)
        return ops.take(self, indices, axis, mode=mode)

    def compress(self, condition: Any, axis: Any = None, out: None = None) -> Variable:
        """Same as ``lampy.compress``."""
        no_out("compress", out)
        return ops.compress(condition, self, axis)

    # lampy.ops.TopK; the declaration's TopK is its twin, with the same fields (the engine
    # does not import lampy.ops)
    def topk(  # type: ignore[override]
        self, k: int, dim: int = -1, largest: bool = True, sorted: bool = True
    ) -> TopK:
        """Same as ``lampy.topk``: the values (a Variable) and their indices."""
        return ops.topk(self, k, dim, largest, sorted)

    def astype(self, dtype: Any, copy: bool = True) -> Variable:
        """Same as ``lampy.astype``: a float dtype keeps the gradient, others give a constant."""
        return ops.astype(self, dtype, copy=copy)

    def clip(self, min: Any = None, max: Any = None) -> Variable:
        """Same as ``lampy.clip`` with ``min`` and ``max`` bounds."""
        return ops.clip(self, min=min, max=max)

    def pow(self, exponent: Any) -> Variable:
        """Same as ``lampy.power`` (``x ** exponent``)."""
        return ops.power(self, exponent)

    def clamp(self, min: Any = None, max: Any = None) -> Variable:
        """Same as ``lampy.clip`` with ``min`` and ``max`` bounds (PyTorch's name)."""
        return ops.clip(self, min=min, max=max)

    def add(self, other: Any) -> Variable:
        """Same as ``lampy.add`` (``x + other``)."""
        return ops.add(self, other)

    def sub(self, other: Any) -> Variable:
        """Same as ``lampy.subtract`` (``x - other``)."""
        return ops.subtract(self, other)

    def mul(self, other: Any) -> Variable:
        """Same as ``lampy.multiply`` (``x * other``)."""
        return ops.multiply(self, other)

    def div(self, other: Any) -> Variable:
        """Same as ``lampy.divide`` (``x / other``)."""
        return ops.divide(self, other)

    def matmul(self, other: Any) -> Variable:
        """Same as ``lampy.matmul`` (``x @ other``)."""
        return ops.matmul(self, other)

    def relu(self) -> Variable:
        """Same as ``lampy.nn.functional.relu``."""
        return F.relu(self)

    def unsqueeze(self, dim: int) -> Variable:
        """Same as ``lampy.expand_dims``: a new axis of length 1 at ``dim``."""
        return ops.expand_dims(self, dim)

    def view_as(self, other: Any) -> Variable:
        """Same as ``lampy.reshape`` to ``other``'s shape."""
        return ops.reshape(self, np.shape(other))

    def reshape_as(self, other: Any) -> Variable:
        """Same as ``lampy.reshape`` to ``other``'s shape."""
        return ops.reshape(self, np.shape(other))

    def expand_as(self, other: Any) -> Variable:
        """Same as ``lampy.broadcast_to`` to ``other``'s shape."""
        return ops.broadcast_to(self, np.shape(other))

    def gather(self, dim: int, index: Any) -> Variable:
        """Same as ``lampy.gather``."""
        return ops.gather(self, dim, index)

    def index_select(self, dim: int, index: Any) -> Variable:
        """Same as ``lampy.index_select``."""
        return ops.index_select(self, dim, index)

    def double(self) -> Variable:
        """Same as ``lampy.astype`` to float64."""
        return ops.astype(self, np.float64)

    def half(self) -> Variable:
        """Same as ``lampy.astype`` to float16."""
        return ops.astype(self, np.float16)

    def float(self) -> Variable:
        """Same as ``lampy.astype`` to float32."""
        return ops.astype(self, np.float32)

    def type_as(self, other: Any) -> Variable:
        """Same as ``lampy.astype`` to ``other``'s dtype."""
        return ops.astype(self, other.dtype if hasattr(other, "dtype") else np.result_type(other))


def _methods_of(namespace: type) -> dict[str, Callable[..., Any] | property]:
    return {
        name: m for name, m in vars(namespace).items() if isinstance(m, FunctionType | property)
    }


METHODS: dict[str, Callable[..., Any] | property] = {
    **OPS,
    **_methods_of(Forwarding),
    **_methods_of(Translating),
}
"""Every operator and method ``install`` puts on ``lampy.Variable``, by name."""


def install() -> None:
    """Put the methods of ``METHODS`` on ``lampy.Variable`` (``lampy/__init__.py`` calls it
    once, after importing the op libraries).

    Raises:
        LampyTypeError: if ``Variable`` defines one of these names itself (it would be
            replaced silently).
    """
    own = vars(Variable)
    clash = sorted(n for n, m in METHODS.items() if own.get(n, m) is not m)
    if clash:
        raise LampyTypeError(
            f"lampy._methods.install: Variable defines {clash} itself; remove them from "
            "METHODS or from the class."
        )
    for name, method in METHODS.items():
        setattr(Variable, name, method)


__all__ = ["METHODS", "OPS", "Forwarding", "install"]
