"""The warning for a training loop without a scope per step (``lampy.ScopeWarning``):
given at the second step of the PyTorch-style loop, never for the README's loop, fit,
two losses of one step, gradient accumulation or ``retain=True`` passes."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import lampy
import lampy.nn.functional as F
from lampy import nn, optim
from lampy.data import Batches
from lampy.train import fit


def _model(rng: np.random.Generator) -> nn.Module:
    return nn.Sequential.init(
        nn.Linear.init(4, 16, rng=rng), nn.ReLU.init(), nn.Linear.init(16, 3, rng=rng)
    )


def _data(rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    return rng.normal(size=(32, 4)).astype(np.float32), rng.integers(0, 3, 32)


def test_a_loop_without_a_scope_per_step_warns_once_at_its_second_step() -> None:
    """loss = ...; loss.backward(); opt.step() in one scope: one ScopeWarning, at step
    2, naming the fix; the steps still train."""
    rng = np.random.default_rng(0)
    x, y = _data(rng)
    with lampy.Scope():
        model = _model(rng)
        opt = optim.SGD(model.parameters(), lr=0.1)
        F.cross_entropy(model(x), y).backward()  # step 1: nothing to say yet
        opt.step()
        opt.zero_grad()
        with pytest.warns(lampy.ScopeWarning, match=r"scope per step.*lampy\.train\.fit"):
            F.cross_entropy(model(x), y).backward()  # step 2
        opt.step()
        opt.zero_grad()
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            for _ in range(3):  # once per scope
                F.cross_entropy(model(x), y).backward()
                opt.step()
                opt.zero_grad()


def test_the_readme_loop_and_fit_never_warn() -> None:
    """A scope per step (the README's loop) and lampy.train.fit: no warning (the suite
    turns warnings into errors)."""
    rng = np.random.default_rng(0)
    x, y = _data(rng)
    with lampy.Scope():
        model = _model(rng)
        opt = optim.Adam(model.parameters(), lr=1e-2)
        for _ in range(3):
            with lampy.Scope():
                F.cross_entropy(model(x), y).backward()
            opt.step()
            opt.zero_grad()
        fit(
            model,
            lambda m, batch: F.cross_entropy(m(batch[0]), batch[1]),
            optim.Adam(model.parameters(), lr=1e-2),
            Batches(x, y, batch_size=8),
            epochs=2,
            progress=False,
        )


def test_two_losses_of_one_step_do_not_warn() -> None:
    """A GAN's step: the discriminator's loss, its step, then the generator's loss
    through the updated discriminator, in one scope per step: they reach different
    params, so no warning, step after step."""
    rng = np.random.default_rng(0)
    with lampy.Scope():
        gen = nn.Linear.init(2, 4, rng=rng)
        disc = nn.Sequential.init(
            nn.Linear.init(4, 8, rng=rng), nn.Tanh.init(), nn.Linear.init(8, 1, rng=rng)
        )
        opt_g = optim.SGD(gen.parameters(), lr=0.01)
        opt_d = optim.SGD(disc.parameters(), lr=0.01)
        real = rng.normal(size=(16, 4)).astype(np.float32)
        for _ in range(3):
            with lampy.Scope():
                fake = gen(rng.normal(size=(16, 2)).astype(np.float32))
                d_loss = (disc(real) - 1.0).mean() ** 2 + disc(fake.value).mean() ** 2
                d_loss.backward()
                opt_d.step()
                opt_d.zero_grad()
                g_loss = (disc(fake) - 1.0).mean() ** 2
                g_loss.backward()
                opt_g.step()
                opt_g.zero_grad()
                opt_d.zero_grad()


def test_gradient_accumulation_and_retained_passes_do_not_warn() -> None:
    """Micro-batches backpropagated into one .grad (no step between passes) and
    retain=True passes over one graph share params but change none: no warning."""
    rng = np.random.default_rng(0)
    x, y = _data(rng)
    with lampy.Scope():
        model = _model(rng)
        opt = optim.SGD(model.parameters(), lr=0.1)
        with lampy.Scope():
            for i in range(4):
                F.cross_entropy(model(x[i * 8 : i * 8 + 8]), y[i * 8 : i * 8 + 8]).backward()
        opt.step()
        with lampy.Scope():
            loss = F.cross_entropy(model(x), y)
            loss.backward(retain=True)
            loss.backward(retain=True)
            loss.backward()
