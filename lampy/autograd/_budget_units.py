"""Byte counts as budgets are written: ``parse_bytes("1.5 GiB")`` for ``Scope(budget=...)``."""

from __future__ import annotations

import re

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError

_UNITS = {
    "": 1,
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "k": 2**10,
    "m": 2**20,
    "g": 2**30,
    "t": 2**40,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_BUDGET_RE = re.compile(r"\s*([0-9]*\.?[0-9]+(?:[eE][+-]?[0-9]+)?)\s*([A-Za-z]*)\s*")


def parse_bytes(budget: int | str, what: str = "Scope(budget=...)") -> int:
    """A byte count from an int or a string with a unit: ``"1.5 GiB"``, ``"200MB"``, ``"64k"``.

    Units: B; kB, MB, GB, TB (powers of 1000); KiB, MiB, GiB, TiB and K, M, G, T (powers
    of 1024); case-insensitive.

    Raises:
        LampyTypeError: for a type other than int or str.
        LampyValueError: for a string that does not parse, or a count below 1 byte.
    """
    if isinstance(budget, bool) or not isinstance(budget, int | np.integer | str):
        raise LampyTypeError(
            f"{what}: the budget must be an int (bytes) or a string with a unit such as "
            f"'1.5 GiB' or '200 MB', got {type(budget).__name__}."
        )
    if isinstance(budget, str):
        m = _BUDGET_RE.fullmatch(budget)
        unit = m.group(2).lower() if m else ""
        if m is None or unit not in _UNITS:
            raise LampyValueError(
                f"{what}: cannot read {budget!r} as a number of bytes; write an int, or a "
                "number with one of the units B, kB, MB, GB, TB, KiB, MiB, GiB, TiB "
                "(e.g. '1.5 GiB', '200 MB')."
            )
        f = float(m.group(1)) * _UNITS[unit]
        if not f < 2**63:
            raise LampyValueError(f"{what}: {budget!r} is too large a number of bytes.")
        n = int(f)
    else:
        n = int(budget)
    if n <= 0:
        raise LampyValueError(f"{what}: the budget must be positive, got {budget!r} ({n} bytes).")
    return n


__all__ = ["parse_bytes"]
