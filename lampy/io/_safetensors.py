"""The safetensors file format, read and written with numpy alone.

A file is an 8-byte little-endian header length ``N``, ``N`` bytes of JSON, then the
tensors' bytes. The JSON maps each tensor name to ``{"dtype", "shape", "data_offsets":
[begin, end]}`` (offsets into the byte buffer after the header) and may hold a
``"__metadata__"`` map of strings. Data is little-endian and C-ordered; tensors are laid
out back to back with no gaps or overlaps. This is the format of the ``safetensors``
package (Hugging Face), so its loaders (``safetensors.numpy.load_file``,
``safetensors.torch.load_file``) read lampy's files and lampy reads theirs. Reading never
unpickles anything: only JSON and raw numbers are parsed.
"""

from __future__ import annotations

import contextlib
import json
import math
import os
import re
import socket
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from lampy._errors import LampyError, LampyTypeError, LampyValueError

__all__ = ["CheckpointError", "CheckpointWriteError", "read_safetensors", "write_safetensors"]

_DTYPES: dict[str, np.dtype[Any]] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
    "C64": np.dtype("<c8"),
}
_CODES = {dt.newbyteorder("="): code for code, dt in _DTYPES.items()}
# dtypes of the safetensors format that numpy (so lampy) has no type for.
_UNSUPPORTED = {
    "BF16": "bfloat16",
    "F8_E4M3": "float8 e4m3",
    "F8_E5M2": "float8 e5m2",
    "F8_E8M0": "float8 e8m0",
    "F6_E2M3": "float6 e2m3",
    "F6_E3M2": "float6 e3m2",
    "F4": "float4",
}
_MAX_HEADER = 100_000_000  # the safetensors package's own limit, in bytes
_METADATA = "__metadata__"


class CheckpointError(LampyError, ValueError):
    """A checkpoint file is malformed, or does not fit what it is loaded into."""


class CheckpointWriteError(LampyError, OSError):
    """Writing a checkpoint failed (disk full, file size limit, permissions...).

    The previous file at the path, if any, is unchanged and no temporary file is left.
    ``errno`` and ``filename`` are those of the failed operation.
    """


def _code(name: str, a: np.ndarray) -> str:
    code = _CODES.get(a.dtype.newbyteorder("="))
    if code is None:
        raise LampyTypeError(
            f"save: tensor '{name}' has dtype {a.dtype}, which safetensors cannot hold; "
            f"convert it to one of {sorted(str(d) for d in _CODES)}."
        )
    return code


def _text(what: str, value: Any) -> str:
    """``value``, checked to be a string that UTF-8 can encode (a header is UTF-8 JSON)."""
    if not isinstance(value, str):
        raise LampyTypeError(
            f"save: {what} {value!r} is a {type(value).__name__}; safetensors headers hold "
            "strings only: pass str(...) or json.dumps(...) of it."
        )
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as e:
        raise LampyValueError(
            f"save: {what} {value!r} is not valid Unicode ({e.reason}: a lone surrogate); "
            "safetensors readers reject such a header."
        ) from None
    return value


def write_safetensors(
    path: str | os.PathLike[str],
    tensors: Mapping[str, np.ndarray],
    metadata: Mapping[str, str] | None = None,
) -> None:
    """Write ``tensors`` and string ``metadata`` to ``path`` atomically.

    The file is written under a temporary name in the same directory, flushed to disk,
    then renamed over ``path``, so a crash mid-write leaves any previous file intact. If
    ``path`` is a symbolic link, the file it points to is replaced and the link stays.
    A file that is replaced keeps its permission bits; a new one gets the usual mode
    (``0o666`` minus the umask). Temporary files of ``path`` left by processes of this
    machine that were killed mid-write are removed first.

    The header lists the tensors in the order of ``tensors``; their bytes are laid out
    largest item size first (as the ``safetensors`` package does), so every tensor starts
    at a multiple of its item size and readers can map it without copying. Arrays are
    stored little-endian and in C order whatever their byte order and strides.

    Raises:
        CheckpointWriteError: (an ``OSError``) if the file cannot be written (no space
            left, a file size limit, no permission); the previous file is unchanged and
            no temporary file is left.
        LampyTypeError: if an array's dtype cannot be stored, or a tensor name, metadata
            key or metadata value is not a string.
        LampyValueError: if a tensor is named ``"__metadata__"`` (the format reserves it),
            a string is not valid Unicode, or the header would exceed the 100 MB that
            safetensors readers accept.
    """
    arrays: dict[str, tuple[str, np.ndarray]] = {}
    for name, value in tensors.items():
        _text("tensor name", name)
        if name == _METADATA:
            raise LampyValueError(
                f"save: a tensor cannot be named '{_METADATA}': the safetensors format keeps "
                "the file's metadata under that key. Rename the tensor."
            )
        a = np.asarray(value)
        code = _code(name, a)
        arrays[name] = (code, np.asarray(a, dtype=_DTYPES[code], order="C"))  # 0-d stays 0-d
    header: dict[str, Any] = {}
    if metadata:
        header[_METADATA] = {
            _text("metadata key", k): _text(f"metadata value of {k!r}:", v)
            for k, v in metadata.items()
        }
    # Largest item size first: item sizes are powers of two, so each tensor's offset is a
    # multiple of its own (the header is padded to 8 bytes).
    layout = sorted(arrays, key=lambda name: -arrays[name][1].itemsize)
    spans: dict[str, list[int]] = {}
    offset = 0
    for name in layout:
        nbytes = arrays[name][1].nbytes
        spans[name] = [offset, offset + nbytes]
        offset += nbytes
    for name, (code, a) in arrays.items():
        header[name] = {"dtype": code, "shape": list(a.shape), "data_offsets": spans[name]}
    raw = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # keep the data 8-byte aligned, as safetensors does
    if len(raw) > _MAX_HEADER:
        raise LampyValueError(
            f"save: the header of '{path}' would take {len(raw)} bytes, more than the "
            f"{_MAX_HEADER} safetensors readers (lampy's too) accept; store fewer, larger "
            "tensors or less metadata."
        )
    target = Path(os.path.realpath(path))  # through symbolic links: the link stays
    chunks = [len(raw).to_bytes(8, "little"), raw, *(arrays[name][1].data for name in layout)]
    try:
        _remove_stale_temporaries(target)
        _write_replace(target, chunks)
    except OSError as e:
        if isinstance(e, CheckpointWriteError):
            raise
        raise CheckpointWriteError(
            e.errno,
            f"save: could not write '{path}' ({e.strerror or e}); the previous file, if "
            "any, is unchanged and no temporary file was left. Free disk space, raise the "
            "file size limit or check the directory's permissions, then save again.",
            str(path),
        ) from e


def _temporary_prefix(target: Path) -> str:
    """The prefix of ``target``'s temporary files: the process id and host name, so a
    later save can tell whose they are (see ``_remove_stale_temporaries``)."""
    return f".{target.name}.{os.getpid()}@{socket.gethostname()}."


def _remove_stale_temporaries(target: Path) -> None:
    """Delete temporary files of ``target`` whose writer (a process of this machine) is
    gone, as a run killed mid-save leaves them. Files of live processes, of other
    machines (a shared file system) and of this process (another thread may be writing)
    are left alone. Only on POSIX systems, where a process can be probed safely."""
    if os.name != "posix":
        return
    pattern = re.compile(
        rf"^\.{re.escape(target.name)}\.(\d+)@{re.escape(socket.gethostname())}\.\w+\.tmp$"
    )
    try:
        names = os.listdir(target.parent)
    except OSError:
        return
    for name in names:
        m = pattern.match(name)
        if m is None:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or _alive(pid):
            continue
        with contextlib.suppress(OSError):
            (target.parent / name).unlink()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only checks that the process exists
    except ProcessLookupError:
        return False
    except OSError:  # it exists but belongs to another user
        return True
    return True


def _write_replace(target: Path, chunks: list[Any]) -> None:
    """Write ``chunks`` to a temporary file beside ``target``, flush it to disk and
    rename it over ``target``; on any failure remove the temporary file."""
    fd, tmp = tempfile.mkstemp(prefix=_temporary_prefix(target), suffix=".tmp", dir=target.parent)
    try:
        try:
            mode = stat.S_IMODE(os.stat(target).st_mode)  # a replaced file keeps its mode
        except FileNotFoundError:
            mode = 0o666 & ~_umask()  # mkstemp makes 0600; give the usual mode
        os.chmod(tmp, mode)
        with os.fdopen(fd, "wb") as f:
            for chunk in chunks:
                f.write(chunk)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, target)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    _fsync_dir(target.parent)


def _umask() -> int:
    """The process's umask: read from /proc on Linux (setting it, the only portable way
    to read it, briefly changes it for every thread)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("Umask:"):
                return int(line.split()[1], 8)
    except OSError:
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def _fsync_dir(directory: Path) -> None:
    """Flush the directory entry of the rename to disk (where the platform allows)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # not possible on this platform (Windows)
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def read_safetensors(
    path: str | os.PathLike[str],
) -> tuple[dict[str, np.ndarray], dict[str, str]]:
    """Read a safetensors file: its tensors (new, writable arrays) and its metadata.

    The whole header is validated before any tensor is read, as strictly as the
    ``safetensors`` package does; each tensor is then read from the file straight into
    its array (no second copy of the file in memory). The tensors come in the header's
    order.

    Raises:
        CheckpointError: if the file is truncated or is not a safetensors file: a header
            that is not UTF-8 JSON, repeats a key or describes tensors that do not fit
            the data (an unknown or unsupported dtype such as ``BF16``, a shape or offset
            that is not a whole number, a size that does not match the shape, gaps,
            overlaps, bytes after the last tensor, ``BOOL`` bytes other than 0 and 1).
    """
    where = f"load: '{path}'"
    with open(path, "rb") as f:
        n, meta, entries = _read_header(where, f)
        tensors: dict[str, np.ndarray] = {}
        for name, (dtype, shape, begin) in entries.items():
            a = np.empty(shape, dtype)
            f.seek(8 + n + begin)
            _read_into(where, name, f, a.reshape(-1).view(np.uint8))
            if dtype == np.bool_ and a.view(np.uint8).max(initial=0) > 1:
                raise CheckpointError(
                    f"{where}: BOOL tensor '{name}' holds bytes other than 0 and 1; the file "
                    "is corrupt or was not written as booleans."
                )
            tensors[name] = a
    return tensors, meta


def read_safetensors_metadata(path: str | os.PathLike[str]) -> dict[str, str]:
    """The ``__metadata__`` strings of a safetensors file, reading its header alone.

    The header is validated as ``read_safetensors`` validates it; no tensor is read.

    Raises:
        CheckpointError: if the file is not a safetensors file or is truncated.
    """
    with open(path, "rb") as f:
        return _read_header(f"load_metadata: '{path}'", f)[1]


def _read_header(
    where: str, f: Any
) -> tuple[int, dict[str, str], dict[str, tuple[np.dtype[Any], tuple[int, ...], int]]]:
    """The header's length, the metadata and the entries of the open file ``f``."""
    size = os.fstat(f.fileno()).st_size
    first = f.read(8)
    if len(first) < 8:
        raise CheckpointError(f"{where} is not a safetensors file: {size} bytes long.")
    n = int.from_bytes(first, "little")
    if n > _MAX_HEADER or 8 + n > size:
        raise CheckpointError(
            f"{where} is not a safetensors file or is truncated: its header claims {n} "
            f"bytes, the file has {size} (and headers are at most {_MAX_HEADER})."
        )
    meta, entries = _parse_header(where, f.read(n), size - 8 - n)
    return n, meta, entries


def _read_into(where: str, name: str, f: Any, buf: np.ndarray) -> None:
    """Fill ``buf`` (bytes) from ``f``, or raise if the file ends first."""
    view = memoryview(buf)  # type: ignore[arg-type]
    done = 0
    while done < len(view):
        got = f.readinto(view[done:])
        if not got:
            raise CheckpointError(
                f"{where}: the file ended inside tensor '{name}' (it shrank while read?)."
            )
        done += got


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object as a dict, refusing a repeated key (JSON parsers keep one silently)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise _Duplicate(key)
        out[key] = value
    return out


class _Duplicate(Exception):
    """A JSON object repeats a key."""


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def _whole(value: Any) -> bool:
    """Whether ``value`` is a JSON whole number >= 0 (not a float, a bool or a string)."""
    return type(value) is int and value >= 0


def _parse_header(
    where: str, raw: bytes, data_size: int
) -> tuple[dict[str, str], dict[str, tuple[np.dtype[Any], tuple[int, ...], int]]]:
    """The metadata and each tensor's ``(dtype, shape, begin)``, all checked against the
    ``data_size`` bytes after the header."""
    try:
        header = json.loads(
            raw.decode("utf-8"), object_pairs_hook=_no_duplicates, parse_constant=_no_constant
        )
    except _Duplicate as e:
        raise CheckpointError(
            f"{where} has a header that repeats the key {e.args[0]!r}; which entry is meant "
            "is ambiguous, so the file is refused."
        ) from None
    except (UnicodeDecodeError, ValueError, RecursionError) as e:
        raise CheckpointError(
            f"{where} has a header that is not valid JSON in UTF-8 ({e})."
        ) from None
    if not isinstance(header, dict):
        raise CheckpointError(f"{where} has a header that is not a JSON object.")
    meta = header.pop(_METADATA, None)
    if meta is None:
        meta = {}
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise CheckpointError(f"{where}: {_METADATA} must map strings to strings.")
    for text in [*header, *meta, *meta.values()]:
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            raise CheckpointError(
                f"{where} has a header string that is not valid Unicode ({text!r})."
            ) from None
    entries: dict[str, tuple[np.dtype[Any], tuple[int, ...], int]] = {}
    spans = []
    for name, info in header.items():
        if not isinstance(info, dict) or not {"dtype", "shape", "data_offsets"} <= info.keys():
            raise CheckpointError(
                f"{where}: the entry of tensor '{name}' is not an object with dtype, shape "
                f"and data_offsets ({info!r})."
            )
        code, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
        if code in _UNSUPPORTED:
            raise CheckpointError(
                f"{where}: tensor '{name}' is {code} ({_UNSUPPORTED[code]}), which numpy, so "
                "lampy, has no dtype for. Save it as float32 instead; from PyTorch: "
                "safetensors.torch.save_file({k: v.float() if v.is_floating_point() else v "
                "for k, v in state_dict.items()}, path)."
            )
        if not isinstance(code, str) or code not in _DTYPES:
            raise CheckpointError(
                f"{where}: tensor '{name}' has dtype {code!r}, not one of the safetensors "
                f"dtypes lampy reads ({', '.join(_DTYPES)})."
            )
        if not (isinstance(shape, list) and all(_whole(d) for d in shape)):
            raise CheckpointError(
                f"{where}: tensor '{name}' has shape {shape!r}; a shape is a list of whole "
                "numbers >= 0."
            )
        if not (isinstance(offsets, list) and len(offsets) == 2 and all(map(_whole, offsets))):
            raise CheckpointError(
                f"{where}: tensor '{name}' has data_offsets {offsets!r}; they are two whole "
                "numbers >= 0, [begin, end]."
            )
        begin, end = offsets
        dtype = _DTYPES[code]
        need = math.prod(shape) * dtype.itemsize
        if not begin <= end <= data_size:
            raise CheckpointError(
                f"{where}: tensor '{name}' has data_offsets [{begin}, {end}], outside the "
                f"file's {data_size} bytes of data."
            )
        if end - begin != need:
            raise CheckpointError(
                f"{where}: tensor '{name}' has {end - begin} bytes, but shape {tuple(shape)} "
                f"of {code} needs {need}."
            )
        if need == 0 or len(shape) > 32:  # sizes fit the file, but dimensions may not
            try:  # a dimension beyond 2**63 with a 0 elsewhere, or more than numpy's 64
                np.empty(tuple(shape), dtype)
            except ValueError as e:
                raise CheckpointError(f"{where}: tensor '{name}' has shape {shape}: {e}.") from None
        spans.append((begin, end, name))
        entries[name] = (dtype, tuple(shape), begin)
    pos = 0
    for begin, end, name in sorted(spans):
        if begin != pos:
            raise CheckpointError(
                f"{where}: tensor '{name}' starts at byte {begin}, expected {pos}: the "
                "data has gaps or overlapping tensors."
            )
        pos = end
    if pos != data_size:
        raise CheckpointError(f"{where}: {data_size - pos} bytes after the last tensor.")
    return meta, entries
