"""``lampy.distributed.DataParallel``: gradients averaged over the ranks while backprop still runs.

Design (after PyTorch's DistributedDataParallel, Li et al., VLDB 2020): the model's
parameters are grouped into buckets of about ``bucket_bytes``, in the order their
gradients become final (reverse registration order at first, then the order rank 0
observed in the first backward pass). ``lampy.backward_iter`` reports each gradient as
soon as it is final; when every gradient of the next bucket is, that bucket's all-reduces
are launched, non-blocking (``MPI_Iallreduce``), **in place** on the gradient buffers
themselves, and backprop goes on. Every yield of ``backward_iter`` also drives MPI's
progress. Before ``backward`` returns, every request is completed and each buffer is
divided by the number of ranks, so that ``.grad`` holds the mean over the ranks.

Every rank launches the same buckets in the same order whatever order its gradients
became final in, as MPI requires of collectives.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from lampy._errors import LampyTypeError, LampyValueError
from lampy.autograd import Variable, backward_iter
from lampy.distributed._broadcast import broadcast_module_state
from lampy.distributed._world import DistributedError, World, world
from lampy.nn import Module

__all__ = ["DEFAULT_BUCKET_BYTES", "DataParallel"]

DEFAULT_BUCKET_BYTES = 25 * 2**20
"""Bucket size, as PyTorch DDP's default ``bucket_cap_mb=25``."""

_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def plan_buckets(order: list[int], nbytes: list[int], cap: int) -> list[list[int]]:
    """Cut ``order`` (parameter indices) into consecutive buckets of at most ``cap``
    bytes; a parameter bigger than ``cap`` gets a bucket of its own."""
    buckets: list[list[int]] = []
    current: list[int] = []
    size = 0
    for i in order:
        if current and size + nbytes[i] > cap:
            buckets.append(current)
            current, size = [], 0
        current.append(i)
        size += nbytes[i]
    if current:
        buckets.append(current)
    return buckets


class _Flight:
    """One bucket's all-reduces in progress: the requests, and where each result goes.

    ``parts`` holds ``(index, target, buffer)``: ``buffer`` is the array being reduced;
    ``target`` is the gradient buffer it belongs to (``buffer`` itself when reduced in
    place, a buffer to copy back into otherwise), or None for a parameter that had no
    gradient on this rank (``buffer`` is then zeros this rank contributes).
    """

    def __init__(self, requests: list[Any], parts: list[tuple[int, Any, np.ndarray]]) -> None:
        self.requests = requests
        self.parts = parts


class DataParallel:
    """Data-parallel training over the ranks of ``lampy.distributed.init``'s world.

    Each rank runs the same model on its own shard of every batch
    (``lampy.data.Batches`` with ``shard=(rank, world)``); ``dp.backward(loss)``
    backpropagates and leaves in every parameter's ``.grad`` the **mean over the ranks**
    of their gradients, so that the usual ``opt.step()`` takes the same step on every
    rank. Gradients are all-reduced in buckets of about ``bucket_bytes``, each launched
    (non-blocking, in place on the gradient buffers) as soon as backprop has finished
    its gradients, so communication overlaps the rest of backprop.

    Making a ``DataParallel`` is a collective call (every rank makes one): it checks
    that every rank built the same model (entry names, shapes, dtypes) and copies rank
    0's parameters and buffers to the others with
    ``lampy.distributed.broadcast_parameters``.

    Only the model's parameters are averaged; a param of the graph that is not the
    model's gets its local gradient. Every rank must call ``backward`` the same number
    of times (shard the data so that every rank has the same number of batches). In a
    world of one process, ``backward`` is ``loss.backward()``.

    Args:
        module: The model, built the same way on every rank; ``dp(x)`` calls it.
        bucket_bytes: Gradient bytes per bucket. Smaller buckets start communicating
            earlier in backprop (more overlap) but each launch costs a little; larger
            ones launch less often. A parameter larger than this gets its own bucket; 0
            puts every parameter in its own bucket.
        overlap: Launch each bucket as soon as its gradients are final (True) or only
            once backprop has finished (False; for comparison and debugging).
        broadcast_buffers: After each synchronised backward, copy rank 0's buffers
            (batch-norm running statistics) to every rank, as DDP does, so that every
            rank evaluates and saves the same model.

    Raises:
        NotInitializedError: before ``lampy.distributed.init``.
        DistributedError: on every rank, when the ranks' models differ.
        LampyTypeError: ``module`` is not a Module, or a parameter is neither float32
            nor float64.
        LampyValueError: a negative ``bucket_bytes``, or a module without parameters.

    Example:
        A training loop (run it with ``mpirun -n 2 python train.py``; the whole script
        is in docs/distributed.md):

        ```python
        lampy.distributed.init()
        dp = lampy.distributed.DataParallel(model)
        shard = (lampy.distributed.rank(), lampy.distributed.world_size())
        for xb, yb in Batches(x, y, batch_size=32, shuffle=True, rng=rng, shard=shard):
            with lampy.Scope():
                dp.backward(F.cross_entropy(dp(xb), yb))
            opt.step()
            opt.zero_grad()
        ```
    """

    def __init__(
        self,
        module: Module,
        *,
        bucket_bytes: int = DEFAULT_BUCKET_BYTES,
        overlap: bool = True,
        broadcast_buffers: bool = True,
    ) -> None:
        what = "lampy.distributed.DataParallel"
        w = world(what)
        if not isinstance(module, Module):
            raise LampyTypeError(
                f"{what}: module must be a lampy.nn.Module, got {type(module).__name__}."
            )
        if (
            isinstance(bucket_bytes, bool)
            or not isinstance(bucket_bytes, int | np.integer)
            or bucket_bytes < 0
        ):
            raise LampyValueError(
                f"{what}: bucket_bytes must be an int >= 0 (bytes of gradients per bucket), "
                f"got {bucket_bytes!r}."
            )
        named = list(module.named_parameters())
        if not named:
            raise LampyValueError(f"{what}: the module has no parameters to train.")
        for name, p in named:
            if p.dtype not in _DTYPES:
                raise LampyTypeError(
                    f"{what}: parameter '{name}' is {p.dtype}; gradients are averaged over "
                    "MPI in float32 or float64 only. Build the model in one of those."
                )
        broadcast_module_state(module, 0, what)  # also checks every rank has the same model
        self._world: World = w
        self._module = module
        self._names = [name for name, _ in named]
        self._params = [p for _, p in named]
        self._index = {p: i for i, p in enumerate(self._params)}
        self._nbytes = [p.value.nbytes for p in self._params]
        self._bucket_bytes = int(bucket_bytes)
        self._overlap = bool(overlap)
        # (name, read-only view) of each buffer: the views follow the module's updates
        self._buffers = list(module.named_buffers()) if broadcast_buffers else []
        self._received: dict[str, np.ndarray] = {}
        self._set_order(list(reversed(range(len(self._params)))))
        self._order_fixed = False  # replaced by rank 0's observed order after one pass

    @property
    def module(self) -> Module:
        """The wrapped model."""
        return self._module

    @property
    def buckets(self) -> list[list[str]]:
        """The parameter names of each bucket, in launch order."""
        return [[self._names[i] for i in bucket] for bucket in self._buckets]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Run the model: ``dp(x)`` is ``dp.module(x)``."""
        return self._module(*args, **kwargs)

    def _set_order(self, order: list[int]) -> None:
        self._buckets = plan_buckets(order, self._nbytes, self._bucket_bytes)
        self._bucket_of = [0] * len(self._params)
        for b, bucket in enumerate(self._buckets):
            for i in bucket:
                self._bucket_of[i] = b

    def backward(
        self,
        loss: Variable,
        grad: Any = None,
        *,
        sync: bool = True,
        workers: int | str | None = None,
    ) -> None:
        """Backpropagate from ``loss`` and average the parameters' gradients over the ranks.

        On return every parameter's ``.grad`` holds the mean over the ranks of what each
        rank's ``.grad`` would hold after ``loss.backward()`` (gradients accumulate across
        calls until ``zero_grad()``, as with ``backward``).

        Args:
            loss: This rank's scalar loss (its mean over its shard of the batch).
            grad: The seed of backprop, as for ``lampy.backward_iter`` (None for 1).
            sync: False only accumulates this rank's gradients locally, without
                communicating (for gradient accumulation over several micro-batches: the
                next ``backward`` with ``sync=True`` averages the accumulated sums).
            workers: Backprop threads, as for ``lampy.backward_iter``: with more than
                one, backprop goes on in other threads while this one launches and
                drives the all-reduces.

        A parameter that no gradient reached on this rank but did on another gets the
        mean too (this rank counting zero); one that no rank's gradient reached keeps no
        gradient.

        Raises:
            DistributedTimeoutError: another rank did not join within the timeout.
        """
        if not sync or self._world.size == 1:
            loss.backward(grad, workers=workers)
            return
        buffers = self._launch_buffers()
        grads: list[np.ndarray | None] = [None] * len(self._params)
        final = [False] * len(self._params)
        left = [len(bucket) for bucket in self._buckets]
        observed: list[int] = []
        flights: list[_Flight] = []
        launched = 0
        test = self._world.mpi.Request.Testall
        for p, g in backward_iter(loss, grad, workers=workers):
            i = self._index.get(p)
            if i is None:  # a param of the graph that is not the model's
                continue
            grads[i] = g
            final[i] = True
            observed.append(i)
            left[self._bucket_of[i]] -= 1
            if self._overlap:
                while launched < len(self._buckets) and left[launched] == 0:
                    flights.append(self._launch(launched, grads))
                    launched += 1
                while flights and test(flights[0].requests):  # also drives MPI's progress
                    self._finish(flights.pop(0))
        for i, p in enumerate(self._params):
            if not final[i]:  # no gradient reached it in this pass: send what it holds
                grads[i] = p.grad
        while launched < len(self._buckets):
            flights.append(self._launch(launched, grads))
            launched += 1
        self._complete(flights, buffers, grads)
        if not self._order_fixed:
            self._adopt_order(observed)

    def sync_gradients(self) -> None:
        """Average the parameters' current ``.grad`` over the ranks now (blocking).

        For gradients accumulated with ``backward(..., sync=False)`` when no synchronised
        backward follows (the leftover micro-batches of an epoch).
        """
        if self._world.size == 1:
            return
        buffers = self._launch_buffers()
        grads = [p.grad for p in self._params]
        flights = [self._launch(b, grads) for b in range(len(self._buckets))]
        self._complete(flights, buffers, grads)

    # ------------------------------------------------------------------ internals
    def _launch(self, b: int, grads: list[np.ndarray | None]) -> _Flight:
        """Start bucket ``b``'s all-reduces: in place on each gradient buffer that is
        C-contiguous and writable, through a contiguous copy otherwise."""
        mpi, comm = self._world.mpi, self._world.comm
        requests, parts = [], []
        for i in self._buckets[b]:
            g = grads[i]
            if g is None:
                buf = np.zeros(self._params[i].shape, self._params[i].dtype)
            elif g.flags.c_contiguous and g.flags.writeable:
                buf = g
            else:
                buf = np.array(g, order="C", copy=True)
            requests.append(comm.Iallreduce(mpi.IN_PLACE, buf, op=mpi.SUM))
            parts.append((i, g, buf))
        return _Flight(requests, parts)

    def _finish(self, flight: _Flight) -> None:
        """Turn a completed bucket's sums into means, in the gradient buffers."""
        size = self._world.size
        for i, target, buf in flight.parts:
            if target is None:  # no buffer on this rank: see _complete
                continue
            if not target.flags.writeable:
                raise DistributedError(
                    f"lampy.distributed.DataParallel: the gradient of '{self._names[i]}' is "
                    "read-only, so its average cannot be written back."
                )
            else:
                np.divide(buf, size, out=target)

    def _complete(
        self, flights: list[_Flight], buffers: list[Any], grads: list[np.ndarray | None]
    ) -> None:
        """Wait for every launched bucket and buffer broadcast, and average.

        A parameter that has no gradient buffer on this rank (no gradient reached it since
        ``zero_grad``) took part with zeros. If another rank had a gradient for it, it
        gets the average too, as a new buffer (``param.backward(average)``, the public
        way to hand a param a gradient), as DDP does for a parameter unused on one rank;
        if no rank had one (one tiny all-reduce counts them), it keeps no gradient, as in
        one process, so that optimizers skip it everywhere.
        """
        w = self._world
        having = np.array([g is not None for g in grads], dtype=np.int32)
        count = w.comm.Iallreduce(w.mpi.IN_PLACE, having, op=w.mpi.SUM)
        requests = [r for f in flights for r in f.requests] + buffers + [count]
        w.wait(requests, "DataParallel.backward (the gradient all-reduce)")
        if self._received and w.rank != 0:  # rank 0's buffers, written by their owner
            self._module.load_state_dict(self._received, strict=False)
        self._received = {}
        for f in flights:
            self._finish(f)
            for i, target, buf in f.parts:
                if target is None and having[i] > 0:
                    np.divide(buf, w.size, out=buf)
                    self._params[i].backward(buf)

    def _launch_buffers(self) -> list[Any]:
        """Start copying rank 0's buffers (running statistics) to every rank: each rank
        broadcasts a copy of its own (rank 0's is sent, the others' are overwritten), and
        ``_complete`` loads what arrived with ``load_state_dict``."""
        comm = self._world.comm
        self._received = {name: np.array(b) for name, b in self._buffers}
        return [comm.Ibcast(a, root=0) for a in self._received.values()]

    def _adopt_order(self, observed: list[int]) -> None:
        """Re-plan the buckets from the order rank 0's gradients became final in its
        first synchronised pass (the same plan on every rank)."""
        seen = set(observed)
        order = observed + [i for i in reversed(range(len(self._params))) if i not in seen]
        text = self._world.broadcast_bytes(
            ",".join(map(str, order)).encode(), 0, "DataParallel (agreeing on the buckets)"
        )
        self._set_order([int(i) for i in text.decode().split(",")])
        self._order_fixed = True
