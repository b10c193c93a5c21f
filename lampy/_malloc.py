"""Tuning glibc's allocator for training loops (``lampy.tune_malloc``): a process-wide
change, made only when the user (or ``lampy.train.fit``) asks for it."""

from __future__ import annotations

import ctypes
import os
import platform

# glibc returns the freed top of its heap to the kernel once it exceeds the trim
# threshold, and serves blocks above the mmap threshold with fresh mappings. A scope
# frees all its arrays at once when it exits, so with the defaults every training step
# gets its memory back from the kernel as new pages: one page fault per 4 KiB, which
# made cheap ops 3 to 15 times slower than the numpy arithmetic they run (measured in
# benchmarks/). Fixed thresholds keep up to TRIM_THRESHOLD bytes of freed memory in the
# process for reuse. This changes the allocator of the whole process, so lampy never
# does it on import: the user calls lampy.tune_malloc() (fit and the examples do).
MMAP_THRESHOLD = 32 * 2**20
TRIM_THRESHOLD = 128 * 2**20
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3

_tuned = False


def tune_malloc() -> bool:
    """Tune glibc's allocator for training loops: keep freed memory for reuse.

    A training step frees its whole graph when its scope exits and allocates it again
    in the next step. With glibc's default thresholds, large freed blocks go back to
    the kernel and come back as fresh pages, one page fault per 4 KiB: on a 28x28 CNN
    with Adam that made a step about 1.6 times slower (see ``benchmarks/README.md``).
    This sets ``M_MMAP_THRESHOLD`` to 32 MiB and ``M_TRIM_THRESHOLD`` to 128 MiB with
    ``mallopt``, so up to 128 MiB of freed memory stays in the process.

    It changes the allocator of the whole process (every library in it), which is why
    lampy never does it behind your back: call it once at the start of a training
    script. ``lampy.train.fit`` calls it. Setting the environment variable
    ``LAMPY_TUNE_MALLOC=0`` turns it into a no-op.

    Returns:
        Whether the thresholds are set (False on C libraries other than glibc, or when
        ``LAMPY_TUNE_MALLOC=0``).
    """
    global _tuned
    if _tuned:
        return True
    if os.environ.get("LAMPY_TUNE_MALLOC", "1") == "0":
        return False
    if platform.system() != "Linux" or platform.libc_ver()[0] != "glibc":
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        ok = libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD) == 1
        _tuned = bool(ok and libc.mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD) == 1)
    except (OSError, AttributeError):
        return False
    return _tuned
