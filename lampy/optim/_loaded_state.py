"""A loaded optimizer state's entries checked and cast: a step count, or an array of
the param's shape cast to its dtype (``Optimizer.load_state_dict``)."""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy._narrowing import cast_checked
from lampy.autograd import Variable


def loaded_value(name: str, index: Any, key: str, v: Any, p: Variable) -> Any:
    """State entry ``key`` of param ``index`` as loaded: the step count as an int, a
    number or None as it is, an array checked against ``p``'s shape and cast to its
    dtype (a copy)."""
    if key == "step":
        return _loaded_step(name, index, v)
    if v is None or isinstance(v, (int, float)):
        return v
    a = np.asarray(v)
    if a.dtype.kind not in ("biufc" if p.dtype.kind == "c" else "biuf"):
        raise LampyTypeError(
            f"{name}: state {key!r} of param {index!r} is {v!r} ({type(v).__name__}); "
            f"expected an array of numbers of the param's shape {p.shape}."
        )
    if a.shape != p.shape:
        raise ShapeError(
            f"{name}: state {key!r} of param {index!r} has shape {a.shape} but the param "
            f"has shape {p.shape}."
        )
    out = cast_checked(name, f"state {key!r} of param {index!r}", a, p.dtype)
    return out.copy() if out is a else out  # a copy either way


def _loaded_step(name: str, index: Any, v: Any) -> int:
    """A loaded step count as an int: a whole number >= 0 (an int, an integral float or a
    one-element array or tensor of one, as PyTorch stores it), else a clear error."""
    # numpy arrays and scalars, and other libraries' (a PyTorch tensor: tensor(2.)).
    foreign = hasattr(v, "__array__") and not isinstance(v, int | float)
    a = np.asarray(v) if isinstance(v, np.ndarray | np.generic) or foreign else None
    if a is not None and a.size == 1 and a.dtype.kind in "iuf":
        v = a.reshape(()).item()
    if isinstance(v, float) and v.is_integer():
        v = int(v)
    if not isinstance(v, int) or isinstance(v, bool):
        raise LampyTypeError(
            f"{name}: state 'step' of param {index!r} is {v!r} ({type(v).__name__}); it must "
            "be a whole number, the count of steps taken."
        )
    if v < 0:
        raise LampyValueError(
            f"{name}: state 'step' of param {index!r} is {v}; a count of steps must be >= 0."
        )
    return v


__all__ = ["loaded_value"]
