"""The toolkit for writing ops: everything lampy's own op families import from the engine,
declared in one place.

lampy's ops (``lampy.ops``, ``lampy.linalg``, ``lampy.special``, ``lampy.stats``,
``lampy.signal``, ``lampy.nn.functional``) are written with these names and nothing
else from the engine, so an op written outside lampy with them is as fast and behaves
as the built-in ones. They are the very functions lampy uses (re-exported, not wrapped).
See "Writing your own op" in the docs for a worked example.

Recording an op:

- ``op(name, value, *params)``: record an op's value and its inputs' closures; returns
  the output ``Variable``, owned by the current scope.
- ``Variable``: the immutable record of a value in the graph. ``Operand`` is what ops
  accept (a Variable, an array-like or a number).
- ``param(value)`` and ``const(value)``: a Variable that needs a gradient, and one that
  does not.
- ``Backward``: the type of an ``(g, out) -> None`` closure; ``Param``: an input paired
  with its closure (what ``param_of`` returns).

- ``frozen(value, shape=None)``: an op's fresh result made read-only, so that ``op``
  takes it (or a view of it) without a copy, and charges the memory of such a view to
  the op even when no input needs a gradient (call it just before ``op``).

Reading operands (Variables, arrays, Python numbers alike):

- ``value_of(x, saved=True, name="a lampy op")``: the numpy value of an operand;
  ``saved=False`` when no closure keeps it. ``name`` is the op's, which the error for an
  operand that is not numbers starts with (read only when raising):
  ``value_of(x, name="rms")``, or ``value_of(x, False, "rms")`` with ``saved`` (both
  positional, one bytecode fewer than keywords). ``values_of(x1, x2, saved1=True,
  saved2=True, name=...)``: two values, promoted as numpy 2 does.
- ``array_of(name, x)``: the value as an ndarray (a list of Variables stacked).
- ``needs_grad(x)``: whether ``x`` is a Variable that needs a gradient.
- ``apply_unary(ufunc, a, name)`` and ``apply_binary(name, ufunc, a, b)``: a ufunc on
  values, with the output checked against memory budgets and numpy's errors made
  lampy's.
- ``reserve_output(name, shape, dtype)``: check an output's size against the current
  scope's budget before allocating it.

Pairing inputs with their gradients (each returns None when the input needs none, and
``op`` skips None):

- ``param_of(x, fn)``: ``x`` with a closure ``fn(g, out)`` that adds into ``out``.
- ``contrib_of(x, fn, fresh=True)``: ``x`` with ``fn(g)`` returning its contribution
  (broadcast axes summed for you; a fresh array becomes ``x``'s buffer without a copy).
- ``contrib_with(x, fn, saved, fresh=True)``: the same, ``fn(g, saved)`` reading a value
  the engine keeps for it.
- ``contribution(fn, fresh=True)``: a contribution closure for ``x.zip_backward``;
  ``Contribution`` is its type.
- ``sign_or_zero(a)``: ``sign(a)`` with 0 where ``a`` is nan (the gradient of ``abs``).
- ``times(g, c)`` and ``over(g, c)``: ``g * c`` and ``g / c``, in place where ``g`` may
  be written.
- ``unbroadcast(g, shape)``: sum ``g`` back to an input's ``shape`` (the one helper that
  undoes broadcasting); ``accumulate(out, g)``: ``out += unbroadcast(g, out.shape)``.

Differentiable backward rules (for ``create_graph=True``, nested ``lampy.grad``,
``lampy.hessian``...; an op without one raises ``NoSecondOrderError`` there):

- ``contrib_of(x, fn, vjp=...)`` and ``param_of(x, fn, vjp=...)``: ``vjp(g, out)`` (of
  type ``Vjp``) is the contribution computed with lampy ops (``g`` a Variable or a numpy
  constant, ``out`` the op's node); ``NoSecondOrderError`` is what a pass raises for an
  op without one. A vjp keeps no array its numpy closure does not (memory accounting
  reads the closure): operands' nodes, shapes and constants besides.
- ``node_of(x)``: what a vjp keeps of an operand (its node, or None for a constant);
  ``graph_value(node, value)`` gives the saved value back as a Variable of the graph
  (``lifted(out, value)`` for the op's own value).
- ``sum_to(g, shape)``: ``unbroadcast`` for vjps (recorded).
- ``saved_vjp(name, fn, source, rule=None)``: the same for a ``contrib_with`` edge,
  declared once per op.

Complex values (PyTorch's convention: a complex input's gradient is ``dL/dRe + i dL/dIm``):

- ``complex_rule(kind, *names)``: declare that ops ``names`` take complex values:
  ``HOLOMORPHIC`` (closures written for reals, conjugated by the engine:
  ``conj(fn(conj(g)))``), ``LINEAR`` (real coefficients: right as they are) or ``OWN``
  (non-holomorphic, closures written for complex values). An op not declared refuses a
  complex value that needs a gradient (``real_result`` raises, and so does ``op``).
- ``no_complex_into_real(name, what, target, value)``: refuse writing a complex value
  into a real array (numpy would drop its imaginary part).
- ``real_operands(name, *operands)``: refuse complex inputs needing a gradient in an op
  whose value is real but whose rule holds for real inputs only.
- ``real_part(d, dtype)``: a contribution for an input of ``dtype``, its real part if
  the input is real.

Sharing work between closures:

- ``SharedInBackward(fn)``: a value computed once per backward pass, on first use.
- ``Lazy(fn)``: a value computed once, on first use, and kept.

Axes:

- ``Axis``: the type of an ``axis`` argument (None, an int or a tuple of ints).
- ``normalize_axis(name, axis, ndim)``: ``axis`` as a sorted tuple of non-negative axes
  (None is every axis); a ``LampyTypeError`` or ``ShapeError`` naming op ``name``.
- ``one_axis(name, axis, ndim, what="axis")``: one int axis, non-negative.
- ``single_axis(name, axis, ndim)``: None or one int axis (a 0-d array counts as 1-d).
- ``expand_reduced(g, axes, keepdims)``: a reduction's ``g`` with its reduced axes put
  back, so it broadcasts to the input.
- ``axis_or_dim(name, axis, dim, default)``: numpy's ``axis=`` or PyTorch's ``dim=``.

Checks and messages:

- ``real_result(name, value, *operands)``: refuse a complex result of real operands
  that needs a gradient (lampy's gradients are real).
- ``broadcast_error(name, a, b)``: the error for two shapes that do not broadcast.
- ``not_numbers(name, x, a)``: the error for an operand ``x`` (numpy value ``a``) of op
  ``name`` that is not numbers (what ``value_of`` raises).

Grad mode and recomputation:

- ``GRAD_ENABLED``: the context variable ``no_grad`` sets (``GRAD_ENABLED.get()`` on a
  hot path); ``is_grad_enabled()`` and ``no_grad()`` are its public faces.
- ``replayable(rng)``: a generator whose draws ``lampy.remat`` replays when it
  recomputes; ``recomputing()``: whether the code runs inside such a recomputation.

Arrays of other namespaces (experimental, ``lampy.experimental.array_api``):

- ``namespace_op(name, value, *params)``: ``op`` for a value that may be an array of
  another array API namespace (``array_api_strict``, CuPy...); its params are
  contributions returning each input's gradient in its namespace, shape and dtype.
- ``namespace_leaf(what, x, needs_grad)``: a param (``what="param"``) or a constant
  holding a copy of such an array.
- ``replace_values(params, values)``: new values for leaves, the functional twin of
  ``lampy.in_place`` (an optimizer's update where arrays may not be written in place).

Signatures:

- ``NO_VALUE``: the default of a keyword whose absence means something (numpy's
  ``np._NoValue``).
"""

from lampy._errors import NoSecondOrderError as NoSecondOrderError
from lampy.autograd._complex import HOLOMORPHIC as HOLOMORPHIC
from lampy.autograd._complex import LINEAR as LINEAR
from lampy.autograd._complex import OWN as OWN
from lampy.autograd._complex import complex_rule as complex_rule
from lampy.autograd._complex import real_part as real_part
from lampy.autograd._grad_mode import GRAD_ENABLED as GRAD_ENABLED
from lampy.autograd._grad_mode import is_grad_enabled as is_grad_enabled
from lampy.autograd._grad_mode import no_grad as no_grad
from lampy.autograd._higher import Vjp as Vjp
from lampy.autograd._higher import graph_value as graph_value
from lampy.autograd._higher import lifted as lifted
from lampy.autograd._higher import saved_vjp as saved_vjp
from lampy.autograd._higher import sum_to as sum_to
from lampy.autograd._leaves import const as const
from lampy.autograd._leaves import param as param
from lampy.autograd._namespaced import namespace_leaf as namespace_leaf
from lampy.autograd._namespaced import namespace_op as namespace_op
from lampy.autograd._namespaced import replace_values as replace_values
from lampy.autograd._remat import recomputing as recomputing
from lampy.autograd._remat import replayable as replayable
from lampy.autograd._shared import Lazy as Lazy
from lampy.autograd._shared import SharedInBackward as SharedInBackward
from lampy.autograd._shared_names import axis_or_dim as axis_or_dim
from lampy.autograd._unbroadcast import Contribution as Contribution
from lampy.autograd._unbroadcast import accumulate as accumulate
from lampy.autograd._unbroadcast import contribution as contribution
from lampy.autograd._unbroadcast import unbroadcast as unbroadcast
from lampy.autograd._variable import Backward as Backward
from lampy.autograd._variable import Operand as Operand
from lampy.autograd._variable import Param as Param
from lampy.autograd._variable import Variable as Variable
from lampy.autograd._variable import op as op
from lampy.opkit._axes import Axis as Axis
from lampy.opkit._axes import expand_reduced as expand_reduced
from lampy.opkit._axes import normalize_axis as normalize_axis
from lampy.opkit._axes import one_axis as one_axis
from lampy.opkit._axes import single_axis as single_axis
from lampy.opkit._operands import NO_VALUE as NO_VALUE
from lampy.opkit._operands import apply_binary as apply_binary
from lampy.opkit._operands import apply_unary as apply_unary
from lampy.opkit._operands import array_of as array_of
from lampy.opkit._operands import broadcast_error as broadcast_error
from lampy.opkit._operands import contrib_of as contrib_of
from lampy.opkit._operands import contrib_with as contrib_with
from lampy.opkit._operands import frozen as frozen
from lampy.opkit._operands import needs_grad as needs_grad
from lampy.opkit._operands import no_complex_into_real as no_complex_into_real
from lampy.opkit._operands import node_of as node_of
from lampy.opkit._operands import not_numbers as not_numbers
from lampy.opkit._operands import over as over
from lampy.opkit._operands import param_of as param_of
from lampy.opkit._operands import real_operands as real_operands
from lampy.opkit._operands import real_result as real_result
from lampy.opkit._operands import reserve_output as reserve_output
from lampy.opkit._operands import sign_or_zero as sign_or_zero
from lampy.opkit._operands import times as times
from lampy.opkit._operands import value_of as value_of
from lampy.opkit._operands import values_of as values_of

__all__ = [
    "GRAD_ENABLED",
    "HOLOMORPHIC",
    "LINEAR",
    "OWN",
    "NO_VALUE",
    "Axis",
    "Backward",
    "Contribution",
    "Lazy",
    "NoSecondOrderError",
    "Operand",
    "Param",
    "SharedInBackward",
    "Variable",
    "Vjp",
    "accumulate",
    "apply_binary",
    "apply_unary",
    "array_of",
    "axis_or_dim",
    "broadcast_error",
    "const",
    "contrib_of",
    "complex_rule",
    "contrib_with",
    "contribution",
    "expand_reduced",
    "frozen",
    "graph_value",
    "is_grad_enabled",
    "lifted",
    "namespace_leaf",
    "namespace_op",
    "needs_grad",
    "no_grad",
    "no_complex_into_real",
    "node_of",
    "normalize_axis",
    "not_numbers",
    "one_axis",
    "op",
    "over",
    "param",
    "param_of",
    "real_operands",
    "real_part",
    "real_result",
    "replace_values",
    "recomputing",
    "replayable",
    "reserve_output",
    "saved_vjp",
    "sign_or_zero",
    "sum_to",
    "single_axis",
    "times",
    "unbroadcast",
    "value_of",
    "values_of",
]
