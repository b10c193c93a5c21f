"""lampy.remat and lampy.nn.remat_sequential: same gradients, less memory, clear errors."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import lampy
from lampy import nn
from lampy.autograd import current_or_none

LAYERS = {
    "linear": lambda rng, w: nn.Linear.init(w, w, rng=rng),
    "relu": lambda rng, w: nn.ReLU.init(),
    "tanh": lambda rng, w: nn.Tanh.init(),
    "dropout": lambda rng, w: nn.Dropout.init(
        0.3, rng=np.random.default_rng(int(rng.integers(99)))
    ),
}


def gradients(kinds, width, segments, seed):
    """Param and input gradients of a stack, plain (segments None) or rematerialised."""
    with lampy.Scope():
        rng = np.random.default_rng(seed)
        layers = [LAYERS[k](rng, width) for k in kinds]
        params = [p for m in layers for p in m.parameters()]
        x = lampy.param(np.random.default_rng(seed + 1).normal(size=(3, width)).astype(np.float32))
        with lampy.Scope():
            if segments is None:
                y = x
                for m in layers:
                    y = m(y)
            else:
                y = nn.remat_sequential(layers, x, segments=segments)
            (y * y).sum().backward()
        return [x.grad.copy()] + [p.grad.copy() for p in params if p.grad is not None]


@given(
    kinds=st.lists(st.sampled_from(sorted(LAYERS)), min_size=1, max_size=9),
    width=st.integers(1, 6),
    segments=st.integers(1, 10),
    seed=st.integers(0, 1000),
)
def test_remat_sequential_gradients_are_bitwise_equal(kinds, width, segments, seed):
    """Gradients with remat equal the plain ones bitwise, dropout included (same draws)."""
    plain = gradients(kinds, width, None, seed)
    remat = gradients(kinds, width, segments, seed)
    assert len(plain) == len(remat)
    for a, b in zip(plain, remat, strict=True):
        assert np.array_equal(a, b)


def test_remat_of_a_function_with_several_outputs_and_captured_params():
    with lampy.Scope():
        w = lampy.param(np.array([0.5, -1.0, 2.0]))

        def f(x, y):
            return lampy.tanh(x * w), lampy.exp(y) * w

        x, y = lampy.param(np.array([1.0, 2.0, 3.0])), lampy.param(np.array([0.1, 0.2, 0.3]))
        a, b = f(x, y)
        (a.sum() + (b * b).sum()).backward()
        want = [v.grad.copy() for v in (w, x, y)]
        for v in (w, x, y):
            v.zero_grad()
        a, b = lampy.remat(f)(x, y)
        (a.sum() + (b * b).sum()).backward()
        for v, g in zip((w, x, y), want, strict=True):
            np.testing.assert_allclose(v.grad, g, rtol=1e-12)


def test_remat_keeps_only_inputs_and_outputs():
    """The inner values are released when fn returns: the scope holds the output only."""
    with lampy.Scope() as s:
        x = lampy.param(np.ones(1000))
        base = s.memory.live_bytes
        y = lampy.remat(lambda v: lampy.exp(lampy.exp(lampy.exp(v))))(x)
        assert s.memory.live_bytes == base + y.value.nbytes
        y.sum().backward()
        np.testing.assert_allclose(x.grad, np.exp(np.exp(np.exp(1.0)) + np.exp(1.0) + 1.0))


def test_remat_errors_name_the_problem():
    with lampy.Scope():
        x = lampy.param(np.ones(3))
        with pytest.raises(lampy.LampyTypeError, match="must return a Variable"):
            lampy.remat(lambda v: v.value)(x)
        with pytest.raises(lampy.LampyTypeError, match="callable"):
            lampy.remat(3)
        h = lampy.exp(x)
        with pytest.raises(lampy.LampyError, match="without receiving it as an argument"):
            lampy.remat(lambda v: v * h)(x)
        with lampy.Scope():
            gone = lampy.param(np.ones(3))
        with pytest.raises(lampy.ReleasedError, match="remat"):
            lampy.remat(lambda v: v * 2.0)(gone)
        with pytest.raises(lampy.ReleasedError, match="remat"):
            lampy.remat(lambda v: v * gone)(x)
    assert current_or_none() is None


def test_an_exception_inside_remat_leaves_scopes_consistent():
    def boom(v):
        lampy.exp(v)
        raise KeyError("inside fn")

    with lampy.Scope() as s:
        x = lampy.param(np.ones(3))
        before = (len(s), s.memory.live_bytes)
        with pytest.raises(KeyError):
            lampy.remat(boom)(x)
        assert current_or_none() is s
        assert (len(s), s.memory.live_bytes) == before


def test_remat_under_a_budget_fits_where_plain_does_not():
    rng = np.random.default_rng(0)
    with lampy.Scope():
        layers = [m for _ in range(16) for m in (nn.Linear.init(64, 64, rng=rng), nn.Tanh.init())]
        x = np.ones((128, 64), np.float32)

        def plain(x):
            for m in layers:
                x = m(x)
            return x

        # plain needs about 544 KiB (the 16 tanh outputs its closures keep), remat about
        # 352 KiB (float32, batch 128, width 64)
        with lampy.Scope(budget="448 KiB"), pytest.raises(lampy.MemoryBudgetError):
            plain(x).sum().backward()
        with lampy.Scope(budget="448 KiB") as s:
            nn.remat_sequential(layers, x).sum().backward()
            assert s.memory.peak_bytes <= 448 * 2**10
