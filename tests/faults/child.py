"""Programs the fault-injection tests run in a child process: ``python -m
tests.faults.child <mode> <path> [...]``, from the repository's root.

``save <path> <point>``
    Save a model (seed 2) to ``path``, stopping at ``point`` of the write: ``"data"``
    (after the header and one tensor are written), ``"fsync"`` (all data written, before
    the flush to disk), ``"replace"`` (before the rename), ``"after"`` (after the rename).
    There it prints ``ready`` and waits for a signal: the parent kills it with SIGKILL.
``fsize <path> <limit>``
    Save a model (seed 2) to ``path`` under ``RLIMIT_FSIZE = limit`` bytes, with SIGXFSZ
    ignored so the write fails with EFBIG; print the outcome as JSON.
"""

from __future__ import annotations

import json
import os
import resource
import signal
import sys
from typing import Any

import numpy as np

import lampy
from lampy import nn
from lampy.io import _safetensors


def model(seed: int) -> Any:
    """A small MLP whose checkpoint is a few tens of kilobytes."""
    rng = np.random.default_rng(seed)
    return nn.Sequential.init(
        nn.Linear.init(32, 64, rng=rng), nn.Tanh.init(), nn.Linear.init(64, 32, rng=rng)
    )


def _stop_here() -> None:
    print("ready", flush=True)
    while True:
        signal.pause()


class _StopAfterChunks:
    """A file whose ``n``-th write stops the process (after flushing what came before)."""

    def __init__(self, f: Any, n: int) -> None:
        self._f, self._n = f, n

    def write(self, chunk: Any) -> int:
        self._n -= 1
        if self._n == 0:
            self._f.flush()
            _stop_here()
        return int(self._f.write(chunk))

    def __getattr__(self, name: str) -> Any:
        return getattr(self._f, name)

    def __enter__(self) -> _StopAfterChunks:
        return self

    def __exit__(self, *exc: object) -> None:
        self._f.__exit__(*exc)


def _inject(point: str) -> None:
    if point == "data":
        fdopen = os.fdopen
        os.fdopen = lambda *a, **k: _StopAfterChunks(fdopen(*a, **k), 4)  # type: ignore[assignment]
    elif point == "fsync":
        os.fsync = lambda fd: _stop_here()  # type: ignore[assignment]
    elif point == "replace":
        os.replace = lambda *a, **k: _stop_here()  # type: ignore[assignment]
    elif point == "after":
        _safetensors._fsync_dir = lambda d: _stop_here()  # type: ignore[assignment]
    else:
        raise SystemExit(f"unknown point {point!r}")


def main(argv: list[str]) -> None:
    mode, path = argv[0], argv[1]
    with lampy.Scope():
        m = model(2)
        if mode == "save":
            _inject(argv[2])
            lampy.save(path, m, epoch=2)
            raise SystemExit("the save finished without reaching the injection point")
        if mode == "fsize":
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            limit = int(argv[2])
            resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
            try:
                lampy.save(path, m, epoch=2)
                result: dict[str, Any] = {"error": None}
            except Exception as e:
                result = {
                    "error": type(e).__name__,
                    "lampy": isinstance(e, lampy.LampyError),
                    "oserror": isinstance(e, OSError),
                    "errno": getattr(e, "errno", None),
                    "message": str(e),
                }
            print(json.dumps(result), flush=True)
            return
    raise SystemExit(f"unknown mode {mode!r}")


if __name__ == "__main__":
    main(sys.argv[1:])
