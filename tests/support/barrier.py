"""A start line for test worker processes: each one, once loaded, waits here until all have arrived, so that a
process that starts late on a loaded machine does not find the work already done by the others."""

from __future__ import annotations

import os
import time
from pathlib import Path


def meet(place: Path, everyone: int, seconds: float = 300.0) -> None:
    """Say this process is ready (a file in ``place``) and wait until ``everyone`` processes are."""
    place.mkdir(parents=True, exist_ok=True)
    (place / str(os.getpid())).touch()
    deadline = time.monotonic() + seconds
    while sum(1 for _ in place.iterdir()) < everyone:
        if time.monotonic() > deadline:
            raise SystemExit(f"only {sum(1 for _ in place.iterdir())} of {everyone} workers started")
        time.sleep(0.05)
