"""The array namespaces the backend tests run on, as pytest parameters.

- ``numpy``: the prototype's ops on numpy arrays (their values go through ``lampy.op``);
  numpy 2.0 or later, whose main namespace follows the standard.
- ``array_api_strict``: the standard's strict reference implementation (CPU, the ``dev``
  extra installs it).
- ``array_api_strict-device1``: the same on its simulated device ``device1``, where any
  conversion to a numpy array raises, as it does for a GPU array: an engine path that
  quietly turned a gradient into numpy would fail here.
- ``cupy``: on a machine where CuPy imports, sees a GPU and its arrays declare
  ``__array_namespace__``. Elsewhere the parameter is skipped with the reason, so that a
  GPU machine running the suite reports what works.
"""

from __future__ import annotations

from collections.abc import Callable
from types import ModuleType
from typing import Any

import attrs
import numpy as np
import pytest


@attrs.frozen
class Backend:
    """One namespace (and device) the tests run on.

    Attributes:
        name: The test id.
        xp: The namespace.
        device: The device arrays are made on (``"cpu"`` for numpy).
        to_numpy: A copy of an array of this namespace as a numpy array.
    """

    name: str
    xp: ModuleType
    device: Any
    to_numpy: Callable[[Any], np.ndarray]

    def array(self, a: Any) -> Any:
        """``a`` (a numpy array or a number) as an array of this namespace and device."""
        if self.xp is np:
            return np.array(a)
        return self.xp.asarray(np.asarray(a), device=self.device)

    def holds(self, a: Any) -> bool:
        """Whether ``a`` is an array of this namespace on this device."""
        if self.xp is np:
            return isinstance(a, np.ndarray | np.generic)
        return hasattr(a, "__array_namespace__") and (
            a.__array_namespace__() is self.xp and a.device == self.device
        )


NUMPY = Backend("numpy", np, "cpu", np.asarray)


def _strict(device_name: str) -> Backend:
    import array_api_strict as xp

    cpu = xp.Device("CPU_DEVICE")
    device = xp.Device(device_name)
    return Backend(
        "array_api_strict" + ("" if device == cpu else f"-{device_name}"),
        xp,
        device,
        lambda a: np.asarray(a.to_device(cpu)),
    )


def _cupy() -> Backend:
    import cupy

    if cupy.cuda.runtime.getDeviceCount() < 1:
        raise RuntimeError("no CUDA device")
    if not hasattr(cupy.ndarray, "__array_namespace__"):
        raise RuntimeError(
            "cupy's arrays do not declare __array_namespace__ (the prototype does not use "
            "array-api-compat; see docs/design/array-backends.md)"
        )
    return Backend("cupy", cupy, cupy.cuda.Device(0), cupy.asnumpy)


def _available(name: str, make: Callable[[], Backend]) -> Any:
    try:
        return pytest.param(make(), id=name)
    except Exception as e:  # not installed, no device, no array API
        return pytest.param(None, id=name, marks=pytest.mark.skip(reason=f"{name}: {e}"))


def _numpy() -> Backend:
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        raise RuntimeError("numpy < 2.0 has no array API namespace in its main module")
    return NUMPY


BACKENDS = [
    _available("numpy", _numpy),
    _available("array_api_strict", lambda: _strict("CPU_DEVICE")),
    _available("array_api_strict-device1", lambda: _strict("device1")),
    _available("cupy", _cupy),
]
"""Every namespace of the matrix, skipped with its reason where it is not available."""

FOREIGN = BACKENDS[1:]
"""The namespaces other than numpy."""
