"""The demo's full-text scene: a second channel of the demo's workspace, a fictional journal club that reads
open-access biology papers, where PaperPing has read two real papers' full text (PubMed Central's JATS files shipped
in ``data/fulltext/``, CC BY). It shows a post whose explanation names the section that meets what a member raised
in a thread, and a thread answer that quotes the passage holding the answer, with its section (no LLM: the passage
itself)."""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from bot.demo.extras import record_post, reset_posts
from bot.demo.outputs import TEAM
from bot.demo.slack_page import html_page
from bot.views.post_blocks import build_blocks, mrkdwn
from bot.views.replies import answer_blocks
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import (
    embed_pending,
    index_messages,
    parse_fulltext,
    passages,
    read_jats_front,
)
from socialrag.models import Channel, Member, Message, Paper, PaperRef
from socialrag.recommender import Answer, Recommender, answer_question

FULLTEXT = Path(__file__).resolve().parent / "data" / "fulltext"
CLUB, CLUB_NAME = "C0CLUB", "bio-journal-club"
MEMBERS = (("U21NADIA", "nadia"), ("U22TOMAS", "tomas"), ("U23LENA", "lena"))
POST_AT = datetime(2013, 3, 12, 9, 0, tzinfo=UTC)  # the club reads papers of early 2013
SHARED = "pone.0046493.nxml"  # shared by a member, with a thread
POSTED = "pntd.0002065.nxml"  # in the catalog, published two weeks before the post
QUESTION = "How many animals did they follow over time, and how often were they bled?"
FOOTER = "PaperPing demo: a fictional journal club reading two real open-access papers (PLOS, CC BY)."
Say = Callable[[str], None]
Render = Callable[[str], str]


def front_of(name: str) -> Paper:
    """The paper's metadata from its own JATS front matter: title, abstract, authors, journal, date, DOI, PMCID."""
    return read_jats_front((FULLTEXT / name).read_bytes(), source="demo")


def prepare_club(db: Database) -> dict[str, int]:
    """The club's channel, members, the two papers with their full text, a member's share and the thread after
    it; the paper ids by file. Running it again changes nothing."""
    at = POST_AT - timedelta(days=11)
    share = Message(
        TEAM, CLUB, f"{at.timestamp():.6f}", "U22TOMAS",
        "Lipase inhibitors slowing M. tuberculosis growth, for Thursday: <https://doi.org/10.1371/journal.pone.0046493>",
        at, reply_count=1, papers=(PaperRef("doi", "10.1371/journal.pone.0046493", "https://doi.org/10.1371/journal.pone.0046493"),),
    )  # fmt: skip
    reply = Message(
        TEAM, CLUB, f"{at.timestamp() + 86400 * 2:.6f}", "U21NADIA",
        "For the goat herd project we still need a plan: can an IgG ELISA stand in for the virus neutralization test, "
        "or do we need Vero cells for every sample?",
        at + timedelta(days=2), thread_ts=share.ts,
    )  # fmt: skip
    with db.connection() as conn:
        storage.workspaces.upsert_channel(conn, Channel(TEAM, CLUB, CLUB_NAME, tuple(m for m, _ in MEMBERS)))
        storage.workspaces.upsert_members(conn, [Member(TEAM, u, n) for u, n in MEMBERS])
        ids = {}
        for name, in_catalog in ((SHARED, False), (POSTED, True)):
            record = front_of(name)
            (ids[name],) = storage.papers.record_papers(conn, [record], in_catalog=in_catalog)
            paper = parse_fulltext((FULLTEXT / name).read_bytes(), "jats")
            storage.fulltext.save_fulltext(
                conn, ids[name], status="read", kind="jats", licence=paper.licence,
                source_url=f"https://pmc.ncbi.nlm.nih.gov/articles/{record.ids['pmcid']}/",
                passages=[(p.section, p.text) for p in passages(paper)],
            )  # fmt: skip
        index_messages(conn, [share, reply])
        storage.settings.upsert_channel_setting(conn, TEAM, CLUB, sources=["catalog"], style="template")
    reset_posts(db, CLUB)  # an earlier run's post
    return ids


def show_club(db: Database, recommender: Recommender, say: Say, render: Render) -> dict[str, Any]:
    """The scene: the club's post with its section line, and the answer to a question in its thread; the two
    pieces for the demo's pages (``fulltext-post``, ``fulltext-answer``), each (when, what it is, blocks)."""
    prepare_club(db)
    embed_pending(db, recommender.embedder)
    rec = recommender.recommend(TEAM, CLUB, at=POST_AT)
    if rec.draft is None:
        say(f"\n── #{CLUB_NAME}: nothing to post ({rec.empty_reason})")
        return {}
    draft = rec.draft
    ts = record_post(db, CLUB, "demo-club-1", draft, POST_AT)
    say(f"\n── #{CLUB_NAME}, a journal club whose papers PaperPing has read in full · {POST_AT:%a %d %b %Y} " + "─" * 4)
    for block in build_blocks(draft):
        if block["type"] == "section":
            for line in block["text"]["text"].splitlines():
                say("  " + render(line))
    asked_at = POST_AT + timedelta(hours=3)
    with db.connection() as conn:
        answer = _answer(conn, recommender, ts, asked_at)
    text = answer_blocks(answer) if isinstance(answer, Answer) else f"(no answer: {answer})"
    say(f"  In its thread, @lena asks @PaperPing: “{QUESTION}”")
    for line in text.splitlines():
        say("    " + render(line))
    return {
        "fulltext-post": (POST_AT, "", build_blocks(draft)),
        "fulltext-answer": (asked_at, " · in the thread of the post, @lena asked PaperPing", [
            {"type": "section", "text": mrkdwn(text)}]),
    }  # fmt: skip


def _answer(conn: Any, recommender: Recommender, ts: str, at: datetime) -> Answer | str:
    model = recommender.embedder.model_name
    return answer_question(conn, model, TEAM, CLUB, ts, QUESTION, None, at)


def write_club_pieces(out: Path, pieces: dict[str, Any], names: dict[str, str]) -> None:
    """The scene's pages (``pieces/fulltext-post.html``, ``pieces/fulltext-answer.html``) under the club's name."""
    folder = out / "pieces"
    folder.mkdir(parents=True, exist_ok=True)
    for name, piece in pieces.items():
        (folder / f"{name}.html").write_text(
            html_page([], names, {}, CLUB_NAME, [piece], footer=FOOTER), encoding="utf-8"
        )
