"""Training one epoch over a 2 GB float32 file on disk keeps the process's peak resident
memory under 400 MB: Batches reads a read-only memmap batch by batch and hands its pages
back after each batch."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np

ROWS, COLS = 2 * 2**30 // (256 * 4), 256  # 2 GiB of float32
LIMIT_MB = 400

CHILD = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    import lampy
    import lampy.nn.functional as F
    from lampy import nn, optim
    from lampy.data import Batches
    from lampy.train import fit

    x = np.load(sys.argv[1], mmap_mode="r")
    rng = np.random.default_rng(0)

    def loss_fn(model, batch):
        (xb,) = batch
        target = xb[:, :1] * 0.5 - xb[:, 1:2]  # a target computed from the batch itself
        return F.mse_loss(model(xb), target)

    with lampy.Scope():
        model = nn.Sequential.init(
            nn.Linear.init(x.shape[1], 32, rng=rng), nn.ReLU.init(),
            nn.Linear.init(32, 1, rng=rng),
        )
        history = fit(model, loss_fn, optim.Adam(model.parameters(), lr=1e-3),
                      Batches(x, batch_size=4096), epochs=1, progress=False)
    # The peak RSS of this process's memory: VmHWM on Linux. Not getrusage's ru_maxrss,
    # which Linux carries over exec from the parent (a pytest process holding hundreds
    # of MB after the rest of the suite).
    try:
        with open("/proc/self/status") as f:
            hwm = [line for line in f if line.startswith("VmHWM:")]
        peak_mb = int(hwm[0].split()[1]) / 1024
    except (OSError, IndexError):
        peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB
    print(len(x), history.epochs[0]["loss"], peak_mb)
    """
)


def write_npy(path: Path) -> None:
    """A (ROWS, COLS) float32 .npy file of real data, written chunk by chunk with plain
    file writes (nothing of it is mapped into this process)."""
    rng = np.random.default_rng(0)
    block = rng.standard_normal((65536, COLS), dtype=np.float32)
    header = {
        "descr": np.lib.format.dtype_to_descr(np.dtype(np.float32)),
        "fortran_order": False,
        "shape": (ROWS, COLS),
    }
    with path.open("wb") as f:
        np.lib.format.write_array_header_1_0(f, header)
        for start in range(0, ROWS, len(block)):
            f.write(block[: min(len(block), ROWS - start)].tobytes())


def test_one_epoch_over_a_2gb_memmap_peaks_under_400mb(tmp_path: Path) -> None:
    """A child process trains an MLP for one epoch over every row of a 2 GiB file and
    reports its peak RSS: under 400 MB, and the loss is finite."""
    path = tmp_path / "big.npy"
    try:
        write_npy(path)
        assert path.stat().st_size > 2 * 2**30
        result = subprocess.run(
            [sys.executable, "-c", CHILD, str(path)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
    finally:
        path.unlink(missing_ok=True)
    assert result.returncode == 0, result.stderr
    rows, loss, peak_mb = result.stdout.split()
    assert int(rows) == ROWS
    assert np.isfinite(float(loss))
    assert float(peak_mb) < LIMIT_MB, f"peak RSS {peak_mb} MB"
