"""median, quantile, percentile and their nan versions: interpolation weights, ties,
nans and all-nan slices, methods, q arrays, 0-d, empty and float32 inputs, errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy.testing import check_grad

NAN = np.nan
# Sorted: 1 (index 1), 2 (index 3), 3 (index 2), 4 (index 0).
X = [4.0, 1.0, 3.0, 2.0]


def _grad(fn, x, *args, **kwargs):  # type: ignore[no-untyped-def]
    """The value and the gradient of sum(fn(x, ...)) at x."""
    with lampy.Scope():
        v = lampy.param(x)
        y = fn(v, *args, **kwargs)
        y.sum().backward()
        return y.value, v.grad


def test_linear_interpolation_weights() -> None:
    """q = 0.4 of four values: virtual index 1.2, so 0.8 of the 2nd smallest and 0.2
    of the 3rd smallest."""
    value, grad = _grad(lampy.quantile, X, 0.4)
    assert value == pytest.approx(2.2)
    assert value == np.quantile(X, 0.4)
    np.testing.assert_allclose(grad, [0, 0, 0.2, 0.8], rtol=1e-12)


@pytest.mark.parametrize(
    ("method", "expected"),
    [
        ("lower", [0, 0, 0, 1]),
        ("higher", [0, 0, 1, 0]),
        ("nearest", [0, 0, 0, 1]),
        ("midpoint", [0, 0, 0.5, 0.5]),
        ("hazen", [0, 0, 0.1, 0.9]),  # virtual index 4 * 0.4 - 0.5 = 1.1
    ],
)
def test_methods(method: str, expected: list[float]) -> None:
    """Other methods pick or blend their order statistics with numpy's weights."""
    value, grad = _grad(lampy.quantile, X, 0.4, method=method)
    assert value == np.quantile(X, 0.4, method=method)
    np.testing.assert_allclose(grad, expected, rtol=1e-12, atol=1e-15)


def test_q_array() -> None:
    """An array q puts its shape in front; each quantile sends its own weights."""
    value, grad = _grad(lampy.quantile, X, [[0.0, 0.4], [1.0, 0.5]])
    np.testing.assert_array_equal(value, np.quantile(X, [[0.0, 0.4], [1.0, 0.5]]))
    # q=0: the minimum; q=0.4: 0.2 / 0.8; q=1: the maximum; q=0.5: half to 2 and 3.
    np.testing.assert_allclose(grad, [1, 1, 0.7, 1.3], rtol=1e-12)


def test_percentile_is_quantile_of_q_over_100() -> None:
    """percentile(x, 40) has quantile(x, 0.4)'s value and gradient."""
    value, grad = _grad(lampy.percentile, X, 40)
    assert value == np.percentile(X, 40)
    np.testing.assert_allclose(grad, [0, 0, 0.2, 0.8], rtol=1e-12)


def test_ties_share_equally() -> None:
    """Entries tied at an order statistic share its weight equally, as amax's ties do."""
    _, grad = _grad(lampy.median, [1.0, 2.0, 2.0, 3.0])
    assert grad.tolist() == [0.0, 0.5, 0.5, 0.0]
    _, grad = _grad(lampy.median, [2.0, 2.0, 2.0])
    np.testing.assert_allclose(grad, [1 / 3] * 3, rtol=1e-15)
    _, grad = _grad(lampy.quantile, [3.0, 1.0, 3.0], 1.0)
    _, grad_max = _grad(lampy.amax, [3.0, 1.0, 3.0])
    assert grad.tolist() == grad_max.tolist() == [0.5, 0.0, 0.5]


def test_median_even_and_odd() -> None:
    """The median of an odd slice is its middle entry; of an even one, the mean of the
    two middle entries (g / 2 each); tuple axes and keepdims as numpy."""
    a = np.arange(24.0).reshape(2, 3, 4)[..., ::-1]
    with lampy.Scope():
        x = lampy.param(a)
        y = lampy.median(x, axis=(0, 2), keepdims=True)
        np.testing.assert_array_equal(y.value, np.median(a, axis=(0, 2), keepdims=True))
        y.sum().backward()
        # each slice of 8 values: the 4th and 5th smallest get 1/2
        assert x.grad.sum() == 3.0
        assert sorted(x.grad[:, 0].reshape(-1).tolist()) == [0.0] * 6 + [0.5, 0.5]
    _, grad = _grad(lampy.median, [5.0, 1.0, 3.0])
    assert grad.tolist() == [0.0, 0.0, 1.0]


def test_nan_in_slice_makes_value_nan_and_goes_to_the_nans() -> None:
    """A slice holding nans has numpy's nan value; its gradient is shared by the nans."""
    value, grad = _grad(lampy.quantile, [1.0, NAN, 2.0, NAN], [0.2, 0.4])
    assert np.isnan(value).all()
    assert np.isnan(np.quantile([1.0, NAN, 2.0, NAN], [0.2, 0.4])).all()
    assert grad.tolist() == [0.0, 1.0, 0.0, 1.0]
    value, grad = _grad(lampy.median, np.array([[1.0, NAN, 2.0], [1.0, 3.0, 2.0]]), axis=1)
    assert np.isnan(value[0])
    assert value[1] == 2.0
    assert grad.tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0]]


def test_nan_versions_skip_nans_and_zero_all_nan_slices() -> None:
    """nanquantile/nanmedian/nanpercentile leave nans out (gradient 0 there); an all-nan
    slice has numpy's nan value and warning and gradient 0."""
    a = np.array([[NAN, 1.0, 3.0, NAN], [NAN, NAN, NAN, NAN]])
    for fn, ref, args in [
        (lampy.nanmedian, np.nanmedian, ()),
        (lampy.nanquantile, np.nanquantile, (0.5,)),
        (lampy.nanpercentile, np.nanpercentile, (50,)),
    ]:
        with pytest.warns(RuntimeWarning):
            expected = ref(a, *args, axis=1)
        with pytest.warns(RuntimeWarning):
            value, grad = _grad(fn, a, *args, axis=1)
        np.testing.assert_array_equal(value, expected)
        assert grad.tolist() == [[0.0, 0.5, 0.5, 0.0], [0.0] * 4]
    value, grad = _grad(lampy.nanquantile, [NAN, 4.0, 1.0, 3.0, 2.0], 0.4)
    assert value == np.nanquantile([NAN, 4.0, 1.0, 3.0, 2.0], 0.4)
    np.testing.assert_allclose(grad, [0, 0, 0, 0.2, 0.8], rtol=1e-12)


def test_zero_d_and_float32() -> None:
    """A 0-d input is a one-entry slice; float32 keeps numpy's result dtype (float32 for
    a number q, float64 for a float64 q array) and a float32 gradient."""
    value, grad = _grad(lampy.percentile, 3.0, [10, 90])
    assert value.tolist() == [3.0, 3.0]
    assert grad == 2.0
    a = np.array([3.0, 1.0, 2.0], np.float32)
    with lampy.Scope():
        x = lampy.param(a)
        m = lampy.median(x)
        assert m.dtype == np.median(a).dtype == np.float32
        q = lampy.quantile(x, np.array([0.25, 0.5]))
        assert q.dtype == np.quantile(a, np.array([0.25, 0.5])).dtype
        (m + q.sum()).backward()
        assert x.grad.dtype == np.float32
        np.testing.assert_allclose(x.grad, [0.0, 0.5, 2.5])


def test_empty_inputs() -> None:
    """median of an empty slice is nan with numpy's warning; quantile of one a
    ShapeError naming the op (numpy raises IndexError)."""
    with lampy.Scope():
        x = lampy.param(np.zeros((0, 2)))
        with pytest.warns(RuntimeWarning):
            m = lampy.median(x, axis=0)
        assert np.isnan(m.value).all()
        m.sum().backward()
        assert x.grad.shape == (0, 2)
        assert lampy.quantile(x, 0.5, axis=1).shape == (0,)
        with pytest.raises(lampy.ShapeError, match="quantile"):
            lampy.quantile(x, 0.5, axis=0)


def test_errors() -> None:
    """Out-of-range or empty q, an unknown method and a differentiable q are refused,
    naming the op."""
    with lampy.Scope():
        x = lampy.param(X)
        with pytest.raises(lampy.LampyValueError, match=r"quantile: q must lie in \[0, 1\]"):
            lampy.quantile(x, 1.5)
        with pytest.raises(lampy.LampyValueError, match=r"percentile: q must lie in \[0, 100\]"):
            lampy.percentile(x, -1)
        with pytest.raises(lampy.LampyValueError, match="q is empty"):
            lampy.quantile(x, [])
        with pytest.raises(lampy.LampyValueError, match="linear"):
            lampy.quantile(x, 0.5, method="cubic")
        with pytest.raises(lampy.LampyTypeError, match="nanquantile: q is a Variable"):
            lampy.nanquantile(x, lampy.param(0.5))
        assert lampy.quantile(x, lampy.const(0.4)).value == np.quantile(X, 0.4)


@pytest.mark.parametrize("method", ["linear", "inverted_cdf", "nearest"])
@pytest.mark.parametrize("fn", [lampy.nanquantile, lampy.quantile])
def test_no_reduction_axes_with_a_2d_q_has_the_documented_layout(fn, method):
    """axis=(): each entry is its own slice; the result is q's shape followed by a's,
    and each entry's gradient is the sum of g over q (numpy.nanquantile lays this value
    out otherwise; the gradient used to follow the documented layout only)."""
    a = np.array([0.0, 1.5, -2.0])
    q = np.array([[0.0], [0.5]])
    with lampy.Scope():
        x = lampy.param(a)
        y = fn(x, q, axis=(), method=method)
        np.testing.assert_array_equal(y.value, np.broadcast_to(a, (2, 1, 3)))
        g = np.arange(1.0, 7.0).reshape(2, 1, 3)
        y.backward(g)
        np.testing.assert_array_equal(x.grad, g.sum(axis=(0, 1)))
    check_grad(lambda v: fn(v, q, axis=(), method=method), a)


@pytest.mark.parametrize("axis", [(0, 1), (0, 2), (1, 2)])
@pytest.mark.parametrize("fn", [lampy.nanquantile, lampy.nanpercentile])
def test_tuple_axis_with_a_2d_q_has_the_documented_layout(fn: Any, axis: tuple[int, int]) -> None:
    """A tuple of axes leaving some, and a q of 2 dims: q's shape, then the reduced shape,
    as numpy.quantile (numpy.nanquantile gives (1, 4, 2) for a (2, 3, 4), axis (0, 1) and
    q (2, 1)); the gradient follows the value (it used to follow the documented layout
    under numpy.nanquantile's value)."""
    a = np.arange(24.0).reshape(2, 3, 4) * 1.5
    a[0, 0, 0] = NAN
    top = 100.0 if fn is lampy.nanpercentile else 1.0
    q = np.array([[0.25], [0.75]]) * top
    plain = np.percentile if fn is lampy.nanpercentile else np.quantile
    with lampy.Scope():
        y = fn(lampy.const(a), q, axis=axis)
        expected = plain(np.where(np.isnan(a), 1.5, a), q, axis=axis)  # no nan: plain's layout
        assert y.shape == expected.shape
    b = np.arange(24.0).reshape(2, 3, 4) * 1.5
    check_grad(lambda v: fn(v, q, axis=axis), b)
