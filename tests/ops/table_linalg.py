"""Op table.

lampy.linalg: inv, pinv, det, slogdet, solve, lstsq, cholesky, qr, eigh, svd, norm,
matrix_power.
"""

from __future__ import annotations

from .spec import OpSpec

OPS: list[OpSpec] = []
