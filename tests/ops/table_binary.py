"""Op table.

Binary elementwise ops: maximum, minimum, fmax, fmin, arctan2, hypot, logaddexp, logaddexp2,
where.
"""

from __future__ import annotations

from .spec import OpSpec

OPS: list[OpSpec] = []
