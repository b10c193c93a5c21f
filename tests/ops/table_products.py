"""Op table.

Products and matrix structure: dot, vdot, inner, outer, tensordot, einsum, trace, diagonal,
diag, tril, triu, kron.
"""

from __future__ import annotations

from .spec import OpSpec

OPS: list[OpSpec] = []
