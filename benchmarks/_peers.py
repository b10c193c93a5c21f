"""Peer libraries for bench_core.py: optional imports and the same workloads in each.

Every peer is optional. :func:`load_peers` imports what is installed and records why
the rest is skipped; the benchmark then prints one note per missing peer.

Import this module only after the thread-count environment variables are set (as
``bench_core.py`` does before importing numpy), so that BLAS starts single-threaded.

Each peer implements the two workloads of ``bench_core.py`` exactly as lampy does:

* ``chain(x0, ops)``: the elementwise chain of benchmark A, forward and backward,
  returning the gradient with respect to ``x0`` as a numpy array.
* an MLP object with ``loss_and_grads()`` (forward and backward, no update; used for the
  cross-check and the memory figures) and ``step()`` (forward, backward and a plain SGD
  update of the peer's own copy of the weights; used for timing).
"""

from __future__ import annotations

import contextlib
import importlib
import importlib.metadata
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from types import ModuleType
from typing import Any

import numpy as np

# The op sequence of benchmark A, shared by every implementation: a cycle of six
# elementwise ops. After tanh the value is in (-1, 1), so exp(.) - SUB_C > 0.068 and the
# log always gets a positive argument; values and gradients stay finite and normal.
CHAIN_CYCLE: tuple[str, ...] = ("mul", "add", "tanh", "exp", "sub", "log")
MUL_C, ADD_C, SUB_C = 0.9, 0.1, 0.3


def run_chain(x: Any, ops: Sequence[str], tanh: Any, exp: Any, log: Any) -> Any:
    """Benchmark A's forward chain with one library's tanh, exp and log (operators for
    the rest), shared by every implementation that records a graph."""
    for code in ops:
        if code == "mul":
            x = x * MUL_C
        elif code == "add":
            x = x + ADD_C
        elif code == "tanh":
            x = tanh(x)
        elif code == "exp":
            x = exp(x)
        elif code == "sub":
            x = x - SUB_C
        else:
            x = log(x)
    return x


ChainFn = Callable[[np.ndarray, Sequence[str]], np.ndarray]


@dataclass
class Peers:
    """The peer modules that could be imported, and why the others could not."""

    modules: dict[str, ModuleType] = field(default_factory=dict)
    versions: dict[str, str] = field(default_factory=dict)
    missing: dict[str, str] = field(default_factory=dict)


ALL_PEERS = ("autograd", "mygrad", "torch")


def load_peers(wanted: Sequence[str] = ALL_PEERS) -> Peers:
    """Import the ``wanted`` peers that are installed; never raises."""
    peers = Peers()
    for name in ALL_PEERS:
        if name not in wanted:
            peers.missing[name] = "not requested (--peers)"
            continue
        try:
            mod = importlib.import_module(name)
        except Exception as e:  # ImportError, or a broken install raising anything else
            peers.missing[name] = f"{type(e).__name__}: {e}"
            continue
        peers.modules[name] = mod
        try:
            peers.versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            peers.versions[name] = str(getattr(mod, "__version__", "?"))
    torch = peers.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
        with contextlib.suppress(RuntimeError):  # allowed only before any parallel work
            torch.set_num_interop_threads(1)
    return peers


# --------------------------------------------------------------------- benchmark A


def autograd_chain(x0: np.ndarray, ops: Sequence[str]) -> np.ndarray:
    """Benchmark A with HIPS autograd (``autograd.grad`` of the chain summed)."""
    import autograd
    import autograd.numpy as anp

    def f(x: Any) -> Any:
        return anp.sum(run_chain(x, ops, anp.tanh, anp.exp, anp.log))

    return np.asarray(autograd.grad(f)(x0))


def mygrad_chain(x0: np.ndarray, ops: Sequence[str]) -> np.ndarray:
    """Benchmark A with MyGrad (default settings, memory guarding on)."""
    import mygrad as mg

    x = leaf = mg.tensor(x0)  # type: ignore[attr-defined]
    x = run_chain(x, ops, mg.tanh, mg.exp, mg.log)
    mg.sum(x).backward()
    return np.asarray(leaf.grad)


def torch_chain(x0: np.ndarray, ops: Sequence[str]) -> np.ndarray:
    """Benchmark A with PyTorch on the CPU (float64, one intra-op thread)."""
    import torch

    x = leaf = torch.tensor(x0, requires_grad=True)
    x = run_chain(x, ops, torch.tanh, torch.exp, torch.log)
    x.sum().backward()  # type: ignore[no-untyped-call]
    assert leaf.grad is not None
    return leaf.grad.numpy()


CHAINS: dict[str, ChainFn] = {
    "autograd": autograd_chain,
    "mygrad": mygrad_chain,
    "torch": torch_chain,
}


# --------------------------------------------------------------------- benchmark B
#
# The MLP: logits = tanh(tanh(X W1 + b1) W2 + b2) W3 + b3, then softmax cross-entropy
# built from primitives: z = logits - max(logits) (the max taken as a constant, outside
# the graph), logp = z - log(sum(exp(z), axis=1)), loss = -mean(sum(logp * Y, axis=1))
# with Y one-hot.


class AutogradMLP:
    """Benchmark B with HIPS autograd: ``autograd.value_and_grad`` over the weight list."""

    def __init__(self, weights: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float):
        import autograd
        import autograd.numpy as anp
        from autograd.tracer import getval

        self.weights = [w.copy() for w in weights]
        self.lr = lr

        def loss(ws: list[Any]) -> Any:
            w1, b1, w2, b2, w3, b3 = ws
            h1 = anp.tanh(anp.matmul(x, w1) + b1)
            h2 = anp.tanh(anp.matmul(h1, w2) + b2)
            logits = anp.matmul(h2, w3) + b3
            z = logits - np.max(getval(logits), axis=1, keepdims=True)
            logp = z - anp.log(anp.sum(anp.exp(z), axis=1, keepdims=True))
            return -anp.mean(anp.sum(logp * y, axis=1))

        self._vg = autograd.value_and_grad(loss)

    def loss_and_grads(self) -> tuple[float, list[np.ndarray]]:
        value, grads = self._vg(self.weights)
        return float(value), [np.asarray(g) for g in grads]

    def step(self) -> float:
        value, grads = self._vg(self.weights)
        for w, g in zip(self.weights, grads, strict=True):
            w -= self.lr * g
        return float(value)


class MygradMLP:
    """Benchmark B with MyGrad: persistent tensors, updated in place through ``.data``."""

    def __init__(self, weights: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float):
        import mygrad as mg

        self.mg = mg
        self.params = [mg.tensor(w.copy()) for w in weights]  # type: ignore[attr-defined]
        self.x, self.y, self.lr = x, y, lr

    def _loss(self) -> Any:
        mg = self.mg
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = mg.tanh(mg.matmul(self.x, w1) + b1)
        h2 = mg.tanh(mg.matmul(h1, w2) + b2)
        logits = mg.matmul(h2, w3) + b3
        z = logits - logits.data.max(axis=1, keepdims=True)
        logp = z - mg.log(mg.sum(mg.exp(z), axis=1, keepdims=True))
        return -mg.mean(mg.sum(logp * self.y, axis=1))

    def loss_and_grads(self) -> tuple[float, list[np.ndarray]]:
        loss = self._loss()
        loss.backward()
        grads = [np.asarray(p.grad) for p in self.params]
        for p in self.params:  # the caller owns the gradients now (fair memory baseline)
            p.null_grad()
        return float(loss.item()), grads

    def step(self) -> float:
        loss = self._loss()
        loss.backward()
        for p in self.params:
            p.data -= self.lr * p.grad  # type: ignore[operator]
        return float(loss.item())


class TorchMLP:
    """Benchmark B with PyTorch CPU: persistent leaf tensors, SGD under ``no_grad``."""

    def __init__(self, weights: Sequence[np.ndarray], x: np.ndarray, y: np.ndarray, lr: float):
        import torch

        self.torch = torch
        self.params = [torch.tensor(w.copy(), requires_grad=True) for w in weights]
        # torch.tensor copies once here (from_numpy warns about read-only arrays).
        self.x, self.y, self.lr = torch.tensor(x), torch.tensor(y), lr

    def _loss(self) -> Any:
        torch = self.torch
        w1, b1, w2, b2, w3, b3 = self.params
        h1 = torch.tanh(torch.matmul(self.x, w1) + b1)
        h2 = torch.tanh(torch.matmul(h1, w2) + b2)
        logits = torch.matmul(h2, w3) + b3
        z = logits - logits.detach().amax(dim=1, keepdim=True)
        logp = z - torch.log(torch.sum(torch.exp(z), dim=1, keepdim=True))
        return -torch.mean(torch.sum(logp * self.y, dim=1))

    def loss_and_grads(self) -> tuple[float, list[np.ndarray]]:
        loss = self._loss()
        loss.backward()
        grads = [p.grad.numpy() for p in self.params]  # type: ignore[union-attr]
        for p in self.params:  # the caller owns the gradients now
            p.grad = None
        return float(loss.item()), grads

    def step(self) -> float:
        loss = self._loss()
        loss.backward()
        with self.torch.no_grad():
            for p in self.params:
                p -= self.lr * p.grad  # type: ignore[operator]
                p.grad = None  # what optimizer.zero_grad() does by default
        return float(loss.item())


MLPS: dict[str, type[AutogradMLP] | type[MygradMLP] | type[TorchMLP]] = {
    "autograd": AutogradMLP,
    "mygrad": MygradMLP,
    "torch": TorchMLP,
}
