"""When the service relearns a channel's ranking (``paperping run``'s refit chore): the channels due
(``storage.rankers.channels_to_refit``), each refitted by one process at a time, and a channel whose refit
failed tried again an hour later rather than at every tick, out of the way of the others due. The chore runs in
the tick that posts: it starts no refit after ``REFIT_SECONDS``, so a post due meanwhile waits for a few refits at
most; the channels left are refitted at the next tick."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from datetime import datetime, timedelta

import psycopg

from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.storage.rankers import channels_to_refit, lock_refit

log = logging.getLogger(__name__)

RETRY_AFTER = timedelta(hours=1)  # a channel whose refit failed waits this long before the next try
REFIT_SECONDS = 60.0  # no refit starts after the chore has run this long in a tick

Refit = Callable[[psycopg.Connection, str, str], object]


class RefitSchedule:
    """One process's refits of the channels due. ``failed``: the channels whose refit failed, and when."""

    def __init__(
        self, db: Database, *, budget: float = REFIT_SECONDS, clock: Callable[[], float] = time.monotonic
    ) -> None:
        self.db, self.budget, self.clock = db, budget, clock
        self.failed: dict[tuple[str, str], datetime] = {}

    def run(self, refit: Refit, now: datetime, limit: int = 20) -> int:
        """Refit the channels due (``limit`` at most), each on a connection holding its claim; how many were."""
        self.failed = {key: at for key, at in self.failed.items() if at > now - RETRY_AFTER}
        with self.db.connection() as conn:
            due = channels_to_refit(conn, now, limit, skip=list(self.failed))
        done, started = 0, self.clock()
        for team_id, channel_id in due:
            if self.clock() - started > self.budget:
                log.info("refits: %.0f s spent; the other channels due wait for the next tick", self.budget)
                break
            try:
                with self.db.connection() as conn:
                    if not claim_refit(conn, team_id, channel_id, now):
                        continue  # another process refits it, or just did
                    refit(conn, team_id, channel_id)
                done += 1
            except PaperPingError as exc:  # one channel's failure leaves the others to be refitted
                self.failed[(team_id, channel_id)] = now
                log.warning("refitting %s/%s failed; it keeps its last fit: %s", team_id, channel_id, exc)
            except Exception:  # and so does one nobody foresaw (logged in full); the channel keeps its last fit
                self.failed[(team_id, channel_id)] = now
                log.exception("refitting %s/%s failed unexpectedly; it keeps its last fit", team_id, channel_id)
        return done


def claim_refit(conn: psycopg.Connection, team_id: str, channel_id: str, now: datetime) -> bool:
    """Take the channel's refit for this transaction (no other process refits it meanwhile), if it is still due:
    one that waited for another's refit finds the channel fitted."""
    return lock_refit(conn, team_id, channel_id) and bool(channels_to_refit(conn, now, 1, only=(team_id, channel_id)))
