"""Higher-order gradients (issue 26): lampy against PyTorch, in one process.

Prints, for float64 on one thread:

1. agreement with PyTorch (max absolute difference): the Hessian of a 2-layer tanh MLP's
   loss in its first weight matrix (``lampy.hessian`` / ``torch.autograd.functional.hessian``),
   a Hessian-vector product, a Jacobian and a jvp (``torch.func``), the weights' gradients
   of a WGAN-GP critic loss, of a PINN loss with ``d2u/dx2`` and of one MAML inner step;
2. time: ``lampy.hvp`` against one ``lampy.grad`` of the same loss (target <= 3x) and
   against ``torch.autograd.functional.hvp`` and ``torch.func``'s ``jvp(grad(f))`` on an
   MLP 784-256-10, batch 64 (target <= PyTorch's hvp). Medians of interleaved repeats.

    OPENBLAS_NUM_THREADS=1 python benchmarks/bench_higher_order.py [--repeats N]

PyTorch is optional: without it only lampy's own figures are printed.
"""

from __future__ import annotations

import argparse
import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import statistics  # noqa: E402
import time  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import lampy  # noqa: E402

F = lampy.nn.functional

try:
    import torch

    torch.set_num_threads(1)
    torch.set_default_dtype(torch.float64)
    TF = torch.nn.functional
except ImportError:  # pragma: no cover (PyTorch is optional)
    torch = None  # type: ignore[assignment]


def _t(a: np.ndarray) -> Any:
    return torch.tensor(a, dtype=torch.float64)


# ------------------------------------------------------------------ agreement
def agreement() -> list[tuple[str, float]]:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(32, 8)), rng.normal(size=(32, 3))
    w1, w2 = rng.normal(size=(8, 16)) * 0.5, rng.normal(size=(16, 3)) * 0.5
    rows = []

    def loss_l(a: Any) -> Any:
        return ((lampy.tanh(x @ a) @ w2 - y) ** 2).mean()

    def loss_t(a: Any) -> Any:
        return ((torch.tanh(_t(x) @ a) @ _t(w2) - _t(y)) ** 2).mean()

    h_l = lampy.hessian(loss_l)(w1)
    h_t = torch.autograd.functional.hessian(loss_t, _t(w1)).numpy()
    rows.append(("Hessian of a tanh MLP's loss in W1 (8x16)", float(np.abs(h_l - h_t).max())))
    v = rng.normal(size=w1.shape)
    _, hv_l = lampy.hvp(loss_l, w1, v)
    _, hv_t = torch.autograd.functional.hvp(loss_t, _t(w1), _t(v))
    rows.append(("hvp", float(np.abs(hv_l - hv_t.numpy()).max())))
    f_l = lambda a: lampy.tanh(x[:4] @ a)
    f_t = lambda a: torch.tanh(_t(x[:4]) @ a)
    j_l = lampy.jacobian(f_l)(w1)
    j_t = torch.func.jacrev(f_t)(_t(w1)).numpy()
    rows.append(("jacobian (jacrev)", float(np.abs(j_l - j_t).max())))
    _, jv_l = lampy.jvp(f_l, w1, v)
    _, jv_t = torch.func.jvp(f_t, (_t(w1),), (_t(v),))
    rows.append(("jvp", float(np.abs(jv_l - jv_t.numpy()).max())))
    rows.append(("WGAN-GP critic loss, weight gradients", _wgan(rng)))
    rows.append(("PINN loss with d2u/dx2, weight gradients", _pinn(rng)))
    rows.append(("MAML, one inner step, meta-gradients", _maml(rng)))
    return rows


def _max_diff(lampy_grads: Any, torch_params: list[Any]) -> float:
    return max(
        float(np.abs(np.asarray(g) - p.grad.numpy()).max())
        for g, p in zip(lampy_grads, torch_params, strict=True)
    )


def _wgan(rng: np.random.Generator) -> float:
    real, fake = rng.normal(size=(16, 4)), rng.normal(size=(16, 4))
    alpha = rng.uniform(size=(16, 1))
    w1, b1, w2 = rng.normal(size=(8, 4)), rng.normal(size=8), rng.normal(size=(1, 8))
    x_hat = alpha * real + (1 - alpha) * fake

    def loss_l(w1: Any, b1: Any, w2: Any) -> Any:
        critic = lambda z: F.linear(F.leaky_relu(F.linear(z, w1, b1), 0.2), w2)
        gx = lampy.grad(lambda z: critic(z).sum())(x_hat)
        norm = lampy.sqrt((gx * gx).sum(axis=1))
        return critic(fake).mean() - critic(real).mean() + 10 * ((norm - 1) ** 2).mean()

    ps = [_t(a).requires_grad_() for a in (w1, b1, w2)]
    critic = lambda z: TF.linear(TF.leaky_relu(TF.linear(z, ps[0], ps[1]), 0.2), ps[2])
    xh = _t(x_hat).requires_grad_()
    (gx,) = torch.autograd.grad(critic(xh).sum(), xh, create_graph=True)
    norm = torch.sqrt((gx * gx).sum(dim=1))
    loss = critic(_t(fake)).mean() - critic(_t(real)).mean() + 10 * ((norm - 1) ** 2).mean()
    loss.backward()
    return _max_diff(lampy.grad(loss_l, argnums=(0, 1, 2))(w1, b1, w2), ps)


def _pinn(rng: np.random.Generator) -> float:
    xs = np.linspace(-1.0, 1.0, 16)
    w1, b1, w2 = rng.normal(size=(16, 1)), rng.normal(size=16), rng.normal(size=(1, 16))

    def loss_l(w1: Any, b1: Any, w2: Any) -> Any:
        u = lambda z: F.linear(lampy.tanh(F.linear(z[:, None], w1, b1)), w2)[:, 0]
        du = lambda z: lampy.grad(lambda q: u(q).sum())(z)
        d2u = lampy.grad(lambda z: du(z).sum())(xs)
        return ((d2u + u(xs)) ** 2).mean()

    ps = [_t(a).requires_grad_() for a in (w1, b1, w2)]
    u = lambda z: TF.linear(torch.tanh(TF.linear(z[:, None], ps[0], ps[1])), ps[2])[:, 0]
    z = _t(xs).requires_grad_()
    (du,) = torch.autograd.grad(u(z).sum(), z, create_graph=True)
    (d2u,) = torch.autograd.grad(du.sum(), z, create_graph=True)
    ((d2u + u(_t(xs))) ** 2).mean().backward()
    return _max_diff(lampy.grad(loss_l, argnums=(0, 1, 2))(w1, b1, w2), ps)


def _maml(rng: np.random.Generator) -> float:
    xs, ys, xq, yq = (rng.normal(size=s) for s in [(8, 4), (8,), (8, 4), (8,)])
    w0, b0 = rng.normal(size=(1, 4)), rng.normal(size=1)

    def inner_l(w: Any, b: Any, x: Any, y: Any) -> Any:
        return F.mse_loss(F.linear(x, w, b)[:, 0], y)

    def meta_l(w: Any, b: Any) -> Any:
        gw, gb = lampy.grad(inner_l, argnums=(0, 1))(w, b, xs, ys)
        return inner_l(w - 0.1 * gw, b - 0.1 * gb, xq, yq)

    ps = [_t(a).requires_grad_() for a in (w0, b0)]
    inner_t = lambda w, b, x, y: TF.mse_loss(TF.linear(_t(x), w, b)[:, 0], _t(y))
    gw, gb = torch.autograd.grad(inner_t(ps[0], ps[1], xs, ys), ps, create_graph=True)
    inner_t(ps[0] - 0.1 * gw, ps[1] - 0.1 * gb, xq, yq).backward()
    return _max_diff(lampy.grad(meta_l, argnums=(0, 1))(w0, b0), ps)


# ------------------------------------------------------------------ time
def timing(repeats: int) -> list[tuple[str, float]]:
    rng = np.random.default_rng(1)
    x, labels = rng.normal(size=(64, 784)), rng.integers(0, 10, size=64)
    w1, w2 = rng.normal(size=(784, 256)) * 0.05, rng.normal(size=(256, 10)) * 0.05
    v = rng.normal(size=w1.shape)

    def loss_l(a: Any) -> Any:
        return F.cross_entropy(lampy.tanh(x @ a) @ w2, labels)

    cases: dict[str, Callable[[], Any]] = {
        "lampy grad": lambda: lampy.grad(loss_l)(w1),
        "lampy hvp": lambda: lampy.hvp(loss_l, w1, v),
    }
    if torch is not None:
        tx, tl, tw2, tv = _t(x), torch.tensor(labels), _t(w2), _t(v)
        loss_t = lambda a: TF.cross_entropy(torch.tanh(tx @ a) @ tw2, tl)
        tw1 = _t(w1)

        def torch_grad() -> Any:
            a = tw1.clone().requires_grad_()
            return torch.autograd.grad(loss_t(a), a)

        def torch_func_hvp() -> Any:
            return torch.func.jvp(torch.func.grad(loss_t), (tw1,), (tv,))

        cases["torch grad"] = torch_grad
        cases["torch autograd.functional.hvp"] = lambda: torch.autograd.functional.hvp(
            loss_t, tw1, tv
        )
        cases["torch.func jvp(grad)"] = torch_func_hvp
    samples: dict[str, list[float]] = {k: [] for k in cases}
    for fn in cases.values():  # warm up
        fn()
    for _ in range(repeats):  # interleaved, so that load changes hit every case alike
        for name, fn in cases.items():
            t0 = time.perf_counter()
            fn()
            samples[name].append(time.perf_counter() - t0)
    return [(name, statistics.median(s) * 1e3) for name, s in samples.items()]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--repeats", type=int, default=15)
    args = ap.parse_args()
    print("Higher-order gradients, float64, one thread\n")
    if torch is None:
        print("PyTorch is not installed: agreement and the peers' times are skipped.\n")
    else:
        print(f"1. agreement with PyTorch {torch.__version__} (max abs difference)")
        for name, d in agreement():
            print(f"   {name:<45} {d:.1e}")
        print()
    rows = dict(timing(args.repeats))
    print("2. time, MLP 784-256-10 batch 64, cross entropy, in W1 (median ms)")
    for name, ms in rows.items():
        print(f"   {name:<34} {ms:8.2f}")
    print(f"   lampy hvp / lampy grad             {rows['lampy hvp'] / rows['lampy grad']:8.2f}")
    if "torch autograd.functional.hvp" in rows:
        hvp = rows["lampy hvp"]
        print(
            f"   lampy hvp / torch autograd.functional.hvp "
            f"{hvp / rows['torch autograd.functional.hvp']:.2f}"
        )
        print(f"   lampy hvp / torch.func jvp(grad)   {hvp / rows['torch.func jvp(grad)']:8.2f}")


if __name__ == "__main__":
    main()
