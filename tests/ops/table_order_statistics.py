"""Op table of the order statistics: median, quantile, percentile, nanmedian,
nanquantile, nanpercentile.

Values are distinct and well separated (no ties for finite differences to straddle);
``q`` is a number or an array, ``method`` any of numpy's. The nan versions draw nans,
keeping one entry of every reduced slice free of them (an all-nan slice makes the value
nan; its convention is tested exactly in ``test_order_statistics.py``).
"""

from __future__ import annotations

from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from lampy.ops._order_statistics import (
    median,
    nanmedian,
    nanpercentile,
    nanquantile,
    percentile,
    quantile,
)
from lampy.testing import strategies as ls

from .spec import Inputs, OpSpec
from .table_nan import keep_entries
from .table_reductions import distinct

# numpy's quantile methods (numpy.quantile's documentation).
METHODS = [
    "inverted_cdf",
    "averaged_inverted_cdf",
    "closest_observation",
    "interpolated_inverted_cdf",
    "hazen",
    "weibull",
    "linear",
    "median_unbiased",
    "normal_unbiased",
    "lower",
    "higher",
    "midpoint",
    "nearest",
]


def order_inputs(with_q: float | None, nans: bool) -> Any:
    """Inputs of an order statistic: ``with_q`` the top of ``q``'s range (None: no
    ``q``, the medians), ``nans`` whether to draw nans."""

    def draw(dtype: np.dtype[Any]) -> st.SearchStrategy[Inputs]:
        @st.composite
        def build(d: st.DrawFn) -> Inputs:
            shape = d(ls.shapes(max_dims=3, min_side=1, max_side=4))
            a = np.array(d(distinct(shape, dtype, step=1.5)))
            kwargs: dict[str, Any] = {"axis": d(ls.axes(len(shape))), "keepdims": d(st.booleans())}
            if nans:
                mask = np.array(d(hnp.arrays(np.bool_, shape)))
                keep_entries(mask, kwargs["axis"], last=False)
                a[mask] = np.nan
            if with_q is not None:
                q = st.floats(0, with_q, allow_nan=False)
                q_shape = d(ls.shapes(max_dims=2, min_side=1, max_side=3))
                kwargs["q"] = d(q | hnp.arrays(np.float64, q_shape, elements=q))
                kwargs["method"] = d(st.sampled_from(METHODS))
            return [a], kwargs

        return build()

    return draw


def _documented_layout(numpy_fn: Any) -> Any:
    """``numpy_fn`` (a nan* quantile) in its documented layout, ``q``'s shape followed by
    the reduced shape, which lampy follows: numpy's nan* functions lay out the result of
    a ``q`` of 2 or more dimensions otherwise for ``axis=()`` and for a tuple of axes
    that leaves some, and agree with it for a flat ``q``."""

    def ref(a: Any, q: Any, **kwargs: Any) -> Any:
        qa = np.asarray(q)
        if qa.ndim < 2:
            return numpy_fn(a, q, **kwargs)
        flat = np.asarray(numpy_fn(a, qa.reshape(-1), **kwargs))
        return flat.reshape(qa.shape + flat.shape[1:])

    return ref


OPS: list[OpSpec] = [
    OpSpec("median", median, np.median, order_inputs(None, nans=False)),
    OpSpec("quantile", quantile, np.quantile, order_inputs(1.0, nans=False)),
    OpSpec("percentile", percentile, np.percentile, order_inputs(100.0, nans=False)),
    OpSpec("nanmedian", nanmedian, np.nanmedian, order_inputs(None, nans=True)),
    OpSpec(
        "nanquantile",
        nanquantile,
        _documented_layout(np.nanquantile),
        order_inputs(1.0, nans=True),
    ),
    OpSpec(
        "nanpercentile",
        nanpercentile,
        _documented_layout(np.nanpercentile),
        order_inputs(100.0, nans=True),
    ),
]
