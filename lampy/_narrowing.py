"""Casting loaded arrays into a narrower dtype without silent overflow.

Loading a float64 checkpoint into a float32 model (or int64 counts into int32) is a
``same_kind`` cast numpy performs with only a warning when a value does not fit: 1e300
becomes ``inf``, 2**40 wraps around. ``cast_checked`` makes that an error naming the
entry, raised before anything is written.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyValueError

__all__ = ["cast_checked"]


def cast_checked(where: str, what: str, src: np.ndarray, dtype: Any) -> np.ndarray:
    """``src`` cast to ``dtype`` (a new array, or ``src`` itself if it has that dtype).

    Args:
        where: The caller, for the message (``"Linear.load_state_dict"``).
        what: The entry, for the message (``"'weight'"``).
        src: The array to cast; the cast must be allowed as ``same_kind``.
        dtype: The destination's dtype.

    Raises:
        LampyValueError: a finite value becomes infinite (float overflow) or an integer
            does not fit the destination's range; it names the entry, the number of such
            values and the largest one.
    """
    dtype = np.dtype(dtype)
    if src.dtype == dtype:
        return src
    with np.errstate(over="ignore", invalid="ignore"):
        out = src.astype(dtype, casting="same_kind")
    if dtype.kind == "f" and src.dtype.kind in "biuf":
        bad = np.isinf(out) & ~np.isinf(src)
        limit = f"{dtype}'s largest value is {np.finfo(dtype).max:.4g}"
    elif dtype.kind in "iu" and src.dtype.kind in "iu":
        info = np.iinfo(dtype)
        bad = (src < info.min) | (src > info.max)
        limit = f"{dtype} holds {info.min} to {info.max}"
    else:
        return out
    count = int(np.count_nonzero(bad))
    if count:
        largest = src[bad][np.argmax(np.abs(src[bad]))]
        raise LampyValueError(
            f"{where}: {what} holds {count} value(s) that do not fit {dtype} (the largest "
            f"in magnitude is {largest:.4g}; {limit}); the cast would make them "
            f"{'infinite' if dtype.kind == 'f' else 'wrap around'}. Nothing was loaded. "
            f"Load into a module of dtype {src.dtype}, or rescale the values."
        )
    return out
