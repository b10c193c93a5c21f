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
import os
import re
import socket
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from lampy._errors import LampyError, LampyTypeError

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
}
_CODES = {dt.newbyteorder("="): code for code, dt in _DTYPES.items()}
_MAX_HEADER = 100 * 2**20  # the safetensors package's own limit


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

    Raises:
        CheckpointWriteError: (an ``OSError``) if the file cannot be written (no space
            left, a file size limit, no permission); the previous file is unchanged and
            no temporary file is left.
        LampyTypeError: if an array's dtype cannot be stored.
    """
    header: dict[str, Any] = {}
    if metadata:
        header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    arrays: list[np.ndarray] = []
    offset = 0
    for name, value in tensors.items():
        a = np.asarray(value)
        code = _code(name, a)
        a = np.asarray(a, dtype=_DTYPES[code], order="C")  # keeps 0-d arrays 0-d
        header[name] = {
            "dtype": code,
            "shape": list(a.shape),
            "data_offsets": [offset, offset + a.nbytes],
        }
        offset += a.nbytes
        arrays.append(a)
    raw = json.dumps(header, separators=(",", ":")).encode()
    raw += b" " * (-len(raw) % 8)  # keep the data 8-byte aligned, as safetensors does
    target = Path(os.path.realpath(path))  # through symbolic links: the link stays
    try:
        _remove_stale_temporaries(target)
        _write_replace(target, [len(raw).to_bytes(8, "little"), raw, *(a.data for a in arrays)])
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

    Raises:
        CheckpointError: if the file is truncated, its header is not valid JSON or
            describes tensors that do not fit the data (unknown dtype, a size that does
            not match the shape, gaps or overlaps).
    """
    data = Path(path).read_bytes()
    where = f"load: '{path}'"
    if len(data) < 8:
        raise CheckpointError(f"{where} is not a safetensors file: {len(data)} bytes long.")
    n = int.from_bytes(data[:8], "little")
    if n > _MAX_HEADER or 8 + n > len(data):
        raise CheckpointError(
            f"{where} is not a safetensors file or is truncated: its header claims {n} "
            f"bytes, the file has {len(data)}."
        )
    try:
        header = json.loads(data[8 : 8 + n])
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise CheckpointError(f"{where} has a header that is not valid JSON ({e}).") from e
    if not isinstance(header, dict):
        raise CheckpointError(f"{where} has a header that is not a JSON object.")
    meta = header.pop("__metadata__", None) or {}
    body = memoryview(data)[8 + n :]
    tensors: dict[str, np.ndarray] = {}
    spans = []
    for name, info in header.items():
        try:
            dtype = _DTYPES[info["dtype"]]
            shape = tuple(int(s) for s in info["shape"])
            begin, end = (int(o) for o in info["data_offsets"])
        except (KeyError, TypeError, ValueError) as e:
            raise CheckpointError(
                f"{where}: the entry of tensor '{name}' is malformed or has an unsupported "
                f"dtype ({info!r})."
            ) from e
        if min(shape, default=0) < 0 or not 0 <= begin <= end <= len(body):
            raise CheckpointError(f"{where}: tensor '{name}' lies outside the file's data.")
        if (end - begin) != int(np.prod(shape)) * dtype.itemsize:
            raise CheckpointError(
                f"{where}: tensor '{name}' has {end - begin} bytes, but shape {shape} of "
                f"{info['dtype']} needs {int(np.prod(shape)) * dtype.itemsize}."
            )
        spans.append((begin, end, name))
        tensors[name] = np.frombuffer(body[begin:end], dtype=dtype).reshape(shape).copy()
    spans.sort()
    pos = 0
    for begin, end, name in spans:
        if begin != pos:
            raise CheckpointError(
                f"{where}: tensor '{name}' starts at byte {begin}, expected {pos}: the "
                "data has gaps or overlapping tensors."
            )
        pos = end
    if pos != len(body):
        raise CheckpointError(f"{where}: {len(body) - pos} bytes after the last tensor.")
    if not isinstance(meta, dict) or not all(isinstance(v, str) for v in meta.values()):
        raise CheckpointError(f"{where}: __metadata__ must map strings to strings.")
    return tensors, meta
