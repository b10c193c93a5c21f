"""What the distributions share: arguments as Variables of one float dtype, scipy's
answers for invalid parameters (nan) and points outside the support (``-inf``), and
the error for an argument that takes no gradient."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError
from lampy._scipy import scipy_module
from lampy.opkit import Operand, Variable, const, needs_grad, real_operands
from lampy.ops import log, where

_NEG_INF = -float("inf")
_NAN = float("nan")


def floats(name: str, *args: Operand) -> list[Variable]:
    """The arguments of ``lampy.stats.<name>`` as Variables, constants in the float dtype
    numpy's promotion gives them all (Python numbers weak, so float32 points stay
    float32; integers become float64). Variables are returned as they are.

    Raises:
        MissingExtraError: scipy is not installed (lampy.stats is the ``lampy[scipy]``
            extra's, even where a formula needs no scipy function).
    """
    scipy_module("scipy.special", f"lampy.stats.{name}")
    real_operands(f"stats.{name}", *args)
    kinds = [a if type(a) in (int, float, bool) else _dtype(a) for a in args]
    dtype = np.result_type(*kinds)  # Python numbers are weak: float32 stays float32
    if dtype.kind != "f":
        dtype = np.dtype(np.float64)
    return [a if type(a) is Variable else const(a, dtype) for a in args]


def _dtype(a: Operand) -> np.dtype[Any]:
    return a.dtype if isinstance(a, (Variable, np.ndarray, np.generic)) else np.asarray(a).dtype


def plain(v: Variable) -> np.ndarray:
    """The numpy value of ``v`` as an array, for masks."""
    return np.asarray(v.value)


def positive(*params: Variable) -> np.ndarray:
    """Where every one of ``params`` is > 0 (nan is not): scipy's check of scales,
    shapes and degrees of freedom."""
    ok = np.asarray(True)
    for p in params:
        ok = ok & (plain(p) > 0)
    return ok


def kept(mask: np.ndarray, v: Variable, fill: float) -> Variable:
    """``v`` where ``mask`` holds, ``fill`` elsewhere: an argument the formula can take
    without a warning where it is invalid, its result then replaced by :func:`finish`.
    ``v`` itself where the mask holds everywhere."""
    return v if mask.all() else where(mask, v, fill)


def finish(
    value: Variable, valid: np.ndarray, outside: np.ndarray | None = None, fill: float = _NEG_INF
) -> Variable:
    """``value``, with ``fill`` (by default ``-inf``, scipy's log-density) where the point
    is ``outside`` the support and nan where the parameters are not ``valid``, as
    scipy's distributions answer; the gradient is 0 at both."""
    if outside is not None and outside.any():
        value = where(outside, fill, value)
    if not valid.all():
        value = where(valid, value, _NAN)
    return value


def log_probability(p: Variable) -> Variable:
    """``log(p)`` of a probability, ``-inf`` (gradient 0) where it is 0, without
    numpy's divide warning: scipy's ``logcdf`` where its ``cdf`` is 0."""
    zero = plain(p) <= 0
    return finish(log(kept(~zero, p, 1.0)), np.asarray(True), zero)


def refuse(name: str, arg: str, x: Operand, why: str) -> None:
    """Raise if ``x``, argument ``arg`` of ``lampy.stats.<name>``, needs a gradient it
    cannot have (a count, a shape parameter of a CDF)."""
    if needs_grad(x):
        raise LampyValueError(
            f"lampy.stats.{name}: no gradient in {arg}: {why}. Pass {arg} as a constant "
            f"(a number, a numpy array, or `{arg}.value` of the Variable)."
        )


def count(name: str, arg: str, k: Operand) -> Any:
    """The value of the count ``arg``, refusing a Variable that needs a gradient."""
    refuse(name, arg, k, "it is a count")
    return k.value if type(k) is Variable else np.asarray(k)
