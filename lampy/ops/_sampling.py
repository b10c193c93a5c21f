"""Drawing samples with PyTorch's names and arguments: ``multinomial``, ``rand``,
``randn``, ``randint`` and ``randperm``, from the numpy generator given (``rng=``, or
PyTorch's ``generator=``) or lampy's default one (``lampy.manual_seed``).

They return numpy arrays, not Variables: draws have no gradient, and data and indices
are numpy arrays in lampy. Float draws are float32 by default, as PyTorch's, and
integer draws int64 (PyTorch's ``long``).
"""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.opkit import Operand, value_of
from lampy.random import resolve_rng

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


def multinomial(
    input: Operand,
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
    p = np.asarray(value_of(input, False, name), dtype=np.float64)
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
    probs = rows / sums[:, None]  # a weight far below its row's sum may round to 0 here
    nonzero = int((probs > 0).sum(axis=1).min())
    if not replacement and n > nonzero:
        raise LampyValueError(
            f"{name}: cannot draw {n} samples without replacement from a row with "
            f"{nonzero} nonzero weights (after dividing by the row's sum)."
        )
    out = np.stack(
        [g.choice(rows.shape[1], size=n, replace=replacement, p=r) for r in probs]
    ).astype(np.int64)
    return out.reshape(n) if p.ndim == 1 else out


__all__ = ["multinomial", "rand", "randint", "randn", "randperm"]


def _generator(name: str, rng: Any, generator: Any) -> np.random.Generator:
    return resolve_rng(name, rng if rng is not None else generator)


def _size(name: str, size: tuple[Any, ...]) -> tuple[int, ...]:
    """PyTorch's ``*size``: ints, or one tuple or list of them."""
    items: Sequence[Any] = size
    if len(size) == 1 and isinstance(size[0], tuple | list):
        items = size[0]
    try:
        shape = tuple(operator.index(n) for n in items)
    except TypeError:
        raise LampyTypeError(
            f"{name}: the size must be ints or one tuple of ints, got {size!r}."
        ) from None
    if any(n < 0 for n in shape):
        raise LampyValueError(f"{name}: the size must not be negative, got {shape}.")
    return shape


def _float_dtype(name: str, dtype: Any) -> np.dtype[Any]:
    dt = np.dtype(np.float32 if dtype is None else dtype)
    if dt not in (np.float32, np.float64):
        raise LampyTypeError(f"{name}: dtype must be float32 or float64, got {dt}.")
    return dt


def rand(
    *size: int | Sequence[int],
    dtype: DTypeLike | None = None,
    rng: np.random.Generator | None = None,
    generator: np.random.Generator | None = None,
) -> np.ndarray:
    """Uniform draws in ``[0, 1)``, as ``torch.rand``: ``lampy.rand(2, 3)`` or
    ``lampy.rand((2, 3))``.

    Args:
        size: The shape, as ints or one tuple.
        dtype: float32 (the default, as PyTorch's) or float64.
        rng: The generator (``generator=`` too); lampy's default generator when None.

    Raises:
        LampyTypeError: for a size that is not ints, another dtype, or a generator that
            is not a ``numpy.random.Generator``.

    Examples:
        >>> import lampy
        >>> x = lampy.rand(2, 3)
        >>> x.shape, x.dtype, bool(((0 <= x) & (x < 1)).all())
        ((2, 3), dtype('float32'), True)
    """
    shape, dt = _size("rand", size), _float_dtype("rand", dtype)
    return _generator("rand", rng, generator).random(shape, dtype=dt)


def randn(
    *size: int | Sequence[int],
    dtype: DTypeLike | None = None,
    rng: np.random.Generator | None = None,
    generator: np.random.Generator | None = None,
) -> np.ndarray:
    """Standard normal draws, as ``torch.randn``: ``lampy.randn(2, 3)`` or
    ``lampy.randn((2, 3))``.

    Args:
        size: The shape, as ints or one tuple.
        dtype: float32 (the default, as PyTorch's) or float64.
        rng: The generator (``generator=`` too); lampy's default generator when None.

    Raises:
        LampyTypeError: for a size that is not ints, another dtype, or a generator that
            is not a ``numpy.random.Generator``.
    """
    shape, dt = _size("randn", size), _float_dtype("randn", dtype)
    return _generator("randn", rng, generator).standard_normal(shape, dtype=dt)


def randint(
    low: int,
    high: int | None = None,
    size: int | Sequence[int] | None = None,
    *,
    dtype: DTypeLike | None = np.int64,
    rng: np.random.Generator | None = None,
    generator: np.random.Generator | None = None,
) -> np.ndarray:
    """Integers drawn uniformly from ``[low, high)``, as ``torch.randint``:
    ``randint(high, size)`` or ``randint(low, high, size)``; int64 by default.

    Args:
        low: The lowest value (or, with two arguments, the end: ``randint(10, (3,))``).
        high: The end (excluded).
        size: The shape (a tuple of ints; required, as in PyTorch).
        dtype: An integer dtype.
        rng: The generator (``generator=`` too); lampy's default generator when None.

    Raises:
        LampyTypeError: without a size.
        LampyValueError: if ``high <= low``.

    Examples:
        >>> import lampy
        >>> ix = lampy.randint(10, (4,))
        >>> ix.shape, ix.dtype, bool(((0 <= ix) & (ix < 10)).all())
        ((4,), dtype('int64'), True)
    """
    name = "randint"
    if size is None:  # randint(high, size): the second argument is the size
        if high is None or isinstance(high, int | np.integer):
            raise LampyTypeError(
                f"{name}: pass a size, as in PyTorch: randint(high, (n,)) or "
                "randint(low, high, (n,))."
            )
        low, high, size = 0, low, high
    elif high is None:
        low, high = 0, low
    lo, hi = operator.index(low), operator.index(high)
    if hi <= lo:
        raise LampyValueError(f"{name}: high ({hi}) must be greater than low ({lo}).")
    shape = _size(name, (size,))
    g = _generator(name, rng, generator)
    out: np.ndarray = g.integers(lo, hi, shape, dtype=np.dtype(dtype))
    return out


def randperm(
    n: int,
    *,
    dtype: DTypeLike | None = np.int64,
    rng: np.random.Generator | None = None,
    generator: np.random.Generator | None = None,
) -> np.ndarray:
    """A random permutation of ``0 .. n-1``, as ``torch.randperm`` (int64 by default).

    Args:
        n: The length.
        dtype: An integer dtype.
        rng: The generator (``generator=`` too); lampy's default generator when None.

    Raises:
        LampyValueError: for a negative ``n``.
    """
    k = operator.index(n)
    if k < 0:
        raise LampyValueError(f"randperm: n must not be negative, got {k}.")
    return _generator("randperm", rng, generator).permutation(k).astype(dtype, copy=False)
