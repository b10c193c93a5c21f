"""The constants of the float32 normal distribution function (``_erf``'s
``normal_cdf_float32``, and the compiled gelu in ``_numba_kernels``): in a module of
their own, which imports nothing of lampy's, so both can read them."""

from __future__ import annotations

import math

import numpy as np

# Phi(-v) = exp(-v**2 / 2) M(v) for v >= 0, with M the Mills ratio divided by
# sqrt(2 pi), M(v) = Phi(-v) exp(v**2 / 2), decreasing from 1/2 at 0 like
# 1 / (v sqrt(2 pi)). M is approximated by P(v) / Q(v), both cubics with
# P(0) / Q(0) = 1/2, fitted by iteratively reweighted least squares (Lawson's
# algorithm) on [0, 15] to the minimax absolute error of exp(-v**2 / 2) P / Q, which
# is 1.01e-8: a relative accuracy for M where exp(-v**2 / 2) is not small, and none
# needed in the far tail, where Phi itself is below float32's resolution of 1.
_MILLS_P = (0.5, 0.18382898163378503, 0.03460216187021653, -0.0001498912363093831)
_MILLS_Q = (1.0, 1.1655436085853088, 0.49915627363436627, 0.08125127238919129)
# Evaluated in float32 as -P / q3 over the monic Q / q3 (one pass fewer), the
# constant terms -1/(2 q3) and 1/q3 rounded so that M(0) = 1/2 exactly.
_P32 = tuple(np.float32(-c / _MILLS_Q[3]) for c in _MILLS_P)
_Q32 = (np.float32(-2 * _P32[0]), *(np.float32(c / _MILLS_Q[3]) for c in _MILLS_Q[1:3]))
_CLAMP32 = np.float32(15.0)  # exp(-15**2 / 2) underflows float32: Phi is 0 or 1 beyond
_TINY32 = np.float32(1e-30)  # keeps x / (|x| + tiny) finite at 0, exact (+-1) above 1e-22
_INV_SQRT_2PI32 = np.float32(1 / math.sqrt(2 * math.pi))

__all__ = ["_CLAMP32", "_INV_SQRT_2PI32", "_MILLS_P", "_MILLS_Q", "_P32", "_Q32", "_TINY32"]
