"""Teach a small transformer encoder to sort sequences of digits.

Each input is 8 random digits 0-9; the target is the same digits sorted, and the model
classifies every output position (which digit goes there). The model is an Embedding
of the digits plus a learned embedding of the positions, a pre-norm
``TransformerEncoder`` (batch first) and a Linear head. Every epoch draws fresh random
sequences, so the model cannot memorise; it trains with AdamW and a one-cycle schedule
through ``lampy.train.fit`` and reports the sequence accuracy (all 8 positions right) on
a held-out set.

    python examples/sequence_transformer.py [--epochs N] [--steps-per-epoch N] [--test N]
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator
from typing import Any

import attrs
import numpy as np

import lampy
import lampy.nn.functional as F
from lampy import nn, optim
from lampy.data import Batches
from lampy.train import accuracy, evaluate, fit

LENGTH = 8  # digits per sequence
VOCAB = 10  # the digits 0-9


def make_task(n: int, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """``n`` random sequences of digits (int64, n x LENGTH) and the same sequences sorted."""
    x = rng.integers(0, VOCAB, size=(n, LENGTH))
    return x, np.sort(x, axis=1)


class RandomBatches:
    """``steps`` batches of new random sequences at each iteration (one epoch).

    ``fit`` takes any re-iterable of batch tuples; this one never repeats a batch, so the
    training loss measures generalisation as much as the test accuracy does.
    """

    def __init__(self, steps: int, batch_size: int, rng: np.random.Generator) -> None:
        self.steps, self.batch_size, self.rng = steps, batch_size, rng

    def __len__(self) -> int:
        return self.steps

    def __iter__(self) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        for _ in range(self.steps):
            yield make_task(self.batch_size, self.rng)


@attrs.frozen(eq=False, repr=False)
class Sorter(nn.Module):
    """Digit embedding + learned position embedding -> TransformerEncoder -> Linear."""

    embed: nn.Embedding
    pos: lampy.Variable  # (LENGTH, d_model), a learned vector per position
    encoder: nn.TransformerEncoder
    head: nn.Linear

    @classmethod
    def init(
        cls,
        d_model: int,
        nhead: int,
        dim_feedforward: int,
        num_layers: int,
        dropout: float = 0.0,
        *,
        rng: np.random.Generator,
    ) -> Sorter:
        layer = nn.TransformerEncoderLayer.init(
            d_model, nhead, dim_feedforward, dropout, batch_first=True, norm_first=True, rng=rng
        )
        return cls(
            nn.Embedding.init(VOCAB, d_model, rng=rng),
            lampy.param(rng.normal(0.0, 1.0, (LENGTH, d_model)).astype(np.float32)),
            nn.TransformerEncoder.init(layer, num_layers, norm=nn.LayerNorm.init(d_model)),
            nn.Linear.init(d_model, VOCAB, rng=rng),
        )

    def forward(self, tokens: Any) -> lampy.Variable:
        """Scores (N, LENGTH, VOCAB) for the digit at each position of the sorted output."""
        scores: lampy.Variable = self.head(self.encoder(self.embed(tokens) + self.pos))
        return scores


def loss_fn(model: Any, batch: tuple[np.ndarray, ...]) -> lampy.Variable:
    """Cross-entropy over every position of ``batch = (sequences, sorted sequences)``."""
    x, y = batch
    return F.cross_entropy(model(x).reshape(-1, VOCAB), y.reshape(-1))


def sequence_accuracy(model: Any, batch: tuple[np.ndarray, ...]) -> float:
    """The fraction of sequences whose every position is predicted right."""
    x, y = batch
    predicted = np.argmax(model(x).value, axis=-1)
    return float(np.mean(np.all(predicted == y, axis=1)))


def main(
    epochs: int,
    steps_per_epoch: int,
    n_test: int,
    batch_size: int = 128,
    d_model: int = 64,
    num_layers: int = 2,
    seed: int = 0,
) -> float:
    rng = np.random.default_rng(seed)
    x_test, y_test = make_task(n_test, np.random.default_rng(seed + 1))  # held out
    with lampy.Scope():
        model = Sorter.init(d_model, 4, 2 * d_model, num_layers, rng=rng)
        print(
            f"model: {model.num_parameters():,} parameters; {epochs} epochs of "
            f"{steps_per_epoch} batches of {batch_size} new sequences"
        )
        opt = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=1e-2)
        # Warm up over the first 10% of the steps, then anneal. OneCycleLR (like
        # PyTorch's) divides by zero when the warm-up is under 2 steps: keep it longer.
        total = epochs * steps_per_epoch
        sched = optim.lr_scheduler.OneCycleLR(
            opt, max_lr=3e-3, total_steps=total, pct_start=max(0.1, 2 / total)
        )
        test_batches = Batches(x_test, y_test, batch_size=500)
        metrics = {"sequence_accuracy": sequence_accuracy, "position_accuracy": accuracy}
        fit(
            model,
            loss_fn,
            opt,
            RandomBatches(steps_per_epoch, batch_size, rng),
            epochs=epochs,
            valid_batches=test_batches,
            metrics=metrics,
            scheduler=sched,
            clip_grad_norm=1.0,
        )
        final = evaluate(model, test_batches, metrics)
        example = x_test[:1]
        with nn.eval_mode(model):
            predicted = np.argmax(model(example).value, axis=-1)
    print(f"example: {example[0].tolist()} -> {predicted[0].tolist()}")
    print(
        f"test sequence accuracy: {final['sequence_accuracy']:.4f}, position accuracy: "
        f"{final['position_accuracy']:.4f} ({n_test} held-out sequences)"
    )
    return final["sequence_accuracy"]


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--steps-per-epoch", type=int, default=200)
    ap.add_argument("--test", type=int, default=2000, help="held-out sequences")
    args = ap.parse_args()
    main(args.epochs, args.steps_per_epoch, args.test)
