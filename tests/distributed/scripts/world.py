"""The world and its small collectives: ranks, reduce_metrics, barrier, broadcasts of
parameters, buffers and optimizer state. Runs under mpirun or alone (a world of 1)."""

from __future__ import annotations

import hashlib

import numpy as np
from common import F64, parser, report

import lampy
import lampy.distributed as dist
import lampy.nn.functional as F
from lampy import nn, optim


def digest(arrays: list[np.ndarray]) -> str:
    return hashlib.sha256(b"".join(np.ascontiguousarray(a).tobytes() for a in arrays)).hexdigest()


def main() -> None:
    args = parser(__doc__).parse_args()
    before = dist.is_initialized(), dist.is_main_process()
    dist.init(timeout=60)
    dist.init()  # a second call does nothing
    rank, world = dist.rank(), dist.world_size()

    # each rank's numbers weighted by its sample count: rank r has mean r over r + 1 samples
    reduced = dist.reduce_metrics({"loss": float(rank), "one": 1.0}, weight=rank + 1)
    try:
        dist.reduce_metrics({f"only_on_{rank}": 1.0})
        names_error = ""
    except dist.DistributedError as e:
        names_error = str(e)
    dist.barrier()

    rng = np.random.default_rng(rank)  # every rank starts differently
    with lampy.Scope():
        model = nn.Sequential.init(
            nn.Linear.init(3, 4, rng=rng, dtype=F64),
            nn.BatchNorm1d.init(4, dtype=F64),
            nn.Linear.init(4, 2, rng=rng, dtype=F64),
        )
        opt = optim.Adam(model.parameters(), lr=0.1)
        x = rng.normal(size=(8, 3))  # differs per rank
        steps = 2 if rank == 0 else 1  # the optimizers' states differ too
        for _ in range(steps):
            with lampy.Scope():
                F.cross_entropy(model(x), np.arange(8) % 2).backward()
            opt.step()
            opt.zero_grad()
        state_before = digest(list(model.state_dict().values()))
        dist.broadcast_parameters(model)
        dist.broadcast_optimizer_state(opt)
        state_after = digest(list(model.state_dict().values()))
        sd = opt.state_dict()
        opt_after = digest(
            [a for s in sd["state"].values() for a in s.values() if isinstance(a, np.ndarray)]
        )
        opt_steps = [s["step"] for s in sd["state"].values()]

        # DataParallel keeps rank 0's buffers on every rank after each backward
        dp = dist.DataParallel(model)
        with lampy.Scope():
            dp.backward(F.cross_entropy(dp(rng.normal(size=(8, 3))), np.arange(8) % 2))
        running = digest([b for _, b in model.named_buffers()])
    report(
        args.out,
        before=before,
        world=world,
        main=dist.is_main_process(),
        reduced=reduced,
        names_error=names_error,
        state_before=state_before,
        state_after=state_after,
        opt_after=opt_after,
        opt_steps=opt_steps,
        running=running,
    )


if __name__ == "__main__":
    main()
