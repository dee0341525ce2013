"""A backup file handed to ``paperping restore``: read once, with its note ``FILE.json``, into a folder only this
user reads (``private_copy``), so that the copy checked is the copy restored, whoever can still write the file;
the note as ``paperping backup`` writes it (``read_note``); and whether the disk of the home's data has room for
the restored copy beside the home it replaces (``check_space``)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from socialrag.errors import DatabaseError, InputError

FreeBytes = Callable[[Path], int]
NOTE_BYTES = 64_000  # the note is a few lines
# what a restore may write beside the home for a file of N bytes: ROOM_BASE (an empty database, the checking one)
# and ROOM_FACTOR * N. Measured with bench_backup, the data folder grew by 4.3 times the file (27.6 MB, a 79 MB
# database, 10,078 shares) and 6.1 times (11.2 MB, 45 MB, 2,000 shares), the write-ahead log included
ROOM_FACTOR = 8
ROOM_BASE = 64_000_000


def sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".json")


@contextmanager
def private_copy(path: Path) -> Iterator[Path]:
    """``path`` (and its note, when it has one) copied into a new folder of the temporary folder (``TMPDIR``) that
    only this user reads; removed afterwards. An error that names the copy names ``path`` instead."""
    folder = Path(tempfile.mkdtemp(prefix="paperping-restore-"))
    copy = folder / (path.name or "backup.dump")
    try:
        _copy_once(path, copy)
        _copy_once(sidecar(path), sidecar(copy), limit=NOTE_BYTES + 1, missing_ok=True)
        try:
            yield copy
        except (InputError, DatabaseError) as exc:
            said = str(exc).replace(str(copy), str(path))
            raise type(exc)(said) from exc
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _copy_once(source: Path, dest: Path, *, limit: int | None = None, missing_ok: bool = False) -> None:
    try:
        fd = os.open(source, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO in a file's place does not block the open
    except (FileNotFoundError, NotADirectoryError):
        if missing_ok:
            return
        raise InputError(f"no backup file at {source}") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        if missing_ok:
            return
        raise InputError(f"no backup file at {source} (it is not a regular file)")
    with os.fdopen(fd, "rb") as src:
        try:
            with os.fdopen(os.open(dest, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as out:
                if limit is None:
                    shutil.copyfileobj(src, out, 1 << 20)
                else:
                    out.write(src.read(limit))
        except OSError as exc:
            raise InputError(
                f"{source} could not be copied into {dest.parent}, where a restore reads it ({exc}): nothing was "
                "restored. Set TMPDIR to a folder with room for the file, and restore again"
            ) from exc


def read_note(path: Path) -> dict[str, Any] | None:
    """``FILE.json`` as written by ``paperping backup``; one that is not says so (``InputError``)."""
    if not sidecar(path).is_file():
        return None
    try:
        if sidecar(path).stat().st_size > NOTE_BYTES:
            raise ValueError("it is too large")
        noted = json.loads(sidecar(path).read_text(encoding="utf-8"))
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        raise InputError(f"{sidecar(path)} is not the note `paperping backup` writes ({exc}); move it away") from exc
    if not isinstance(noted, dict) or not isinstance(noted.get("size"), int):
        raise InputError(f"{sidecar(path)} is not the note `paperping backup` writes; move it away")
    if noted.get("sha256") is not None and not isinstance(noted["sha256"], str):
        raise InputError(f"{sidecar(path)} is not the note `paperping backup` writes; move it away")
    return noted


def free_bytes(folder: Path) -> int:
    """The bytes this user may still write on the filesystem that holds ``folder``."""
    return shutil.disk_usage(folder).free


def check_space(copy: Path, data: Path | None, free: FreeBytes = free_bytes) -> None:
    """Refuse (``InputError``) a restore of ``copy`` into a server whose data folder ``data`` has less room free
    than the restore may write; ``None``: a server elsewhere (``DATABASE_URL``), whose disk is not measured here."""
    if data is None:
        return
    size = copy.stat().st_size
    need, have = ROOM_BASE + ROOM_FACTOR * size, free(data)
    if have < need:
        raise InputError(
            f"nothing was restored: {copy} ({size / 1e6:,.1f} MB) needs about {need / 1e6:,.0f} MB free beside the "
            f"home ({ROOM_FACTOR} times the file and {ROOM_BASE / 1e6:.0f} MB), and the disk of {data} has "
            f"{have / 1e6:,.0f} MB free. The home is as it was: free space on that disk, then restore again"
        )
