"""A file read in a process of its own (``python -m <worker>``), so that what the parser does inside its C code,
where no budget reaches (a PDF's streams, an HTML start tag of countless attributes), is bounded by that process's
CPU seconds and memory and by a wall-clock deadline: the file on standard input, a JSON object on standard output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

from socialrag.knowledge.fulltext.model import FullTextError, TimeUp

CPU_SECONDS = 15  # CPU seconds, and memory, the reading process may use
MEMORY = 1_500_000_000


def limit(cpu_seconds: int, memory: int) -> None:
    """The reading process's own bounds, set by the worker before the file is read (where the platform has them)."""
    try:
        import resource

        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    except (ImportError, ValueError, OSError):  # the parent's deadline still holds
        pass


def reader_environment() -> dict[str, str]:
    """The environment of a reading process: where Python finds PaperPing's code (this process's own import path,
    its folders named in full: ``''`` or a relative one would be the current folder), and none of this process's
    settings. A parser a crafted file took over finds no Slack token, database address or API key to take."""
    return {"PYTHONPATH": os.pathsep.join(p for p in sys.path if os.path.isabs(p)), "PYTHONUTF8": "1"}


def run_apart(worker: str, args: list[str], data: bytes, most: float, seconds: float | None, what: str) -> Any:
    """The JSON ``worker`` answers for ``data`` within ``most`` seconds or the ``seconds`` the caller has left,
    whichever is shorter (``TimeUp`` when the caller's time is what ran out, or no process could be started;
    ``FullTextError`` when the file took ``most``, or the process's memory or CPU time)."""
    limit = most if seconds is None else max(min(seconds, most), 0.0)
    # -P: the current folder is not put first on its import path, as ``-m`` would (a planted ``pypdf.py``)
    command = [sys.executable, "-P", "-m", worker, *args, str(CPU_SECONDS), str(MEMORY)]
    try:
        done = subprocess.run(
            command, input=data, capture_output=True, timeout=limit, check=False, env=reader_environment()
        )
    except subprocess.TimeoutExpired:
        if limit < most:
            raise TimeUp(f"the time for this paper ran out while its {what} was read ({limit:.0f} s left)") from None
        raise FullTextError(f"the {what} took more than {most:g} s to read") from None
    except OSError as exc:  # the host's, not the file's: no process could be started (the interpreter, the memory)
        raise TimeUp(f"no process could be started to read the {what} ({type(exc).__name__}: {exc.strerror})") from None
    try:
        out = json.loads(done.stdout or b"{}")
    except ValueError:
        out = {}
    if not out:
        raise FullTextError(f"the {what} could not be read within the memory and time a file may take")
    return out
