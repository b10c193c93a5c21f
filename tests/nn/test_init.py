"""lampy.nn.init: PyTorch's fans, gains, bounds and standard deviations; dtypes; errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lampy._errors import LampyValueError
from lampy.nn import init

shapes = st.lists(st.integers(1, 6), min_size=2, max_size=4).map(tuple)


@given(shape=shapes)
def test_fans_follow_pytorch(shape: tuple[int, ...]) -> None:
    """fan_in = shape[1] * receptive field, fan_out = shape[0] * receptive field."""
    rf = math.prod(shape[2:])
    assert init.fan_in_and_fan_out(shape) == (shape[1] * rf, shape[0] * rf)


def test_gains_follow_pytorch() -> None:
    """calculate_gain returns PyTorch's table of gains."""
    assert init.calculate_gain("relu") == math.sqrt(2)
    assert init.calculate_gain("tanh") == 5 / 3
    assert init.calculate_gain("conv2d") == 1.0
    assert init.calculate_gain("selu") == 0.75
    assert init.calculate_gain("leaky_relu", math.sqrt(5)) == math.sqrt(2 / 6)
    with pytest.raises(LampyValueError, match="unsupported nonlinearity 'swish'"):
        init.calculate_gain("swish")


@pytest.mark.parametrize(
    "name",
    ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d", "conv_transpose3d"],
)
def test_every_convolution_has_gain_one(name: str) -> None:
    """PyTorch's linear_fns include conv_transpose3d (it used to be unsupported)."""
    assert init.calculate_gain(name) == 1.0


def test_leaky_relu_gain_slope_must_be_a_number() -> None:
    """An int slope counts (0 gives relu's sqrt(2)); a bool or a string is refused, as
    PyTorch does (True used to give slope 1.0, gain 1)."""
    assert init.calculate_gain("leaky_relu", 0) == math.sqrt(2)
    assert init.calculate_gain("leaky_relu", 1) == 1.0
    assert init.calculate_gain("leaky_relu", np.float32(0.5)) == math.sqrt(2 / 1.25)
    assert init.calculate_gain("leaky_relu") == math.sqrt(2 / (1 + 0.01**2))
    for bad in (True, "0.2"):
        with pytest.raises(LampyValueError, match="negative slope of 'leaky_relu'"):
            init.calculate_gain("leaky_relu", bad)  # type: ignore[arg-type]


@given(shape=shapes, seed=st.integers(0, 2**16))
def test_kaiming_uniform_with_sqrt5_is_pytorchs_linear_default(
    shape: tuple[int, ...], seed: int
) -> None:
    """kaiming_uniform(a=sqrt(5)) draws within 1/sqrt(fan_in), PyTorch's Linear/Conv bound."""
    w = init.kaiming_uniform(shape, a=math.sqrt(5), rng=np.random.default_rng(seed))
    fan_in = init.fan_in_and_fan_out(shape)[0]
    assert w.dtype == np.float32 and w.shape == shape
    assert np.abs(w).max() <= 1 / math.sqrt(fan_in) * (1 + 1e-6)


def test_distributions_have_the_stated_moments() -> None:
    """Large draws match the bound / standard deviation each initialiser states."""
    rng = np.random.default_rng(0)
    shape = (400, 300)
    fan_in, fan_out = 300, 400
    xu = init.xavier_uniform(shape, gain=2.0, rng=rng, dtype=np.float64)
    bound = 2.0 * math.sqrt(6 / (fan_in + fan_out))
    assert np.abs(xu).max() <= bound and np.abs(xu).max() > 0.99 * bound
    xn = init.xavier_normal(shape, rng=rng, dtype=np.float64)
    assert xn.std() == pytest.approx(math.sqrt(2 / (fan_in + fan_out)), rel=0.02)
    kn = init.kaiming_normal(shape, nonlinearity="relu", mode="fan_out", rng=rng)
    assert kn.std() == pytest.approx(math.sqrt(2) / math.sqrt(fan_out), rel=0.02)
    tn = init.trunc_normal((10_000,), std=2.0, a=-1.0, b=1.5, rng=rng)
    assert tn.min() >= -1.0 and tn.max() <= 1.5
    assert init.normal(5, 3.0, 0.0, rng=rng).tolist() == [3.0] * 5
    assert init.uniform((2, 2), 1.0, 1.0, rng=rng, dtype=np.float64).sum() == 4.0


@given(rows=st.integers(1, 8), cols=st.integers(1, 8), seed=st.integers(0, 2**16))
def test_orthogonal_rows_or_columns_are_orthonormal(rows: int, cols: int, seed: int) -> None:
    """orthogonal gives a matrix whose smaller side is orthonormal, scaled by gain."""
    q = init.orthogonal((rows, cols), gain=3.0, rng=np.random.default_rng(seed), dtype=np.float64)
    small = q @ q.T if rows <= cols else q.T @ q
    np.testing.assert_allclose(small, 9.0 * np.eye(min(rows, cols)), atol=1e-10)


def test_constants_and_errors() -> None:
    """zeros/ones/constant fill; fewer than two dimensions has no fans."""
    assert init.zeros(3).tolist() == [0, 0, 0] and init.zeros(3).dtype == np.float32
    assert init.ones((2,), dtype=np.float64).dtype == np.float64
    assert init.constant((2, 1), 0.5).tolist() == [[0.5], [0.5]]
    with pytest.raises(LampyValueError, match=r"shape \(3,\) has fewer than 2 dimensions"):
        init.xavier_uniform(3, rng=np.random.default_rng(0))
    with pytest.raises(LampyValueError, match="mode must be 'fan_in' or 'fan_out'"):
        init.kaiming_uniform((2, 2), mode="fan", rng=np.random.default_rng(0))
