"""lampy.io: files in the safetensors format, checked against the format's specification
(an 8-byte little-endian header length, a UTF-8 JSON header padded with spaces to a
multiple of 8, then the tensors' little-endian C-ordered bytes back to back). The
reference bytes are built here with ``struct`` and ``json`` from the specification, not
from lampy's output; malformed files are refused with a CheckpointError, never read as
garbage."""

from __future__ import annotations

import itertools
import json
import math
import struct
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from lampy._errors import LampyTypeError, LampyValueError
from lampy.io import CheckpointError, _safetensors, read_safetensors, write_safetensors

# The format's dtype codes, with the struct format of one item (little-endian).
SPEC = {
    "F64": ("<d", np.float64),
    "F32": ("<f", np.float32),
    "F16": ("<e", np.float16),
    "I64": ("<q", np.int64),
    "I32": ("<i", np.int32),
    "I16": ("<h", np.int16),
    "I8": ("<b", np.int8),
    "U64": ("<Q", np.uint64),
    "U32": ("<I", np.uint32),
    "U16": ("<H", np.uint16),
    "U8": ("<B", np.uint8),
    "BOOL": ("<?", np.bool_),
    "C64": ("<ff", np.complex64),
}


def spec_file(
    entries: dict[str, tuple[str, list[int], bytes]],
    metadata: dict[str, str] | None = None,
    *,
    order: list[str] | None = None,
) -> bytes:
    """A safetensors file made from the specification: ``entries`` maps names to
    ``(dtype code, shape, data bytes)``; the data are laid out in ``order``."""
    header: dict[str, Any] = {} if metadata is None else {"__metadata__": metadata}
    data, spans = b"", {}
    for name in order or list(entries):
        spans[name] = [len(data), len(data) + len(entries[name][2])]
        data += entries[name][2]
    for name, (code, shape, _) in entries.items():  # the header in the entries' order
        header[name] = {"dtype": code, "shape": shape, "data_offsets": spans[name]}
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text + data


def spec_parse(blob: bytes) -> tuple[dict[str, Any], bytes, int]:
    """The header, the byte buffer and the header length of a file, read by the spec."""
    (n,) = struct.unpack("<Q", blob[:8])
    text = blob[8 : 8 + n]
    header = json.loads(text.decode("utf-8"))
    return header, blob[8 + n :], n


def packed(code: str, values: list[Any]) -> bytes:
    """``values`` (flat, C order) as the spec's little-endian bytes for ``code``."""
    fmt = SPEC[code][0]
    if code == "C64":
        return b"".join(struct.pack("<ff", v.real, v.imag) for v in values)
    return b"".join(struct.pack(fmt, v) for v in values)


# ----------------------------------------------------------------------- writing


def test_written_bytes_follow_the_specification(tmp_path: Path) -> None:
    """Header length, space padding to a multiple of 8, dtype codes, shapes, offsets
    covering the buffer exactly, and little-endian C-order data: a big-endian array and a
    transposed (non-contiguous) one are stored as their values, not their memory."""
    path = tmp_path / "a.safetensors"
    big = np.array([1.5, -2.0, 3.25], dtype=">f8")
    fortran = np.array([[1, 2, 3], [4, 5, 6]], dtype=np.int16).T  # values [[1,4],[2,5],[3,6]]
    write_safetensors(
        path,
        {"big": big, "t": fortran, "s": np.float32(0.5), "e": np.zeros((0, 4), np.uint8)},
        {"k": "v"},
    )
    blob = path.read_bytes()
    header, data, n = spec_parse(blob)
    text = blob[8 : 8 + n]
    assert n % 8 == 0 and text.startswith(b"{") and text.rstrip(b" ").endswith(b"}")
    assert len(text) - len(text.rstrip(b" ")) < 8  # padded with fewer than 8 spaces
    assert header.pop("__metadata__") == {"k": "v"}
    assert list(header) == ["big", "t", "s", "e"]  # the caller's order
    assert {k: (v["dtype"], v["shape"]) for k, v in header.items()} == {
        "big": ("F64", [3]),
        "t": ("I16", [3, 2]),
        "s": ("F32", []),
        "e": ("U8", [0, 4]),
    }

    def raw(name: str) -> bytes:
        begin, end = header[name]["data_offsets"]
        return data[begin:end]

    assert raw("big") == packed("F64", [1.5, -2.0, 3.25])
    assert raw("t") == packed("I16", [1, 4, 2, 5, 3, 6])
    assert raw("s") == packed("F32", [0.5])
    assert raw("e") == b""
    spans = sorted(tuple(v["data_offsets"]) for v in header.values())
    assert spans[0][0] == 0 and spans[-1][1] == len(data)
    assert all(a[1] == b[0] for a, b in itertools.pairwise(spans))


dtype_codes = st.sampled_from(sorted(SPEC))
shapes = st.lists(st.integers(0, 3), max_size=3)


@given(
    st.dictionaries(
        st.text(min_size=1, max_size=8).filter(lambda s: s != "__metadata__"),
        st.tuples(dtype_codes, shapes),
        max_size=6,
    )
)
def test_every_tensor_starts_at_a_multiple_of_its_item_size(
    tmp_path_factory: pytest.TempPathFactory, spec: dict[str, tuple[str, list[int]]]
) -> None:
    """Tensors of mixed item sizes, in any order, are laid out so each one is aligned in
    the file (as the safetensors package lays them out): readers can map them without
    copying. The file still reads back to the same values."""
    path = tmp_path_factory.mktemp("align") / "a.safetensors"
    rng = np.random.default_rng(0)
    tensors = {
        name: (
            rng.integers(0, 2, size=shape) if code == "BOOL" else rng.integers(0, 100, shape)
        ).astype(SPEC[code][1])
        for name, (code, shape) in spec.items()
    }
    write_safetensors(path, tensors)
    header, _data, n = spec_parse(path.read_bytes())
    for name, info in header.items():
        itemsize = SPEC[info["dtype"]][1]().itemsize
        assert (8 + n + info["data_offsets"][0]) % itemsize == 0, (name, info)
    back, meta = read_safetensors(path)
    assert meta == {} and list(back) == list(tensors)
    for name, a in tensors.items():
        assert back[name].dtype == a.dtype and back[name].shape == a.shape
        np.testing.assert_array_equal(back[name], a)


def test_names_and_metadata_are_utf8_in_the_header(tmp_path: Path) -> None:
    """Unicode and long names and metadata round-trip, and the header is plain UTF-8."""
    path = tmp_path / "u.safetensors"
    long = "layer." * 500 + "weight"
    write_safetensors(path, {"ünï😀": np.ones(2, np.float32), long: np.arange(3)}, {"ключ": "😀"})
    header, _, _ = spec_parse(path.read_bytes())
    assert "ünï😀" in header and long in header and header["__metadata__"] == {"ключ": "😀"}
    tensors, meta = read_safetensors(path)
    assert list(tensors) == ["ünï😀", long] and meta == {"ключ": "😀"}


@pytest.mark.parametrize(
    ("tensors", "metadata", "error", "match"),
    [
        ({"__metadata__": np.ones(2)}, None, LampyValueError, "cannot be named '__metadata__'"),
        ({1: np.ones(2)}, None, LampyTypeError, "tensor name 1 is a int"),
        ({"\ud800": np.ones(2)}, None, LampyValueError, "not valid Unicode"),
        ({"a": np.ones(2)}, {"epoch": 3}, LampyTypeError, "metadata value of 'epoch': 3"),
        ({"a": np.ones(2)}, {"d": {"x": 1}}, LampyTypeError, r"json\.dumps"),
        ({"a": np.ones(2)}, {2: "x"}, LampyTypeError, "metadata key 2"),
        ({"a": np.ones(2, np.complex128)}, None, LampyTypeError, "complex128, which safetensors"),
    ],
)
def test_what_the_format_cannot_hold_is_refused_before_writing(
    tmp_path: Path, tensors: Any, metadata: Any, error: type[Exception], match: str
) -> None:
    """A tensor named __metadata__ (the file used to be written, then unreadable), names
    and metadata that are not strings (metadata used to be str()-ed silently) or not valid
    Unicode, unstorable dtypes: a clear error, and no file."""
    path = tmp_path / "x.safetensors"
    with pytest.raises(error, match=match):
        write_safetensors(path, tensors, metadata)
    assert list(tmp_path.iterdir()) == []


def test_a_header_too_large_for_readers_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A header beyond the readers' limit would make a file nothing can load: refused."""
    monkeypatch.setattr(_safetensors, "_MAX_HEADER", 64)
    with pytest.raises(LampyValueError, match="more than the 64"):
        write_safetensors(tmp_path / "x.safetensors", {"a" * 80: np.ones(1)})
    assert list(tmp_path.iterdir()) == []


def test_the_readers_header_limit_is_the_packages() -> None:
    """100,000,000 bytes, as the safetensors package (lampy used 100 MiB, which is larger)."""
    assert _safetensors._MAX_HEADER == 100_000_000


# ----------------------------------------------------------------------- reading


def _values(code: str, count: int) -> list[Any]:
    if code == "BOOL":
        return [bool(i % 2) for i in range(count)]
    if code in ("F64", "F32", "F16"):
        return [(-1) ** i * (i + 0.5) for i in range(count)]
    if code == "C64":
        return [complex(i, -i) for i in range(count)]
    lo = 0 if code.startswith("U") else -(2 ** (8 * struct.calcsize(SPEC[code][0]) - 1))
    return [lo + 3 * i for i in range(count)]


@pytest.mark.parametrize("code", sorted(SPEC))
@pytest.mark.parametrize("shape", [[], [0], [2, 0, 3], [3], [2, 3]])
def test_reads_every_dtype_and_shape_of_a_spec_file(
    tmp_path: Path, code: str, shape: list[int]
) -> None:
    """Each dtype code, 0-d, empty and n-d shapes, with metadata: the values packed."""
    count = math.prod(shape)
    values = _values(code, count)
    path = tmp_path / "x.safetensors"
    entries = {"t": (code, shape, packed(code, values)), "pad": ("U8", [3], b"\x01\x02\x03")}
    path.write_bytes(spec_file(entries, {"format": "pt"}, order=["pad", "t"]))
    tensors, meta = read_safetensors(path)
    assert meta == {"format": "pt"}
    t = tensors["t"]
    assert t.dtype == SPEC[code][1] and t.shape == tuple(shape) and t.flags.writeable
    assert t.ravel().tolist() == values
    assert tensors["pad"].tolist() == [1, 2, 3]


def test_reads_offsets_in_any_order_and_an_empty_file(tmp_path: Path) -> None:
    """Header order need not be data order; no tensors at all is a valid file."""
    path = tmp_path / "x.safetensors"
    entries = {
        "b": ("I32", [2], packed("I32", [7, -7])),
        "a": ("F64", [1], packed("F64", [0.25])),
        "z": ("U8", [0], b""),
    }
    path.write_bytes(spec_file(entries, order=["z", "a", "b"]))
    tensors, meta = read_safetensors(path)
    assert list(tensors) == ["b", "a", "z"] and meta == {}
    assert tensors["b"].tolist() == [7, -7] and tensors["a"].tolist() == [0.25]
    path.write_bytes(spec_file({}))
    assert read_safetensors(path) == ({}, {})
    path.write_bytes(struct.pack("<Q", 8) + b"{}      ")
    assert read_safetensors(path) == ({}, {})


def _file(
    header: Any, data: bytes = b"", *, raw: bytes | None = None, n: int | None = None
) -> bytes:
    text = json.dumps(header).encode() if raw is None else raw
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text) if n is None else n) + text + data


def _t(code: str, shape: Any, offsets: Any) -> dict[str, Any]:
    return {"dtype": code, "shape": shape, "data_offsets": offsets}


MALFORMED = {
    "empty file": (b"", "0 bytes long"),
    "short length": (b"\x10\x00\x00", "3 bytes long"),
    "header past the end": (_file({}, n=1000), "header claims 1000 bytes"),
    "header over the limit": (struct.pack("<Q", 100_000_001) + b"{}", "header claims 100000001"),
    "not JSON": (_file(None, raw=b"{nope"), "not valid JSON"),
    "not UTF-8": (_file(None, raw=b'{"\xff": 1}'), "not valid JSON in UTF-8"),
    "UTF-8 BOM": (_file(None, raw=b'\xef\xbb\xbf{"__metadata__": {}}'), "not valid JSON"),
    "UTF-16": (_file(None, raw='{"__metadata__": {}}'.encode("utf-16-le")), "not valid JSON"),
    "NaN": (_file(None, raw=b'{"a": {"dtype": "U8", "shape": [NaN]}}'), "NaN is not JSON"),
    "lone surrogate": (_file(None, raw=b'{"\\ud800": {}}'), "not valid Unicode"),
    "not an object": (_file([1, 2]), "not a JSON object"),
    "repeated tensor": (
        _file(
            None,
            b"\x01",
            raw=b'{"a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},'
            b' "a": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]}}',
        ),
        "repeats the key 'a'",
    ),
    "repeated metadata key": (
        _file(None, raw=b'{"__metadata__": {"k": "1", "k": "2"}}'),
        "repeats the key 'k'",
    ),
    "metadata not strings": (_file({"__metadata__": {"k": 1}}), "must map strings to strings"),
    "metadata a list": (_file({"__metadata__": []}), "must map strings to strings"),
    "entry not an object": (_file({"a": None}), "is not an object with dtype"),
    "entry without offsets": (_file({"a": {"dtype": "U8", "shape": [0]}}), "is not an object"),
    "unknown dtype": (_file({"a": _t("f32", [1], [0, 4])}, b"\0" * 4), "dtype 'f32', not one"),
    "BF16": (_file({"a": _t("BF16", [1], [0, 2])}, b"\x80?"), r"BF16 \(bfloat16\).*float32"),
    "F8": (_file({"a": _t("F8_E4M3", [1], [0, 1])}, b"\0"), "F8_E4M3"),
    "fractional shape": (_file({"a": _t("U8", [2.5], [0, 2])}, b"\0\0"), r"shape \[2\.5\]"),
    "bool shape": (_file({"a": _t("U8", [True], [0, 1])}, b"\0"), r"shape \[True\]"),
    "string shape": (_file({"a": _t("U8", ["2"], [0, 2])}, b"\0\0"), r"shape \['2'\]"),
    "negative shape": (_file({"a": _t("U8", [-1], [0, 0])}), r"shape \[-1\]"),
    "scalar shape": (_file({"a": _t("U8", 2, [0, 2])}, b"\0\0"), "shape 2;"),
    "float offsets": (_file({"a": _t("U8", [2], [0.0, 2.0])}, b"\0\0"), "data_offsets"),
    "three offsets": (_file({"a": _t("U8", [2], [0, 2, 2])}, b"\0\0"), "data_offsets"),
    "reversed offsets": (_file({"a": _t("U8", [0], [2, 0])}, b"\0\0"), "outside the file"),
    "offsets past the end": (_file({"a": _t("F32", [2], [0, 8])}, b"\0" * 4), "outside the file"),
    "size mismatch": (_file({"a": _t("F32", [3], [0, 8])}, b"\0" * 8), "needs 12"),
    "shape overflowing 64 bits": (
        _file({"a": _t("U8", [2**32, 2**32], [0, 0])}),
        "needs 18446744073709551616",
    ),
    "huge empty shape": (_file({"a": _t("F32", [0, 2**70], [0, 0])}), r"has shape \[0, "),
    "too many dimensions": (_file({"a": _t("U8", [1] * 70, [0, 1])}, b"\0"), "has shape"),
    "overlap": (
        _file({"a": _t("F32", [2], [0, 8]), "b": _t("F32", [2], [4, 12])}, b"\0" * 12),
        "gaps or overlapping",
    ),
    "gap": (_file({"a": _t("U8", [1], [1, 2])}, b"\0\0"), "gaps or overlapping"),
    "trailing bytes": (_file({"a": _t("U8", [1], [0, 1])}, b"\0\0"), "1 bytes after the last"),
    "truncated data": (_file({"a": _t("F64", [4], [0, 32])}, b"\0" * 31), "outside the file"),
    "BOOL not 0 or 1": (_file({"a": _t("BOOL", [2], [0, 2])}, b"\x01\x02"), "other than 0 and 1"),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_files_are_checkpoint_errors(tmp_path: Path, case: str) -> None:
    """Each way a file can break the specification is a CheckpointError naming it; none
    is read as garbage (a shape [2.5] used to load as shape (2,), BOOL bytes of 2 as
    booleans, repeated keys and a UTF-8 BOM were accepted, and an overflowing shape was a
    bare ValueError)."""
    blob, match = MALFORMED[case]
    path = tmp_path / "x.safetensors"
    path.write_bytes(blob)
    with pytest.raises(CheckpointError, match=match):
        read_safetensors(path)


@given(
    st.dictionaries(
        st.text(max_size=6).filter(lambda s: s != "__metadata__"),
        st.tuples(dtype_codes, shapes),
        max_size=5,
    ),
    st.dictionaries(st.text(max_size=4), st.text(max_size=4), max_size=3),
    st.randoms(use_true_random=False),
)
def test_spec_files_round_trip_through_lampy(
    tmp_path_factory: pytest.TempPathFactory,
    spec: dict[str, tuple[str, list[int]]],
    metadata: dict[str, str],
    random: Any,
) -> None:
    """A spec file with tensors laid out in any order reads as its values; lampy writes
    them back to a file the spec reads as the same values and metadata."""
    order = list(spec)
    random.shuffle(order)
    entries = {
        name: (code, shape, packed(code, _values(code, math.prod(shape))))
        for name, (code, shape) in spec.items()
    }
    path = tmp_path_factory.mktemp("rt") / "a.safetensors"
    path.write_bytes(spec_file(entries, metadata, order=order))
    tensors, meta = read_safetensors(path)
    assert meta == metadata and list(tensors) == list(spec)
    for name, (code, shape) in spec.items():
        assert tensors[name].shape == tuple(shape) and tensors[name].dtype == SPEC[code][1]
        assert tensors[name].ravel().tolist() == _values(code, math.prod(shape))
    again = path.with_name("b.safetensors")
    write_safetensors(again, tensors, meta)
    header, data, _ = spec_parse(again.read_bytes())
    assert header.pop("__metadata__", {}) == metadata
    for name, (code, shape, raw) in entries.items():
        begin, end = header[name]["data_offsets"]
        assert header[name]["dtype"] == code and header[name]["shape"] == shape
        assert data[begin:end] == raw
