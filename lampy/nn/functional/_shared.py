"""Helpers shared by the functional ops.

- ``SharedInBackward`` (from ``lampy.autograd``): a value shared by the backward closures
  of one op, computed once per backward pass (the convolutions' reshaped ``g``,
  attention's score gradient, the fused recurrent layers' backpropagation through time).
- ``frozen``: an op's fresh result made read-only, so that ``lampy.op`` takes it (or a
  view of it) without a copy.
"""

from __future__ import annotations

import numpy as np

from lampy.autograd._shared import SharedInBackward

__all__ = ["SharedInBackward", "frozen"]


def frozen(value: np.ndarray, shape: tuple[int, ...] | None = None) -> np.ndarray:
    """``value`` (reshaped to ``shape`` if given), made read-only first so that
    ``lampy.op`` takes it without a copy (it copies views of writable memory).

    ``value`` may be a view (an index, a reshape) of an array whose memory nothing else
    will write: that array, which owns the memory, is made read-only too. Only pass
    arrays the calling op made itself, never views of its inputs.
    """
    base = value.base
    if type(base) is np.ndarray:
        base.setflags(write=False)
    value.setflags(write=False)
    return value if shape is None or value.shape == shape else value.reshape(shape)
