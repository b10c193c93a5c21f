"""Classify scikit-learn's bundled 8x8 handwritten digits with a small convolutional network.

The 1,797 images ship with scikit-learn (no download); they enter the network as
N x 1 x 8 x 8 arrays. Two 3x3 convolutions (the first followed by batch norm), a 2x2
max pool, dropout and a linear layer train with AdamW and a cosine schedule through
``lampy.train.fit``; the script prints its progress, reports the test accuracy and saves
a loss/accuracy plot.

    python examples/digits_cnn.py [--epochs N] [--plot PATH] [--checkpoint PATH]
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from digits_mlp import epochs_arg, train_digits  # the same training and report (same folder)
from sklearn.datasets import load_digits

from lampy import nn
from lampy.data import train_test_split


def load_data(seed: int = 0) -> list[np.ndarray]:
    """Digits as float32 N x 1 x 8 x 8 images scaled to [0, 1] and int64 labels, split
    80/20 (stratified), the same split as ``digits_mlp.py``."""
    digits = load_digits()
    x = (digits.images / 16.0).astype(np.float32)[:, None, :, :]
    y = digits.target.astype(np.int64)
    return train_test_split(x, y, test_size=0.2, seed=seed, stratify=y)


def build_model(rng: np.random.Generator) -> nn.Sequential:
    """conv3x3(16) - BatchNorm - ReLU - conv3x3(32) - ReLU - maxpool 2x2 - dropout - linear."""
    return nn.Sequential.init(
        nn.Conv2d.init(1, 16, 3, padding=1, rng=rng),  # 16 x 8 x 8
        nn.BatchNorm2d.init(16),
        nn.ReLU.init(),
        nn.Conv2d.init(16, 32, 3, padding=1, rng=rng),  # 32 x 8 x 8
        nn.ReLU.init(),
        nn.MaxPool2d.init(2),  # 32 x 4 x 4
        nn.Flatten.init(),  # 512
        nn.Dropout.init(0.3, rng=rng),
        nn.Linear.init(32 * 4 * 4, 10, rng=rng),
    )


def main(epochs: int, plot_path: Path, checkpoint: Path | None, seed: int = 0) -> float:
    return train_digits(
        build_model,
        load_data(seed),
        epochs=epochs,
        lr=3e-3,
        plot_path=plot_path,
        checkpoint=checkpoint,
        title="digits, CNN",
        seed=seed,
    )


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=epochs_arg, default=20, help="0 evaluates the untrained model")
    ap.add_argument("--plot", type=Path, default=Path("digits_cnn.png"))
    ap.add_argument("--checkpoint", type=Path, default=None, help="keep the best weights here")
    args = ap.parse_args()
    main(args.epochs, args.plot, args.checkpoint)
