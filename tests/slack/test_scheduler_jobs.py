"""`paperping run`'s scheduler after the process stood still (a laptop asleep, `docker compose pause`, a long
pause of the machine): each job that fell due meanwhile runs once when it wakes, neither skipped until its next
interval (an hour for the member sweep and the citations) nor run once for every tick it missed."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime, timedelta

from bot.cli.process import start_scheduler


class _Ticks:
    """A slot worker that only counts its ticks."""

    def __init__(self) -> None:
        self.stopping = threading.Event()
        self.ran: list[float] = []

    def tick(self) -> int:
        self.ran.append(time.monotonic())
        return 0


def _wait_for(check: object, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(0.05)
    return False


def test_ticks_missed_while_the_process_stood_still_run_once_when_it_wakes() -> None:
    ticks = _Ticks()
    scheduler = start_scheduler(ticks, 10)  # type: ignore[arg-type]
    try:
        assert _wait_for(lambda: len(ticks.ran) == 1, 5), "the first tick runs at start"
        scheduler.pause()  # the process stands still: nothing is run while it does
        # ...for a minute: seven ticks fell due, the last five seconds ago
        scheduler.modify_job("tick", next_run_time=datetime.now(UTC) - timedelta(seconds=65))
        scheduler.resume()
        assert _wait_for(lambda: len(ticks.ran) == 2, 3), "the tick due while it stood still runs when it wakes"
        time.sleep(1.0)
        assert len(ticks.ran) == 2, "once, not once for each tick it missed"
    finally:
        scheduler.shutdown(wait=False)
