"""Fault cases of recomputation (issue 23, #1.3 and #1.4): ``lampy.remat`` runs ``fn``
again in backward, and that second run must not repeat side effects on module buffers
(BatchNorm's running statistics) nor silently draw new random numbers. Draws through
``lampy.autograd.replayable`` are replayed; draws straight from a numpy Generator are
refused with a clear error in backward (the recomputed output differs from the first)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

import lampy
from lampy import nn


def _bn_model(momentum: float | None) -> list[Any]:
    rng = np.random.default_rng(0)
    return [
        nn.Linear.init(4, 6, rng=rng, dtype=np.float64),
        nn.BatchNorm1d.init(6, momentum=momentum, dtype=np.float64),
        nn.Tanh.init(),
        nn.Linear.init(6, 1, rng=rng, dtype=np.float64),
    ]


def _train_step(layers: list[Any], x: np.ndarray, how: str) -> None:
    with lampy.Scope():
        if how == "plain":
            y = x
            for m in layers:
                y = m(y)
        elif how == "remat":

            def run(v: Any) -> Any:
                for m in layers:
                    v = m(v)
                return v

            y = lampy.remat(run)(lampy.const(x))
        else:
            y = nn.remat_sequential(layers, x, segments=2)
        y.sum().backward()


@pytest.mark.parametrize("how", ["remat", "remat_sequential"])
@pytest.mark.parametrize("momentum", [0.1, None])
def test_batch_norm_running_statistics_are_updated_once(how: str, momentum: float | None) -> None:
    """After two training steps through remat, BatchNorm's buffers (running mean and
    variance, num_batches_tracked) equal those of the same steps without remat (they were
    updated twice per step: num_batches_tracked 4, momentum applied twice)."""
    x = np.random.default_rng(1).normal(2.0, 3.0, size=(8, 4))
    with lampy.Scope():
        plain, recomputed = _bn_model(momentum), _bn_model(momentum)
        for _ in range(2):
            _train_step(plain, x, "plain")
            _train_step(recomputed, x, how)
        bn, bn_r = plain[1], recomputed[1]
        assert int(bn_r.num_batches_tracked) == int(bn.num_batches_tracked) == 2
        np.testing.assert_array_equal(bn_r.running_mean, bn.running_mean)
        np.testing.assert_array_equal(bn_r.running_var, bn.running_var)
        for p, q in zip(plain[0].parameters(), recomputed[0].parameters(), strict=True):
            np.testing.assert_allclose(q.grad, p.grad, rtol=1e-12)


def test_nested_remat_updates_running_statistics_once() -> None:
    """A remat inside a remat: the inner first run inside the outer recomputation is a
    recomputation too, and does not touch the buffers."""

    def inner(v: Any) -> Any:
        return layers[2](layers[1](layers[0](v)))

    def outer(v: Any) -> Any:
        return layers[3](lampy.remat(inner)(v))

    x = np.random.default_rng(1).normal(size=(4, 4))
    with lampy.Scope():
        layers = _bn_model(0.1)
        with lampy.Scope():
            lampy.remat(outer)(lampy.const(x)).sum().backward()
        assert int(layers[1].num_batches_tracked) == 1


def test_recomputing_is_true_only_inside_the_recomputation() -> None:
    """lampy.autograd.recomputing() tells ops whether this run is remat's second one."""
    seen: list[bool] = []

    def fn(v: Any) -> Any:
        seen.append(lampy.autograd.recomputing())
        return v * 2.0

    with lampy.Scope():
        x = lampy.param([1.0, 2.0])
        assert not lampy.autograd.recomputing()
        lampy.remat(fn)(x).sum().backward()
    assert seen == [False, True]


def _vae_noise(rng: np.random.Generator, replay: bool) -> Any:
    def sample(mu: Any, log_sigma: Any) -> Any:
        gen = lampy.autograd.replayable(rng) if replay else rng
        eps = gen.normal(size=mu.shape)
        return (mu + lampy.exp(log_sigma) * eps).sum() * 1.0

    return sample


def test_a_generator_drawn_directly_inside_remat_is_refused() -> None:
    """fn drawing from a numpy Generator itself (rng.normal in a VAE) drew new noise when
    recomputed, giving the gradient of another function with no error. Backward now raises
    a LampyError naming fn and the fixes, and no gradient is changed."""
    rng = np.random.default_rng(0)
    with lampy.Scope():
        mu = lampy.param(np.zeros(5))
        log_sigma = lampy.param(np.zeros(5))
        loss = lampy.remat(_vae_noise(rng, replay=False))(mu, log_sigma)
        with pytest.raises(lampy.LampyError) as info:
            loss.backward()
        message = str(info.value)
        assert "remat(sample)" in message and "replayable" in message
        assert mu.grad is None and log_sigma.grad is None


def test_draws_through_replayable_are_replayed() -> None:
    """The documented way: replayable(rng) replays the first run's draws exactly, so the
    gradient equals that of the same draws without remat, and rng advances once."""
    with lampy.Scope():
        mu = lampy.param(np.zeros(5))
        log_sigma = lampy.param(np.zeros(5))
        rng = np.random.default_rng(0)
        lampy.remat(_vae_noise(rng, replay=True))(mu, log_sigma).backward()
        after = rng.bit_generator.state
        eps = np.random.default_rng(0).normal(size=5)
        np.testing.assert_array_equal(log_sigma.grad, eps)
        np.testing.assert_array_equal(mu.grad, np.ones(5))
        once = np.random.default_rng(0)
        once.normal(size=5)
        assert after == once.bit_generator.state


def test_a_deterministic_fn_with_a_strided_output_is_not_refused() -> None:
    """The output check samples the output without copying it whole and lets the same
    values pass: a transposed (non-contiguous) output of a deterministic fn."""

    def fn(v: Any) -> Any:
        return lampy.tanh(v * 3.0).T

    with lampy.Scope():
        x = lampy.param(np.random.default_rng(0).normal(size=(300, 70)))
        lampy.remat(fn)(x).sum().backward()
        assert x.grad is not None and x.grad.shape == (300, 70)
