"""The error function on numpy arrays (numpy has none), for ``gelu``.

With SciPy installed (the ``lampy[fast]`` extra), ``scipy.special.erf`` computes it, in
every dtype: Cephes' erf evaluated in double precision and rounded once to the input's
dtype (within 0.5 float32 ulp; within 3 ulp of the C library in float64), several
times faster than ``math.erf`` in float64 and as fast as the numpy path below in
float32. Without SciPy, lampy's own numpy code computes it:

float64 goes through the C library's ``erf`` (``math.erf``, correctly rounded to about
1 ulp, about 50 ns an element). float32 and float16 take a vectorised path about five
times faster, accurate to 1 float32 ulp (checked against ``math.erf`` on millions of
points in the tests):

* ``|x| < 0.5``: the Taylor series ``erf(x) = 2/sqrt(pi) * sum (-1)^n x^(2n+1) /
  (n! (2n+1))`` to ``n = 7`` (the next term is below 1e-9 relative there);
* elsewhere ``erf(|x|) = 1 - erfc(|x|)`` with the Chebyshev fit of ``erfc`` from
  Numerical Recipes (2nd ed., section 6.2, ``erfcc``), whose fractional error is below
  1.2e-7 for every ``x >= 0``,

evaluated in float64 on cache-sized chunks and rounded once to the input's dtype.

``erf`` is what float64 ``gelu`` uses. float32 ``gelu`` uses ``normal_cdf_float32``
instead: the normal distribution function ``Phi`` (and gelu's slope
``Phi(x) + x phi(x)``) evaluated in float32 from ``exp(-x**2 / 2)``, which the slope
needs anyway, times a rational function: within 1.2e-7 of ``Phi`` (absolute; see its
docstring), value and slope together in about 2.5 ns an element (28 numpy passes) where
``(1 + erf(x / sqrt(2))) / 2`` through ``erf`` takes about 25 ns an element.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from lampy.nn.functional._normal_cdf_constants import (
    _CLAMP32,
    _INV_SQRT_2PI32,
    _P32,
    _Q32,
    _TINY32,
)
from lampy.nn.functional._shared import fast_exp2
from lampy.opkit import Operand

__all__ = ["erf", "erf_numpy", "normal_cdf_float32"]

_erf_obj = np.frompyfunc(math.erf, 1, 1)
_NR_ERFC = (
    -1.26551223,
    1.00002368,
    0.37409196,
    0.09678418,
    -0.18628806,
    0.27886807,
    -1.13520398,
    1.48851587,
    -0.82215223,
    0.17087277,
)
_TAYLOR = tuple(
    2 / math.sqrt(math.pi) * (-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(8)
)
_CHUNK = 16384  # float64 scratch arrays of this length stay in the L2 cache


def _erf_chunk(x: np.ndarray, out: np.ndarray, t: np.ndarray, p: np.ndarray, z: np.ndarray) -> None:
    """erf of the float64 chunk ``x`` into ``out``; ``t``, ``p``, ``z`` are scratch."""
    np.abs(x, out=z)
    np.multiply(z, 0.5, out=t)
    t += 1.0
    np.reciprocal(t, out=t)  # t = 1 / (1 + |x| / 2)
    p.fill(_NR_ERFC[9])
    for c in _NR_ERFC[8:0:-1]:
        p *= t
        p += c
    p *= t
    p += _NR_ERFC[0]
    np.multiply(z, z, out=out)  # x^2, kept for the Taylor series
    p -= out
    np.exp(p, out=p)
    p *= t  # erfc(|x|)
    np.subtract(1.0, p, out=p)
    np.copysign(p, x, out=p)  # erf(x) away from 0
    q = t  # t is no longer needed
    q.fill(_TAYLOR[7])
    for c in _TAYLOR[6::-1]:
        q *= out
        q += c
    q *= x  # erf(x) near 0
    np.copyto(p, q, where=z < 0.5)
    out[...] = p


def _erf_fast(a: np.ndarray) -> np.ndarray:
    """erf of a float32 or float16 array: each chunk is evaluated in float64 scratch
    arrays of ``_CHUNK`` elements and written, rounded once, into the result in ``a``'s
    dtype (no array of ``a``'s size in float64)."""
    flat = a.reshape(-1)
    n = flat.size
    res = np.empty(n, a.dtype)
    size = min(_CHUNK, n)
    x, t, p, z, e = (np.empty(size) for _ in range(5))
    with np.errstate(over="ignore", invalid="ignore"):  # far tails: Taylor terms unused
        for s in range(0, n, _CHUNK):
            m = min(_CHUNK, n - s)
            x[:m] = flat[s : s + m]
            _erf_chunk(x[:m], e[:m], t[:m], p[:m], z[:m])
            res[s : s + m] = e[:m]
    return res.reshape(a.shape)


@functools.cache
def _scipy_erf() -> Any:
    """``scipy.special.erf``, or None when SciPy is not installed (imported on first use:
    SciPy takes a while to import and most programs never call erf)."""
    try:
        from scipy.special import erf as scipy_erf
    except ImportError:
        return None
    return scipy_erf


def erf(a: Operand) -> Any:
    """Elementwise erf of a float array, in its dtype (see the module docstring)."""
    scipy_erf = _scipy_erf()
    if scipy_erf is None:
        return erf_numpy(a)
    arr = np.asarray(a)
    r = scipy_erf(arr, out=np.empty_like(arr))  # float16 stays float16
    return r if arr.ndim else r[()]


def erf_numpy(a: Operand) -> Any:
    """Elementwise erf of a float array, in its dtype, without SciPy (numpy only)."""
    arr = np.asarray(a)
    if arr.dtype.itemsize <= 4:
        r = _erf_fast(arr)
    else:
        r = np.asarray(_erf_obj(arr.astype(np.float64)), dtype=arr.dtype)
    return r if arr.ndim else r[()]


def normal_cdf_float32(a: np.ndarray, slope: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """``Phi(a)``, the standard normal distribution function, of a float32 array, and
    with ``slope`` also ``Phi(a) + a phi(a)`` (the derivative of ``a Phi(a)``, gelu's),
    as new float32 arrays of ``a``'s shape (None for the slope without ``slope``).

    ``Phi(x) = 1/2 + sign(x) (1/2 - h(|x|))`` with ``h(v) = Phi(-v) = exp(-v**2 / 2)
    M(v)`` and ``M`` a cubic over a cubic (see ``_MILLS_P``); ``exp(-x**2 / 2)`` is
    shared with the slope's ``phi``. Every step is an in-place numpy pass over float32
    arrays, no float64 anywhere; ``|x|`` is clamped at 15, where ``exp`` underflows.

    Accuracy, measured on every float32 with ``2**-30 <= |x| <= 16`` against SciPy's
    ``ndtr``: ``Phi`` within 1.2e-7 absolutely (2 ulp of values in [0.5, 1)) with
    numpy's vectorised ``exp2`` (`fast_exp2`), 1.5e-7 with its ``exp``; the slope
    within 1.5e-7 and 1.7e-7. That is an absolute accuracy, so a relative one only
    where ``Phi`` is not small (not for ``x`` below about -2), as for
    ``(1 + erf(x / sqrt(2))) / 2`` computed in float32 (7e-8 with an erf exact to
    1 ulp) and for PyTorch's float32 gelu (whose ``x Phi(x)`` is within 3.8e-7 ``|x|``,
    against 1.4e-7 ``|x|`` here). nan gives nan, ``+-inf`` give 1 and 0 (slopes 1
    and 0).
    """
    p, q = _P32, _Q32
    x = np.clip(a.reshape(-1), -_CLAMP32, _CLAMP32)  # 1-d: 0-d arithmetic makes scalars
    v = np.abs(x)
    if fast_exp2():  # e = exp(-x**2 / 2)
        e = np.multiply(x, np.float32(-0.5 * math.log2(math.e)))
        e *= x
        np.exp2(e, out=e)
    else:
        e = np.multiply(x, np.float32(-0.5))
        e *= x
        np.exp(e, out=e)
    num = np.multiply(v, p[3])  # -P(v) / q3
    num += p[2]
    num *= v
    num += p[1]
    num *= v
    num += p[0]
    den = np.add(v, q[2])  # Q(v) / q3
    den *= v
    den += q[1]
    den *= v
    den += q[0]
    num /= den
    num *= e  # -h(|x|)
    num += np.float32(0.5)
    v += _TINY32
    sign = np.divide(x, v, out=v)
    num *= sign
    cdf = np.add(num, np.float32(0.5), out=num)
    if not slope:
        return cdf.reshape(a.shape), None
    e *= x
    e *= _INV_SQRT_2PI32
    e += cdf
    return cdf.reshape(a.shape), e.reshape(a.shape)
