"""Complex numbers and FFT (issue 27): lampy against PyTorch 2.13 CPU in one process.

Run ``PYTHONPATH=. python benchmarks/bench_complex.py`` from the repository root (torch
optional: without it only the timings of lampy and numpy are printed). Prints:

1. agreement with torch (max abs difference): complex optimizers after five steps on a
   complex least-squares problem; gradients of real losses through every transform of
   ``lampy.fft`` (drawn ``n``/``s``, axes and norms, real and complex inputs); complex
   linear algebra on gauge-invariant losses; a Hessian through ``rfft``;
2. time (medians, one thread): the W1 chain ``y = tanh(y * 0.9 + 0.1)`` on complex128
   (16,) arrays next to float64 ones, lampy and torch, and an FFT spectral loss's
   forward and backward on 4096 samples.

The real-only path's cost of complex support is counted in bytecodes by
``bench_bytecodes.py`` (compare two checkouts with ``PYTHONPATH``).
"""

from __future__ import annotations

import os

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import statistics  # noqa: E402
import time  # noqa: E402
import warnings  # noqa: E402
from collections.abc import Callable  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

import lampy  # noqa: E402
from lampy import fft, optim  # noqa: E402
from lampy import linalg as la  # noqa: E402

try:
    import torch

    torch.set_num_threads(1)
except ImportError:  # pragma: no cover
    torch = None

RNG = np.random.default_rng(0)


def _c(*shape: int) -> np.ndarray:
    return RNG.normal(size=shape) + 1j * RNG.normal(size=shape)


# ------------------------------------------------------------------ 1. agreement
def optimizers() -> list[tuple[str, float]]:
    z0, a, y = _c(4, 3), _c(5, 4), _c(5, 3)
    cases = [
        ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True}),
        ("Adam", {"lr": 0.1, "amsgrad": True}),
        ("AdamW", {"lr": 0.1, "weight_decay": 0.1}),
        ("RMSprop", {"lr": 0.01, "momentum": 0.5, "centered": True}),
        ("Adagrad", {"lr": 0.1}),
        ("Adadelta", {"lr": 1.0}),
    ]
    rows = []
    for name, kw in cases:
        zt = torch.tensor(z0, requires_grad=True)
        ot = getattr(torch.optim, name)([zt], **kw)
        for _ in range(5):
            ot.zero_grad()
            ((torch.tensor(a) @ zt - torch.tensor(y)).abs() ** 2).sum().backward()
            ot.step()
        with lampy.Scope():
            z = lampy.param(z0)
            ol = getattr(optim, name)([z], **kw)
            for _ in range(5):
                z.zero_grad()
                with lampy.Scope():
                    (lampy.abs(a @ z - y) ** 2).sum().backward()
                ol.step()
            rows.append((f"{name} {kw}", float(np.abs(z.value - zt.detach().numpy()).max())))
    return rows


def _grad_l(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    with lampy.Scope():
        v = lampy.param(x)
        out = f(v)
        loss = (lampy.abs(out) ** 2).sum() if out.dtype.kind == "c" else (out * out).sum()
        loss.backward()
        return np.array(v.grad)


def _grad_t(f: Callable[[Any], Any], x: np.ndarray) -> np.ndarray:
    v = torch.tensor(x, requires_grad=True)
    out = f(v)
    loss = (out.abs() ** 2).sum() if out.is_complex() else (out * out).sum()
    loss.backward()
    return v.grad.numpy()


def transforms() -> list[tuple[str, float]]:
    x, z = RNG.normal(size=(4, 6)), _c(4, 6)
    rows = []
    worst: dict[str, float] = {}
    for norm in (None, "ortho", "forward"):
        cases = [
            ("fft", x, lambda m, v, nm=norm: m.fft(v, n=8, dim_or_axis=0, norm=nm)),
            ("fft", z, lambda m, v, nm=norm: m.fft(v, n=4, norm=nm)),
            ("ifft", z, lambda m, v, nm=norm: m.ifft(v, norm=nm)),
            ("fft2", z, lambda m, v, nm=norm: m.fft2(v, s=(3, 7), norm=nm)),
            ("ifftn", x, lambda m, v, nm=norm: m.ifftn(v, norm=nm)),
            ("rfft", x, lambda m, v, nm=norm: m.rfft(v, n=9, norm=nm)),
            ("rfftn", x, lambda m, v, nm=norm: m.rfftn(v, s=(5, 4), norm=nm)),
            ("irfft", z, lambda m, v, nm=norm: m.irfft(v, n=7, norm=nm)),
            ("irfft", z, lambda m, v, nm=norm: m.irfft(v, norm=nm)),
            ("irfft2", z, lambda m, v, nm=norm: m.irfft2(v, s=(4, 6), norm=nm)),
            ("fftshift", z, lambda m, v, nm=norm: m.fftshift(v)),
        ]
        for name, a, f in cases:
            d = np.abs(
                _grad_l(lambda v, f=f: f(_LampyFFT, v), a)
                - _grad_t(lambda v, f=f: f(_TorchFFT, v), a)
            )
            worst[name] = max(worst.get(name, 0.0), float(d.max()))
    rows += [(f"lampy.fft.{k} (3 norms, real and complex inputs)", v) for k, v in worst.items()]

    def h_l(v: Any) -> Any:
        return (lampy.abs(fft.rfft(lampy.tanh(v))) ** 2).sum()

    def h_t(v: Any) -> Any:
        return (torch.fft.rfft(torch.tanh(v)).abs() ** 2).sum()

    x1 = RNG.normal(size=6)
    hess = np.asarray(lampy.hessian(h_l)(x1))
    hess_t = torch.autograd.functional.hessian(h_t, torch.tensor(x1)).numpy()
    rows.append(("Hessian of sum |rfft(tanh x)|^2", float(np.abs(hess - hess_t).max())))
    return rows


def _wrap(module: Any, axis_kw: str) -> Any:
    """``module``'s transforms (lampy.fft or torch.fft) with one keyword for the axis of
    the 1-d ones (``dim_or_axis``: numpy's ``axis``, torch's ``dim``)."""

    class Wrapped:
        pass

    for name in ("fft", "ifft", "rfft", "irfft"):
        fn = getattr(module, name)
        setattr(
            Wrapped,
            name,
            staticmethod(
                lambda v, n=None, dim_or_axis=-1, norm=None, fn=fn: fn(
                    v, n=n, **{axis_kw: dim_or_axis}, norm=norm
                )
            ),
        )
    for name in ("fft2", "ifft2", "fftn", "ifftn", "rfftn", "irfft2"):
        setattr(Wrapped, name, staticmethod(getattr(module, name)))
    Wrapped.fftshift = staticmethod(module.fftshift)  # type: ignore[attr-defined]
    return Wrapped


_LampyFFT = _wrap(fft, "axis")
_TorchFFT = _wrap(torch.fft, "dim") if torch is not None else None


def linear_algebra() -> list[tuple[str, float]]:
    a, b = _c(3, 3), _c(3, 2)
    herm = a @ a.conj().T + 3 * np.eye(3)
    cases: list[tuple[str, np.ndarray, Callable[[Any, Any], Any]]] = [
        ("inv", a, lambda m, v: m.linalg.inv(v)),
        ("det", a, lambda m, v: m.linalg.det(v)),
        (
            "solve",
            a,
            lambda m, v: m.linalg.solve(v, m.asarray(b) if m is lampy else torch.tensor(b)),
        ),
        ("eigvals (|w|^2)", a, lambda m, v: m.abs(m.linalg.eigvals(v))),
        ("eigvalsh", herm, lambda m, v: m.linalg.eigvalsh(v + _ct(m, v))),
        (
            "svd values",
            a,
            lambda m, v: (
                m.linalg.svd(v, compute_uv=False) if m is lampy else torch.linalg.svdvals(v)
            ),
        ),
        ("cholesky", herm, lambda m, v: m.linalg.cholesky(v @ _ct(m, v) + _eye(m, 3))),
        ("slogdet", a, lambda m, v: m.linalg.slogdet(v)[1]),
        ("pinv", b, lambda m, v: m.linalg.pinv(v)),
    ]
    rows = []
    for name, x, f in cases:
        d = np.abs(_grad_l(lambda v, f=f: f(lampy, v), x) - _grad_t(lambda v, f=f: f(torch, v), x))
        rows.append((f"linalg.{name}", float(d.max())))
    return rows


def _svdvals(m: Any, v: Any) -> Any:
    return la.svd(v, compute_uv=False) if m is lampy else torch.linalg.svdvals(v)


def _ct(m: Any, v: Any) -> Any:
    return lampy.conj(v).T if m is lampy else v.conj().T


def _eye(m: Any, k: int) -> Any:
    return np.eye(k) if m is lampy else torch.eye(k, dtype=torch.complex128)


# ------------------------------------------------------------------ 2. time
def _median_us(fn: Callable[[], Any], repeats: int, per: int) -> float:
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        samples.append((time.perf_counter() - t0) / per * 1e6)
    return statistics.median(samples)


def timings(repeats: int) -> list[tuple[str, float, float | None]]:
    steps = 100
    rows: list[tuple[str, float, float | None]] = []
    for dtype in (np.float64, np.complex128):
        x0 = (RNG.normal(size=16) * 0.1).astype(dtype)

        def lampy_chain(x0: np.ndarray = x0) -> None:
            with lampy.Scope():
                x = lampy.param(x0)
                y = x
                for _ in range(steps):
                    y = lampy.tanh(y * 0.9 + 0.1)
                (lampy.abs(y) ** 2).sum().backward()

        def torch_chain(x0: np.ndarray = x0) -> None:
            x = torch.tensor(x0, requires_grad=True)
            y = x
            for _ in range(steps):
                y = torch.tanh(y * 0.9 + 0.1)
            (y.abs() ** 2).sum().backward()

        per = 3 * steps
        t_l = _median_us(lampy_chain, repeats, per)
        t_t = _median_us(torch_chain, repeats, per) if torch is not None else None
        rows.append((f"W1 chain, (16,) {np.dtype(dtype).name}, µs/op", t_l, t_t))
    signal = RNG.normal(size=4096)

    def lampy_spectral() -> None:
        with lampy.Scope():
            x = lampy.param(signal)
            (lampy.abs(fft.rfft(x)) ** 2).sum().backward()

    def torch_spectral() -> None:
        x = torch.tensor(signal, requires_grad=True)
        (torch.fft.rfft(x).abs() ** 2).sum().backward()

    rows.append(
        (
            "sum |rfft(x)|^2, 4096 samples, forward + backward, µs",
            _median_us(lampy_spectral, repeats, 1),
            _median_us(torch_spectral, repeats, 1) if torch is not None else None,
        )
    )
    return rows


def main() -> None:
    warnings.simplefilter("ignore")
    print(f"lampy {lampy.__version__}, numpy {np.__version__}", end="")
    print(f", torch {torch.__version__}" if torch is not None else " (no torch)")
    if torch is not None:
        print("\n1. agreement with torch (max abs difference)")
        for name, d in optimizers() + transforms() + linear_algebra():
            print(f"  {name:60s} {d:.1e}")
    print("\n2. time (medians, one thread)")
    print(f"  {'workload':55s} {'lampy':>9s} {'torch':>9s} {'ratio':>7s}")
    for name, t_l, t_t in timings(repeats=30):
        ratio = f"{t_l / t_t:7.2f}" if t_t else "      -"
        torch_s = f"{t_t:9.2f}" if t_t else "        -"
        print(f"  {name:55s} {t_l:9.2f} {torch_s} {ratio}")


if __name__ == "__main__":
    main()
