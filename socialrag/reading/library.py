"""The channel's reading list read from the database as references (``references.Reference``)."""

from __future__ import annotations

from collections.abc import Collection

import psycopg

from socialrag import storage
from socialrag.knowledge.emoji import READING_LIST_EMOJI
from socialrag.reading.references import Reference
from socialrag.recommender.explain.generate import paper_url


def load_references(
    conn: psycopg.Connection,
    team_id: str,
    channel_id: str,
    leave_out: Collection[int] = (),
    *,
    newest: int | None = None,
) -> list[Reference]:
    """Every paper on the channel's list but those of ``leave_out`` (their metadata is not read), oldest save first,
    as the stored metadata knows it; with ``newest``, only that many, those saved last (the others are not read)."""
    ids = storage.reading_list.load_saved_ids(conn, team_id, channel_id, READING_LIST_EMOJI, newest=newest)
    return references(conn, [i for i in ids if i not in leave_out])


def references(conn: psycopg.Connection, paper_ids: list[int]) -> list[Reference]:
    infos = storage.context_rows.load_paper_infos(conn, paper_ids)
    identities = storage.papers.load_identities(conn, paper_ids)
    out = []
    for pid in paper_ids:
        info = infos.get(pid)
        ids = identities.get(pid, {})
        if info is None:
            continue
        title = info.title or paper_url(ids, info.url) or f"paper {pid}"
        authors = tuple(a.name for a in info.authors)
        out.append(Reference(pid, title, authors, info.year, info.venue, paper_url(ids, info.url) or None, ids))
    return out
