"""Writing report files atomically and telling which committed files are stale.

Every file is written to a temporary file in its own directory and moved into place with
os.replace, so an interrupted run leaves either the old file or the new one, never half of
one. Standard library only.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import tempfile
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

TEMP_PREFIX = ".sizing-tmp-"  # write_atomic's temporaries: .sizing-tmp-<pid>-<8 random characters>
# mkstemp's random part is 8 characters of [a-z0-9_]; a name outside this pattern is never ours
_TEMP_NAME = re.compile(r"\.sizing-tmp-(\d+)-[a-z0-9_]{8}")


def _alive(pid: int) -> bool:
    """A process with this id runs (its temporaries may be in use by a concurrent run)."""
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, OSError):
        return True  # another user's process, or an id the system cannot test: leave its files
    return True


def temporary_pid(path: Path) -> int | None:
    """The process id in the name of one of write_atomic's temporaries; None for any other name."""
    match = _TEMP_NAME.fullmatch(path.name)
    return int(match.group(1)) if match else None


def is_temporary(path: Path) -> bool:
    """A temporary file of write_atomic, left behind only when a run was killed (kill -9): our
    unique name pattern, a regular file (never a link), and its process is gone."""
    pid = temporary_pid(path)
    return pid is not None and not path.is_symlink() and path.is_file() and not _alive(pid)


def stray_temporaries(folders: list[Path]) -> list[Path]:
    """The temporaries of interrupted runs in `folders` (not recursive; linked folders skipped)."""
    usable = [folder for folder in folders if folder.is_dir() and not folder.is_symlink()]
    return sorted(p for folder in usable for p in folder.iterdir() if is_temporary(p))


def write_atomic(path: Path, writer: Callable[[BinaryIO], None]) -> None:
    """Call writer(file) on a temporary file beside `path`, then rename it over `path`.
    If the writer raises, the temporary file is removed and `path` is left as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f"{TEMP_PREFIX}{os.getpid()}-")
    try:
        with os.fdopen(fd, "wb") as handle:
            writer(handle)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp_name, 0o644)
        os.replace(tmp_name, path)
    except BaseException:
        try:
            os.unlink(tmp_name)
        except FileNotFoundError:
            pass
        raise


def write_bytes_atomic(path: Path, data: bytes) -> None:
    write_atomic(path, lambda handle: handle.write(data))


def png_text(data: bytes) -> dict[str, str]:
    """The tEXt chunks of a PNG (matplotlib writes savefig's `metadata` there)."""
    out: dict[str, str] = {}
    if not data.startswith(b"\x89PNG\r\n\x1a\n"):
        return out
    pos = 8
    while pos + 8 <= len(data):
        length, kind = struct.unpack(">I4s", data[pos : pos + 8])
        body = data[pos + 8 : pos + 8 + length]
        if kind == b"tEXt" and b"\0" in body:
            key, _, value = body.partition(b"\0")
            out[key.decode("latin-1")] = value.decode("latin-1")
        elif kind == b"zTXt" and b"\0" in body:
            key, _, rest = body.partition(b"\0")
            out[key.decode("latin-1")] = zlib.decompress(rest[1:]).decode("latin-1")
        if kind == b"IEND":
            break
        pos += 12 + length
    return out


def stale_files(
    expected: dict[str, bytes],
    out_dir: Path,
    managed_dirs: tuple[str, ...],
    png_equivalent: Callable[[bytes, bytes], str | None],
    owned: dict[str, str] | None = None,
) -> list[str]:
    """Lines naming every file of `out_dir` that differs from `expected` (relative path ->
    bytes): missing, different, or left over in a generated folder (`managed_dirs`).
    Markdown is compared byte for byte; PNGs through `png_equivalent(committed, fresh)`, which
    returns None when they match and a reason otherwise. `owned` (the manifest, relative path ->
    sha256) tells a leftover the report wrote from a user's file, which it never removes and
    which is therefore never stale: --check judges only what the report owns."""
    out_dir = Path(out_dir)
    problems = []
    for rel, data in sorted(expected.items()):
        path = out_dir / rel
        if not path.is_file():
            problems.append(f"{rel}: missing")
            continue
        current = path.read_bytes()
        if current == data:
            continue
        if rel.endswith(".png"):
            reason = png_equivalent(current, data)
            if reason:
                problems.append(f"{rel}: {reason}")
        else:
            problems.append(f"{rel}: differs from a fresh run")
    for folder in managed_dirs:
        base = out_dir / folder
        if base.is_symlink() or not base.is_dir():
            continue
        for path in sorted(base.iterdir()):
            rel = f"{folder}/{path.name}"
            if rel in expected or path.name.startswith(".") or path.is_symlink() or not path.is_file():
                continue
            if owned is not None and owned.get(rel) != hashlib.sha256(path.read_bytes()).hexdigest():
                continue  # the user's file (or one edited since): the report leaves it alone, so does --check
            problems.append(f"{rel}: no longer generated")
    for path in stray_temporaries([out_dir] + [out_dir / folder for folder in managed_dirs]):
        problems.append(f"{path.relative_to(out_dir).as_posix()}: temporary file of an interrupted run")
    return problems
