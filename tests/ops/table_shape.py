"""Op table.

Shape ops: ravel, swapaxes, moveaxis, squeeze, expand_dims, broadcast_to, concatenate,
stack, split, tile, repeat, flip, roll, pad, ...
"""

from __future__ import annotations

from .spec import OpSpec

OPS: list[OpSpec] = []
