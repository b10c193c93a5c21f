"""Activation functions of ``lampy.nn.functional``, with PyTorch's names, arguments and
gradient conventions (``torch.nn.functional``): relu and its relatives, sigmoid-like and
smooth activations, softmax and log_softmax, glu.

At non-differentiable points every function takes the one-sided derivative PyTorch's
autograd returns; each docstring's ``Gradient:`` section states it. float32 stays float32;
integer and bool inputs (constants) are computed in float64, where PyTorch would keep
integer dtypes for relu-like functions. The ``inplace`` flags are accepted, so code
written for PyTorch runs unchanged, and have no effect: values are immutable, so a new
Variable is always returned.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.autograd import _ledger, is_grad_enabled
from lampy.nn.functional._erf import normal_cdf_float32
from lampy.nn.functional._gelu_vjp import _INV_SQRT_2PI, _SQRT_2_OVER_PI, _c, _gelu_vjp, _normal_cdf
from lampy.nn.functional._hard_activations import hardsigmoid as hardsigmoid
from lampy.nn.functional._hard_activations import hardswish as hardswish
from lampy.nn.functional._hard_activations import softsign as softsign
from lampy.nn.functional._shared import (
    compiled,
    dot_along,
    exp_,
    float_value,
    kernel_input,
    shifted_exp,
    softplus_value,
    spread,
    sum_along,
)
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    graph_value,
    lifted,
    needs_grad,
    node_of,
    normalize_axis,
    op,
)
from lampy.ops import concatenate, where
from lampy.ops import exp as exp_op
from lampy.ops import sum as sum_op
from lampy.ops import tanh as tanh_op

__all__ = [
    "celu",
    "elu",
    "gelu",
    "glu",
    "hardsigmoid",
    "hardswish",
    "hardtanh",
    "leaky_relu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "relu",
    "relu6",
    "selu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "softsign",
]

_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def _sigmoid(a: Any) -> Any:
    """The logistic function ``1 / (1 + exp(-a))``: where ``exp(-a)`` overflows to inf
    the result is the correct 0, so only the overflow warning is silenced."""
    with np.errstate(over="ignore"):
        e = np.exp(-a)
    if np.ndim(e) == 0:
        return 1 / (1 + e)
    np.add(e, 1, out=e)
    return np.reciprocal(e, out=e)


def relu(input: Operand, inplace: bool = False) -> Variable:
    """Elementwise ``max(x, 0)``.

    Gradient:
        ``dx = g * (x > 0)``; 0 at ``x = 0`` (PyTorch's convention); ``g`` at ``x = nan``
        (PyTorch's, whose backward zeroes only where ``x <= 0``; the nan value came from
        ``x``, as for :func:`lampy.maximum`).
    """
    a = float_value(input, "relu")
    value = np.maximum(a, 0)
    # The closure saves the output, not the input (value <= 0 exactly where a <= 0, and
    # nan stays nan: its gradient passes, as PyTorch's): the next layer saves that output
    # anyway, so the input's memory returns at once.
    return op(
        "relu",
        value,
        contrib_of(input, lambda g: g * ~(value <= 0), vjp=lambda g, out: g * ~(value <= 0)),
        keeps=(value,),
    )


def relu6(input: Operand, inplace: bool = False) -> Variable:
    """Elementwise ``min(max(x, 0), 6)``.

    Gradient:
        ``dx = g * (0 < x < 6)``; 0 at both ``x = 0`` and ``x = 6``, ``g`` at ``x = nan``
        (PyTorch's, as ``hardtanh(x, 0, 6)``).
    """
    a = float_value(input, "relu6")
    value = np.minimum(np.maximum(a, 0), 6)
    return op(
        "relu6",
        value,
        contrib_of(
            input,
            lambda g: g * ~((a <= 0) | (a >= 6)),
            vjp=lambda g, out: g * ~((a <= 0) | (a >= 6)),
        ),
    )


def leaky_relu(input: Operand, negative_slope: float = 0.01, inplace: bool = False) -> Variable:
    """Elementwise ``x if x > 0 else negative_slope * x``.

    Gradient:
        ``dx = g * (1 if x > 0 else negative_slope)``; ``negative_slope`` at ``x = 0``
        (PyTorch's convention).
    """
    a = float_value(input, "leaky_relu")
    s = _c(a, negative_slope)
    value = np.where(a > 0, a, a * s)
    return op(
        "leaky_relu",
        value,
        contrib_of(
            input,
            lambda g: g * np.where(a > 0, 1, s),
            vjp=lambda g, out: g * np.where(a > 0, 1, s),
        ),
    )


def _elu_like(name: str, input: Any, alpha: float, scale: float, input_scale: float) -> Variable:
    """``scale * (x if x > 0 else alpha * (exp(x * input_scale) - 1))``, as PyTorch's elu."""
    a = float_value(input, name)
    al, sc, isc = _c(a, alpha), _c(a, scale), _c(a, input_scale)
    neg = a <= 0
    e = np.exp(np.where(neg, a, 0) * isc)
    value = np.where(neg, al * sc * (e - 1), sc * a)
    n = node_of(input)

    def vjp(g: Any, out: Any) -> Any:  # e = exp(x * input_scale) where x <= 0, as ops of x
        ev = exp_op(where(neg, graph_value(n, a), 0.0) * isc)
        return g * where(neg, ev * (al * sc * isc), sc)

    return op(
        name,
        value,
        contrib_of(input, lambda g: g * np.where(neg, al * sc * isc * e, sc), vjp=vjp),
    )


def elu(input: Operand, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """Elementwise ``x if x > 0 else alpha * (exp(x) - 1)``.

    Gradient:
        ``dx = g * (1 if x > 0 else alpha * exp(x))``; ``alpha`` at ``x = 0`` (PyTorch
        takes the ``x <= 0`` branch).
    """
    return _elu_like("elu", input, alpha, 1.0, 1.0)


def selu(input: Operand, inplace: bool = False) -> Variable:
    """Elementwise ``scale * elu(x, alpha)`` with Klambauer et al.'s (2017) constants
    ``alpha = 1.6732632423543772``, ``scale = 1.0507009873554805``.

    Gradient:
        ``dx = g * scale * (1 if x > 0 else alpha * exp(x))``; ``scale * alpha`` at
        ``x = 0`` (PyTorch's convention).
    """
    return _elu_like("selu", input, _SELU_ALPHA, _SELU_SCALE, 1.0)


def celu(input: Operand, alpha: float = 1.0, inplace: bool = False) -> Variable:
    """Elementwise ``max(0, x) + min(0, alpha * (exp(x / alpha) - 1))``.

    Gradient:
        ``dx = g * (1 if x > 0 else exp(x / alpha))``; 1 at ``x = 0``.
    """
    return _elu_like("celu", input, alpha, 1.0, 1.0 / alpha)


def _kernel_value(kernel: Any, a: np.ndarray, *scalars: Any) -> np.ndarray:
    """An elementwise compiled kernel's value of ``a``, a new array of ``a``'s shape and
    dtype (``kernel(x, y, g, dx, *scalars)`` over the flattened arrays, ``g`` and ``dx``
    empty)."""
    y = np.empty(a.shape, a.dtype)
    none = np.empty(0, a.dtype)
    kernel(kernel_input(a).reshape(-1), y.reshape(-1), none, none, *scalars)
    return y


def _kernel_grad(kernel: Any, a: np.ndarray, g: Any, *scalars: Any) -> np.ndarray:
    """An elementwise compiled kernel's gradient ``g * slope(a)`` in one pass (the slope
    never stored), a new array of ``a``'s shape and dtype (``y`` empty: the kernel's
    gradient mode)."""
    g = np.broadcast_to(g, a.shape)
    if g.dtype != a.dtype:
        g = g.astype(a.dtype)
    dx = np.empty(a.shape, a.dtype)
    kernel(
        kernel_input(a).reshape(-1),
        np.empty(0, a.dtype),
        kernel_input(g).reshape(-1),
        dx.reshape(-1),
        *scalars,
    )
    return dx


_BLOCK = 1 << 15
"""Elements per block when numpy's backward recomputes gelu's slope: its temporaries (five
arrays of the block's size) stay small next to the arrays of the graph."""


def _in_blocks(slope: Callable[[np.ndarray], Any], a: np.ndarray, dtype: Any) -> np.ndarray:
    """``slope(block)`` over ``a`` read in ``dtype`` (float16 as float32), block by block,
    into one new array of ``a``'s shape and ``dtype``."""
    flat = a.reshape(-1)
    out = np.empty(flat.size, dtype)
    for i in range(0, flat.size, _BLOCK):
        out[i : i + _BLOCK] = slope(flat[i : i + _BLOCK].astype(dtype, copy=False))
    return out.reshape(a.shape)


def _times(slope: np.ndarray, g: Any, dtype: Any) -> np.ndarray:
    """``g * slope`` in ``dtype``, in place on ``slope`` (a new array) when shapes allow."""
    d = slope.astype(dtype, copy=False)
    out: np.ndarray = np.multiply(d, g, out=d) if d.shape == np.shape(g) else d * g
    return out


def _with_grad(
    input: Operand,
    a: np.ndarray,
    approximate: str,
    value: np.ndarray,
    grad_of: Callable[[Any], Any] | None,
) -> Variable:
    """gelu's result from its value; ``grad_of(g)`` (None when no gradient is wanted)
    computes ``dx = g * slope`` from the input ``a`` in backward, a new array. The op
    keeps the input, as PyTorch's gelu does (the slope would take the same memory), so
    that its vjp can recompute the slope with lampy ops."""
    if grad_of is None:
        return op("gelu", value)
    return op("gelu", value, contrib_of(input, grad_of, vjp=_gelu_vjp(input, a, approximate)))


def gelu(input: Operand, approximate: str = "none") -> Variable:
    """Elementwise Gaussian error linear unit ``x * Phi(x)``.

    With ``approximate='none'``: ``0.5 * x * (1 + erf(x / sqrt(2)))``. In float64 erf
    is the C library's (through ``math.erf``, or SciPy's with the ``fast`` extra),
    correct to about 1 ulp. float32 (and float16, computed in float32 and rounded once)
    evaluates ``Phi`` from ``exp(-x**2 / 2)``, shared with the gradient, and a rational
    function, within 1.2e-7 of ``Phi`` (``lampy.nn.functional._erf.normal_cdf_float32``);
    the value within 1.4e-7 ``|x|``, more accurate than PyTorch's float32 gelu (3.8e-7
    ``|x|``). With Numba (the ``fast`` extra) the value, and in backward the slope, come
    from a compiled pass (``_numba_kernels.gelu_float32``, about 0.3 ns an element; 2.5
    ns in numpy). Like PyTorch's, the op keeps its input for backward, which recomputes
    the slope from it (the memory the slope would take, and what the differentiable
    rule of ``create_graph`` needs).

    With ``approximate='tanh'``: ``0.5 * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 *
    x**3)))``; with Numba, float32 and float64 compute value and gradient in a
    compiled pass (``_numba_kernels.gelu_tanh``, as ``x / (1 + exp(-2u))``, which keeps
    its relative accuracy for negative ``x`` where ``1 + tanh`` cancels).

    Gradient:
        ``'none'``: ``dx = g * (Phi(x) + x * exp(-x**2 / 2) / sqrt(2 pi))``.
        ``'tanh'``: with ``t = tanh(u)``, ``u = sqrt(2/pi) (x + 0.044715 x**3)``:
        ``dx = g * (0.5 (1 + t) + 0.5 x (1 - t**2) sqrt(2/pi) (1 + 3 * 0.044715 x**2))``.
    """
    if approximate not in ("none", "tanh"):
        raise LampyValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    a = np.asarray(float_value(input, "gelu"))
    # The forward computes the value only; backward recomputes the slope from the
    # input, which the op keeps (as PyTorch's gelu: the same memory as keeping the slope,
    # and the input is what the differentiable rule needs).
    slope = needs_grad(input) and is_grad_enabled()
    if approximate == "none" and a.dtype.itemsize <= 4:  # float16 is computed in float32
        a32 = a.astype(np.float32, copy=False)
        dtype = a.dtype
        grad_of: Callable[[Any], Any]
        if (kernels := compiled(a32)) is not None:
            k32 = kernels.gelu_float32
            value = _kernel_value(k32, a32)
            grad_of = lambda g: _kernel_grad(k32, a.astype(np.float32, copy=False), g).astype(
                dtype, copy=False
            )
        else:
            cdf, _ = normal_cdf_float32(a32, False)
            value = np.multiply(a32, cdf, out=cdf)
            grad_of = lambda g: _times(
                _in_blocks(lambda b: normal_cdf_float32(b, True)[1], a, np.float32), g, dtype
            )
        value = value.astype(dtype, copy=False)
        return _with_grad(input, a, approximate, value, grad_of if slope else None)
    k, c = _c(a, _SQRT_2_OVER_PI), _c(a, 0.044715)
    if approximate == "tanh" and (kernels := compiled(a)) is not None:
        kt = kernels.gelu_tanh
        value = _kernel_value(kt, a, k, c)
        grad_of = lambda g: _kernel_grad(kt, a, g, k, c)
        return _with_grad(input, a, approximate, value, grad_of if slope else None)
    if approximate == "none":
        cdf = _normal_cdf(a)
        value = a * cdf

        def d_x(g: np.ndarray) -> Any:
            # g * (cdf + a * pdf(a)), in place on one new array
            d = np.multiply(a, a, out=np.empty_like(a))
            np.multiply(d, _c(a, -0.5), out=d)
            np.exp(d, out=d)
            np.multiply(d, a, out=d)
            np.multiply(d, _c(a, _INV_SQRT_2PI), out=d)
            np.add(d, cdf, out=d)
            return np.multiply(d, g, out=d)

    else:
        t = np.tanh(k * (a + c * a * a * a))
        value = 0.5 * a * (1 + t)

        def d_x(g: np.ndarray) -> Any:
            return g * (0.5 * (1 + t) + 0.5 * a * (1 - t * t) * k * (1 + 3 * c * a * a))

    return op("gelu", value, contrib_of(input, d_x, vjp=_gelu_vjp(input, a, approximate)))


def sigmoid(input: Operand) -> Variable:
    """Elementwise logistic function ``1 / (1 + exp(-x))``, without overflow.

    Gradient:
        ``dx = g * s * (1 - s)`` with ``s`` the forward value.
    """
    value = _sigmoid(float_value(input, "sigmoid"))

    def vjp(g: Any, out: Any) -> Any:
        y = lifted(out, value)
        return g * y * (1 - y)

    return op("sigmoid", value, contrib_of(input, lambda g: g * value * (1 - value), vjp=vjp))


def silu(input: Operand, inplace: bool = False) -> Variable:
    """Elementwise ``x * sigmoid(x)`` (swish).

    Gradient:
        ``dx = g * s * (1 + x * (1 - s))`` with ``s = sigmoid(x)``.
    """
    a = float_value(input, "silu")
    s = _sigmoid(a)
    value = a * s
    n = node_of(input)

    def vjp(g: Any, out: Any) -> Any:
        x = graph_value(n, a)
        sv = sigmoid(x)
        return g * sv * (1 + x * (1 - sv))

    return op("silu", value, contrib_of(input, lambda g: g * s * (1 + a * (1 - s)), vjp=vjp))


def mish(input: Operand, inplace: bool = False) -> Variable:
    """Elementwise ``x * tanh(softplus(x))`` (Misra 2019), softplus without overflow.

    Gradient:
        ``dx = g * (t + x * sigmoid(x) * (1 - t**2))`` with ``t = tanh(softplus(x))``.
    """
    a = float_value(input, "mish")
    t = np.tanh(softplus_value(a))
    value = a * t

    def d_x(g: np.ndarray) -> Any:
        return g * (t + a * _sigmoid(a) * (1 - t * t))

    n = node_of(input)

    def vjp(g: Any, out: Any) -> Any:  # softplus(x) = -log_sigmoid(-x), without overflow
        x = graph_value(n, a)
        tv = tanh_op(-log_sigmoid(-x))
        return g * (tv + x * sigmoid(x) * (1 - tv * tv))

    return op("mish", value, contrib_of(input, d_x, vjp=vjp))


def softplus(input: Operand, beta: float = 1.0, threshold: float = 20.0) -> Variable:
    """Elementwise ``log(1 + exp(beta * x)) / beta``, and ``x`` where
    ``beta * x > threshold`` (PyTorch's linear regime).

    Gradient:
        ``dx = g * sigmoid(beta * x)``, and ``g`` where ``beta * x > threshold`` (at
        ``beta * x == threshold`` the sigmoid branch, as PyTorch).
    """
    a = float_value(input, "softplus")
    b = _c(a, beta)
    z = a * b
    lin = z > threshold
    value = np.where(lin, a, softplus_value(z) / b)
    n = node_of(input)

    def vjp(g: Any, out: Any) -> Any:
        return g * where(lin, 1.0, sigmoid(graph_value(n, a) * b))

    return op(
        "softplus",
        value,
        contrib_of(input, lambda g: g * np.where(lin, 1, _sigmoid(z)), vjp=vjp),
    )


def log_sigmoid(input: Operand) -> Variable:
    """Elementwise ``log(sigmoid(x)) = min(x, 0) - log1p(exp(-|x|))``, without overflow
    or cancellation.

    Gradient:
        ``dx = g * sigmoid(-x)``.
    """
    a = float_value(input, "log_sigmoid")
    t = np.abs(a)
    if np.ndim(t) == 0:
        value = np.minimum(a, 0) - np.log1p(np.exp(-t))
    else:
        np.negative(t, out=t)
        np.exp(t, out=t)
        np.log1p(t, out=t)
        value = np.minimum(a, 0)
        np.subtract(value, t, out=value)
    n = node_of(input)
    return op(
        "log_sigmoid",
        value,
        contrib_of(
            input,
            lambda g: g * _sigmoid(-a),
            vjp=lambda g, out: g * sigmoid(-graph_value(n, a)),
        ),
    )


def hardtanh(
    input: Operand, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False
) -> Variable:
    """Elementwise ``min(max(x, min_val), max_val)``.

    Gradient:
        ``dx = g * (min_val < x < max_val)``; 0 at both bounds (PyTorch's convention,
        unlike its ``clamp``, which passes the gradient at the bounds); ``g`` at
        ``x = nan`` (PyTorch's).
    """
    if min_val > max_val:
        raise LampyValueError(
            f"hardtanh: min_val ({min_val}) must not be greater than max_val ({max_val})."
        )
    a = float_value(input, "hardtanh")
    lo, hi = _c(a, min_val), _c(a, max_val)
    value = np.minimum(np.maximum(a, lo), hi)
    return op("hardtanh", value, contrib_of(input, lambda g: g * ~((a <= lo) | (a >= hi))))


def _dim(name: str, dim: Any, ndim: int) -> int:
    """``dim`` as a non-negative axis; a 0-d input takes ``dim`` 0 or -1, as PyTorch."""
    if dim is None:
        raise LampyValueError(f"{name}: dim is required (an int), got None")
    if ndim == 0:
        normalize_axis(name, dim, 1)
        return 0
    return normalize_axis(name, dim, ndim)[0]


def _row_kernels(a: np.ndarray, axis: int) -> Any:
    """The compiled kernels if ``a`` can take them (see ``compiled``) and ``axis`` is its
    last (the kernels' rows), else None."""
    return compiled(a) if axis == a.ndim - 1 else None


def _by_rows(kernel: Any, *arrays: np.ndarray) -> np.ndarray:
    """A compiled row kernel over the last axis of ``arrays`` (non-empty, of one shape
    and dtype), ``kernel(*rows, out)``, into a new array of their shape."""
    shape = arrays[0].shape
    out = np.empty(shape, arrays[0].dtype)
    kernel(*(kernel_input(a).reshape(-1, shape[-1]) for a in arrays), out.reshape(-1, shape[-1]))
    return out


def softmax(input: Operand, dim: int) -> Variable:
    """``exp(x) / sum(exp(x), dim)``, computed after subtracting a max (no overflow).
    float32 and float64 along the last axis run through compiled row kernels with Numba
    (the ``fast`` extra: ``_numba_kernels.softmax_rows``, each row shifted by its own
    max, one pass over memory forward and one backward); other dtypes and axes, and
    installs without Numba, through numpy, shifted by the input's max when no slice
    along ``dim`` lies far below it, else by each slice's own
    (``lampy.nn.functional._shared.shifted_exp``). A 0-d input accepts ``dim`` 0 or -1
    and gives 1.

    Gradient:
        ``dx = y * (g - sum(g * y, dim))`` with ``y`` the forward value.
    """
    a = float_value(input, "softmax")
    ax = _dim("softmax", dim, a.ndim)
    arr = np.asarray(a)
    if arr.ndim == 0:
        value: Any = np.ones_like(arr)
        return op("softmax", value, contrib_of(input, lambda g: g * 0))

    def vjp(g: Any, out: Any) -> Any:
        y = lifted(out, value)
        return y * (g - sum_op(g * y, axis=ax, keepdims=True))

    if (kernels := _row_kernels(arr, ax)) is not None:
        value = _by_rows(kernels.softmax_rows, arr)
        d_rows = lambda g: _by_rows(kernels.softmax_rows_backward, g, value)
        return op("softmax", value, contrib_of(input, d_rows, vjp=vjp))
    if arr.size:  # in place on the one new array: exp, normalise
        value, sums, _ = shifted_exp(arr, ax)
        np.divide(value, sums, out=value)
    else:
        value = arr.copy()

    def d_x(g: np.ndarray) -> Any:
        d = spread(np.subtract, g, dot_along(g, value, ax))
        return np.multiply(d, value, out=d)

    return op("softmax", value, contrib_of(input, d_x, vjp=vjp))


def log_softmax(input: Operand, dim: int) -> Variable:
    """``x - logsumexp(x, dim)``, computed after subtracting a max as ``softmax`` does
    (no overflow, no log of 0), through compiled row kernels or numpy as ``softmax``
    (``_numba_kernels.log_softmax_rows``). A 0-d input accepts ``dim`` 0 or -1 and
    gives 0.

    Gradient:
        ``dx = g - exp(y) * sum(g, dim)`` with ``y`` the forward value.
    """
    a = float_value(input, "log_softmax")
    ax = _dim("log_softmax", dim, a.ndim)
    arr = np.asarray(a)
    if arr.ndim == 0:
        value: Any = np.zeros_like(arr)
        return op("log_softmax", value, contrib_of(input, lambda g: g * 0))

    def vjp(g: Any, out: Any) -> Any:
        return g - exp_op(lifted(out, value)) * sum_op(g, axis=ax, keepdims=True)

    if (kernels := _row_kernels(arr, ax)) is not None:
        value = _by_rows(kernels.log_softmax_rows, arr)
        d_rows = lambda g: _by_rows(kernels.log_softmax_rows_backward, g, value)
        return op("log_softmax", value, contrib_of(input, d_rows, vjp=vjp))
    if arr.size:
        _, sums, shift = shifted_exp(arr, ax)
        value = np.subtract(arr, shift)
        value -= np.log(sums)
    else:
        value = arr.copy()

    def d_x(g: np.ndarray) -> Any:
        d = exp_(value, np.empty_like(value))
        d *= -sum_along(g, ax)
        return np.add(d, g, out=d)

    return op("log_softmax", value, contrib_of(input, d_x, vjp=vjp))


def glu(input: Operand, dim: int = -1) -> Variable:
    """Gated linear unit: ``a * sigmoid(b)`` with ``a``, ``b`` the two halves of the input
    along ``dim`` (whose size must be even).

    Gradient:
        ``da = g * sigmoid(b)``, ``db = g * a * sigmoid(b) * (1 - sigmoid(b))``,
        concatenated along ``dim``.

    Raises:
        ShapeError: for a 0-d input or an odd size along ``dim``.
    """
    arr = np.asarray(float_value(input, "glu", reserve=False))
    if arr.ndim == 0:
        raise ShapeError("glu: does not support 0-d inputs (it halves a dimension).")
    ax = normalize_axis("glu", dim, arr.ndim)[0]
    n = arr.shape[ax]
    if n % 2:
        raise ShapeError(
            f"glu: halving dimension {ax} of shape {arr.shape} needs an even size, got {n}."
        )
    if _ledger.open_budgets:  # the output: the input with dimension ax halved
        _ledger.reserve("glu", (*arr.shape[:ax], n // 2, *arr.shape[ax + 1 :]), arr.dtype)
    first, second = np.split(arr, 2, axis=ax)
    s = _sigmoid(second)
    value = first * s

    def d_x(g: np.ndarray) -> Any:
        return np.concatenate([g * s, g * first * s * (1 - s)], axis=ax)

    node = node_of(input)

    def vjp(g: Any, out: Any) -> Any:
        x = graph_value(node, arr)
        lo = tuple(slice(None) if k != ax else slice(0, n // 2) for k in range(arr.ndim))
        hi = tuple(slice(None) if k != ax else slice(n // 2, n) for k in range(arr.ndim))
        fv, sv = x[lo], sigmoid(x[hi])
        return concatenate([g * sv, g * fv * sv * (1 - sv)], axis=ax)

    return op("glu", value, contrib_of(input, d_x, vjp=vjp))
