"""Rank 1 fails during data-parallel training, in one of several ways; the job must end
with the error instead of hanging.

--how raise:   rank 1 raises an uncaught exception at step 3 (init's abort hook ends the job).
--how timeout: abort_on_error=False and timeout=4; rank 1 catches its error and stops
               stepping; rank 0 reports the DistributedTimeoutError it gets, then aborts.
"""

from __future__ import annotations

import time

from common import build, data, loss_fn, parser, report
from mpi4py import MPI

import lampy
import lampy.distributed as dist
from lampy import optim
from lampy.data import Batches


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--how", choices=["raise", "timeout"], required=True)
    args = ap.parse_args()
    if args.how == "timeout":
        dist.init(timeout=4, abort_on_error=False)
        MPI.COMM_WORLD.Barrier()  # start together: the 4 s are for the steps, not imports
    else:
        dist.init(timeout=60)
    rank, world = dist.rank(), dist.world_size()
    x, y = data("mlp", 64)
    with lampy.Scope():
        model = build("mlp", seed=0)
        dp = dist.DataParallel(model, bucket_bytes=0)
        opt = optim.SGD(model.parameters(), lr=0.1)
        batches = Batches(x, y, batch_size=4, shard=(rank, world))
        for step, batch in enumerate(batches):
            try:
                with lampy.Scope():
                    if rank == 1 and step == 3:
                        raise RuntimeError("rank 1 failed at step 3")
                    dp.backward(loss_fn(dp, batch))
            except dist.DistributedTimeoutError as e:
                report(args.out, error=str(e), step=step)
                MPI.COMM_WORLD.Abort(3)
            except RuntimeError:
                if args.how != "timeout" or rank != 1:
                    raise
                time.sleep(30)  # stuck, alive, not stepping: rank 0 must time out
            opt.step()
            opt.zero_grad()
    report(args.out, finished=True)


if __name__ == "__main__":
    main()
