"""lampy.load_metadata reads a checkpoint's keyword metadata (the model's arguments)
before the model exists, from the header alone (issue 25, item 4)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import lampy
from lampy import nn
from lampy.io import CheckpointError, write_safetensors


def test_metadata_first_then_the_model(tmp_path: Path) -> None:
    """The arguments saved with the weights build the model the weights load into."""
    path = tmp_path / "ckpt.safetensors"
    args = {"in_features": 3, "out_features": 2, "bias": False}
    with lampy.Scope():
        model = nn.Linear.init(**args, rng=np.random.default_rng(0))
        lampy.save(path, model, model_args=args, step=7)
        meta = lampy.load_metadata(path)
        assert meta == {"model_args": args, "step": 7}
        again = nn.Linear.init(**meta["model_args"], rng=np.random.default_rng(1))
        assert lampy.load(path, again) == meta
        np.testing.assert_array_equal(again.weight.value, model.weight.value)


def test_files_of_other_programs_and_broken_files(tmp_path: Path) -> None:
    """A plain safetensors file has no lampy metadata ({}); a file that is not one, or
    whose lampy metadata is not a JSON object, is a CheckpointError naming the call."""
    plain = tmp_path / "plain.safetensors"
    write_safetensors(plain, {"w": np.ones(2, np.float32)})
    assert lampy.load_metadata(plain) == {}
    bad = tmp_path / "bad.safetensors"
    write_safetensors(bad, {"w": np.ones(2, np.float32)}, {"lampy.metadata": "[1, 2]"})
    with pytest.raises(CheckpointError, match=r"load_metadata: .*malformed"):
        lampy.load_metadata(bad)
    junk = tmp_path / "junk.safetensors"
    junk.write_bytes(b"abc")
    with pytest.raises(CheckpointError, match="load_metadata"):
        lampy.load_metadata(junk)
