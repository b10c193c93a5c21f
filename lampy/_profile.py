"""``lampy.memory_profile()``: which ops allocated and freed how much, and when.

While a profile is active, ``lampy._memory`` tells it about every array it charges:
values (in ``charge_value``), gradient buffers (``grad_buffer``, ``own_grad``) and
optimizer state (``charge_state``). The profile watches each of those arrays with a
``weakref.finalize`` and records the moment its memory is actually freed, so the live
total it reports is the memory those arrays hold, byte for byte, over the step. A view
counts 0 bytes (its memory is counted with the array that owns it), as in
``Scope.memory``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs
import numpy as np

from lampy import _memory
from lampy._errors import LampyError

__all__ = ["MemoryEvent", "MemoryProfile", "OpMemory", "memory_profile"]

FORWARD, BACKWARD = "forward", "backward"

PLOT_EXTRA = (
    "MemoryProfile.plot needs matplotlib, which lampy installs with its 'plot' extra: "
    'pip install "lampy[plot]"'
)


@attrs.frozen
class MemoryEvent:
    """One allocation (``delta > 0``) or free (``delta < 0``) seen by a profile.

    Attributes:
        op: What the array is: the op that made a value (``"matmul"``), ``"<op> grad"``
            for a gradient buffer, ``"<op> state"`` for optimizer state.
        delta: Bytes allocated (positive) or freed (negative).
        live: The live total after this event (bytes allocated while profiling and not
            yet freed).
        phase: ``"forward"`` or ``"backward"``.
    """

    op: str
    delta: int
    live: int
    phase: str


@attrs.frozen
class OpMemory:
    """What one op (or gradient/state label) did to memory over a profile.

    Attributes:
        op: The label (see `MemoryEvent.op`).
        calls: Arrays it allocated.
        allocated: Bytes allocated in all.
        freed: Bytes freed in all (by the profile's end).
        at_peak: Its bytes live at the moment the live total peaked: its contribution
            to the peak.
        max_live: The most of its bytes live at once.
    """

    op: str
    calls: int
    allocated: int
    freed: int
    at_peak: int
    max_live: int


def _fmt(n: float) -> str:
    sign = "-" if n < 0 else ""
    n = abs(n)
    for unit, size in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= size:
            return f"{sign}{n / size:.2f} {unit}"
    return f"{sign}{int(n)} B"


class MemoryProfile:
    """The record of a `lampy.memory_profile` block: every allocation and free, in order.

    Read it after the block: `events`, `peak_bytes`, `ops` (one `OpMemory` per label),
    `table()` and `plot(path)`.
    """

    def __init__(self) -> None:
        self.events: list[MemoryEvent] = []
        """Every allocation and free, in the order they happened."""
        self._live = 0
        self._depth = 0  # > 0 inside Variable.backward
        self._watched: dict[int, tuple[weakref.finalize[Any, Any], str, int]] = {}
        self._lock = threading.Lock()
        self._active = False

    # ------------------------------------------------------------ called by _memory
    def value(self, node: Any) -> None:
        """A node's value was charged ``node.charged`` bytes."""
        n = node.charged
        if n:
            v = node.value  # a view's memory lives as long as the array owning it
            self._watch(_memory.owner(v) if type(v) is np.ndarray else v, node.name, n)

    def grad(self, buffer: np.ndarray, node: Any = None) -> None:
        """A gradient buffer entered the engine (views of a watched array add nothing)."""
        owner = _memory.owner(buffer)
        if id(owner) in self._watched:
            return
        label = "grad" if node is None else f"{node.name} grad"
        self._watch(owner, label, owner.nbytes, BACKWARD)

    def state(self, buffer: np.ndarray, node: Any) -> None:
        """An optimizer allocated ``buffer`` for ``node``."""
        self._watch(buffer, f"{node.name} state", buffer.nbytes)

    def begin_backward(self) -> None:
        self._depth += 1

    def end_backward(self) -> None:
        self._depth -= 1

    # ------------------------------------------------------------ recording
    def _phase(self) -> str:
        return BACKWARD if self._depth > 0 else FORWARD

    def _watch(self, array: np.ndarray, label: str, n: int, phase: str | None = None) -> None:
        key = id(array)
        with self._lock:
            if key in self._watched or not self._active:
                return
            fin = weakref.finalize(array, self._freed, key)
            fin.atexit = False
            self._watched[key] = (fin, label, n)
            self._record(label, n, phase or self._phase())

    def _freed(self, key: int) -> None:
        with self._lock:
            entry = self._watched.pop(key, None)
            if entry is not None and self._active:
                self._record(entry[1], -entry[2], self._phase())

    def _record(self, label: str, delta: int, phase: str) -> None:
        self._live += delta
        self.events.append(MemoryEvent(label, delta, self._live, phase))

    def _start(self) -> None:
        self._active = True

    def _stop(self) -> None:
        with self._lock:
            self._active = False
            watched, self._watched = self._watched, {}
        for fin, _, _ in watched.values():
            fin.detach()

    # ------------------------------------------------------------ reading
    @property
    def peak_bytes(self) -> int:
        """The largest live total (bytes allocated while profiling and not yet freed)."""
        return max((e.live for e in self.events), default=0)

    @property
    def live_bytes(self) -> int:
        """The live total at the end (arrays still alive when the block exited)."""
        return self.events[-1].live if self.events else 0

    def ops(self) -> list[OpMemory]:
        """One `OpMemory` per label, the largest contribution to the peak first."""
        peak_at = max(range(len(self.events)), key=lambda i: self.events[i].live, default=-1)
        calls: dict[str, int] = {}
        alloc: dict[str, int] = {}
        freed: dict[str, int] = {}
        live: dict[str, int] = {}
        most: dict[str, int] = {}
        at_peak: dict[str, int] = {}
        for i, e in enumerate(self.events):
            if e.delta > 0:
                calls[e.op] = calls.get(e.op, 0) + 1
                alloc[e.op] = alloc.get(e.op, 0) + e.delta
            else:
                freed[e.op] = freed.get(e.op, 0) - e.delta
            now = live[e.op] = live.get(e.op, 0) + e.delta
            most[e.op] = max(most.get(e.op, 0), now)
            if i == peak_at:
                at_peak = dict(live)
        rows = [
            OpMemory(
                op,
                calls.get(op, 0),
                alloc.get(op, 0),
                freed.get(op, 0),
                at_peak.get(op, 0),
                most[op],
            )
            for op in live
        ]
        rows.sort(key=lambda r: (-r.at_peak, -r.max_live, r.op))
        return rows

    def table(self, top: int = 10) -> str:
        """The ``top`` ops by their contribution to the peak, as a text table.

        Columns: the op, arrays it allocated, bytes allocated and freed, its bytes live
        at the peak, and the most of its bytes live at once.
        """
        header = ("op", "arrays", "allocated", "freed", "at peak", "max live")
        rows = [
            (
                r.op,
                str(r.calls),
                _fmt(r.allocated),
                _fmt(r.freed),
                _fmt(r.at_peak),
                _fmt(r.max_live),
            )
            for r in self.ops()[:top]
        ]
        widths = [max([len(h)] + [len(row[i]) for row in rows]) for i, h in enumerate(header)]

        def line(cells: tuple[str, ...]) -> str:
            first = cells[0].ljust(widths[0])
            rest = "  ".join(c.rjust(w) for c, w in zip(cells[1:], widths[1:], strict=True))
            return f"{first}  {rest}"

        out = [line(header), "  ".join("-" * w for w in widths)]
        out += [line(row) for row in rows]
        out.append(f"peak {_fmt(self.peak_bytes)} over {len(self.events)} events")
        return "\n".join(out)

    def plot(self, path: str | Path, title: str = "lampy memory profile") -> Path:
        """Save a PNG of the live total over the profile, backward spans shaded.

        Needs matplotlib: ``pip install "lampy[plot]"``.

        Returns:
            The path written.

        Raises:
            LampyError: if matplotlib is not installed (the message names the extra).
        """
        try:
            import matplotlib

            matplotlib.use("Agg", force=False)
            import matplotlib.pyplot as plt
        except ImportError as e:
            raise LampyError(PLOT_EXTRA) from e
        path = Path(path)
        xs = np.arange(len(self.events) + 1)
        ys = np.array([0] + [e.live for e in self.events], dtype=float) / 2**20
        fig, ax = plt.subplots(figsize=(8, 3.5))
        ax.step(xs, ys, where="post", color="tab:blue", label="live")
        for phase, color in ((FORWARD, "tab:green"), (BACKWARD, "tab:orange")):
            for k, (start, stop) in enumerate(self._spans(phase)):
                ax.axvspan(start, stop, color=color, alpha=0.15, label=None if k else phase)
        ax.set_xlabel("allocation or free (in order)")
        ax.set_ylabel("live memory (MiB)")
        ax.set_title(f"{title}: peak {_fmt(self.peak_bytes)}")
        ax.legend(loc="upper left")
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        return path

    def _spans(self, phase: str) -> Iterator[tuple[int, int]]:
        """The runs of consecutive events of ``phase``, as [start, stop) event numbers."""
        start = None
        for i, e in enumerate(self.events):
            if e.phase == phase and start is None:
                start = i
            elif e.phase != phase and start is not None:
                yield start, i
                start = None
        if start is not None:
            yield start, len(self.events)


@contextmanager
def memory_profile() -> Iterator[MemoryProfile]:
    """Record every array lampy allocates and frees inside the block, op by op.

    Counted: the values of op results, params and constants (a view counts 0 bytes, and
    so does a 0-d op result, held as a numpy scalar), gradient buffers, and optimizer
    state, from when each is allocated until its
    memory is freed (which the profile observes), forward and backward. Arrays made
    before the block are not counted. Profiles do not nest; one is active per process.

    Yields:
        The `MemoryProfile`, complete once the block exits: ``prof.table()`` and
        ``prof.plot(path)``.

    Raises:
        LampyError: if another profile is active.

    Examples:
        >>> import numpy as np, lampy
        >>> with lampy.Scope(), lampy.memory_profile() as prof:
        ...     w = lampy.param(np.ones((100, 100)))
        ...     loss = (w @ w).sum()
        ...     loss.backward()
        >>> prof.peak_bytes
        240000
    """
    prof = MemoryProfile()
    previous = _memory.set_profile(prof)
    if previous is not None:
        _memory.set_profile(previous)
        raise LampyError(
            "lampy.memory_profile: another memory profile is already active; profiles do "
            "not nest. Read the outer one, or end it first."
        )
    prof._start()
    try:
        yield prof
    finally:
        _memory.set_profile(None)
        prof._stop()
