"""Progress on long work: a bar with the rate and the time left when it runs in a terminal, and a line of log
every few seconds otherwise (a container's log, a CI job)."""

from __future__ import annotations

import logging
import sys
import time
from collections.abc import Callable
from types import TracebackType
from typing import IO

from tqdm import tqdm

log = logging.getLogger("paperping.progress")


def _duration(seconds: float) -> str:
    if seconds < 90:
        return f"{seconds:.0f} s"
    if seconds < 5400:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"


class Progress:
    """``with Progress(total, "embedding", "paper") as p: ... p.update(n)``."""

    def __init__(
        self,
        total: int | None,
        what: str,
        unit: str,
        *,
        every: float = 5.0,
        stream: IO[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
        emit: Callable[[str], None] | None = None,
    ) -> None:
        self.total, self.what, self.unit, self.every, self.clock = total, what, unit, every, clock
        self.done = 0
        self.started = self.last = clock()
        stream = stream or sys.stderr
        self.emit = emit or (lambda line: log.info("%s", line))
        self.bar = tqdm(total=total, desc=what, unit=unit, leave=False, file=stream) if stream.isatty() else None

    def line(self, final: bool = False) -> str:
        elapsed = max(1e-9, self.clock() - self.started)
        rate = self.done / elapsed
        of = f" of {self.total:,}" if self.total else ""
        text = f"{self.what}: {self.done:,}{of} {self.unit}s ({rate:.1f}/s"
        if self.total and rate > 0 and self.done < self.total and not final:
            text += f", about {_duration((self.total - self.done) / rate)} left"
        return text + ")"

    def update(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
        elif self.clock() - self.last >= self.every:
            self.last = self.clock()
            self.emit(self.line())

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
        elif self.done and self.clock() - self.started >= self.every:
            self.emit("done: " + self.line(final=True))

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.close()
