"""Second-order gradients (``check_grad(..., order=2)``) of the nan-reductions, sorting
and order statistics, differences, interp, convolve/correlate, polyval, linspace/full,
select, remainder and sinc, on the awkward inputs: nans, ties, repeated values, flat
segments, zeros, 0-d and single-element arrays."""

from __future__ import annotations

import warnings
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import lampy
from lampy.testing import check_grad

NAN = np.nan
WITH_NANS = np.array([[1.0, NAN, 2.0, 3.5], [NAN, NAN, NAN, NAN], [0.5, -1.0, NAN, 2.0]])


def _check(f: Any, *arrays: Any, **kw: Any) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # all-nan slices
        check_grad(f, *arrays, order=2, **kw)


def _gauss_newton(f: Any, x: np.ndarray) -> None:
    """At ties (kinks, where finite differences of the first-order gradient jump):
    ``f`` is locally linear with the first-order Jacobian ``J``, so the recorded Hessian
    of ``sum(c * f(x)**2)`` must be ``2 J^T diag(c) J``."""
    with warnings.catch_warnings(), lampy.Scope():
        warnings.simplefilter("ignore", RuntimeWarning)
        out = np.asarray(f(lampy.const(x)).value)
        c = np.arange(1.0, out.size + 1).reshape(out.shape)
        h = lampy.hessian(lambda v: lampy.sum(f(v) ** 2 * c))(x)
        j = lampy.jacobian(f)(x)
    jm = np.asarray(getattr(j, "value", j)).reshape(out.size, x.size)
    expected = 2 * jm.T @ (c.reshape(-1, 1) * jm)
    np.testing.assert_allclose(
        np.asarray(getattr(h, "value", h)).reshape(x.size, x.size), expected, atol=1e-12
    )


def _hessian_finite(f: Any, x: np.ndarray) -> None:
    """The recorded Hessian of ``sum(f(x))`` holds no nan (masked branches stay clean)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        h = lampy.hessian(lambda v: lampy.sum(f(v)))(x)
    assert np.all(np.isfinite(np.asarray(h.value if hasattr(h, "value") else h)))


@pytest.mark.parametrize("name", ["nansum", "nanmean", "nanprod", "nanvar", "nanstd"])
@pytest.mark.parametrize("axis", [None, 0, 1])
def test_nan_reductions_with_nans(name: str, axis: Any) -> None:
    f = getattr(lampy, name)
    _check(lambda v: f(v, axis=axis), WITH_NANS)
    if axis == 1:  # the all-nan row gives nan values, but no nan derivatives
        _hessian_finite(lambda v: f(v, axis=axis), WITH_NANS)


@pytest.mark.parametrize("name", ["nanmax", "nanmin", "nancumsum", "nancumprod"])
@pytest.mark.parametrize("axis", [None, 1])
def test_nan_extremes_and_cumulative_with_nans(name: str, axis: Any) -> None:
    _check(lambda v: getattr(lampy, name)(v, axis=axis), WITH_NANS)


def test_nan_reductions_ties_zeros_and_ddof() -> None:
    x = np.array([[2.0, NAN, 2.0, 0.0], [0.0, 0.0, NAN, 3.0]])
    distinct = np.array([[2.0, NAN, 1.0, 0.5], [0.25, -1.0, NAN, 3.0]])
    _check(
        lambda v: (lampy.nanmax(v, axis=1) * lampy.nanmin(v, axis=1)) ** 2,
        distinct,
    )
    _gauss_newton(lambda v: lampy.nanmax(v, axis=1), x)  # tied maxima share
    _check(lambda v: lampy.nanprod(v, axis=1), x)
    _check(lambda v: lampy.nancumprod(v, axis=1), x)
    _check(lambda v: lampy.nanvar(v, axis=1, ddof=1) + lampy.nanstd(v, axis=1, ddof=1), x)
    _check(lambda v: lampy.nanstd(v, keepdims=True), np.array([1.0, NAN, 4.0]))


@settings(max_examples=8, deadline=None)
@given(
    hnp.arrays(
        np.float64,
        st.tuples(st.integers(1, 3), st.integers(1, 4)),
        elements=st.integers(-2, 2).map(float),
    )
)
def test_sort_and_partition_with_ties(x: np.ndarray) -> None:
    """Repeated values: the scatter through the permutation and its gather back."""
    _gauss_newton(lambda v: lampy.sort(v, axis=-1), x)
    _gauss_newton(lambda v: lampy.sort(v, axis=None), x)
    _gauss_newton(lambda v: lampy.partition(v, 0, axis=-1), x)
    _gauss_newton(lambda v: lampy.topk(v, x.shape[-1] // 2 + 1).values, x)


def test_sort_partition_topk_distinct() -> None:
    x = np.array([[0.5, -1.0, 2.0, 1.5], [3.0, 0.25, -2.0, 1.0]])
    w = np.arange(x.size, dtype=np.float64).reshape(x.shape) + 1
    _check(lambda v: lampy.sort(v, axis=0) ** 3 * w, x)
    _check(lambda v: lampy.partition(v, [1, 2], axis=-1) ** 3 * w, x)
    _check(lambda v: lampy.topk(v, 2, axis=1, largest=False).values ** 3, x)


def test_sort_zero_d_and_empty() -> None:
    _check(lambda v: lampy.sort(v, axis=None) ** 2, np.array(1.5))
    _check(lambda v: lampy.topk(v, 1).values ** 2, np.array(-0.5))
    _check(lambda v: lampy.sort(v) ** 2, np.zeros((2, 0)))


ORDER_STATISTICS = [
    lambda v: lampy.median(v, axis=1),
    lambda v: lampy.median(v),
    lambda v: lampy.quantile(v, [0.0, 0.3, 1.0], axis=1),
    lambda v: lampy.percentile(v, 40, axis=0, method="midpoint", keepdims=True),
    lambda v: lampy.quantile(v, [[0.5], [0.2]], axis=(0, 1), method="nearest"),
]


@pytest.mark.parametrize("f", ORDER_STATISTICS)
def test_order_statistics_with_ties(f: Any) -> None:
    x = np.array([[1.0, 2.0, 2.0, 3.0], [0.5, 0.5, 0.5, -1.0], [4.0, 1.0, 1.0, 2.0]])
    _gauss_newton(f, x)


@pytest.mark.parametrize("f", ORDER_STATISTICS)
def test_order_statistics_distinct(f: Any) -> None:
    x = np.array([[1.0, 2.5, 2.0, 3.0], [0.5, 0.75, 0.25, -1.0], [4.0, 1.5, 1.25, 2.25]])
    _check(lambda v: f(v) ** 3, x)


@pytest.mark.parametrize(
    "f",
    [
        lambda v: lampy.nanmedian(v, axis=1) ** 2,
        lambda v: lampy.nanquantile(v, [0.25, 0.9], axis=1) ** 2,
        lambda v: lampy.nanpercentile(v, 50, axis=0) ** 2,
    ],
)
def test_nan_order_statistics(f: Any) -> None:
    _check(f, WITH_NANS)


def test_median_zero_d() -> None:
    _check(lambda v: lampy.median(v) ** 2, np.array(2.0))


@pytest.mark.parametrize("n", [1, 2, 3])
def test_diff_with_prepend_and_append(n: int) -> None:
    x = np.array([[1.0, -2.0, 0.5], [3.0, 0.0, 1.5]])
    pre = np.array([[0.25], [-1.0]])

    def f(v: Any, p: Any) -> Any:
        return lampy.diff(v, n=n, axis=1, prepend=p, append=2.0) ** 2

    _check(f, x, pre)
    _check(lambda v: lampy.diff(v, n=4) ** 2, np.array([1.0, 2.0]))  # empty result


@pytest.mark.parametrize("edge_order", [1, 2])
def test_gradient_with_coordinates(edge_order: int) -> None:
    f = np.array([[1.0, 4.0, 2.0, 0.5], [0.0, -1.0, 3.0, 2.0], [1.0, 1.0, 1.0, 5.0]])
    coords = np.array([0.0, 0.5, 1.5, 1.75])
    _check(lambda v: lampy.gradient(v, coords, axis=1, edge_order=edge_order) ** 2, f)
    _check(lambda v: lampy.gradient(v, 0.5, axis=0, edge_order=edge_order) ** 2, f)


@pytest.mark.parametrize("name", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid"])
@pytest.mark.parametrize("lengths", [(4, 2), (2, 5), (3, 3), (1, 3)])
def test_convolve_correlate(name: str, mode: str, lengths: tuple[int, int]) -> None:
    rng = np.random.default_rng(sum(lengths))
    a, v = rng.normal(size=lengths[0]), rng.normal(size=lengths[1])
    _check(lambda x, y: getattr(lampy, name)(x, y, mode) ** 2, a, v)


def test_convolve_zero_d() -> None:
    _check(lambda x, y: lampy.convolve(x, y) ** 2, np.array(1.5), np.array([1.0, -2.0]))


def test_polyval() -> None:
    x = np.array([[0.0, 1.5], [-2.0, 0.5]])
    _check(lambda p, v: lampy.polyval(p, v), np.array([1.0, -2.0, 0.5, 3.0]), x)
    _check(lambda p, v: lampy.polyval(p, v) ** 2, np.array([2.0]), x)
    _check(lambda p, v: lampy.polyval(p, v), np.array([1.0, 0.0]), np.array(0.0))


def test_interp_knots_outside_flat_and_nan() -> None:
    xp = np.array([0.0, 1.0, 1.0, 2.5, 4.0])  # a repeated point: a jump
    fp = np.array([1.0, -1.0, 2.0, 0.5, 3.0])
    x = np.array([-1.0, 0.3, 1.7, 2.6, 3.9, 5.0])

    def f(xv: Any, xpv: Any, fpv: Any, lv: Any, rv: Any) -> Any:
        return lampy.interp(xv, xpv, fpv, lv, rv) ** 2

    _check(f, x, xp, fp, np.array(0.5), np.array(-2.0))
    _check(lambda xv, fpv: lampy.interp(xv, xp, fpv) ** 2, x, fp)
    xn = np.array([0.5, NAN, 3.0])
    _check(lambda fpv: lampy.interp(xn, xp, fpv) ** 2, fp)
    _check(lambda fpv: lampy.interp(x, [1.0], fpv) ** 2, np.array([2.0]))  # one point


def test_interp_period() -> None:
    xp = np.array([350.0, 10.0, 90.0, 180.0])
    fp = np.array([1.0, 2.0, -1.0, 0.5])
    x = np.array([-20.0, 5.0, 100.0, 400.0])
    _check(lambda xv, xpv, fpv: lampy.interp(xv, xpv, fpv, period=360) ** 2, x, xp, fp)


def test_linspace_and_full() -> None:
    s, e = np.array([0.0, 1.0]), np.array([[2.0], [-1.0], [0.5]])
    _check(lambda a, b: lampy.linspace(a, b, 4, axis=1) ** 2, s, e)
    _check(lambda a, b: lampy.linspace(a, b, 3, endpoint=False, retstep=True)[1] ** 2, s, e)
    _check(lambda a: lampy.linspace(a, 1.0, 1) ** 2, np.array(0.5))
    _check(lambda a: lampy.full((2, 3), a) ** 2, np.array([1.0, -2.0, 0.5]))


def test_select_remainder_sinc() -> None:
    x = np.array([[-1.5, 0.0, 2.0], [3.0, -0.2, 1.0]])
    conds = [x < 0, x > 1.5]

    def f(a: Any, b: Any, d: Any) -> Any:
        return lampy.select(conds, [a * a, b * a], d) ** 2

    _check(f, x, np.array([1.0, 2.0, -1.0]), np.array(0.5))
    _check(lambda a, b: lampy.remainder(a * a, b) * b, x, np.array([1.3, -0.7, 2.2]))
    _check(lambda a: lampy.sinc(a) ** 2, np.array([0.0, 1e-9, 0.02, 0.5, 1.0, -3.25]))
