"""Cross-check lampy's safetensors files against the official ``safetensors`` package and
PyTorch (needs ``safetensors`` and ``torch`` installed).

1. Files lampy writes (every dtype, big-endian and non-contiguous arrays, 0-d and empty
   arrays, unicode and long names, metadata) read by ``safetensors.numpy.load_file``,
   ``safetensors.safe_open(framework="np")`` and ``safetensors.torch.load_file``: same
   names, dtypes, shapes, values and metadata; every tensor aligned to its item size.
2. Files ``safetensors.torch.save_file`` and ``safetensors.numpy.save_file`` write (every
   torch dtype numpy has, 0-d and empty tensors, unicode and long names, metadata) read
   by ``lampy.io.read_safetensors``; bf16 and float8 are a CheckpointError naming them.
3. Malformed files: lampy must refuse every file the package refuses (a CheckpointError,
   never a bare exception); the files lampy refuses and the package reads are listed
   (repeated keys, BOOL bytes other than 0 and 1: lampy is stricter on purpose).
4. Modules: a torch module's ``state_dict`` saved by ``safetensors.torch.save_file``
   loads into the lampy module with ``lampy.load``, and lampy's checkpoint loads into
   the torch module with ``load_state_dict(strict=True)``, values equal.

Prints what disagrees and exits non-zero if anything does.

Run: ``.venv/bin/python benchmarks/torch_checks/check_safetensors.py``
"""

from __future__ import annotations

import json
import struct
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import safetensors
import safetensors.numpy as stn
import safetensors.torch as stt
import torch

import lampy
from lampy import nn
from lampy.io import CheckpointError, read_safetensors, write_safetensors

FAILURES: list[str] = []


def check(ok: bool, what: str) -> None:
    if not ok:
        FAILURES.append(what)
        print("MISMATCH", what)


def lampy_to_reference(d: Path) -> None:
    rng = np.random.default_rng(0)
    tensors = {
        "u8": np.arange(5, dtype=np.uint8),
        "f64": rng.standard_normal((3, 4)),
        "f32_0d": np.array(3.5, np.float32),
        "i16_empty": np.zeros((0, 3), np.int16),
        "f16": np.array([1.5, -2.0, 65504.0], np.float16),
        "bool": np.array([True, False, True]),
        "i32_big_endian": np.arange(4, dtype=">i4"),
        "f64_transposed": np.arange(12.0).reshape(3, 4).T,
        "c64": np.array([1 + 2j, -3j], np.complex64),
        "i8": np.array([-128, 127], np.int8),
        "u16": np.array([65535], np.uint16),
        "u32": np.array([2**32 - 1], np.uint32),
        "u64": np.array([2**64 - 1], np.uint64),
        "i64": np.array([-(2**63)], np.int64),
        "ünï😀": np.arange(3, dtype=np.int64),
        "x" * 1000: np.ones(2, np.uint64),
    }
    meta = {"k": "v", "ü": "😀"}
    path = d / "lampy.safetensors"
    write_safetensors(path, tensors, meta)
    loaded = stn.load_file(path)
    check(set(loaded) == set(tensors), "numpy.load_file: names")
    for k, v in tensors.items():
        want = np.asarray(v, dtype=v.dtype.newbyteorder("="), order="C")
        check(loaded[k].dtype == want.dtype, f"numpy.load_file: dtype of {k!r}")
        check(np.array_equal(loaded[k], want), f"numpy.load_file: values of {k!r}")
    with safetensors.safe_open(path, framework="np") as f:
        check(f.metadata() == meta, "safe_open: metadata")
        for k in f.keys():  # noqa: SIM118 (a safe_open handle is not a dict)
            check(np.array_equal(f.get_tensor(k), tensors[k]), f"safe_open: {k!r}")
    pt = stt.load_file(path)
    for k, v in tensors.items():
        check(np.array_equal(pt[k].numpy(), v), f"torch.load_file: {k!r}")
    blob = path.read_bytes()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8 : 8 + n])
    header.pop("__metadata__")
    for k, info in header.items():
        itemsize = tensors[k].dtype.itemsize
        check((8 + n + info["data_offsets"][0]) % itemsize == 0, f"alignment of {k!r}")


def reference_to_lampy(d: Path) -> None:
    pt = {
        "f16": torch.randn(4).half(),
        "bool": torch.tensor([True, False]),
        "i8": torch.tensor([-3, 4], dtype=torch.int8),
        "u8": torch.tensor([250], dtype=torch.uint8),
        "i16": torch.tensor([-300], dtype=torch.int16),
        "i32": torch.tensor([2**31 - 1], dtype=torch.int32),
        "i64": torch.tensor([-(2**62)]),
        "f64": torch.randn(2, 2, dtype=torch.float64),
        "f32_0d": torch.tensor(2.5),
        "empty": torch.zeros(0, 5),
        "c64": torch.tensor([1 + 1j], dtype=torch.complex64),
        "u16": torch.tensor([65535], dtype=torch.uint16),
        "ünï": torch.ones(1),
        "n" * 500: torch.ones(3),
    }
    path = d / "torch.safetensors"
    stt.save_file(pt, path, metadata={"format": "pt", "x": "ü"})
    tensors, meta = read_safetensors(path)
    check(meta == {"format": "pt", "x": "ü"}, "lampy: torch file metadata")
    for k, v in pt.items():
        want = v.numpy()
        got = tensors[k]
        check(got.dtype == want.dtype and got.shape == want.shape, f"lampy: {k!r} dtype/shape")
        check(np.array_equal(got, want), f"lampy: {k!r} values")
    for dt in (torch.bfloat16, torch.float8_e4m3fn, torch.float8_e5m2):
        stt.save_file({"w": torch.zeros(2, dtype=dt)}, path)
        try:
            read_safetensors(path)
            check(False, f"lampy read {dt} without an error")
        except CheckpointError as e:
            check("has no dtype for" in str(e), f"lampy: message for {dt}: {e}")
    arrays = {"a": np.arange(6, dtype=np.int32).reshape(2, 3), "b": np.array(1.25)}
    stn.save_file(arrays, path, metadata={"m": "1"})
    tensors, meta = read_safetensors(path)
    check(meta == {"m": "1"}, "lampy: numpy file metadata")
    for k, v in arrays.items():
        check(np.array_equal(tensors[k], v) and tensors[k].shape == np.shape(v), f"numpy {k!r}")


def _file(
    header: Any, data: bytes = b"", *, raw: bytes | None = None, n: int | None = None
) -> bytes:
    text = json.dumps(header).encode() if raw is None else raw
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text) if n is None else n) + text + data


def _t(code: str, shape: Any, offsets: Any) -> dict[str, Any]:
    return {"dtype": code, "shape": shape, "data_offsets": offsets}


MALFORMED = {
    "overlap": _file({"a": _t("F32", [2], [0, 8]), "b": _t("F32", [2], [4, 12])}, b"\0" * 12),
    "out of range": _file({"a": _t("F32", [2], [0, 8])}, b"\0" * 4),
    "header larger than file": _file({}, n=10**6),
    "not UTF-8": _file(
        None, raw=b'{"\xff": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}'
    ),
    "UTF-8 BOM": _file(None, raw=b'\xef\xbb\xbf{"__metadata__": {}}'),
    "repeated tensor": _file(
        None,
        b"\x01",
        raw=b'{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}, '
        b'"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}',
    ),
    "repeated metadata key": _file(None, raw=b'{"__metadata__": {"k": "1", "k": "2"}}'),
    "size mismatch": _file({"a": _t("F32", [3], [0, 8])}, b"\0" * 8),
    "fractional shape": _file({"a": _t("U8", [2.5], [0, 2])}, b"\0\0"),
    "bool shape": _file({"a": _t("U8", [True], [0, 1])}, b"\0"),
    "string offsets": _file({"a": _t("U8", [2], ["0", "2"])}, b"\0\0"),
    "three offsets": _file({"a": _t("U8", [2], [0, 2, 2])}, b"\0\0"),
    "overflowing shape": _file({"a": _t("U8", [2**32, 2**32], [0, 0])}),
    "huge empty shape": _file({"a": _t("F32", [0, 2**70], [0, 0])}),
    "negative shape": _file({"a": _t("U8", [-1], [0, 0])}),
    "missing offsets": _file({"a": {"dtype": "U8", "shape": [1]}}, b"\0"),
    "trailing bytes": _file({"a": _t("U8", [1], [0, 1])}, b"\0\0"),
    "gap": _file({"a": _t("U8", [1], [1, 2])}, b"\0\0"),
    "truncated": b"\x10\0\0\0",
    "BOOL bytes 2 and 255": _file({"a": _t("BOOL", [2], [0, 2])}, b"\x02\xff"),
    "metadata number": _file({"__metadata__": {"k": 1}}),
    "metadata list": _file({"__metadata__": []}),
    "not an object": _file([1, 2]),
    "NaN": _file(None, raw=b'{"a": {"dtype": "U8", "shape": [NaN], "data_offsets": [0, 0]}}'),
    "lone surrogate": _file(
        None, raw=b'{"\\ud800": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}}'
    ),
    "lower-case dtype": _file({"a": _t("f32", [1], [0, 4])}, b"\0" * 4),
    "null tensor": _file({"a": None}),
}


def malformed(d: Path) -> None:
    stricter = []
    for name, blob in MALFORMED.items():
        path = d / "bad.safetensors"
        path.write_bytes(blob)
        try:
            stn.load_file(path)
            reference = "reads"
        except Exception as e:  # the package raises SafetensorError, TypeError...
            reference = f"refuses ({type(e).__name__})"
        try:
            read_safetensors(path)
            mine = "reads"
        except CheckpointError:
            mine = "refuses"
        except Exception as e:
            mine = f"raw {type(e).__name__}: {e}"
        check(not mine.startswith("raw"), f"{name}: lampy raised a bare exception ({mine})")
        check(
            not (mine == "reads" and reference != "reads"), f"{name}: lampy reads, package refuses"
        )
        if mine == "refuses" and reference == "reads":
            stricter.append(name)
    print(f"malformed files: {len(MALFORMED)} checked; lampy stricter on: {stricter}")


PAIRS: dict[str, tuple[Callable[[np.random.Generator], Any], Callable[[], torch.nn.Module]]] = {
    "Linear": (lambda r: nn.Linear.init(3, 5, rng=r), lambda: torch.nn.Linear(3, 5)),
    "BatchNorm1d": (lambda r: nn.BatchNorm1d.init(4), lambda: torch.nn.BatchNorm1d(4)),
    "BatchNorm2d": (lambda r: nn.BatchNorm2d.init(4), lambda: torch.nn.BatchNorm2d(4)),
    "LayerNorm": (lambda r: nn.LayerNorm.init(6), lambda: torch.nn.LayerNorm(6)),
    "Conv2d": (lambda r: nn.Conv2d.init(3, 4, 3, rng=r), lambda: torch.nn.Conv2d(3, 4, 3)),
    "Embedding": (lambda r: nn.Embedding.init(10, 3, rng=r), lambda: torch.nn.Embedding(10, 3)),
    "LSTM": (
        lambda r: nn.LSTM.init(3, 5, num_layers=2, rng=r),
        lambda: torch.nn.LSTM(3, 5, num_layers=2),
    ),
    "GRU": (lambda r: nn.GRU.init(3, 5, rng=r), lambda: torch.nn.GRU(3, 5)),
    "MultiheadAttention": (
        lambda r: nn.MultiheadAttention.init(8, 2, rng=r),
        lambda: torch.nn.MultiheadAttention(8, 2),
    ),
    "TransformerEncoderLayer": (
        lambda r: nn.TransformerEncoderLayer.init(8, 2, 16, rng=r),
        lambda: torch.nn.TransformerEncoderLayer(8, 2, 16),
    ),
}


def modules(d: Path) -> None:
    for name, (make_lampy, make_torch) in PAIRS.items():
        torch.manual_seed(0)
        theirs = make_torch()
        with torch.no_grad():
            for p in theirs.parameters():
                p.add_(torch.randn_like(p))
        sd = {k: v.contiguous() for k, v in theirs.state_dict().items()}
        stt.save_file(sd, d / "torch_model.safetensors")
        with lampy.Scope():
            mine = make_lampy(np.random.default_rng(0))
            try:
                lampy.load(d / "torch_model.safetensors", mine)
            except Exception as e:
                check(False, f"{name}: torch -> lampy: {type(e).__name__}: {e}")
                continue
            for k, v in sd.items():
                check(np.array_equal(mine.state_dict()[k], v.numpy()), f"{name}: {k} torch->lampy")
            lampy.save(d / "lampy_model.safetensors", mine)
        fresh = make_torch()
        try:
            fresh.load_state_dict(stt.load_file(d / "lampy_model.safetensors"), strict=True)
        except Exception as e:
            check(False, f"{name}: lampy -> torch: {type(e).__name__}: {e}")
            continue
        for k, v in fresh.state_dict().items():
            check(torch.equal(v, sd[k]), f"{name}: {k} lampy->torch")
    print(f"modules: {len(PAIRS)} checked both ways")


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        lampy_to_reference(d)
        reference_to_lampy(d)
        malformed(d)
        modules(d)
    print(f"safetensors {safetensors.__version__}, torch {torch.__version__}")
    print("all agree" if not FAILURES else f"{len(FAILURES)} mismatches")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main())
