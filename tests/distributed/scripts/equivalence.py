"""Train data-parallel, then the same steps in one process on the global batches; report
how far apart the parameters are, and a digest of them to compare ranks.

The reference is one process with batch ``world * batch`` from an identically seeded
``Batches``; for an epoch's last global batch that does not fill a multiple of ``world``
samples, the reference pads it as documented (with the epoch's first samples).
"""

from __future__ import annotations

import hashlib

import numpy as np
from common import build, data, loss_fn, max_rel_err, params, parser, report

import lampy
import lampy.distributed as dist
from lampy import optim
from lampy.data import Batches


def make_optimizer(name: str, model: lampy.nn.Module) -> optim.Optimizer:
    if name == "adam":
        return optim.Adam(model.parameters(), lr=0.05)
    return optim.SGD(model.parameters(), lr=0.3, momentum=0.9)


def reference_batches(
    x: np.ndarray, y: np.ndarray, size: int, world: int, rng: np.random.Generator, drop_last: bool
) -> list[tuple[np.ndarray, ...]]:
    """One process's batches of ``size``; a last batch short of a multiple of ``world``
    samples is padded with the first samples of the epoch's order."""
    batches = list(Batches(x, y, batch_size=size, shuffle=True, rng=rng, drop_last=drop_last))
    if batches and len(batches[-1][0]) % world:
        pad = world - len(batches[-1][0]) % world
        first = batches[0]
        batches[-1] = tuple(
            np.concatenate([a, np.resize(f, (pad, *f.shape[1:]))])
            for a, f in zip(batches[-1], first, strict=True)
        )
    return batches


def main() -> None:
    ap = parser(__doc__)
    ap.add_argument("--model", default="mlp")
    ap.add_argument("--samples", type=int, default=48)
    ap.add_argument("--batch", type=int, default=4)
    ap.add_argument("--epochs", type=int, default=2)
    ap.add_argument("--bucket-bytes", type=int, default=dist.DEFAULT_BUCKET_BYTES)
    ap.add_argument("--no-overlap", action="store_true")
    ap.add_argument("--drop-last", action="store_true")
    ap.add_argument("--accumulate", type=int, default=1)
    ap.add_argument("--optimizer", default="sgd")
    args = ap.parse_args()

    dist.init()
    rank, world = dist.rank(), dist.world_size()
    x, y = data(args.model, args.samples)
    shard_sizes: list[int] = []
    with lampy.Scope():
        model = build(args.model, seed=100 + rank)  # differs per rank: rank 0's is broadcast
        dp = dist.DataParallel(model, bucket_bytes=args.bucket_bytes, overlap=not args.no_overlap)
        opt = make_optimizer(args.optimizer, model)
        rng = np.random.default_rng(7)
        steps = 0
        for _ in range(args.epochs):
            batches = Batches(
                x,
                y,
                batch_size=args.batch,
                shuffle=True,
                rng=rng,
                drop_last=args.drop_last,
                shard=(rank, world),
            )
            for i, batch in enumerate(batches):
                shard_sizes.append(len(batch[0]))
                last = (i + 1) % args.accumulate == 0 or i + 1 == len(batches)
                with lampy.Scope():
                    dp.backward(loss_fn(dp, batch) / args.accumulate, sync=last)
                if last:
                    opt.step()
                    opt.zero_grad()
                    steps += 1
        trained = params(model)
        buckets = dp.buckets

        reference = build(args.model, seed=100)  # rank 0's start
        ref_opt = make_optimizer(args.optimizer, reference)
        ref_rng = np.random.default_rng(7)
        for _ in range(args.epochs):
            batches = reference_batches(x, y, args.batch * world, world, ref_rng, args.drop_last)
            for i, batch in enumerate(batches):
                # the same grouping: micro-batch k of the reference is every rank's k-th
                last = (i + 1) % args.accumulate == 0 or i + 1 == len(batches)
                with lampy.Scope():
                    (loss_fn(reference, batch) / args.accumulate).backward()
                if last:
                    ref_opt.step()
                    ref_opt.zero_grad()
        expected = params(reference)
    digest = hashlib.sha256(b"".join(trained[k].tobytes() for k in sorted(trained))).hexdigest()
    report(
        args.out,
        world=world,
        steps=steps,
        shard_sizes=shard_sizes,
        rel_err=max_rel_err(trained, expected),
        digest=digest,
        buckets=buckets,
    )


if __name__ == "__main__":
    main()
