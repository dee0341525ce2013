"""What a backup killed outright (SIGKILL, a power cut) leaves beside its file: ``.NAME.partial-PID`` and
``.NAME.json.partial-PID``, named by the process that wrote them. The next backup to the same name removes those
of processes that no longer run; a backup still running elsewhere keeps its own."""

from __future__ import annotations

import os
import re
from pathlib import Path


def dead_partials(dest: Path) -> list[Path]:
    """The half-written files of earlier backups to ``dest`` whose process has ended."""
    pattern = re.compile(rf"\.{re.escape(dest.name)}(?:\.json)?\.partial-(\d{{1,10}})")
    found = []
    for path in dest.parent.glob(f".{dest.name}*.partial-*"):
        m = pattern.fullmatch(path.name)
        if m and int(m.group(1)) != os.getpid() and not _running(int(m.group(1))):
            found.append(path)
    return found


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError, ValueError):  # another user's process, or no pid this system has
        return True
    return True
