"""Train the digits CNN data-parallel on several processes, over MPI.

Every process (rank) builds the same model and trains on its own shard of every batch;
``fit(..., distributed=True)`` starts every rank from rank 0's weights, averages the
gradients over the ranks while backprop runs (``lampy.distributed.DataParallel``) and
reduces the logged numbers, so every rank takes the same steps. Rank 0 alone prints the
progress and writes the checkpoint. Needs the mpi extra: ``pip install "lampy[mpi]"``
(which puts ``mpirun`` in the virtualenv's ``bin``).

    mpirun -n 2 python examples/distributed_digits.py [--epochs N] [--checkpoint PATH]

As root (in a container), add ``--allow-run-as-root``; on a Slurm cluster, use
``srun -n 2 python examples/distributed_digits.py``. Run without a launcher, it trains
as a world of one process.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np
from digits_cnn import build_model, load_data  # the same model and split (same folder)
from digits_mlp import loss_fn

import lampy
import lampy.distributed as dist
from lampy import optim
from lampy.data import Batches
from lampy.train import BestCheckpoint, accuracy, fit


def main(epochs: int, batch_size: int, checkpoint: Path | None, seed: int = 0) -> float:
    dist.init()
    rank, world = dist.rank(), dist.world_size()
    x_train, x_test, y_train, y_test = load_data(seed)
    with lampy.Scope():
        # Weights come from rank 0 (fit broadcasts them); seeding by rank gives each rank
        # its own dropout masks.
        model = build_model(np.random.default_rng(seed + rank))
        opt = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
        sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=epochs)
        # The shuffle must be the same on every rank: one seed for all.
        train = Batches(
            x_train,
            y_train,
            batch_size=batch_size,
            shuffle=True,
            rng=np.random.default_rng(seed),
            shard=(rank, world),
        )
        test = Batches(x_test, y_test, batch_size=256, shard=(rank, world))
        if dist.is_main_process():
            print(
                f"{world} process(es), {batch_size} images per process per step "
                f"({batch_size * world} per step), {len(train)} steps per epoch"
            )
        callbacks = []
        if checkpoint is not None:  # written by rank 0 only
            callbacks.append(BestCheckpoint(checkpoint, monitor="val_accuracy", mode="max"))
        history = fit(
            model,
            loss_fn,
            opt,
            train,
            epochs=epochs,
            valid_batches=test,
            metrics={"accuracy": accuracy},
            scheduler=sched,
            callbacks=callbacks,
            distributed=True,
        )
    final = history["val_accuracy"][-1]
    if dist.is_main_process():
        print(f"test accuracy: {final:.4f} ({len(x_test)} images, over {world} process(es))")
    return final


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=32, help="images per process per step")
    ap.add_argument("--checkpoint", type=Path, default=None, help="keep the best weights here")
    args = ap.parse_args()
    main(args.epochs, args.batch_size, args.checkpoint)
