"""fit(..., distributed=True) on a sharded training set, against fit in one process on the
global batches: the same weights, the same logged numbers on every rank; only rank 0
prints and writes checkpoints and logs."""

from __future__ import annotations

import hashlib

import numpy as np
from common import build, data, loss_fn, max_rel_err, params, parser, report

import lampy
import lampy.distributed as dist
from lampy import optim
from lampy.data import Batches
from lampy.train import BestCheckpoint, MetricsLogger, accuracy, fit


def train(shard: tuple[int, int], batch: int, out_dir: str, accumulate: int) -> tuple:  # type: ignore[type-arg]
    x, y = data("mlp", 96)
    xv, yv = data("mlp", 24)
    model = build("mlp", seed=100 + shard[0])
    opt = optim.Adam(model.parameters(), lr=0.02)
    sched = optim.lr_scheduler.ReduceLROnPlateau(opt, patience=0, factor=0.5)
    history = fit(
        model,
        loss_fn,
        opt,
        Batches(x, y, batch_size=batch, shuffle=True, rng=np.random.default_rng(3), shard=shard),
        epochs=3,
        valid_batches=Batches(xv, yv, batch_size=4, shard=shard),
        metrics={"accuracy": accuracy},
        scheduler=sched,
        callbacks=[
            BestCheckpoint(f"{out_dir}/best.safetensors", monitor="val_accuracy", mode="max"),
            MetricsLogger(f"{out_dir}/log.csv"),
        ],
        grad_accumulation=accumulate,
        distributed=shard[1] > 1,
        progress=shard[1] > 1,  # the reference trains silently
    )
    return model, history


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--accumulate", type=int, default=1)
    args = ap.parse_args()
    dist.init(timeout=120)
    rank, world = dist.rank(), dist.world_size()
    per_rank = args.out / f"files{rank}"  # where this rank's callbacks write (rank 0 only)
    per_rank.mkdir(parents=True)
    with lampy.Scope():
        model, history = train((rank, world), args.batch, str(per_rank), args.accumulate)
        trained = params(model)
        # the reference: one process, batches of world * batch, silent
        ref_dir = args.out / f"reference{rank}"
        ref_dir.mkdir()
        reference, ref_history = train((0, 1), args.batch * world, str(ref_dir), args.accumulate)
        expected = params(reference)
    digest = hashlib.sha256(b"".join(trained[k].tobytes() for k in sorted(trained))).hexdigest()
    keys = ["loss", "val_loss", "val_accuracy", "lr"]
    report(
        args.out,
        rel_err=max_rel_err(trained, expected),
        digest=digest,
        history={k: history[k] for k in keys},
        ref_history={k: ref_history[k] for k in keys},
        files=sorted(p.name for p in per_rank.iterdir()),
    )


if __name__ == "__main__":
    main()
