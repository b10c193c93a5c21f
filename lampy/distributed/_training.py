"""What ``lampy.train.fit(..., distributed=True)`` adds to its loop, in one object."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping, Sized
from typing import Any

from lampy._errors import LampyValueError
from lampy.autograd import Variable
from lampy.data import Batches
from lampy.distributed._broadcast import broadcast_optimizer_state
from lampy.distributed._data_parallel import DataParallel
from lampy.distributed._world import DistributedError, World, reduce_metrics, world
from lampy.nn import Module

__all__ = ["DistributedFit"]


class DistributedFit:
    """The distributed side of one ``fit`` call.

    Made once at the start of ``fit`` (a collective call): it checks that the training
    batches are sharded for this rank, wraps the model in a
    ``lampy.distributed.DataParallel`` (every rank starts from rank 0's
    weights) and gives every rank rank 0's optimizer state. Then ``fit`` backpropagates
    through it and reduces its numbers with it, so that every rank logs, schedules and
    stops on the same numbers; only rank 0 shows progress.

    Args:
        model: The model being trained (in training mode).
        optimizer: Its optimizer.
        train_batches: The training batches, checked to be sharded for this rank when
            they are a ``lampy.data.Batches``.
    """

    def __init__(self, model: Module, optimizer: Any, train_batches: Iterable[Any]) -> None:
        what = "fit(..., distributed=True)"
        w = world(what)
        if isinstance(train_batches, Batches) and train_batches.shard != (w.rank, w.size):
            raise LampyValueError(
                f"{what}: train_batches has shard={train_batches.shard}, but this process is "
                f"rank {w.rank} of {w.size}. Pass Batches(..., shard=(lampy.distributed.rank(), "
                "lampy.distributed.world_size())) so that each rank trains on its own part "
                "of every batch."
            )
        _check_same_data(w, what, train_batches)
        self.data_parallel = DataParallel(model)
        broadcast_optimizer_state(optimizer)
        self.is_main = w.rank == 0

    def backward(self, loss: Variable, sync: bool, workers: int | str | None = None) -> None:
        """Backpropagate; with ``sync``, average the gradients over the ranks."""
        self.data_parallel.backward(loss, sync=sync, workers=workers)

    def sync(self) -> None:
        """Average gradients accumulated without ``sync`` (an epoch's leftover group)."""
        self.data_parallel.sync_gradients()

    def totals(self, loss_sum: float, seen: int) -> tuple[float, int]:
        """The mean loss over every rank's samples, and their number, from this rank's
        sum of per-sample losses and its number of samples."""
        total_loss, total_seen = world().allreduce([loss_sum, seen], "fit (reducing the loss)")
        return (total_loss / total_seen if total_seen else 0.0), round(total_seen)

    def evaluator(
        self, evaluate: Callable[..., dict[str, float]]
    ) -> Callable[..., dict[str, float]]:
        """``evaluate(model, batches, metrics)`` run on this rank's batches, then reduced
        to the mean over every rank's samples (each rank weighted by how many it saw)."""

        def run(
            model: Module, batches: Iterable[tuple[Any, ...]], metrics: Mapping[str, Any]
        ) -> dict[str, float]:
            counted = _Counted(batches)
            means = evaluate(model, counted, metrics)
            return reduce_metrics(means, weight=float(counted.samples))

        return run


def _check_same_data(w: World, what: str, batches: Iterable[Any]) -> None:
    """Raise the same DistributedError on every rank if the ranks' training data differ in
    length (one rank would take more steps than the others and wait in a collective
    that they never join); one tiny all-reduce when they agree."""
    if isinstance(batches, Batches):
        text = f"{batches.num_samples} samples, {len(batches)} batches per epoch"
    elif isinstance(batches, Sized):
        text = f"{len(batches)} batches per epoch"
    else:
        return  # an iterator: its length is not known before it runs
    texts = w.disagreement(text, f"{what} (comparing the ranks' training data)")
    if texts is not None:
        each = "; ".join(f"rank {r}: {t}" for r, t in enumerate(texts))
        raise DistributedError(
            f"{what}: the ranks' training data differ ({each}), so they would take "
            "different numbers of steps and one would wait for ever in a collective. "
            "Load the same dataset on every rank and shard it with Batches(..., "
            "shard=(lampy.distributed.rank(), lampy.distributed.world_size()))."
        )


class _Counted:
    """Iterates ``batches`` and counts the samples it gives (first array's length)."""

    def __init__(self, batches: Iterable[tuple[Any, ...]]) -> None:
        self.batches = batches
        self.samples = 0

    def __iter__(self) -> Iterator[tuple[Any, ...]]:
        for batch in self.batches:
            first = batch[0] if isinstance(batch, tuple | list) and batch else batch
            self.samples += len(first) if hasattr(first, "__len__") else 1
            yield batch
