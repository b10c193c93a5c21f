"""Helpers shared by the functional ops.

- ``SharedInBackward`` (from ``lampy.autograd``): a value shared by the backward closures
  of one op, computed once per backward pass (the convolutions' reshaped ``g``,
  attention's score gradient, the fused recurrent layers' backpropagation through time).
- ``frozen`` (from ``lampy.opkit``): an op's fresh result made read-only, so that
  ``lampy.op`` takes it (or a view of it) without a copy.
- ``sum_along`` and ``dot_along``: sums and dot products along one axis, keeping it, in
  one pass over memory and without temporaries (the fused softmax, log-softmax,
  cross-entropy and normalisation kernels).
- ``spread``: a binary ufunc of an array and a vector broadcasting against it (per row
  or per feature), faster than numpy's broadcasting loop.
- ``exp_`` and ``shifted_exp``: exp in place, and the shifted exp with its sums that
  softmax, log-softmax and cross-entropy start from.
- ``float_value`` and ``softplus_value``: an operand's value as floats, and an
  overflow-free ``log(1 + exp(a))``, for the activations, losses and normalisations.
- ``rng_or_default``: the generator given, or lampy's default one, for the ops and modules
  that draw random numbers.
- ``numba_kernels``, ``compiled`` and ``kernel_input``: the compiled kernels of
  ``layer_norm``, ``gelu``, ``softmax`` and ``log_softmax`` (``_numba_kernels``, with
  Numba installed), whether an array can take them, and an array in the one layout they
  are compiled for.
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from lampy.autograd import _ledger
from lampy.opkit import SharedInBackward, frozen, lifted, value_of
from lampy.random import resolve_rng

__all__ = [
    "zero_tangent",
    "SharedInBackward",
    "compiled",
    "dot_along",
    "exp_",
    "fast_exp2",
    "frozen",
    "kernel_input",
    "numba_kernels",
    "rng_or_default",
    "shifted_exp",
    "spread",
    "sum_along",
]

_vecdot = getattr(np, "vecdot", None)  # numpy >= 2.0
_matmul = np.matmul
# The ufuncs' reductions, without the Python layer of ndarray.max and ndarray.min.
_max_reduce, _min_reduce = np.maximum.reduce, np.minimum.reduce


def sum_along(a: np.ndarray, axis: int) -> np.ndarray:
    """``a.sum(axis, keepdims=True)``; along a contiguous last axis as one matrix-vector
    product with a vector of ones (BLAS, in ``a``'s dtype: two to three times faster
    than numpy's pairwise ``sum`` there)."""
    if axis == a.ndim - 1 and a.size and a.flags.c_contiguous:
        d = a.shape[-1]
        s: np.ndarray = _matmul(a.reshape(-1, d), _ones(d, a.dtype))
        return s.reshape(*a.shape[:-1], 1)
    summed: np.ndarray = a.sum(axis=axis, keepdims=True)
    return summed


@functools.lru_cache(maxsize=64)
def _ones(n: int, dtype: np.dtype[Any]) -> np.ndarray:
    """A read-only vector of ``n`` ones of ``dtype`` (``sum_along``'s, made once)."""
    ones = np.ones(n, dtype)
    ones.setflags(write=False)
    return ones


def dot_along(a: np.ndarray, b: np.ndarray, axis: int) -> np.ndarray:
    """``(a * b).sum(axis, keepdims=True)`` for real ``a`` and ``b`` of one shape; along
    the last axis in one pass without the product array (``numpy.vecdot``, numpy >= 2;
    it is slow along other axes, which take the product and ``sum``)."""
    if _vecdot is not None and axis == a.ndim - 1:
        d: np.ndarray = _vecdot(a, b)
        return d[..., None]
    product = np.multiply(a, b)
    summed: np.ndarray = product.sum(axis=axis, keepdims=True)
    return summed


def spread(ufunc: Any, a: np.ndarray, v: Any) -> np.ndarray:
    """``ufunc(a, v)`` as a new array of ``a``'s shape and dtype, for a ``v`` that
    broadcasts against ``a`` (a vector of per-row or per-feature values, in ``a``'s
    dtype). ``v`` is written out into the result first and ``ufunc`` runs in place on
    it: on a (256, 1024) float32 array numpy's broadcasting loop into a new array takes
    about 55 µs (a loop over two arrays of one shape: 25), writing ``v`` out and the
    same-shape loop about 45. (Into an array the caller owns, ``ufunc(a, v, out=a)``
    takes about 45 too.)
    """
    out = np.empty(a.shape, a.dtype)
    np.copyto(out, v)
    result: np.ndarray = ufunc(a, out, out=out)
    return result


@functools.cache
def fast_exp2() -> bool:
    """Whether numpy runs its float32 ``exp2`` as a SIMD loop on this CPU (numpy >= 2.0
    tells, through ``numpy.lib.introspect.opt_func_info``). It does with AVX-512 (SVML):
    twice as fast as numpy's float32 ``exp`` there, and within 1 ulp where ``exp`` is
    within 2.5. Elsewhere (AVX2, ARM, numpy 1.x) ``exp2`` is a scalar C-library loop,
    slower than ``exp``."""
    try:
        from numpy.lib.introspect import opt_func_info
    except ImportError:  # numpy < 2.0
        return False
    info = opt_func_info(func_name="^exp2$", signature="float32")
    loops = info.get("exp2", {})
    return any(not t.get("current", "baseline").startswith("baseline") for t in loops.values())


_LOG2E = math.log2(math.e)


def exp_(a: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """``exp(a)`` into ``out`` (by default in place on ``a``, an array the caller made),
    returned.

    float32 takes ``exp2(a * log2(e))`` where numpy's ``exp2`` is vectorised
    (`fast_exp2`): the product and float32's ``log2(e)`` add a relative error of at
    most ``1.25 |a| 2**-24``, the size of the error the rounding of ``a`` itself
    carries when ``a`` is a difference (a shifted logit), and ``exp2``'s own is
    smaller than ``exp``'s: within ``(6 + 1.25 |a|) 2**-24`` in all. Other dtypes, and
    float32 elsewhere, take ``exp``.
    """
    out = a if out is None else out
    if a.dtype == np.float32 and fast_exp2():
        np.multiply(a, np.float32(_LOG2E), out=out)
        np.exp2(out, out=out)
    else:
        np.exp(a, out=out)
    return out


_TINY_SUM = 2.0**-30


def shifted_exp(a: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray, Any]:
    """``(e, s, shift)`` with ``e = exp(a - shift)`` (a new array) and ``s`` its sums
    along ``axis`` (kept), for a non-empty float array ``a``: the start of a softmax.

    The shift is the max of the whole array (a scalar: one pass that is half the cost
    of a broadcast one, after a reduction that is half the cost of one per slice) when
    every slice's sum is then at least ``2**-30``: a slice of ``n`` elements then has
    its max within ``20.8 + ln(n)`` of the array's, so its exps stay normal floats
    down to ``exp(-66.5 + ln(n))`` of its largest (``1e-26`` for ``n = 1024``), far
    below float32's resolution of a probability. Otherwise (a slice far below the
    others, or a nan or infinite max) the shift is the max of each slice, the classic
    formula, and its results.
    """
    m = _max_reduce(a, axis=None)  # a.max(), without the Python layer of ndarray.max
    if math.isfinite(m):
        e = exp_(np.subtract(a, m))
        s = sum_along(e, axis)
        if _min_reduce(s, axis=None) >= _TINY_SUM:
            return e, s, m
    m = a.max(axis=axis, keepdims=True)
    e = exp_(np.subtract(a, m))
    return e, sum_along(e, axis), m


@functools.cache
def numba_kernels() -> Any:
    """The compiled kernels (module ``_numba_kernels``) when Numba is installed, else None
    (imported on first use: Numba takes a while to import)."""
    try:
        from lampy.nn.functional import _numba_kernels
    except ImportError:
        return None
    return _numba_kernels


_COMPILED_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def compiled(a: np.ndarray) -> Any:
    """The compiled kernels if they can take ``a`` (a non-empty float32 or float64
    array) and Numba is installed, else None."""
    return numba_kernels() if a.size and a.dtype in _COMPILED_DTYPES else None


def kernel_input(a: np.ndarray) -> np.ndarray:
    """``a`` as a read-only C-contiguous array (``a`` itself or a view of it, a copy only
    when ``a`` is not contiguous): the one layout the kernels are compiled for, so that
    each dtype compiles once."""
    if a.flags.c_contiguous and not a.flags.writeable:
        return a
    v: np.ndarray = np.ascontiguousarray(a).view()
    v.flags.writeable = False
    return v


def float_value(x: Any, name: str, reserve: bool = True) -> Any:
    """The value of ``x``, an operand of op ``name``, as a float array (integers and bools
    become float64; a 0-d Variable's value may be a numpy scalar: ``np.asarray`` it where
    an ndarray is needed). With ``reserve``, the op's output, of this shape and dtype, is
    checked against the budgets of the current scope first (``lampy.MemoryBudgetError``
    before anything is allocated); ops whose output differs pass False."""
    a = value_of(x, name=name)
    if np.asarray(a).dtype.kind != "f":
        a = np.asarray(a, dtype=np.float64)
    if reserve and _ledger.open_budgets:
        _ledger.reserve(name, np.shape(a), np.result_type(a))
    return a


def softplus_value(a: Any) -> Any:
    """Overflow-free ``log(1 + exp(a))``."""
    return np.maximum(a, 0) + np.log1p(np.exp(-np.abs(a)))


def rng_or_default(owner: str, rng: Any) -> np.random.Generator:
    """``rng`` itself if given, else lampy's default generator
    (``lampy.default_generator()``, seeded by ``lampy.manual_seed``).

    Args:
        owner: The op or factory, named first in the message (``"Linear.init"``).
        rng: What the caller passed (None for the default generator).

    Raises:
        LampyTypeError: if ``rng`` is neither None nor a Generator.
    """
    return resolve_rng(owner, rng)


def zero_tangent(node: Any) -> Any:
    """A Variable of zeros of ``node``'s shape whose gradient flows into ``node`` (0 when
    ``node`` is None): added to a saved value that is affine in ``node``'s value with
    slope 1 (``diff = input - target``), it brings that value into the graph exactly,
    with every derivative, without keeping the input's value (``diff + zero_tangent(n_in)
    - zero_tangent(n_t)``)."""
    if node is None:
        return 0
    zero = np.zeros((), node.dtype)
    zero.flags.writeable = False
    return lifted(node, np.broadcast_to(zero, node.shape))
