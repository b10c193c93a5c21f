"""Regress disease progression on scikit-learn's bundled diabetes data: linear model and MLP.

The 442 patients ship with scikit-learn (no download). The ten features are
standardised with the training part's mean and standard deviation, and so is the
target. A linear model (``nn.Linear(10, 1)``) and a small MLP train with mean squared
error through ``lampy.train.fit``; the script reports the R^2 of both on the test part
and, as a check, the R^2 of scikit-learn's least-squares ``LinearRegression``, which the
linear model should match closely.

    python examples/regression.py [--linear-epochs N] [--mlp-epochs N]
"""

from __future__ import annotations

import argparse
from typing import Any

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.linear_model import LinearRegression

import lampy
import lampy.nn.functional as F
from lampy import nn, optim
from lampy.data import Batches, train_test_split
from lampy.train import Callback, TrainState, evaluate, fit


def load_data(seed: int = 0) -> list[np.ndarray]:
    """Features and target (N x 1) as float32, split 80/20, standardised with the training
    part's statistics (the test part is never looked at to choose them)."""
    diabetes = load_diabetes()
    x = diabetes.data.astype(np.float32)
    y = diabetes.target.astype(np.float32)[:, None]
    x_train, x_test, y_train, y_test = train_test_split(x, y, test_size=0.2, seed=seed)
    x_mean, x_std = x_train.mean(axis=0), x_train.std(axis=0)
    y_mean, y_std = y_train.mean(), y_train.std()
    return [
        (x_train - x_mean) / x_std,
        (x_test - x_mean) / x_std,
        (y_train - y_mean) / y_std,
        (y_test - y_mean) / y_std,
    ]


def r2_score(y_true: np.ndarray, y_pred: np.ndarray) -> float:
    """The coefficient of determination: ``1 - sum((y - pred)^2) / sum((y - mean(y))^2)``.

    It is unchanged when the same shift and scale is applied to the target and the
    prediction, so it is the same on the standardised target as on the original one.
    """
    residual = np.sum((y_true - y_pred) ** 2)
    total = np.sum((y_true - np.mean(y_true)) ** 2)
    return float(1.0 - residual / total)


def r2_metric(model: Any, batch: tuple[np.ndarray, ...]) -> float:
    """R^2 of the model's predictions on ``batch = (x, y)``; exact when the batch is the
    whole test set (an average of per-batch R^2 values would not be R^2)."""
    x, y = batch
    return r2_score(y, model(x).value)


def loss_fn(model: Any, batch: tuple[np.ndarray, ...]) -> lampy.Variable:
    """Mean squared error of the model's predictions for ``batch = (x, y)``."""
    x, y = batch
    return F.mse_loss(model(x), y)


class PrintEvery(Callback):
    """Print the epoch's numbers every ``k`` epochs (in place of fit's line per epoch)."""

    def __init__(self, k: int) -> None:
        self.k = k

    def on_epoch_end(self, state: TrainState, logs: dict[str, float]) -> None:
        if state.epoch % self.k == 0:
            print(
                f"  epoch {state.epoch:4d}: loss {logs['loss']:.4f}, "
                f"val_loss {logs['val_loss']:.4f}, val_r2 {logs['val_r2']:.4f}"
            )


def train(
    name: str,
    model: nn.Module,
    data: list[np.ndarray],
    epochs: int,
    batch_size: int,
    rng: np.random.Generator,
    lr: float,
    weight_decay: float = 0.0,
) -> float:
    """Train ``model`` with AdamW and a cosine schedule, printing 10 progress lines; return
    its test R^2."""
    x_train, x_test, y_train, y_test = data
    print(
        f"{name}: {model.num_parameters():,} parameters, {epochs} epochs, batches of {batch_size}"
    )
    opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=weight_decay)
    test_batches = Batches(x_test, y_test, batch_size=len(x_test))  # one batch: exact R^2
    fit(
        model,
        loss_fn,
        opt,
        Batches(x_train, y_train, batch_size=batch_size, shuffle=True, rng=rng),
        epochs=epochs,
        valid_batches=test_batches,
        metrics={"r2": r2_metric},
        scheduler=optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs),
        callbacks=[PrintEvery(max(1, epochs // 10))],
        progress=False,
    )
    return evaluate(model, test_batches, {"r2": r2_metric})["r2"]


def main(linear_epochs: int, mlp_epochs: int, seed: int = 0) -> dict[str, float]:
    data = load_data(seed)
    x_train, x_test, y_train, y_test = data
    print(f"diabetes: {len(x_train)} training and {len(x_test)} test patients, 10 features")
    with lampy.Scope():
        # Least squares is convex: full-batch steps (the whole training part as one
        # batch) follow the exact gradient and converge to scikit-learn's solution.
        rng = np.random.default_rng(seed)
        linear = nn.Linear.init(10, 1, rng=rng)
        r2_linear = train("linear", linear, data, linear_epochs, len(x_train), rng, lr=0.1)
        rng = np.random.default_rng(seed)
        mlp = nn.Sequential.init(
            nn.Linear.init(10, 16, rng=rng),
            nn.ReLU.init(),
            nn.Dropout.init(0.2, rng=rng),
            nn.Linear.init(16, 1, rng=rng),
        )
        r2_mlp = train("MLP", mlp, data, mlp_epochs, 32, rng, lr=1e-3, weight_decay=0.1)
    reference = LinearRegression().fit(x_train, y_train)
    r2_sklearn = r2_score(y_test, reference.predict(x_test))
    print(f"test R^2: linear {r2_linear:.4f}, MLP {r2_mlp:.4f}")
    print(
        f"scikit-learn LinearRegression: test R^2 {r2_sklearn:.4f} "
        f"(the linear model differs by {abs(r2_linear - r2_sklearn):.1e})"
    )
    return {"linear": r2_linear, "mlp": r2_mlp, "sklearn": r2_sklearn}


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--linear-epochs", type=int, default=1000, help="full-batch steps")
    ap.add_argument("--mlp-epochs", type=int, default=200)
    args = ap.parse_args()
    main(args.linear_epochs, args.mlp_epochs)
