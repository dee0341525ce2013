"""A backup file handed to ``paperping restore``: read once, with its note ``FILE.json``, into a folder only this
user reads (``private_copy``), so that the copy checked is the copy restored, whoever can still write the file;
and the note as ``paperping backup`` writes it (``read_note``)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from socialrag.errors import DatabaseError, InputError

NOTE_BYTES = 64_000  # the note is a few lines


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
