"""Each rank's loss uses only some of the model's parameters: even ranks head ``a``, odd
ranks head ``b``, no rank head ``c``. Data-parallel training must match one process
whose loss is the mean of every rank's loss on its shard; head ``c`` keeps no gradient."""

from __future__ import annotations

import hashlib

import attrs
import numpy as np
from common import F64, data, max_rel_err, params, parser, report

import lampy
import lampy.distributed as dist
import lampy.nn.functional as F
from lampy import nn, optim
from lampy.data import Batches


@attrs.frozen(eq=False, repr=False)
class Heads(nn.Module):
    body: nn.Linear
    a: nn.Linear
    b: nn.Linear
    c: nn.Linear

    def forward(self, x: np.ndarray, head: str) -> lampy.Variable:
        return getattr(self, head)(lampy.tanh(self.body(x)))


def build(seed: int) -> Heads:
    rng = np.random.default_rng(seed)
    return Heads(*(nn.Linear.init(m, n, rng=rng, dtype=F64) for m, n in [(6, 8), *[(8, 3)] * 3]))


def head_of(rank: int) -> str:
    return "a" if rank % 2 == 0 else "b"


def main() -> None:
    args = parser(__doc__).parse_args()
    dist.init(timeout=60)
    rank, world = dist.rank(), dist.world_size()
    x, y = data("mlp", 48)
    c_grads: list[bool] = []
    with lampy.Scope():
        model = build(seed=100 + rank)  # rank 0's weights are broadcast
        dp = dist.DataParallel(model, bucket_bytes=0)
        opt = optim.SGD(model.parameters(), lr=0.3, momentum=0.9, weight_decay=0.01)
        for xb, yb in Batches(x, y, batch_size=4, shard=(rank, world)):
            with lampy.Scope():
                dp.backward(F.cross_entropy(dp(xb, head_of(rank)), yb))
            c_grads.append(model.c.weight.grad is not None)
            opt.step()
            opt.zero_grad()
        trained = params(model)

        reference = build(seed=100)
        ref_opt = optim.SGD(reference.parameters(), lr=0.3, momentum=0.9, weight_decay=0.01)
        shards = [Batches(x, y, batch_size=4, shard=(r, world)) for r in range(world)]
        for batches in zip(*shards, strict=True):
            with lampy.Scope():
                losses = [
                    F.cross_entropy(reference(xb, head_of(r)), yb)
                    for r, (xb, yb) in enumerate(batches)
                ]
                (lampy.stack(losses).sum() / world).backward()
            ref_opt.step()
            ref_opt.zero_grad()
        expected = params(reference)
    digest = hashlib.sha256(b"".join(trained[k].tobytes() for k in sorted(trained))).hexdigest()
    report(
        args.out,
        rel_err=max_rel_err(trained, expected),
        digest=digest,
        c_grads=c_grads,
        c_unchanged=bool(np.array_equal(trained["c.weight"], expected["c.weight"])),
    )


if __name__ == "__main__":
    main()
