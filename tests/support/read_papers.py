"""Papers PaperPing has read, for the tests of what it does with a full text: the four real open-access papers of
``tests/data/fulltext/`` parsed as the readers parse them, shared in a channel and saved with their passages (as the
fetcher would save them), and hostile passages."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from functools import cache
from pathlib import Path

import psycopg

from socialrag import storage
from socialrag.knowledge import index_messages
from socialrag.knowledge.fulltext import parse_fulltext, passages
from socialrag.models import Channel, Member, Message, Paper, PaperRef

DATA = Path(__file__).resolve().parents[1] / "data" / "fulltext"
# file, kind, DOI
REAL = {
    "rvf": ("pntd.0002065.nxml", "jats", "10.1371/journal.pntd.0002065"),
    "mmppox": ("pone.0046493.nxml", "jats", "10.1371/journal.pone.0046493"),
    "lysis": ("1471-2180-11-174.nxml", "jats", "10.1186/1471-2180-11-174"),
    "fes": ("jner-13-2016-de-marchis.pdf", "pdf", "10.1186/s12984-016-0129-6"),
}


MEMBERS = {"U1": "amara", "U2": "ben", "U3": "chen"}


def open_channel(conn: psycopg.Connection, where: tuple[str, str], name: str = "reading") -> None:
    """The workspace, its three members and the channel they are in."""
    team, channel = where
    storage.workspaces.upsert_team(conn, team, "Lab")
    storage.workspaces.upsert_members(conn, [Member(team, uid, name) for uid, name in MEMBERS.items()])
    storage.workspaces.upsert_channel(conn, Channel(team, channel, name, tuple(MEMBERS)))


@cache
def read(key: str) -> tuple[str, tuple[tuple[str, str], ...], str | None]:
    """(title, passages as (section, text), licence) of one of the real papers."""
    name, kind, _ = REAL[key]
    paper = parse_fulltext((DATA / name).read_bytes(), kind)
    return paper.title or key, tuple((p.section, p.text) for p in passages(paper)), paper.licence


def share_paper(
    conn: psycopg.Connection,
    where: tuple[str, str],
    ts: str,
    at: datetime,
    doi: str,
    title: str,
    abstract: str | None,
    *,
    user: str = "U2",
    text: str = "",
) -> int:
    """A member's share of the paper with this DOI in channel ``where`` (team, channel, opened first); its paper
    id."""
    open_channel(conn, where)
    (pid,) = storage.papers.record_papers(conn, [Paper(ids={"doi": doi}, source="t", title=title, abstract=abstract)])
    ref = PaperRef("doi", doi, f"https://doi.org/{doi}")
    team, channel = where
    index_messages(conn, [Message(team, channel, ts, user, f"{text} <{ref.url}>".strip(), at, papers=(ref,))])
    return pid


def share_read(
    conn: psycopg.Connection,
    where: tuple[str, str],
    ts: str,
    at: datetime,
    key: str,
    *,
    abstract: str | None = None,
    user: str = "U2",
) -> int:
    """One of the real papers shared in the channel and read (its passages saved); its paper id."""
    title, pieces, licence = read(key)
    pid = share_paper(conn, where, ts, at, REAL[key][2], title, abstract, user=user)
    save_read(conn, pid, pieces, licence)
    return pid


def save_read(
    conn: psycopg.Connection, paper_id: int, pieces: Sequence[tuple[str, str]], licence: str | None = None
) -> None:
    storage.fulltext.save_fulltext(
        conn, paper_id, status="read", kind="jats", licence=licence, source_url="https://example.org/x", passages=pieces
    )
