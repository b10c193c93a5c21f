"""Op table.

Reductions: var, std, prod, max, min, amax, amin, logsumexp, cumsum, cumprod, norm, average.
"""

from __future__ import annotations

from .spec import OpSpec

OPS: list[OpSpec] = []
