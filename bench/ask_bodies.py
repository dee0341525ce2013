"""``bench_ask``'s body-only questions (issue 56): three real open-access papers (``tests/data/fulltext/``, PubMed
Central's JATS, CC BY; sources in ``tests/data/README.md``) shared in every history's channel, with their full text
read and embedded by passage as the service keeps it, and the thread questions written by hand about them
(``tests/data/fulltext/questions.json``, those the papers answer) asked of the channel's memory. A hit finds the
paper, though the answer is in its body, not its title or abstract."""

from __future__ import annotations

import json
from datetime import datetime
from functools import cache
from pathlib import Path
from typing import Any

FULLTEXT = Path(__file__).resolve().parents[1] / "tests" / "data" / "fulltext"
FILES = ("pntd.0002065.nxml", "pone.0046493.nxml", "1471-2180-11-174.nxml")
KIND = "body only"


@cache
def read(name: str) -> tuple[Any, list[tuple[str, str]]]:
    """The paper as its front matter says, and its passages (section, text), read once."""
    from socialrag.knowledge import parse_fulltext, passages, read_jats_front

    data = (FULLTEXT / name).read_bytes()
    return read_jats_front(data, source="bench"), [(p.section, p.text) for p in passages(parse_fulltext(data, "jats"))]


def add_papers(db: Any, team: str, channels: dict[str, tuple[str, str, datetime]], embedder: Any) -> dict[str, int]:
    """The papers, each shared in every channel (``channels``: id -> (member, when)) with its full text kept and
    its passages embedded, and the papers themselves embedded as the service embeds every paper; their paper ids
    by file."""
    from socialrag import storage
    from socialrag.knowledge import FullTextWorker, embed_pending, index_messages
    from socialrag.models import Message, PaperRef

    ids: dict[str, int] = {}
    with db.connection() as conn:
        for j, name in enumerate(FILES):
            paper, kept = read(name)
            (ids[name],) = storage.papers.record_papers(conn, [paper])
            storage.fulltext.save_fulltext(conn, ids[name], status="read", kind="jats", passages=kept)
            doi = paper.ids["doi"]
            ref = PaperRef("doi", doi, f"https://doi.org/{doi}")
            shares = [
                Message(
                    team,
                    cid,
                    f"{at.timestamp() + 10 * k + j:.6f}",
                    member,
                    f"<https://doi.org/{doi}>",
                    at,
                    papers=(ref,),
                )
                for k, (cid, (member, _, at)) in enumerate(channels.items())
            ]
            index_messages(conn, shares)
    embed_pending(db, embedder)
    FullTextWorker(db, embedder, None).embed_passages()  # the passages as the service's job embeds them
    return ids


def body_text(name: str) -> str:
    """The paper as a keyword search over full texts would index it: title, abstract and body."""
    paper, kept = read(name)
    return " ".join([paper.title or "", paper.abstract or "", " ".join(text for _, text in kept)])


def record_text(name: str) -> str:
    """The paper as a keyword search over records would index it: title, abstract, authors, journal, year."""
    paper, _ = read(name)
    names = " ".join(a.name for a in paper.authors)
    return " ".join([paper.title or "", paper.abstract or "", names, paper.venue or "", str(paper.year or "")])


def body_questions(ids: dict[str, int]) -> list[tuple[str, str, set[int]]]:
    """(kind, question, the paper that answers it) for every hand-written question one of the papers answers."""
    asked = json.loads((FULLTEXT / "questions.json").read_text())
    return [(KIND, q["question"], {ids[q["paper"]]}) for q in asked if q["evidence"] and q["paper"] in ids]
