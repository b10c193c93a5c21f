"""Drawing samples: ``multinomial``, with PyTorch's name and arguments, from the numpy
generator given or lampy's default one."""

from __future__ import annotations

import operator
from typing import Any

import numpy as np

from lampy._errors import LampyValueError, ShapeError
from lampy.ops._operands import value_of
from lampy.random import resolve_rng


def multinomial(
    input: Any,
    num_samples: int,
    replacement: bool = False,
    *,
    rng: np.random.Generator | None = None,
    generator: np.random.Generator | None = None,
) -> np.ndarray:
    """Indices drawn from the categorical distributions in the rows of ``input``, as
    ``torch.multinomial``: int64 indices of shape ``(num_samples,)`` for a 1-d
    ``input``, ``(rows, num_samples)`` for a 2-d one. The weights need not sum to 1;
    without ``replacement`` an index is drawn at most once per row. No gradient: a plain
    numpy array (a Variable's value is read).

    Args:
        input: Non-negative weights, 1-d or 2-d (a Variable or an array).
        num_samples: How many indices to draw per row.
        replacement: Whether an index may be drawn again.
        rng: The ``numpy.random.Generator`` to draw from (``generator=``, PyTorch's name,
            is accepted too); lampy's default generator (``lampy.manual_seed``) when
            neither is given.

    Raises:
        LampyTypeError: if the generator is not a ``numpy.random.Generator``.
        ShapeError: if ``input`` is not 1-d or 2-d.
        LampyValueError: for negative or non-finite weights, a row summing to 0, or more
            samples than nonzero weights without replacement.

    Examples:
        >>> import numpy as np, lampy
        >>> lampy.multinomial(np.array([0.0, 1.0, 0.0]), 2, replacement=True,
        ...                   rng=np.random.default_rng(0)).tolist()
        [1, 1]
    """
    name = "multinomial"
    g = resolve_rng(name, rng if rng is not None else generator)
    p = np.asarray(value_of(input, saved=False), dtype=np.float64)
    if p.ndim not in (1, 2):
        raise ShapeError(f"{name}: input must be 1-d or 2-d, got shape {p.shape}.")
    n = operator.index(num_samples)
    rows = p.reshape(-1, p.shape[-1])
    if n <= 0:
        raise LampyValueError(f"{name}: num_samples must be positive, got {n}.")
    if not np.isfinite(rows).all() or (rows < 0).any():
        raise LampyValueError(f"{name}: the weights must be finite and >= 0.")
    sums = rows.sum(axis=1)
    if (sums <= 0).any():
        raise LampyValueError(f"{name}: each row of weights must have a positive sum.")
    if not replacement and n > int((rows > 0).sum(axis=1).min()):
        raise LampyValueError(
            f"{name}: cannot draw {n} samples without replacement from a row with "
            f"{int((rows > 0).sum(axis=1).min())} nonzero weights."
        )
    out = np.stack(
        [
            g.choice(rows.shape[1], size=n, replace=replacement, p=r / s)
            for r, s in zip(rows, sums, strict=True)
        ]
    ).astype(np.int64)
    return out.reshape(n) if p.ndim == 1 else out


__all__ = ["multinomial"]
