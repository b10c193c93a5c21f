"""Ops over any array namespace of the array API standard (experimental, issue 29).

``import lampy.experimental.array_api as lx`` is the switch: lampy's own ops stay numpy's,
and these compute with the namespace of their operands (numpy, ``array_api_strict``,
CuPy...), through lampy's engine: the same Variables, scopes, edges, ledger and
``backward()``. Operands of one op share one namespace and one device; mixed ones are
a ``LampyTypeError`` naming the op and both namespaces (lampy never copies between
libraries or devices on its own).

- Leaves: ``param``, ``const`` (a copy of an array, in its namespace and on its device).
- Elementwise: ``add``, ``subtract``, ``multiply``, ``divide``, ``negative``, ``exp``,
  ``log``, ``sqrt``, ``tanh``.
- Reductions: ``sum``, ``mean``, ``max``, ``logsumexp``.
- Products and shapes: ``matmul``, ``reshape``, ``transpose``, ``getitem`` (basic
  indices), ``take`` (integer indices).
- Neural networks: ``linear``, ``relu``, ``cross_entropy`` (class indices).
- Optimizer: ``SGD``.
- ``operands(name, *xs)``: an op's namespace and values, for writing more ops;
  ``sum_to(g, shape)``: undo broadcasting in ``g``'s namespace.

See ``README.md`` here for the op contract and the design note "Array backends" for
what a full port would take.
"""

from lampy.experimental.array_api._elementwise import add as add
from lampy.experimental.array_api._elementwise import divide as divide
from lampy.experimental.array_api._elementwise import exp as exp
from lampy.experimental.array_api._elementwise import log as log
from lampy.experimental.array_api._elementwise import multiply as multiply
from lampy.experimental.array_api._elementwise import negative as negative
from lampy.experimental.array_api._elementwise import sqrt as sqrt
from lampy.experimental.array_api._elementwise import subtract as subtract
from lampy.experimental.array_api._elementwise import tanh as tanh
from lampy.experimental.array_api._nn import cross_entropy as cross_entropy
from lampy.experimental.array_api._nn import linear as linear
from lampy.experimental.array_api._nn import relu as relu
from lampy.experimental.array_api._operands import const as const
from lampy.experimental.array_api._operands import operands as operands
from lampy.experimental.array_api._operands import param as param
from lampy.experimental.array_api._operands import sum_to as sum_to
from lampy.experimental.array_api._optim import SGD as SGD
from lampy.experimental.array_api._products import matmul as matmul
from lampy.experimental.array_api._reductions import logsumexp as logsumexp
from lampy.experimental.array_api._reductions import max as max
from lampy.experimental.array_api._reductions import mean as mean
from lampy.experimental.array_api._reductions import sum as sum
from lampy.experimental.array_api._shape import getitem as getitem
from lampy.experimental.array_api._shape import reshape as reshape
from lampy.experimental.array_api._shape import take as take
from lampy.experimental.array_api._shape import transpose as transpose

__all__ = [
    "SGD",
    "add",
    "const",
    "cross_entropy",
    "divide",
    "exp",
    "getitem",
    "linear",
    "log",
    "logsumexp",
    "matmul",
    "max",
    "mean",
    "multiply",
    "negative",
    "operands",
    "param",
    "relu",
    "reshape",
    "sqrt",
    "subtract",
    "sum",
    "sum_to",
    "take",
    "tanh",
    "transpose",
]
