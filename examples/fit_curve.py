"""Fit a small tanh network to a noisy sine curve by gradient descent with momentum.

lampy's functional API, with no module and no optimizer: the 1-32-1 network is a plain
function of four numpy weight arrays, ``lampy.value_and_grad`` gives the loss and the
gradients as numpy arrays (each call records and releases its graph in a scope of its
own, so memory stays flat), and the momentum update is written out in numpy. It trains
for 1,500 steps by default, printing the loss ten times, and ends near the noise floor.

    python examples/fit_curve.py [--steps N]
"""

from __future__ import annotations

import argparse

import numpy as np

import lampy


def predict(w1, b1, w2, b2, x):  # type: ignore[no-untyped-def]
    """A 1-32-1 tanh network."""
    return lampy.tanh(x @ w1 + b1) @ w2 + b2


def loss_fn(w1, b1, w2, b2, x, y):  # type: ignore[no-untyped-def]
    """Mean squared error of the network on (x, y)."""
    err = predict(w1, b1, w2, b2, x) - y
    return (err * err).mean()


def main(steps: int = 1500, lr: float = 0.02, momentum: float = 0.9, seed: int = 0) -> float:
    lampy.tune_malloc()  # a training loop: freed graph memory is kept for the next step
    rng = np.random.default_rng(seed)
    x = np.linspace(-3, 3, 128).reshape(-1, 1)
    y = np.sin(x) + 0.05 * rng.standard_normal(x.shape)

    hidden = 32
    weights = [
        rng.standard_normal((1, hidden)),
        np.zeros(hidden),
        rng.standard_normal((hidden, 1)) / np.sqrt(hidden),
        np.zeros(1),
    ]
    velocity = [np.zeros_like(w) for w in weights]
    step = lampy.value_and_grad(loss_fn, argnums=(0, 1, 2, 3))
    loss = float("nan")
    for i in range(steps + 1):
        loss_value, grads = step(*weights, x, y)
        loss = float(loss_value)
        for w, v, g in zip(weights, velocity, grads, strict=True):
            v *= momentum  # gradient descent with momentum, on the numpy arrays
            v += g
            w -= lr * v
        if i % max(1, steps // 10) == 0:
            print(f"step {i:4d}  loss {loss:.5f}")
    print(f"final loss {loss:.5f} (noise floor ~{0.05**2:.4f})")
    return loss


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=1500)
    main(parser.parse_args().steps)
