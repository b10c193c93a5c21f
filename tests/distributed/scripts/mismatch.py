"""Rank 1's model (or optimizer) differs from rank 0's, in each of several ways; every
rank reports the error it got for each way (all ranks must raise, none may hang)."""

from __future__ import annotations

import numpy as np
from common import F64, parser, report

import lampy
import lampy.distributed as dist
from lampy import nn, optim

WAYS = ["shape", "name", "dtype", "optimizer"]


def attempt(differ: str, odd: bool) -> str:
    rng = np.random.default_rng(0)
    hidden = 5 if odd and differ == "shape" else 4
    dtype = np.float32 if odd and differ == "dtype" else F64
    with lampy.Scope():
        layers = [nn.Linear.init(3, hidden, rng=rng, dtype=dtype)]
        if odd and differ == "name":
            layers.append(nn.Tanh.init())  # shifts the next layer's name from "1." to "2."
        layers.append(nn.Linear.init(hidden, 2, rng=rng, dtype=dtype))
        model = nn.Sequential.init(*layers)
        try:
            if differ == "optimizer":
                kind = optim.SGD if odd else optim.Adam
                dist.broadcast_optimizer_state(kind(model.parameters(), lr=0.1))
            else:
                dist.DataParallel(model)
        except dist.DistributedError as e:
            return str(e)
    return ""


def main() -> None:
    args = parser(__doc__).parse_args()
    dist.init(timeout=60)
    odd = dist.rank() == 1
    report(args.out, errors={way: attempt(way, odd) for way in WAYS})


if __name__ == "__main__":
    main()
