"""The pace of each outside source shared by every process (whose turn is next, how long to hold off) and each
source's health as a whole (failures in a row, held until when)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

import psycopg


def reserve_turn(conn: psycopg.Connection, source: str, interval: float, within: float | None = None) -> float:
    """Take the next turn to call ``source`` (turns are ``interval`` seconds apart across all processes); returns
    the seconds to wait for it. With ``within``, a turn that would come later than that many seconds from now is
    not taken (the caller will not wait that long): the wait is returned, and the queue is left as it was, so that
    requests giving up never push the next one further back."""
    with conn.transaction():
        conn.execute(
            "INSERT INTO source_pace (source, next_at) VALUES (%(s)s, clock_timestamp()) ON CONFLICT DO NOTHING",
            {"s": source},
        )
        row = conn.execute(
            """
            SELECT greatest(extract(epoch FROM next_at - clock_timestamp()), 0) FROM source_pace
             WHERE source = %(s)s FOR UPDATE
            """,
            {"s": source},
        ).fetchone()
        wait = float(row[0]) if row and row[0] is not None else 0.0
        if within is not None and wait > within:
            return wait
        conn.execute(
            """
            UPDATE source_pace SET next_at = greatest(next_at, clock_timestamp()) + make_interval(secs => %(i)s)
             WHERE source = %(s)s
            """,
            {"s": source, "i": interval},
        )
    return wait


def hold_off(conn: psycopg.Connection, source: str, seconds: float) -> None:
    """The service asked every caller to wait (a 429 with ``Retry-After``): no process calls it before then."""
    conn.execute(
        """
        INSERT INTO source_pace AS s (source, next_at) VALUES (%(s)s, clock_timestamp() + make_interval(secs => %(w)s))
        ON CONFLICT (source) DO UPDATE
           SET next_at = GREATEST(s.next_at, clock_timestamp() + make_interval(secs => %(w)s))
        """,
        {"s": source, "w": seconds},
    )


HOLD_AFTER = 3  # failures in a row after which a source is held as a whole


@dataclass(frozen=True)
class SourceHealth:
    """A source failing again and again: since when, how often, the last error, and until when it is held."""

    source: str
    failures: int
    failing_since: datetime | None
    held_until: datetime | None
    last_error: str | None


def record_source_outcome(conn: psycopg.Connection, source: str, error: str | None, now: datetime) -> None:
    """A source answered (``error`` None: its failures are forgotten) or failed: one more in a row, and from the
    ``HOLD_AFTER``-th on it is held, two minutes doubling to an hour."""
    if error is None:
        conn.execute(
            """
            UPDATE source_pace SET failures = 0, failing_since = NULL, held_until = NULL, last_error = NULL
             WHERE source = %(s)s AND failures > 0
            """,
            {"s": source},
        )
        return
    conn.execute(
        """
        INSERT INTO source_pace AS p (source, failures, failing_since, last_error) VALUES (%(s)s, 1, %(now)s, %(e)s)
        ON CONFLICT (source) DO UPDATE
           SET failures = p.failures + 1, failing_since = COALESCE(p.failing_since, %(now)s), last_error = %(e)s,
               held_until = CASE WHEN p.failures + 1 >= %(after)s
                                 THEN %(now)s + LEAST(interval '1 hour',
                                                      interval '2 minutes' * power(2, p.failures + 1 - %(after)s))
                                 END
        """,
        {"s": source, "e": error[:300], "now": now, "after": HOLD_AFTER},
    )


def load_failing_sources(conn: psycopg.Connection) -> list[SourceHealth]:
    """The sources failing now (at least one failure in a row), the longest failing first."""
    rows = conn.execute(
        """
        SELECT source, failures, failing_since, held_until, last_error FROM source_pace
         WHERE failures > 0 ORDER BY failing_since, source
        """
    ).fetchall()
    return [SourceHealth(*r) for r in rows]


def skip_source(conn: psycopg.Connection, source: str, seconds: float, reason: str) -> None:
    """``source`` was too slow or unreachable: one more failure in a row, and held for ``seconds`` (the round)
    whatever the count, so that no slot or job after this one waits on it."""
    conn.execute(
        """
        INSERT INTO source_pace AS p (source, failures, failing_since, last_error, held_until)
        VALUES (%(s)s, 1, clock_timestamp(), %(e)s, clock_timestamp() + make_interval(secs => %(w)s))
        ON CONFLICT (source) DO UPDATE
           SET failures = p.failures + 1, failing_since = COALESCE(p.failing_since, clock_timestamp()),
               last_error = %(e)s,
               held_until = GREATEST(p.held_until, clock_timestamp() + make_interval(secs => %(w)s))
        """,
        {"s": source, "e": reason[:300], "w": seconds},
    )


def load_held_for(conn: psycopg.Connection, source: str) -> float:
    """Seconds until ``source`` may be asked again (0 when it is not held)."""
    row = conn.execute(
        "SELECT extract(epoch FROM held_until - clock_timestamp()) FROM source_pace WHERE source = %(s)s",
        {"s": source},
    ).fetchone()
    return max(0.0, float(row[0])) if row and row[0] is not None else 0.0
