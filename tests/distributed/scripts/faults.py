"""Fault cases of issue 23 under mpirun; each must end the job quickly with a clear error.

--how exit:     rank 1 calls sys.exit(3) at step 3 of a data-parallel loop (init's
                timeout is 600 s: rank 0 must not wait for it).
--how lengths:  the ranks load datasets of different lengths and call
                fit(..., distributed=True): every rank raises a DistributedError naming
                the mismatch, reported before the job ends.
"""

from __future__ import annotations

import sys

from common import build, data, loss_fn, parser, report

import lampy
import lampy.distributed as dist
from lampy import optim
from lampy.data import Batches
from lampy.train import fit


def exit_midway(out: object) -> None:
    rank, world = dist.rank(), dist.world_size()
    x, y = data("mlp", 64)
    with lampy.Scope():
        model = build("mlp", seed=0)
        dp = dist.DataParallel(model, bucket_bytes=0)
        opt = optim.SGD(model.parameters(), lr=0.1)
        for step, batch in enumerate(Batches(x, y, batch_size=4, shard=(rank, world))):
            with lampy.Scope():
                if rank == 1 and step == 3:
                    sys.exit(3)
                try:
                    dp.backward(loss_fn(dp, batch))
                except dist.DistributedError as e:
                    report(out, error=f"{type(e).__name__}: {e}", step=step)
                    raise
            opt.step()
            opt.zero_grad()
    report(out, finished=True)


def different_lengths(out: object) -> None:
    rank, world = dist.rank(), dist.world_size()
    x, y = data("mlp", 64 + 16 * rank)  # rank 1 has 16 more samples
    with lampy.Scope():
        model = build("mlp", seed=0)
        opt = optim.SGD(model.parameters(), lr=0.1)
        try:
            fit(
                model,
                loss_fn,
                opt,
                Batches(x, y, batch_size=4, shard=(rank, world)),
                epochs=1,
                distributed=True,
                progress=False,
            )
        except dist.DistributedError as e:
            report(out, error=f"{type(e).__name__}: {e}")
            return
    report(out, finished=True)


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--how", choices=["exit", "lengths"], required=True)
    args = ap.parse_args()
    dist.init(timeout=600)
    if args.how == "exit":
        exit_midway(args.out)
    else:
        different_lengths(args.out)


if __name__ == "__main__":
    main()
