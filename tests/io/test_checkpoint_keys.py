"""lampy.load and the names in a checkpoint: strict=True (the default) wants the module's
entries exactly, strict=False loads the common ones (PyTorch's load_state_dict(strict=)),
and a shape that does not fit is an error either way; nothing changes on failure."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lampy
from lampy import nn
from lampy._errors import LampyTypeError, LampyValueError, ShapeError
from lampy.io import write_safetensors


def _model(seed: int) -> nn.Sequential:
    rng = np.random.default_rng(seed)
    return nn.Sequential.init(nn.Linear.init(3, 4, rng=rng), nn.Linear.init(4, 2, rng=rng))


def _weights(model: nn.Sequential) -> dict[str, np.ndarray]:
    return {k: v.copy() for k, v in model.state_dict().items()}


def test_strict_false_loads_the_common_keys(tmp_path: Path) -> None:
    """A file with an extra tensor and without '1.bias': strict load refuses it naming
    both, changing nothing; strict=False loads the rest and leaves '1.bias' as it was."""
    path = tmp_path / "partial.safetensors"
    w = np.arange(12, dtype=np.float32).reshape(4, 3)
    b = np.array([1, 2, 3, 4], np.float32)
    v = np.full((2, 4), 0.5, np.float32)
    write_safetensors(path, {"0.weight": w, "0.bias": b, "1.weight": v, "head.weight": w})
    with lampy.Scope():
        model = _model(0)
        before = _weights(model)
        with pytest.raises(LampyValueError, match=r"Missing: \['1\.bias'\].*\['head\.weight'\]"):
            lampy.load(path, model)
        for k, a in _weights(model).items():
            np.testing.assert_array_equal(a, before[k])
        assert lampy.load(path, model, strict=False) == {}
        after = _weights(model)
        np.testing.assert_array_equal(after["0.weight"], w)
        np.testing.assert_array_equal(after["0.bias"], b)
        np.testing.assert_array_equal(after["1.weight"], v)
        np.testing.assert_array_equal(after["1.bias"], before["1.bias"])


def test_a_wrong_shape_is_an_error_even_when_not_strict(tmp_path: Path) -> None:
    """As in PyTorch, strict=False skips names, never shapes; nothing is loaded."""
    path = tmp_path / "wide.safetensors"
    write_safetensors(
        path, {"0.weight": np.ones((4, 3), np.float32), "1.weight": np.ones((3, 4), np.float32)}
    )
    with lampy.Scope():
        model = _model(1)
        before = _weights(model)
        with pytest.raises(ShapeError, match=r"'1\.weight' has shape \(2, 4\)"):
            lampy.load(path, model, strict=False)
        for k, a in _weights(model).items():
            np.testing.assert_array_equal(a, before[k])
        with pytest.raises(LampyTypeError, match="strict must be True or False"):
            lampy.load(path, model, strict="no")  # type: ignore[arg-type]
