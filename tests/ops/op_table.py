"""The declarative op table: every family's entries, collected.

Each family keeps its entries in ``table_<family>.py``; add a family here.
"""

from __future__ import annotations

from . import (
    table_binary,
    table_complex_parts,
    table_core,
    table_creation,
    table_differences,
    table_fft,
    table_indexing,
    table_linalg,
    table_nan,
    table_order_statistics,
    table_products,
    table_reductions,
    table_shape,
    table_signal,
    table_special,
    table_stats,
    table_unary,
)
from .spec import OpSpec

OPS: list[OpSpec] = [
    *table_core.OPS,
    *table_unary.OPS,
    *table_binary.OPS,
    *table_reductions.OPS,
    *table_nan.OPS,
    *table_order_statistics.OPS,
    *table_products.OPS,
    *table_linalg.OPS,
    *table_shape.OPS,
    *table_indexing.OPS,
    *table_differences.OPS,
    *table_signal.OPS,
    *table_fft.OPS,
    *table_complex_parts.OPS,
    *table_creation.OPS,
    *table_special.OPS,
    *table_stats.OPS,
]

BINARY_ELEMENTWISE: list[OpSpec] = [
    *table_core.BINARY_ELEMENTWISE,
    *getattr(table_binary, "BINARY_ELEMENTWISE", []),
]

names = [spec.name for spec in OPS]
assert len(names) == len(set(names)), "op table names must be unique"
