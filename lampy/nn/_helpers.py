"""Helpers shared by the module files of ``lampy.nn``: argument checks, reading an
input's shape and dtype without copying it, the dtype rule of forward passes, and error
messages that name the module.
"""

from __future__ import annotations

import math
import operator
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import DTypeError, LampyTypeError, LampyValueError, ShapeError
from lampy.nn import init as _init
from lampy.opkit import Variable
from lampy.random import resolve_rng as rng_or_default

if TYPE_CHECKING:
    from lampy.nn._module import Module

__all__ = [
    "check_dtype",
    "check_size",
    "dtype_of",
    "named_errors",
    "rng_or_default",
    "shape_of",
    "uniform_bias",
]


def shape_of(x: Any) -> tuple[int, ...]:
    """The shape of a Variable, array or scalar input (read without copying it)."""
    return x.shape if isinstance(x, Variable) else tuple(np.shape(x))


def dtype_of(x: Any) -> np.dtype[Any]:
    """The dtype of a Variable, array or scalar input (read without copying it)."""
    if isinstance(x, (Variable, np.ndarray, np.generic)):
        return x.dtype
    return np.asarray(x).dtype


def check_dtype(module: object, want: np.dtype[Any] | None, *inputs: tuple[str, Any]) -> None:
    """The dtype rule of every module with floating parameters: its inputs (``(what,
    value)`` pairs; None values skipped) have the parameters' dtype ``want``.

    A module never casts an input: a float64 array into a float32 layer would make the
    whole forward and backward pass float64 (twice the memory, half the speed), and a
    float16 one would lose precision without a word. PyTorch raises too.

    Raises:
        DTypeError: naming the module (its repr), the input, both dtypes and the two
            fixes (cast the input, or build the module in the input's dtype).
    """
    if want is None:
        return
    for what, x in inputs:
        if x is None:
            continue
        dt = dtype_of(x)
        if dt != want and dt.kind in "fc":  # other kinds: the op names the bad operand
            raise DTypeError(
                f"{module!r}: {what} is {dt} but the module's parameters are {want}. "
                f"Modules do not cast their inputs: cast it with x.astype(np.{want}), or "
                f"build the module with dtype=np.{dt}."
            )


@contextmanager
def named_errors(module: Module) -> Iterator[None]:
    """Re-raise a functional op's argument errors with the module's repr in front, so
    that the message names the layer and its configuration."""
    try:
        yield
    except (ShapeError, LampyValueError, LampyTypeError) as e:
        raise type(e)(f"{module!r}: {e}") from None


def check_size(owner: str, what: str, v: Any, minimum: int = 1) -> int:
    """``v`` as an int ``>= minimum``, else a clear error naming ``owner`` and ``what``."""
    try:
        i = operator.index(v)
    except TypeError:
        raise LampyTypeError(f"{owner}: {what} must be an int, got {v!r}.") from None
    if i < minimum:
        raise LampyValueError(f"{owner}: {what} must be at least {minimum}, got {i}.")
    return i


def uniform_bias(n: int, fan_in: int, rng: Any, dtype: Any) -> np.ndarray:
    """PyTorch's default bias: ``U(-1/sqrt(fan_in), 1/sqrt(fan_in))`` (0 for ``fan_in`` 0)."""
    bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0.0
    return _init.uniform(n, -bound, bound, rng=rng, dtype=dtype)
