"""Masks and replacements: ``masked_fill`` and ``one_hot`` (PyTorch-named) and
``nan_to_num`` (numpy's)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from lampy._errors import BadIndexError, DTypeError, LampyValueError, ShapeError
from lampy.opkit import (
    Operand,
    Variable,
    contrib_of,
    contribution,
    no_complex_into_real,
    op,
    param_of,
    value_of,
)

if TYPE_CHECKING:
    from numpy.typing import DTypeLike


_add, _where = np.add, np.where


def masked_fill(x: Operand, mask: Any, value: Operand) -> Variable:
    """``x`` with ``value`` where ``mask`` is true: PyTorch's
    ``torch.masked_fill(input, mask, value)``, out of place.

    ``x`` and ``mask`` broadcast together (the result has their broadcast shape), and
    the result keeps ``x``'s dtype: ``value`` is cast to it.

    Args:
        x: The array to fill.
        mask: A boolean array-like (or boolean Variable).
        value: A Python number, a 0-d array or a 0-d Variable (differentiable).

    Raises:
        DTypeError: if ``mask`` is not boolean (compare it first: ``m != 0``).
        ShapeError: if ``value`` is not 0-d, or ``x`` and ``mask`` do not broadcast.

    Gradient:
        ``dx = g`` where ``mask`` is false, else 0 (summed over broadcast axes);
        ``dvalue = sum(g[mask])``.
    """
    a = value_of(x, name="masked_fill")
    m = np.asarray(value_of(mask, name="masked_fill"))
    v = value_of(value, name="masked_fill")
    if m.dtype != np.bool_:
        raise DTypeError(
            f"masked_fill: mask must be boolean, got dtype {m.dtype}; compare it first "
            "(for example `mask != 0`)."
        )
    if np.ndim(v) != 0:
        raise ShapeError(
            f"masked_fill: value must be a number or 0-d, got shape {np.shape(v)}; for an "
            "array of fill values use lampy.where(mask, values, x)."
        )
    no_complex_into_real("masked_fill", "the value", a, v)
    dtype = np.result_type(a)
    try:
        result = _where(m, np.asarray(v).astype(dtype), a)
    except ValueError:
        raise ShapeError(
            f"masked_fill: mask of shape {m.shape} does not broadcast with x of shape "
            f"{np.shape(a)}; numpy broadcasting needs trailing dimensions equal or 1."
        ) from None

    def d_value(g: np.ndarray) -> Any:
        return np.sum(g, where=m)

    # the vjps: piecewise-constant masks, as constants (built only when a pass needs them)
    return op(
        "masked_fill",
        result,
        param_of(
            x,
            contribution(lambda g: _where(m, g.dtype.type(0), g)),
            vjp=lambda g, out: g * ~m,
        ),
        contrib_of(value, d_value, vjp=lambda g, out: (g * m).sum()),
    )


def nan_to_num(
    x: Operand,
    copy: bool = True,
    nan: float | Variable = 0.0,
    posinf: float | Variable | None = None,
    neginf: float | Variable | None = None,
) -> Variable:
    """``x`` with nan replaced by ``nan``, +inf by ``posinf`` and -inf by ``neginf``, as
    ``numpy.nan_to_num`` (None: the largest, or most negative, finite value of ``x``'s
    dtype). Complex values have their real and imaginary parts replaced separately.

    Args:
        x: The array.
        copy: Accepted for numpy's signature; lampy never modifies its input, so the
            result is always a new Variable.
        nan: The value for nan: a number, or a 0-d Variable (differentiable).
        posinf: The value for +inf, or None.
        neginf: The value for -inf, or None.

    Raises:
        ShapeError: if a replacement given as a Variable is not 0-d.

    Gradient:
        ``dx = g`` where ``x`` is finite, 0 where it was replaced; a Variable replacement
        gets the sum of ``g`` over the elements it replaced.
    """
    del copy
    a = value_of(x, name="nan_to_num")
    fills = {"nan": nan, "posinf": posinf, "neginf": neginf}
    for what, v in fills.items():
        if type(v) is Variable and v.ndim != 0:
            raise ShapeError(
                f"nan_to_num: {what} must be a number or 0-d, got a Variable of shape {v.shape}."
            )
    pv, mv = (None if v is None else value_of(v, name="nan_to_num") for v in (posinf, neginf))
    value = np.nan_to_num(
        np.array(a), copy=False, nan=value_of(nan, name="nan_to_num"), posinf=pv, neginf=mv
    )

    def replaced(test: Any) -> Any:
        return lambda g: np.sum(g, where=test(a))

    def replaced_vjp(test: Any) -> Any:
        return lambda g, out: (g * test(a)).sum()

    return op(
        "nan_to_num",
        value,
        param_of(
            x,
            contribution(lambda g: _where(np.isfinite(a), g, g.dtype.type(0))),
            vjp=lambda g, out: g * np.isfinite(a),
        ),
        contrib_of(nan, replaced(np.isnan), fresh=False, vjp=replaced_vjp(np.isnan)),
        contrib_of(posinf, replaced(np.isposinf), fresh=False, vjp=replaced_vjp(np.isposinf)),
        contrib_of(neginf, replaced(np.isneginf), fresh=False, vjp=replaced_vjp(np.isneginf)),
    )


def one_hot(
    indices: Operand, num_classes: int = -1, *, dtype: DTypeLike | None = np.int64
) -> Variable:
    """One-hot codes of integer class indices: PyTorch's
    ``torch.nn.functional.one_hot(tensor, num_classes=-1)``.

    The result has shape ``indices.shape + (num_classes,)``, 1 at each index and 0
    elsewhere. It is a constant Variable (no gradient flows through class indices), of
    dtype int64 as in PyTorch unless ``dtype`` says otherwise (``dtype=numpy.float32``
    gives codes ready to multiply with float32 values).

    Args:
        indices: Non-negative integers (array-like or integer Variable).
        num_classes: The number of classes; -1 (default) means ``max(indices) + 1``.
        dtype: The result's dtype (keyword-only, a lampy addition).

    Raises:
        DTypeError: if ``indices`` are not integers.
        BadIndexError: if an index is negative or not below ``num_classes``.
        ValueError: if ``num_classes`` is -1 and ``indices`` is empty, or below -1.

    Gradient:
        None: the result is a constant.
    """
    i = np.asarray(value_of(indices, name="one_hot"))
    if i.dtype.kind not in "iu":
        raise DTypeError(
            f"one_hot: indices must be integers, got dtype {i.dtype}; cast with `.astype(int)`."
        )
    n = int(num_classes)
    if n < -1:
        raise LampyValueError(f"one_hot: num_classes must be -1 or non-negative, got {n}.")
    if n == -1:
        if i.size == 0:
            raise LampyValueError(
                "one_hot: cannot infer the number of classes from empty indices; pass num_classes."
            )
        n = int(i.max()) + 1
    if i.size:
        lo, hi = int(i.min()), int(i.max())
        if lo < 0 or hi >= n:
            bad = lo if lo < 0 else hi
            raise BadIndexError(
                f"one_hot: class index {bad} is out of range for {n} classes; class "
                f"indices must lie in 0 to {n - 1}."
            )
    value = np.zeros((*i.shape, n), dtype=dtype)
    if i.size:
        value.reshape(-1)[np.arange(0, i.size * n, n) + i.reshape(-1)] = 1
    return op("one_hot", value)


__all__ = ["masked_fill", "nan_to_num", "one_hot"]
