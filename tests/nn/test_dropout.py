"""Dropout: mask statistics and scaling, determinism under a seed, gradient = mask * scale,
the identity cases, channel-wise masks, alpha_dropout's moments, and errors."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import lampy
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.nn.functional._dropout import (
    alpha_dropout,
    dropout,
    dropout1d,
    dropout2d,
    dropout3d,
)


def _run(f: Any, x: np.ndarray, g: np.ndarray, **kw: Any) -> tuple[np.ndarray, np.ndarray]:
    """The value and the input's gradient for cotangent g."""
    with lampy.Scope():
        p = lampy.param(x)
        y = f(p, **kw)
        y.backward(g)
        assert p.grad is not None
        return y.value.copy(), p.grad.copy()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_dropout_statistics_and_gradient(p: float, dtype: Any) -> None:
    """About a fraction p is zeroed, the rest scaled by 1/(1-p); the gradient is mask*scale."""
    x = np.random.default_rng(0).uniform(1, 2, size=(200, 100)).astype(dtype)
    g = np.random.default_rng(1).normal(size=x.shape).astype(dtype)
    y, dx = _run(dropout, x, g, p=p, rng=np.random.default_rng(2))
    assert y.dtype == dtype and dx.dtype == dtype
    kept = y != 0
    assert abs(1 - kept.mean() - p) < 0.02  # 20,000 draws: sd < 0.004
    scale = dtype(1 / (1 - p))
    np.testing.assert_allclose(y[kept], x[kept] * scale, rtol=1e-6)
    np.testing.assert_allclose(dx, g * kept * scale, rtol=1e-6)


@given(seed=st.integers(0, 2**32 - 1), shape=st.lists(st.integers(1, 4), max_size=3).map(tuple))
@settings(max_examples=20)
def test_dropout_same_seed_same_mask(seed: int, shape: tuple[int, ...]) -> None:
    """Two calls with generators of the same seed give the same output."""
    x = np.ones(shape)
    with lampy.Scope():
        a = dropout(x, 0.5, rng=np.random.default_rng(seed)).value.copy()
        b = dropout(x, 0.5, rng=np.random.default_rng(seed)).value.copy()
    np.testing.assert_array_equal(a, b)
    assert set(np.unique(a)) <= {0.0, 2.0}


def test_dropout_identity_cases_return_the_input() -> None:
    """Not training, p = 0 and an empty input return the input itself, needing no rng."""
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        assert dropout(x, 0.5, training=False) is x
        assert dropout(x, 0.0) is x
        x4 = lampy.param(np.ones((1, 2, 3, 4)))
        assert dropout2d(x4, 0.5, training=False) is x4
        assert alpha_dropout(x, 0.5) is x  # training=False by default, as PyTorch
        e = lampy.param(np.ones((0, 2)))
        assert dropout(e, 0.5) is e
        c = dropout(np.arange(3.0), 0.5, training=False)
        assert c.value.tolist() == [0.0, 1.0, 2.0] and not c.needs_grad


def test_dropout_p_one_gives_zeros() -> None:
    """p = 1 zeroes everything and the gradient, without a generator."""
    for f in (dropout, dropout1d, alpha_dropout):
        y, dx = _run(f, np.ones((2, 3, 4)), np.ones((2, 3, 4)), p=1.0, training=True)
        assert not y.any() and not dx.any()


def test_dropout_inplace_is_accepted_and_changes_nothing() -> None:
    """inplace=True gives the same result and leaves the input unchanged."""
    x = np.ones(50)
    with lampy.Scope():
        p = lampy.param(x)
        a = dropout(p, 0.5, inplace=True, rng=np.random.default_rng(3)).value.copy()
        b = dropout(p, 0.5, rng=np.random.default_rng(3)).value.copy()
        np.testing.assert_array_equal(p.value, x)
    np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize(
    ("f", "shape", "mask_axes"),
    [
        (dropout1d, (6, 5, 7), 2),
        (dropout1d, (5, 7), 1),
        (dropout2d, (6, 5, 3, 4), 2),
        (dropout2d, (6, 5, 7), 2),  # a 3-d input is (N, C, L), as PyTorch 2
        (dropout3d, (3, 5, 2, 3, 4), 2),
        (dropout3d, (5, 2, 3, 4), 1),
    ],
)
def test_channel_dropout_masks_whole_channels(
    f: Any, shape: tuple[int, ...], mask_axes: int
) -> None:
    """Channel dropouts keep or drop each (sample, channel) slice as a whole."""
    x = np.ones(shape)
    y, dx = _run(f, x, x, p=0.5, rng=np.random.default_rng(4))
    per_channel = y.reshape(*shape[:mask_axes], -1)
    assert np.all(per_channel == per_channel[..., :1])
    assert set(np.unique(y)) <= {0.0, 2.0} and 0 < (y == 0).mean() < 1
    np.testing.assert_array_equal(dx, y)


@pytest.mark.parametrize(
    ("f", "shape"), [(dropout1d, (2, 3, 4, 5)), (dropout2d, (3, 4)), (dropout3d, (2, 3, 4))]
)
def test_channel_dropout_rank_errors(f: Any, shape: tuple[int, ...]) -> None:
    """Channel dropouts reject inputs of the wrong rank, naming the expected ranks."""
    with lampy.Scope(), pytest.raises(ShapeError, match=f"{f.__name__}: expected"):
        f(np.ones(shape), rng=np.random.default_rng(0))


def test_alpha_dropout_keeps_moments_and_gradient() -> None:
    """alpha_dropout keeps zero mean and unit variance; its gradient is a * mask."""
    x = np.random.default_rng(5).normal(size=200_000).astype(np.float32)
    g = np.ones_like(x)
    y, dx = _run(alpha_dropout, x, g, p=0.3, training=True, rng=np.random.default_rng(6))
    assert y.dtype == np.float32
    assert abs(float(y.mean())) < 0.02 and abs(float(y.std()) - 1) < 0.02
    a = 1 / np.sqrt((1.7580993408473766**2 * 0.3 + 1) * 0.7)
    np.testing.assert_allclose(np.unique(dx), [0.0, a], rtol=1e-6)


@pytest.mark.parametrize(
    ("kw", "error", "match"),
    [
        ({"p": 1.5, "rng": np.random.default_rng(0)}, LampyValueError, "between 0 and 1, got 1.5"),
        ({"p": -0.1}, LampyValueError, "between 0 and 1"),
        ({"p": 0.5, "rng": np.random.RandomState(0)}, LampyTypeError, "numpy.random.Generator"),
    ],
)
def test_dropout_errors(kw: dict[str, Any], error: type, match: str) -> None:
    """Bad p and a legacy RandomState raise clear errors."""
    with lampy.Scope(), pytest.raises(error, match=f"dropout: .*{match}"):
        dropout(np.ones(3), **kw)
