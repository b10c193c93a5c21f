"""Op table.

Indexing and sorting: take, take_along_axis, put_along_axis, compress, index_select,
index_add, scatter_add, gather, masked_fill, sort, topk.
"""

from __future__ import annotations

from .spec import OpSpec

OPS: list[OpSpec] = []
