"""Op table of the nan-ignoring reductions: nansum, nanmean, nanprod, nanvar, nanstd,
nanmax, nanmin, nanargmax, nanargmin, nancumsum, nancumprod.

Inputs hold nans at drawn positions. Where an all-nan slice makes the value nan (and so
the finite-difference objective nan everywhere), every reduced slice keeps one entry
(two for ``ddof=1``) that is not nan; the all-nan conventions are tested exactly in
``test_nan_reductions.py``. The extremes and nanstd draw distinct, well separated
values, nanprod and nancumprod exact zeros among moderate values (as their non-nan
namesakes in ``table_reductions.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lampy
from lampy.ops._nan_reductions import (
    nanargmax,
    nanargmin,
    nancumprod,
    nancumsum,
    nanmax,
    nanmean,
    nanmin,
    nanprod,
    nanstd,
    nansum,
    nanvar,
)
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec
from .table_reductions import _reduced_count, distinct, zero_or_moderate


def keep_entries(mask: np.ndarray, axis: Any, last: bool) -> None:
    """Clear ``mask`` at the first (and with ``last`` also the last) entry of every slice
    reduced over ``axis``, so each slice keeps values that are not nan."""
    ndim = mask.ndim
    axes = range(ndim) if axis is None else (axis,) if isinstance(axis, int) else axis
    axes = {ax % ndim for ax in axes} if ndim else set()
    for pos in (0, -1) if last else (0,):
        mask[tuple(pos if ax in axes else slice(None) for ax in range(ndim))] = False


def with_nans(
    values: Any, *, nonempty: bool, keep: bool, ddof: bool = False, one_axis: bool = False
) -> Any:
    """Reduction inputs from ``values(shape, dtype)`` with nans at drawn positions.

    Args:
        values: Builds the strategy of the finite values.
        nonempty: Draw shapes without zero-length axes.
        keep: Keep one entry of every reduced slice free of nans (two with ``ddof``).
        ddof: Also draw ``ddof`` (0 or 1, below the count of non-nan entries kept).
        one_axis: Draw ``axis`` as None or one int, without ``keepdims`` (cumulative ops
            and the arg-extremes).
    """

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(max_dims=3, min_side=1 if nonempty else 0, max_side=3))
            a = np.array(d(values(shape, dtype)))
            if one_axis:
                ndim = max(len(shape), 1)
                kwargs: dict[str, Any] = {"axis": d(st.none() | st.integers(-ndim, ndim - 1))}
            else:
                kwargs = {"axis": d(ls.axes(len(shape))), "keepdims": d(st.booleans())}
                if kwargs["axis"] == () and keep:
                    kwargs["axis"] = None
            mask = np.array(d(hnp.arrays(np.bool_, shape)))
            two = ddof and _reduced_count(shape, kwargs["axis"]) > 1
            if keep:
                keep_entries(mask, kwargs["axis"], last=two)
            if ddof:
                kwargs["ddof"] = d(st.sampled_from([0, 1])) if two else 0
            a[mask] = np.nan
            return [a], kwargs

        return build()

    return draw


def _uniform(shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    return ls.arrays(shape, dtype, min_value=-5, max_value=5)


def _distinct(shape: tuple[int, ...], dtype: np.dtype[Any]) -> Any:
    return distinct(shape, dtype, step=1.5)


def _as_const(fn: Any) -> Any:
    """An integer-valued op as a constant Variable, so the table can compare it."""
    return lambda a, **kw: lampy.const(fn(a, **kw))


OPS: list[OpSpec] = [
    OpSpec("nansum", nansum, np.nansum, with_nans(_uniform, nonempty=False, keep=False)),
    OpSpec("nanmean", nanmean, np.nanmean, with_nans(_uniform, nonempty=True, keep=True)),
    OpSpec("nanprod", nanprod, np.nanprod, with_nans(zero_or_moderate, nonempty=False, keep=False)),
    OpSpec("nanvar", nanvar, np.nanvar, with_nans(_uniform, nonempty=True, keep=True, ddof=True)),
    OpSpec("nanstd", nanstd, np.nanstd, with_nans(_distinct, nonempty=True, keep=True, ddof=True)),
    OpSpec("nanmax", nanmax, np.nanmax, with_nans(_distinct, nonempty=True, keep=True)),
    OpSpec("nanmin", nanmin, np.nanmin, with_nans(_distinct, nonempty=True, keep=True)),
    OpSpec(
        "nanargmax",
        _as_const(nanargmax),
        np.nanargmax,
        with_nans(_distinct, nonempty=True, keep=True, one_axis=True),
    ),
    OpSpec(
        "nanargmin",
        _as_const(nanargmin),
        np.nanargmin,
        with_nans(_distinct, nonempty=True, keep=True, one_axis=True),
    ),
    OpSpec(
        "nancumsum",
        nancumsum,
        np.nancumsum,
        with_nans(_uniform, nonempty=False, keep=False, one_axis=True),
    ),
    OpSpec(
        "nancumprod",
        nancumprod,
        np.nancumprod,
        with_nans(zero_or_moderate, nonempty=False, keep=False, one_axis=True),
    ),
]
