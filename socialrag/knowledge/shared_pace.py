"""The pace of each outside service kept in Postgres, so that every process of ``paperping run`` together
keeps Semantic Scholar's, arXiv's and Crossref's published rates (one turn each, in order)."""

from __future__ import annotations

import logging
import time

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError

log = logging.getLogger(__name__)


class DatabasePace:
    """``SharedPace`` over the ``source_pace`` table. If the database cannot be reached, each process falls
    back to keeping the pace by itself rather than stopping."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._last: dict[str, float] = {}

    def reserve(self, source: str, interval: float, within: float | None = None) -> float:
        """The seconds to wait for the next turn, taken; with ``within``, a turn further away than that is not
        taken (``reserve_turn``)."""
        try:
            with self.db.connection() as conn:
                return storage.source_pace.reserve_turn(conn, source, interval, within)
        except PaperPingError as exc:
            log.warning("shared pace of %s unavailable (%s); keeping it in this process", source, exc)
        now = time.monotonic()
        wait = max(0.0, self._last.get(source, -1e9) + interval - now)
        if within is None or wait <= within:
            self._last[source] = now + wait
        return wait

    def hold_off(self, source: str, seconds: float) -> None:
        try:
            with self.db.connection() as conn:
                storage.source_pace.hold_off(conn, source, seconds)
        except PaperPingError as exc:
            log.warning("could not share a wait for %s: %s", source, exc)

    def held_for(self, source: str) -> float:
        """Seconds ``source`` is still skipped or held for, by any process (0 when it may be asked)."""
        try:
            with self.db.connection() as conn:
                return storage.source_pace.load_held_for(conn, source)
        except PaperPingError as exc:
            log.warning("could not read whether %s is held: %s", source, exc)
            return 0.0

    def skip(self, source: str, seconds: float, reason: str) -> None:
        """Every process skips ``source`` for ``seconds``: it was too slow or could not be reached."""
        try:
            with self.db.connection() as conn:
                storage.source_pace.skip_source(conn, source, seconds, reason)
        except PaperPingError as exc:
            log.warning("could not share that %s is skipped: %s", source, exc)
