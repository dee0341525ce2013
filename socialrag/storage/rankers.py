"""Rows of ``channel_rankers`` (every fit of each channel's calibrated ranker, with its date) and the popularity
readings and paper pool a refit reads. Fitting itself is ``socialrag.recommender.rank.refit``."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

import numpy as np
import psycopg
from psycopg.types.json import Jsonb

from socialrag.rows import PaperArrays, Readings
from socialrag.storage.context_rows import id_array

POOL_SIZE = 8000  # catalog papers a refit samples its passed-over papers from
REFIT_AFTER = timedelta(days=7)


class StoredFit(NamedTuple):
    """One stored fit as it is kept: the model's JSON, how many shares and pairs it learnt from, and when."""

    model: dict[str, Any]
    shares: int
    pairs: int
    fitted_at: datetime


_READING = np.dtype([("paper", ">i8"), ("at", ">f8"), ("value", ">f8")])  # one reading as ``load_readings`` packs it


def load_readings(conn: psycopg.Connection, paper_ids: Sequence[int]) -> Readings:
    """Every popularity reading of these papers, in no particular order."""
    # packed by Postgres into one binary string of 24-byte records: no Python object per reading (a refit reads a
    # hundred thousand), and no sort (the universe sorts them)
    row = conn.execute(
        """
        SELECT string_agg(int8send(paper_id) || float8send(extract(epoch FROM observed_at)::float8)
                          || float8send(value), ''::bytea)
          FROM paper_popularity WHERE paper_id = ANY(%(ids)s::bigint[])
        """,
        {"ids": id_array(paper_ids)},
        binary=True,
    ).fetchone()
    packed = np.frombuffer(row[0] if row is not None and row[0] is not None else b"", dtype=_READING)
    return Readings(
        packed["paper"].astype(np.int64), packed["at"].astype(np.float64), packed["value"].astype(np.float64)
    )


# one paper, and one authorship, as ``load_paper_arrays`` packs them
_PAPER = np.dtype([("id", ">i8"), ("venue", ">i8"), ("year", ">i4"), ("date", ">f8"), ("precision", ">i4")])
_AUTHORSHIP = np.dtype([("paper", ">i8"), ("position", ">i4"), ("author", ">i8")])


def load_paper_arrays(conn: psycopg.Connection, paper_ids: Sequence[int]) -> PaperArrays:
    """What a ranking reads of these papers (their venue, year, date and how far it is known, and their
    authors), as arrays in order of paper id: a refit reads ten thousand papers and makes no object per paper."""
    # each packed by Postgres into one binary string of fixed-size records, put in order here
    row = conn.execute(
        """
        SELECT (SELECT string_agg(int8send(id) || int8send(coalesce(venue_id, -1)) || int4send(coalesce(year, 0))
                       || float8send(coalesce(extract(epoch FROM publication_date)::float8, 'NaN'::float8))
                       || int4send(CASE date_precision WHEN 'month' THEN 1 WHEN 'year' THEN 2 ELSE 0 END), ''::bytea)
                  FROM papers WHERE id = ANY(%(ids)s::bigint[])),
               (SELECT string_agg(int8send(paper_id) || int4send(position) || int8send(author_id), ''::bytea)
                  FROM paper_authors WHERE paper_id = ANY(%(ids)s::bigint[]))
        """,
        {"ids": id_array(paper_ids)},
        binary=True,
    ).fetchone()
    papers_raw, authors_raw = row if row is not None else (None, None)
    papers = np.frombuffer(papers_raw or b"", dtype=_PAPER)
    papers = papers[np.argsort(papers["id"], kind="stable")]
    authors = np.frombuffer(authors_raw or b"", dtype=_AUTHORSHIP)
    authors = authors[np.lexsort((authors["position"], authors["paper"]))]
    return PaperArrays(
        papers["id"].astype(np.int64),
        papers["venue"].astype(np.int64),
        papers["year"].astype(np.int64),
        papers["date"].astype(np.float64),
        papers["precision"].astype(np.int64),
        authors["paper"].astype(np.int64),
        authors["author"].astype(np.int64),
    )


def sample_pool(conn: psycopg.Connection, model: str, since: datetime, limit: int = POOL_SIZE) -> list[int]:
    """Up to ``limit`` papers with a vector published since ``since``, at random (the papers a channel could
    have been offered and was not)."""
    rows = conn.execute(
        """
        SELECT p.id FROM papers p JOIN paper_embeddings e ON e.paper_id = p.id AND e.model = %(m)s
         WHERE p.available_on >= %(since)s ORDER BY random() LIMIT %(n)s
        """,
        {"m": model, "since": since.astimezone(UTC).date(), "n": limit},  # a day as the replay has it
    ).fetchall()
    return [r[0] for r in rows]


def save_fit(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    fitted_at: datetime,
    model: dict[str, Any],
    shares: int,
    pairs: int,
) -> None:
    conn.execute(
        """
        INSERT INTO channel_rankers (team_id, channel_id, fitted_at, model, shares, pairs)
        VALUES (%(t)s, %(c)s, %(at)s, %(m)s, %(s)s, %(p)s)
        """,
        {"t": team_id, "c": channel_id, "at": fitted_at, "m": Jsonb(model), "s": shares, "p": pairs},
    )


def load_fits(
    conn: psycopg.Connection, team_id: str, channel_id: str, *, as_of: datetime | None = None, limit: int = 1
) -> list[StoredFit]:
    """The channel's latest fits (made at or before ``as_of`` when given), newest first."""
    rows = conn.execute(
        """
        SELECT model, shares, pairs, fitted_at FROM channel_rankers
         WHERE team_id = %(t)s AND channel_id = %(c)s AND (%(as_of)s::timestamptz IS NULL OR fitted_at <= %(as_of)s)
         ORDER BY fitted_at DESC, id DESC LIMIT %(n)s
        """,
        {"t": team_id, "c": channel_id, "as_of": as_of, "n": limit},
    ).fetchall()
    return [StoredFit(*r) for r in rows]


def channels_to_refit(
    conn: psycopg.Connection,
    now: datetime,
    limit: int = 20,
    *,
    skip: Sequence[tuple[str, str]] = (),
    only: tuple[str, str] | None = None,
) -> list[tuple[str, str]]:
    """Channels whose fit is older than a week, or older than feedback they got since (a new share, a
    reaction or a reply), oldest first, leaving out those ``skip`` names and those PaperPing was removed from.
    A channel never fitted comes first. With ``only``, that channel if it is due."""
    rows = conn.execute(
        """
        WITH latest AS (
            SELECT DISTINCT ON (team_id, channel_id) team_id, channel_id, fitted_at FROM channel_rankers
             ORDER BY team_id, channel_id, fitted_at DESC)
        SELECT c.team_id, c.channel_id, l.fitted_at FROM channels c
          LEFT JOIN latest l ON (l.team_id, l.channel_id) = (c.team_id, c.channel_id)
         WHERE EXISTS (SELECT 1 FROM message_papers mp WHERE (mp.team_id, mp.channel_id) = (c.team_id, c.channel_id))
           AND NOT EXISTS (SELECT 1 FROM channel_settings s
                            WHERE (s.team_id, s.channel_id) = (c.team_id, c.channel_id) AND NOT s.active)
           AND NOT (c.team_id || '/' || c.channel_id) = ANY(%(skip)s::text[])
           AND (%(only)s::text IS NULL OR c.team_id || '/' || c.channel_id = %(only)s)
           AND (l.fitted_at IS NULL OR l.fitted_at < %(stale)s
                OR EXISTS (SELECT 1 FROM messages m WHERE (m.team_id, m.channel_id) = (c.team_id, c.channel_id)
                              AND m.posted_at > l.fitted_at + interval '1 hour')
                OR EXISTS (SELECT 1 FROM reactions r WHERE (r.team_id, r.channel_id) = (c.team_id, c.channel_id)
                              AND r.reacted_at > l.fitted_at + interval '1 hour'))
         ORDER BY l.fitted_at NULLS FIRST LIMIT %(n)s
        """,
        {
            "stale": now - REFIT_AFTER,
            "n": limit,
            "skip": [f"{t}/{c}" for t, c in skip],
            "only": f"{only[0]}/{only[1]}" if only else None,
        },
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def lock_refit(conn: psycopg.Connection, team_id: str, channel_id: str) -> bool:
    """Take the channel's refit for the rest of this transaction (False: another process holds it)."""
    key = f"refit:{team_id}/{channel_id}"
    got = conn.execute("SELECT pg_try_advisory_xact_lock(hashtextextended(%(k)s, 0))", {"k": key}).fetchone()
    return bool(got and got[0])
