"""Op table.

Op table: Unary elementwise ops: abs, sign, sqrt, ..., trig, hyperbolic, rounding, clip.
"""

from __future__ import annotations

from .spec import OpSpec

OPS: list[OpSpec] = []
