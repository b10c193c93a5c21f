"""dtype names at the top of the package, as PyTorch has them (``torch.long``,
``torch.float32``), so ``torch.arange(t, dtype=torch.long)`` ports with only the import
changed. Each is numpy's type: ``lampy.long is numpy.int64``."""

from __future__ import annotations

import numpy as np

__all__ = ["float16", "float32", "float64", "int32", "int64", "long"]

float16 = np.float16
float32 = np.float32
float64 = np.float64
int32 = np.int32
int64 = np.int64
long = np.int64  # PyTorch's name for int64
