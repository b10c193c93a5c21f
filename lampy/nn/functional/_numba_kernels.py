"""Compiled kernels for ``layer_norm``, ``gelu``, ``softmax``, ``log_softmax``,
``cross_entropy`` (class indices) and the softmax inside
``scaled_dot_product_attention``, with Numba (the ``lampy[fast]`` extra).

Importing this module imports Numba; the ops import it on first use
(``lampy.nn.functional._shared.numba_kernels``) and fall back to their numpy code when
Numba is not installed. Each kernel makes one pass over its arrays (a row kernel reads
each row from memory once; the row's further passes run in the L1 cache), where numpy
needs a full pass over memory per operation. On (256, 1024) float32, one thread:

======================  =========  ==========================================
kernel                  µs         numpy code it replaces (µs)
======================  =========  ==========================================
layer_norm forward      65         210
layer_norm backward     75         310 (input, weight and bias gradients)
gelu, value and slope   140        620 (``_erf.normal_cdf_float32`` and x Phi)
gelu tanh, the same     195        610 (value forward, slope in backward)
softmax forward         110        180
softmax backward        40         100
log_softmax forward     120        200
log_softmax backward    115        175
cross_entropy forward   100        240 (shifted exps, their sums, logs, picks)
cross_entropy backward  20         95 (``e / sums`` scaled, the targets' -1)
======================  =========  ==========================================

The kernels are serial (no ``parallel=``, no threads of their own: the same results
whatever the thread settings) and release the GIL (``nogil``), so two backward closures
may run them at once. They compute in the dtype of their arrays (float32 or float64):
every scalar they use is made in that dtype or passed in it, so float32 never meets a
float64 value. ``fastmath`` allows at most reassociation, only in the functions whose
loops sum (the sums then run as SIMD partial sums, as BLAS's and numpy's do), and
contraction into fused multiply-adds (one rounding fewer); nan and infinities propagate
as in numpy, and ``error_model="numpy"`` makes a division by zero give inf or nan as
numpy does. Elementwise arithmetic is never reassociated: ``(x - max) - log(sum)``
stays that, not ``x - (max + log(sum))``, which loses digits when ``max`` is large.

``exp`` is lampy's own (``_exp``), which the compiler vectorises (Numba's ``np.exp``
calls the C library one element at a time): ``2**n exp(r)`` with ``n`` the nearest
integer to ``x / ln 2``, ``r = x - n ln 2`` in two parts (Cody and Waite) and the
Taylor polynomial of ``exp(r)`` for ``|r| <= ln(2) / 2`` (degree 7 for float32, 13 for
float64; the truncation error is below 0.1 ulp). Measured against the float64 (for
float64: mpmath) exp: within 0.94 float32 ulp on every float32 from -104 to 88.7, and
within 1 float64 ulp; results below the smallest normal number underflow gradually as
numpy's do, ``exp(-inf) = 0``, ``exp(inf) = inf``, nan stays nan. numpy's float32 exp is
within 2.5 ulp (its ``exp2``, which ``_shared.exp_`` uses where it is vectorised, 1 ulp
plus the rounding of ``x log2(e)``).

Each kernel is compiled for a dtype on its first call (a second or two) and cached on
disk (Numba's ``cache=True``: in ``__pycache__`` beside this file, or Numba's user-wide
cache directory when that is not writable; with neither writable, not cached). The
callers pass C-contiguous arrays, read-only for the inputs and writable for the outputs,
so one compilation per dtype serves every call.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.extending import intrinsic, overload

from lampy._numba import compile_kernel
from lampy.nn.functional._normal_cdf_constants import _CLAMP32, _INV_SQRT_2PI32, _P32, _Q32

__all__ = [
    "attention_exp_rows",
    "attention_scores_backward",
    "cross_entropy_rows",
    "cross_entropy_rows_backward",
    "gelu_float32",
    "gelu_tanh",
    "layer_norm_rows",
    "layer_norm_rows_backward",
    "log_softmax_rows",
    "log_softmax_rows_backward",
    "softmax_rows",
    "softmax_rows_backward",
]

_HALF32 = np.float32(0.5)


_compile = compile_kernel
"""``numba.njit`` with lampy's options and the ``fastmath`` flags given (``"reassoc"``
only for functions whose loops sum), cached on disk (``lampy._numba``)."""


# --- scalar building blocks: exp ----------------------------------------------

_FLOAT_BITS = {types.float32: (32, 23, 127), types.float64: (64, 52, 1023)}


def _intrinsic(fn: Callable[..., Any]) -> Any:
    """``numba.extending.intrinsic``: ``fn(typingctx, *argument types)`` gives the
    signature and the LLVM code of a function that compiled code calls with the
    arguments alone."""
    return intrinsic(fn)


@_intrinsic
def _pow2(typingctx: Any, k: Any) -> Any:
    """``2.0**k`` for an integral float ``k`` in the normal exponent range (-126 to 127
    for float32, -1022 to 1023 for float64), in ``k``'s dtype: the bits of ``k + 1.5
    2**m`` (m mantissa bits) hold ``k`` in their low bits, shifted into the exponent
    field."""
    if k not in _FLOAT_BITS:
        return None
    width, mantissa, bias = _FLOAT_BITS[k]

    def codegen(context: Any, builder: Any, signature: Any, args: Any) -> Any:
        fty, ity = context.get_value_type(k), ir.IntType(width)
        shifted = builder.fadd(args[0], ir.Constant(fty, 1.5 * 2.0**mantissa))
        bits = builder.shl(builder.bitcast(shifted, ity), ir.Constant(ity, mantissa))
        bits = builder.add(bits, ir.Constant(ity, bias << mantissa))
        return builder.bitcast(bits, fty)

    return k(k), codegen


def _exp_of(
    dtype: Any, degree: int, ln2: tuple[float, float], limits: tuple[float, float | None]
) -> Any:
    """The scalar ``exp`` of one dtype (see the module docstring): ``ln2`` in two parts
    whose first has trailing zero bits (``n ln2[0]`` is exact), arguments clamped to
    ``limits`` (beyond them the result is 0 or inf anyway; nan stays nan). ``2**n`` is
    applied as two factors so that results below the smallest normal number round once
    into subnormals. With no upper limit (None): the variant for ``x <= 0`` whose results
    below the smallest normal number do not count (``_exp_normal32``): ``2**n`` as one
    factor (``n >= -126`` for float32 from the lower limit on), 0 below the limit."""
    t = dtype.type
    taylor = tuple(t(1 / math.factorial(k)) for k in range(degree, -1, -1))
    ln2_hi, ln2_lo = t(ln2[0]), t(ln2[1])
    lo, zero = t(limits[0]), t(0)
    log2e, half = t(1 / math.log(2)), t(0.5)

    @njit(inline="always", fastmath={"contract"}, error_model="numpy")
    def reduced(x: Any) -> tuple[Any, Any]:
        """``(n, exp(r))`` with ``x = n ln 2 + r``, ``n`` an integral float."""
        n = np.rint(x * log2e)
        r = x - n * ln2_hi
        r = r - n * ln2_lo
        p = taylor[0]
        for c in taylor[1:]:
            p = p * r + c
        return n, p

    if limits[1] is None:  # x <= 0, results that are normal numbers: 2**n in one factor

        def exp_normal(x: Any) -> Any:
            below = x < lo  # nan is not: nan stays nan
            n, p = reduced(lo if below else x)
            return zero if below else p * _pow2(n)

        return exp_normal
    hi = t(limits[1])

    def exp(x: Any) -> Any:
        x = lo if x < lo else x  # comparisons with nan are false: nan stays nan
        n, p = reduced(hi if x > hi else x)
        n1 = np.floor(n * half)
        return p * _pow2(n1) * _pow2(n - n1)

    return exp


_EXP = {
    types.float32: _exp_of(np.dtype(np.float32), 7, (0.693359375, -2.12194440e-4), (-104, 88.8)),
    types.float64: _exp_of(
        np.dtype(np.float64), 13, (0.693145751953125, 1.42860682030941723212e-6), (-746, 709.9)
    ),
}

_EXP_NORMAL32 = _exp_of(np.dtype(np.float32), 7, (0.693359375, -2.12194440e-4), (-87.5, None))


def _exp(x: Any) -> Any:
    """``exp`` of a float32 or float64 scalar in compiled code (see ``_exp_of``)."""
    raise NotImplementedError("compiled code only")


@overload(_exp, jit_options={"fastmath": {"contract"}, "error_model": "numpy"})
def _exp_overload(x: Any) -> Any:
    return _EXP.get(x)


def _exp_normal32(x: Any) -> Any:
    """``exp`` of a float32 scalar ``x <= 0`` whose result only counts while it is a
    normal number (``gelu_float32``'s ``exp(-x**2 / 2)``): ``_exp``'s for
    ``x >= -87.5``, and 0 below, where ``_exp`` goes on into subnormal numbers (at most
    1e-38). One power of two instead of ``_exp``'s two (no subnormal results to round
    once) and no upper clamp: the gelu kernel 1.3 times faster. In gelu only the slope
    below ``x = -13.2`` changes: 0 where it was at most 6e-38."""
    raise NotImplementedError("compiled code only")


@overload(_exp_normal32, jit_options={"fastmath": {"contract"}, "error_model": "numpy"})
def _exp_normal32_overload(x: Any) -> Any:
    if x != types.float32:
        return None
    return _EXP_NORMAL32


# --- layer_norm ---------------------------------------------------------------------


@_compile("reassoc", "contract")
def layer_norm_rows(
    x: np.ndarray,
    w: np.ndarray,
    b: np.ndarray,
    eps: Any,
    inv_d: Any,
    y: np.ndarray,
    xc: np.ndarray,
    rstd: np.ndarray,
) -> None:
    """Layer normalisation of each row of the 2-d ``x`` (m, d), into the outputs.

    For each row: ``mean = sum(x) * inv_d``, ``xc = x - mean`` (written to ``xc``),
    ``rstd = 1 / sqrt(sum(xc**2) * inv_d + eps)`` (to ``rstd``, shape (m,)) and
    ``y = xc * rstd * w + b`` (to ``y``); ``w`` and ``b`` are vectors of length d
    (ones and ``-0.0`` for none: ``v * 1 + -0.0`` is ``v`` exactly, -0.0 included).
    ``eps`` and ``inv_d = 1 / d`` are scalars of ``x``'s dtype. Reads each row of ``x``
    twice (the second time from the L1 cache).
    """
    m, d = x.shape
    zero = x.dtype.type(0)
    one = x.dtype.type(1)
    for i in range(m):
        s = zero
        for j in range(d):
            s += x[i, j]
        mean = s * inv_d
        v = zero
        for j in range(d):
            c = x[i, j] - mean
            xc[i, j] = c
            v += c * c
        r = one / np.sqrt(v * inv_d + eps)
        rstd[i] = r
        for j in range(d):
            y[i, j] = xc[i, j] * r * w[j] + b[j]


@_compile("reassoc", "contract")
def layer_norm_rows_backward(
    g: np.ndarray,
    xc: np.ndarray,
    rstd: np.ndarray,
    w: np.ndarray,
    inv_d: Any,
    dx: np.ndarray,
    dw: np.ndarray,
    db: np.ndarray,
    want_dx: bool,
    want_dwb: bool,
    block: int,
) -> None:
    """The gradients of ``layer_norm_rows`` for the output gradient ``g`` (m, d), from
    its ``xc`` and ``rstd``: with ``r = rstd[i]`` and sums over the row,

    ``dx = r w g - xc (r**3 inv_d sum(g w xc)) - r inv_d sum(g w)`` into ``dx`` when
    ``want_dx``; ``dw = sum over rows of g xc r`` and ``db = sum over rows of g`` into
    the zero-filled ``dw`` and ``db`` when ``want_dwb``. One pass over the rows (each
    row read twice for ``dx``, the second time from the L1 cache). The column sums run
    in two levels: each block of ``block`` rows is summed in order, then the blocks'
    sums; with ``block`` about sqrt(m) each total is a sum of about 2 sqrt(m) rounded
    terms instead of m.
    """
    m, d = g.shape
    zero = g.dtype.type(0)
    pw = np.zeros(d, g.dtype)
    pb = np.zeros(d, g.dtype)
    for i in range(m):
        r = rstd[i]
        if want_dx:
            s_g = zero
            s_gx = zero
            for j in range(d):
                gw = g[i, j] * w[j]
                s_g += gw
                s_gx += gw * xc[i, j]
            c_x = s_gx * inv_d * r * r * r
            c_1 = s_g * inv_d * r
            if want_dwb:
                for j in range(d):
                    gij = g[i, j]
                    cij = xc[i, j]
                    dx[i, j] = r * w[j] * gij - c_x * cij - c_1
                    pw[j] += gij * cij * r
                    pb[j] += gij
            else:
                for j in range(d):
                    dx[i, j] = r * w[j] * g[i, j] - c_x * xc[i, j] - c_1
        elif want_dwb:
            for j in range(d):
                gij = g[i, j]
                pw[j] += gij * xc[i, j] * r
                pb[j] += gij
        if want_dwb and ((i + 1) % block == 0 or i + 1 == m):
            for j in range(d):
                dw[j] += pw[j]
                db[j] += pb[j]
                pw[j] = zero
                pb[j] = zero


# --- gelu ---------------------------------------------------------------------------


@_compile("contract")
def gelu_float32(x: np.ndarray, y: np.ndarray, g: np.ndarray, dx: np.ndarray) -> None:
    """Exact gelu of the float32 vector ``x``: its value ``y = x Phi(x)``, or (when ``y``
    is empty) its gradient ``dx = g (Phi(x) + x phi(x))`` in the same pass, the slope
    never stored.

    ``Phi`` as ``lampy.nn.functional._erf.normal_cdf_float32`` computes it, with its
    float32 constants: ``Phi(x) = 1/2 + sign(x) (1/2 - exp(-x**2 / 2) M(|x|))``, ``M`` a
    cubic over a cubic, ``|x|`` clamped at 15; ``exp(-x**2 / 2)`` is shared with the
    slope's ``phi``. Measured on every float32 with ``2**-30 <= |x| <= 16`` against
    float64 math: ``y`` within 1.32e-7 ``|x|`` and the slope within 1.46e-7 (the numpy
    code: 1.44e-7 ``|x|`` and 1.53e-7; fused multiply-adds and ``_exp`` round less).
    """
    p, q = _P32, _Q32
    half, lo, hi = _HALF32, -_CLAMP32, _CLAMP32
    value = y.size > 0
    for i in range(x.size):
        v = x[i]
        c = lo if v < lo else v  # nan stays nan
        c = hi if c > hi else c
        e = _exp_normal32(c * -half * c)
        a = abs(c)
        num = ((p[3] * a + p[2]) * a + p[1]) * a + p[0]  # -P(a) / q3
        den = ((a + q[2]) * a + q[1]) * a + q[0]  # Q(a) / q3
        cdf = math.copysign(num / den * e + half, c) + half
        if value:
            y[i] = v * cdf
        else:
            slope = c * e * _INV_SQRT_2PI32 + cdf
            dx[i] = g[i] * slope


@_compile("contract")
def gelu_tanh(x: np.ndarray, y: np.ndarray, g: np.ndarray, dx: np.ndarray, k: Any, c: Any) -> None:
    """gelu's tanh approximation of the vector ``x`` (float32 or float64):
    ``y = x (1 + tanh(u)) / 2`` with ``u = k (x + c x**3)`` (``k = sqrt(2 / pi)``,
    ``c = 0.044715``, scalars of ``x``'s dtype), or (when ``y`` is empty) its gradient
    ``dx = g d`` in the same pass, with the slope ``d = (1 + t) / 2 + x (1 - t**2) u' / 2``
    (``t = tanh(u)``) never stored.

    Computed from ``b = e / (1 + e)`` with ``e = exp(-2 |u|)``, which is
    ``(1 - tanh |u|) / 2``: ``s = (1 + t) / 2`` is ``1 - b`` for ``u >= 0`` and ``b``
    below, ``y = x s`` and ``(1 - t**2) / 4 = s (1 - s) = b (1 - b)``. Nothing cancels
    (``1 + tanh(u)`` does for negative ``u``: the value keeps its relative accuracy in
    the negative tail) and nothing overflows. float32, measured on every float32 with
    ``2**-30 <= |x| <= 16`` against float64 math: ``y`` within 1.21e-7 ``|x|`` and
    ``d`` within 1.5e-7 (the numpy code: 1.23e-7 ``|x|`` and 1.2e-6).
    """
    zero, one, two, three = x.dtype.type(0), x.dtype.type(1), x.dtype.type(2), x.dtype.type(3)
    value = y.size > 0
    for i in range(x.size):
        v = x[i]
        u = k * (v + c * v * v * v)
        e = _exp(-two * abs(u))
        b = e / (one + e)
        s = one - b if u >= zero else b
        if value:
            y[i] = v * s
        else:
            slope = s + two * v * (one - b) * b * k * (one + three * c * v * v)
            dx[i] = g[i] * slope


# --- softmax, log_softmax -------------------------------------------------------------


@_compile("contract")
def _row_max(x: np.ndarray) -> Any:
    """The largest element of the non-empty vector ``x``, nan if it holds one (as
    ``numpy.max``; a zero maximum may come out as 0.0 or -0.0 when the row holds both,
    as numpy's own may): the maxima of the eight strided slices ``x[k::8]`` side by side
    (independent comparisons, which the CPU overlaps), then the largest of the eight,
    and a flag of nans seen (LLVM's ``llvm.maximum`` in a loop is 2.3 times slower on
    rows of 64). One running maximum waits on the previous comparison at every element:
    2.8 times slower on rows of 1024. This one function serves rows of every length;
    before, rows from 128 on went through a second function, and shorter ones through
    one running maximum: over 4096 rows that was 1.7 to 2 times slower for 1 to 48
    elements (most of it the branch and the second call, as rows under 8 show, which
    take the remainder loop alone) and 1.4 times for 64 to 128 (float32 and float64)."""
    n = x.size
    m0 = m1 = m2 = m3 = m4 = m5 = m6 = m7 = x[0]  # a nan here stays: nothing compares greater
    nan = False
    j = 0
    while j + 8 <= n:
        v0, v1, v2, v3 = x[j], x[j + 1], x[j + 2], x[j + 3]
        v4, v5, v6, v7 = x[j + 4], x[j + 5], x[j + 6], x[j + 7]
        m0 = v0 if v0 > m0 else m0
        m1 = v1 if v1 > m1 else m1
        m2 = v2 if v2 > m2 else m2
        m3 = v3 if v3 > m3 else m3
        m4 = v4 if v4 > m4 else m4
        m5 = v5 if v5 > m5 else m5
        m6 = v6 if v6 > m6 else m6
        m7 = v7 if v7 > m7 else m7
        nan |= (v0 != v0) | (v1 != v1) | (v2 != v2) | (v3 != v3)
        nan |= (v4 != v4) | (v5 != v5) | (v6 != v6) | (v7 != v7)
        j += 8
    while j < n:  # the rest, and every element of a row shorter than 8
        v = x[j]
        m0 = v if v > m0 else m0
        nan |= v != v
        j += 1
    m0 = m1 if m1 > m0 else m0
    m2 = m3 if m3 > m2 else m2
    m4 = m5 if m5 > m4 else m4
    m6 = m7 if m7 > m6 else m6
    m0 = m2 if m2 > m0 else m0
    m4 = m6 if m6 > m4 else m4
    m0 = m4 if m4 > m0 else m0
    zero = x.dtype.type(0)
    return zero / zero if nan else m0  # nan of x's dtype (no float64 constant)


@_compile("nnan", "nsz", "contract")
def _max_of_numbers(x: np.ndarray) -> Any:
    """The largest element of the non-empty vector ``x`` if it holds no nan; what it
    returns for a vector with a nan is unspecified, so its caller checks
    (``attention_exp_rows``: a nan among the row's entries makes the sum of their exps
    nan whatever this returned, as ``exp(nan - m)`` is nan for every ``m``).

    The comparisons may assume numbers (``nnan``) and take -0.0 and 0.0 as equal
    (``nsz``: the shift's sign of zero changes no result, as ``x - 0.0`` and
    ``x - (-0.0)`` differ only for ``x = -0.0``, whose exp is 1 either way), so the
    compiler keeps several maxima in flight. Over 4096 float32 rows: 1.7 times faster
    than ``_row_max`` on rows of 64, 1.2 times on 96, as fast on 128; from there
    ``_row_max``'s eight running maxima are faster (1.5 times on 192, 1.8 on 256), so
    rows from ``_SHORT_ROW`` on take it."""
    m = x[0]
    for j in range(1, x.size):
        v = x[j]
        m = v if v > m else m
    return m


_SHORT_ROW = 128
"""``attention_exp_rows``: rows shorter than this take ``_max_of_numbers``, longer ones
``_row_max``."""


@_compile("reassoc", "contract")
def _exp_sum(x: np.ndarray, shift: Any, e: np.ndarray) -> Any:
    """``e = exp(x - shift)`` for the vectors ``x`` and ``e``; returns ``sum(e)``."""
    s = x.dtype.type(0)
    for j in range(x.size):
        v = _exp(x[j] - shift)
        e[j] = v
        s += v
    return s


@_compile("reassoc", "contract")
def _exp_sum_first(x: np.ndarray, shift: Any, e: np.ndarray, w: int, scale: Any) -> Any:
    """``e = exp((x - shift) * scale)`` in the first ``w`` entries of the vectors ``x`` and
    ``e`` (``scale`` > 0; ``exp(x - shift)`` exactly for ``scale`` 1), 0 in the rest
    (whatever ``x`` holds there); returns ``sum(e)``. With ``shift`` the max of the
    first ``w``, every argument is at most 0 and the max's is 0, however large the
    entries. Over the whole vector with a select, which the compiler vectorises as it
    does ``_exp_sum`` (a loop of ``w`` steps and one of zeros: 1.6 times slower on causal
    rows of 64)."""
    s = x.dtype.type(0)
    zero = x.dtype.type(0)
    for j in range(x.size):
        v = _exp((x[j] - shift) * scale)
        v = v if j < w else zero
        e[j] = v
        s += v
    return s


@_compile("reassoc", "contract")
def _dot(a: np.ndarray, b: np.ndarray) -> Any:
    """``sum(a * b)`` for vectors of one length."""
    s = a.dtype.type(0)
    for j in range(a.size):
        s += a[j] * b[j]
    return s


@_compile("reassoc", "contract")
def _sum(a: np.ndarray) -> Any:
    """``sum(a)`` for a vector."""
    s = a.dtype.type(0)
    for j in range(a.size):
        s += a[j]
    return s


@_compile("contract")
def softmax_rows(x: np.ndarray, y: np.ndarray) -> None:
    """Softmax of each row of the 2-d ``x`` (m, d) into ``y``: ``e = exp(x - max)`` with
    the row's max, then ``y = e / sum(e)``. A row holding nan, or ``+inf``, or only
    ``-inf``, gives nan throughout (as numpy's ``exp(x - max) / sum``)."""
    m, d = x.shape
    for i in range(m):
        s = _exp_sum(x[i], _row_max(x[i]), y[i])
        for j in range(d):
            y[i, j] /= s


@_compile("contract")
def softmax_rows_backward(g: np.ndarray, y: np.ndarray, dx: np.ndarray) -> None:
    """The gradient of ``softmax_rows`` for the output gradient ``g`` (m, d), from its
    value ``y``: ``dx = (g - sum(g y)) y`` row by row, into ``dx``."""
    m, d = g.shape
    for i in range(m):
        s = _dot(g[i], y[i])
        for j in range(d):
            dx[i, j] = (g[i, j] - s) * y[i, j]


@_compile("contract")
def log_softmax_rows(x: np.ndarray, y: np.ndarray) -> None:
    """Log-softmax of each row of the 2-d ``x`` (m, d) into ``y``:
    ``y = (x - max) - log(sum(exp(x - max)))`` with the row's max (``y`` holds the exps
    in between). Rows with nan, ``+inf`` or only ``-inf`` give nan as in ``softmax_rows``."""
    m, d = x.shape
    for i in range(m):
        shift = _row_max(x[i])
        log_sum = np.log(_exp_sum(x[i], shift, y[i]))
        for j in range(d):
            y[i, j] = (x[i, j] - shift) - log_sum


@_compile("contract")
def log_softmax_rows_backward(g: np.ndarray, y: np.ndarray, dx: np.ndarray) -> None:
    """The gradient of ``log_softmax_rows`` for the output gradient ``g`` (m, d), from its
    value ``y``: ``dx = g - exp(y) sum(g)`` row by row, into ``dx``."""
    m, d = g.shape
    for i in range(m):
        s = _sum(g[i])
        for j in range(d):
            dx[i, j] = g[i, j] - _exp(y[i, j]) * s


# --- cross_entropy --------------------------------------------------------------------


@_compile("contract")
def cross_entropy_rows(
    x: np.ndarray, t: np.ndarray, e: np.ndarray, sums: np.ndarray, picked: np.ndarray
) -> None:
    """The start of ``cross_entropy`` for the 2-d logits ``x`` (n, c) and the class indices
    ``t`` (n,), each in ``[0, c)``: row by row, ``e = exp(x - max)`` with the row's max,
    ``sums = sum(e)`` and ``picked = (x[t] - max) - log(sum)``, the log-probability of
    the target. A row holding nan, or ``+inf``, or only ``-inf``, gives nan (as
    ``softmax_rows``)."""
    for i in range(x.shape[0]):
        shift = _row_max(x[i])
        s = _exp_sum(x[i], shift, e[i])
        sums[i] = s
        picked[i] = (x[i, t[i]] - shift) - np.log(s)


@_compile("contract")
def cross_entropy_rows_backward(
    e: np.ndarray, sums: np.ndarray, t: np.ndarray, c: np.ndarray, d: np.ndarray
) -> None:
    """The logits' gradient of ``cross_entropy_rows`` into ``d`` (n, c), from its ``e`` and
    ``sums``: ``d = c (e / sums - onehot(t))`` row by row, with ``c`` the (n,) factors of
    the rows (the output gradient times the weight of the target and the mean's
    ``1 / N``), or one factor for every row (``c`` of size 1)."""
    n, k = e.shape
    one = c.size == 1
    for i in range(n):
        w = c[0] if one else c[i]
        f = w / sums[i]
        for j in range(k):
            d[i, j] = e[i, j] * f
        d[i, t[i]] -= w


# --- attention ------------------------------------------------------------------------


@_compile("contract")
def attention_exp_rows(
    x: np.ndarray, e: np.ndarray, inv: np.ndarray, n_l: int, causal: bool, scale: Any
) -> None:
    """The softmax of attention scores, unnormalised: for the 2-d scores ``x`` (m, s),
    the rows of (..., L, S) scores with ``n_l`` = L, ``e = exp((x - max) * scale)`` with
    the row's max (0 for a row of only -inf) and ``scale`` > 0 of ``x``'s dtype, and
    ``inv[i] = 1 / sum`` (0 where the sum is not positive, as for a row with nothing
    allowed), so that the softmax of the scaled scores is ``e * inv``. The scale applied
    here spares the op a scaled copy of the queries; applied after the max is taken off,
    it leaves the max's exp 1 and every other at most 1, however large the scores.
    With ``causal``, row ``i`` is query ``i % n_l`` of the top-left causal mask: its
    first ``i % n_l + 1`` entries are kept and the rest of ``e`` is 0, unread in ``x``
    (they need not hold numbers). nan propagates as in numpy (``_row_max``, ``_exp``).
    ``e`` is another array than ``x`` (in place, the compiler cannot vectorise
    ``_exp_sum_first``: 3 times slower)."""
    m, s = x.shape
    zero, one = x.dtype.type(0), x.dtype.type(1)
    for i in range(m):
        w = min(i % n_l + 1, s) if causal else s
        if w == 0:
            shift = zero
        elif w < _SHORT_ROW:
            shift = _max_of_numbers(x[i, :w])
        else:
            shift = _row_max(x[i, :w])
        if shift < zero and np.isinf(shift):  # only -inf (no float64 constant)
            shift = zero
        total = _exp_sum_first(x[i], shift, e[i], w, scale)
        if total != total:  # a nan among the first w (or +inf: inf - inf): numpy's max
            shift = _row_max(x[i, :w])
            if shift < zero and np.isinf(shift):
                shift = zero
            total = _exp_sum_first(x[i], shift, e[i], w, scale)
        inv[i] = one / total if total > zero else zero


@_compile("contract")
def attention_scores_backward(ds: np.ndarray, e: np.ndarray, inv: np.ndarray) -> None:
    """The scores' gradient of attention, in place, row by row: for the 2-d ``ds`` (m, s)
    holding ``(g inv) v^T`` (times the dropout mask), ``e`` the unnormalised weights
    ``attention_exp_rows`` gives and ``inv`` their rows' ``1 / sum``,
    ``ds = e (ds - sum(ds e) inv)``: the softmax's backward on ``P = e inv``. Over whole
    rows also for the causal mask (``e`` is 0 above it, ``ds`` finite): rows of one
    length vectorise, which makes skipping the masked half slower."""
    m, s = ds.shape
    for i in range(m):
        c = _dot(ds[i], e[i]) * inv[i]
        for j in range(s):
            ds[i, j] = (ds[i, j] - c) * e[i, j]
