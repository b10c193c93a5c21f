"""Classify scikit-learn's bundled 8x8 handwritten digits with an MLP.

The 1,797 images ship with scikit-learn (no download). A 64-256-128-10 network with
dropout trains with AdamW and a cosine schedule through ``lampy.train.fit``, prints its
progress, reports the test accuracy and saves a loss/accuracy plot.

    python examples/digits_mlp.py [--epochs N] [--plot PATH] [--checkpoint PATH]
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # render to files; no display needed
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits

import lampy
import lampy.nn.functional as F
from lampy import nn, optim
from lampy.data import Batches, train_test_split
from lampy.train import BestCheckpoint, History, accuracy, evaluate, fit


def load_data(seed: int = 0) -> list[np.ndarray]:
    """Digits as float32 pixels scaled to [0, 1] and int64 labels, split 80/20 (stratified)."""
    digits = load_digits()
    x = (digits.data / 16.0).astype(np.float32)
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.2, seed=seed, stratify=y)


def build_model(rng: np.random.Generator) -> nn.Sequential:
    """64-256-128-10 with ReLU and dropout."""
    return nn.Sequential.init(
        nn.Linear.init(64, 256, rng=rng),
        nn.ReLU.init(),
        nn.Dropout.init(0.2, rng=rng),
        nn.Linear.init(256, 128, rng=rng),
        nn.ReLU.init(),
        nn.Dropout.init(0.2, rng=rng),
        nn.Linear.init(128, 10, rng=rng),
    )


def loss_fn(model: Any, batch: tuple[np.ndarray, ...]) -> lampy.Variable:
    """Cross-entropy of the model's scores for ``batch = (images, labels)``."""
    x, y = batch
    return F.cross_entropy(model(x), y, label_smoothing=0.05)


def plot(history: History, path: Path, title: str) -> None:
    """Training and validation loss, and validation accuracy, per epoch."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    epochs = history["epoch"]
    ax1.plot(epochs, history["loss"], label="train")
    ax1.plot(epochs, history["val_loss"], label="test")
    ax1.set(xlabel="epoch", ylabel="cross-entropy", title="loss")
    ax1.legend()
    ax2.plot(epochs, history["val_accuracy"], color="C2")
    ax2.set(xlabel="epoch", ylabel="accuracy", title="test accuracy")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def train_digits(
    build: Callable[[np.random.Generator], nn.Module],
    data: list[np.ndarray],
    *,
    epochs: int,
    lr: float,
    plot_path: Path,
    checkpoint: Path | None,
    title: str,
    seed: int = 0,
) -> float:
    """Train ``build(rng)`` on ``data`` (the split of ``load_data``) with AdamW and a cosine
    schedule through ``fit``, plot the history and return the test accuracy.

    ``examples/digits_cnn.py`` trains its CNN with this too.
    """
    x_train, x_test, y_train, y_test = data
    rng = np.random.default_rng(seed)
    with lampy.Scope():
        model = build(rng)
        print(f"model: {model.num_parameters():,} parameters, {len(x_train)} training images")
        opt = optim.AdamW(model.parameters(), lr=lr, weight_decay=1e-4)
        sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
        callbacks = []
        if checkpoint is not None:
            callbacks.append(BestCheckpoint(checkpoint, monitor="val_accuracy", mode="max"))
        history = fit(
            model,
            loss_fn,
            opt,
            Batches(x_train, y_train, batch_size=32, shuffle=True, rng=rng),
            epochs=epochs,
            valid_batches=Batches(x_test, y_test, batch_size=256),
            metrics={"accuracy": accuracy},
            scheduler=sched,
            callbacks=callbacks,
        )
        final = evaluate(model, Batches(x_test, y_test, batch_size=256), {"accuracy": accuracy})
    done = f"test accuracy: {final['accuracy']:.4f} ({len(x_test)} images)"
    if len(history) == 0:  # --epochs 0: the untrained model's accuracy, nothing to plot
        print(f"{done}, untrained; no epochs, so no plot")
    else:
        plot(history, plot_path, title)
        print(f"{done}; plot: {plot_path}")
    return final["accuracy"]


def epochs_arg(text: str) -> int:
    """An argparse type: a number of epochs, 0 or more."""
    n = int(text)
    if n < 0:
        raise argparse.ArgumentTypeError(f"the number of epochs must be 0 or more, got {n}")
    return n


def main(epochs: int, plot_path: Path, checkpoint: Path | None, seed: int = 0) -> float:
    return train_digits(
        build_model,
        load_data(seed),
        epochs=epochs,
        lr=2e-3,
        plot_path=plot_path,
        checkpoint=checkpoint,
        title="digits, MLP",
        seed=seed,
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=epochs_arg, default=40, help="0 evaluates the untrained model")
    ap.add_argument("--plot", type=Path, default=Path("digits_mlp.png"))
    ap.add_argument("--checkpoint", type=Path, default=None, help="keep the best weights here")
    args = ap.parse_args()
    main(args.epochs, args.plot, args.checkpoint)
