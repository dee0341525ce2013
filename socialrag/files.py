"""Files PaperPing writes for its users: a new file written whole (``write_new``), and a user's file replaced only
once its new content is whole on disk (``replace_whole``), so that a full disk or a killed process keeps the last
one. A writer killed outright (SIGKILL, a power cut) leaves ``.NAME.partial-PID`` (and a backup also
``.NAME.json.partial-PID``) beside the file, named by its process; the next write to the same name removes those of
processes that no longer run (``dead_partials``), and keeps one a writer still running elsewhere is writing."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path


def write_new(path: Path, data: str | bytes, mode: int = 0o600) -> None:
    """Write ``data`` to the new file ``path`` (``mode``, less the umask; flushed to disk; never through a link that
    stands there)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode), "wb") as fh:
        fh.write(raw)
        fh.flush()
        os.fsync(fh.fileno())


def replace_whole(path: Path, data: str | bytes) -> None:
    """Put ``data`` at ``path`` through a file beside it that takes its place once written whole: the file there
    before stays as it was when anything fails. A link at ``path`` is followed (its target is replaced); a file
    replaced keeps its mode, a new one gets the umask's; a terminal or a pipe is written to."""
    try:
        st: os.stat_result | None = path.stat()
    except FileNotFoundError:
        st = None
    if st is not None and not (stat.S_ISREG(st.st_mode) or stat.S_ISDIR(st.st_mode)):
        with path.open("wb") as fh:  # a terminal or a pipe (``/dev/stdout``) has no file to keep: written as it is
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
        return
    path = Path(os.path.realpath(path))
    partial = path.with_name(f".{path.name}.partial-{os.getpid()}")
    for leftover in (partial, *dead_partials(path)):
        leftover.unlink(missing_ok=True)
    try:
        # made with the old file's mode (never wider, whatever the umask): its content is not readable meanwhile
        write_new(partial, data, stat.S_IMODE(st.st_mode) if st is not None else 0o666)
        if st is not None:
            os.chmod(partial, stat.S_IMODE(st.st_mode))
        os.replace(partial, path)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise


def dead_partials(dest: Path) -> list[Path]:
    """The half-written files of earlier writes to ``dest`` whose process has ended."""
    pattern = re.compile(rf"\.{re.escape(dest.name)}(?:\.json)?\.partial-(\d{{1,10}})")
    try:  # the names as they are (one with ``*`` or ``[`` is no glob pattern)
        with os.scandir(dest.parent) as entries:
            names = [entry.name for entry in entries]
    except OSError:  # a folder this user may write but not list, or none: nothing to look for there
        return []
    found = []
    for name in names:
        m = pattern.fullmatch(name)
        if m and int(m.group(1)) != os.getpid() and not _running(int(m.group(1))):
            found.append(dest.parent / name)
    return found


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):  # another user's process, or no pid this system has
        return True
    return True
