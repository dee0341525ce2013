"""A post's explanation with the recommended paper's full text, on the ACL lab of ``tests/support/labbase.py`` and the
real Postgres: a line says which section meets what a member raised in a thread here last week, naming the member in
plain text (never notifying them), its section one the stored passages stand under; without a full text, or with
nothing in it that meets a recent thread, the explanation is today's; a paper without an abstract gets its gist from
its introduction's contribution sentences, in a post and in the context reply on a member's share."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from bot.views.post_blocks import build_blocks, build_fallback_text
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge import index_messages
from socialrag.models import Draft, Message, PaperRef, Style
from socialrag.recommender import Recommender, share_context
from tests.support.labbase import AS_OF, NEUBIG, SHARED, CachedEmbedder, build_lab, t
from tests.support.read_papers import save_read

ROOT = f"{t('2020-11-02'):.6f}"  # the weight-poisoning thread
REPLY = "Could rare trigger words survive fine-tuning on sentiment data like SST-2? <!channel>"
PASSAGES = [
    ("1 Introduction", "In this paper, we propose a hierarchical attention model for clinical notes."),
    ("4.3 Robustness", "Rare trigger words inserted in training data survive fine-tuning, as our attacks show."),
    ("6 Conclusion", "The model reads long notes."),
]


@pytest.fixture
def lab(db: Database, tmp_path: Path) -> dict[str, Any]:
    found = build_lab(db, tmp_path, CachedEmbedder())
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, "T0LAB", "C1", sources=["catalog"])
    return found


def draft(db: Database, style: Style = "template+tldr") -> Draft:
    with Recommender(Settings(home=Path("."), offline=True), db, embedder=CachedEmbedder()) as recommender:
        rec = recommender.recommend("T0LAB", "C1", at=AS_OF, style=style)
    assert rec.draft is not None
    return rec.draft


def reply(db: Database, user: str, text: str, days_before: int) -> None:
    at = AS_OF - timedelta(days=days_before)
    with db.connection() as conn:
        index_messages(conn, [Message("T0LAB", "C1", f"{at.timestamp():.6f}", user, text, at, thread_ts=ROOT)])


def test_a_section_that_meets_a_recent_thread_is_said_with_the_member_named(db: Database, lab: dict[str, Any]) -> None:
    before = draft(db)
    reply(db, "U3", REPLY, 3)
    assert draft(db).explanation == before.explanation, "no full text: today's explanation"
    with db.connection() as conn:
        save_read(conn, before.paper.paper_id, PASSAGES)
    after = draft(db)
    line = (
        "Its section *4.3 Robustness* speaks of “data survive fine-tuning” and “Rare trigger words”, which {@U3} "
        "raised on 12 Jan in the thread on “Weight Poisoning Attacks on Pretrained Models”."
    )
    assert after.explanation == f"{before.explanation}\n{line}"
    assert after.named["U3"] == "chen" and after.mentions == before.mentions, "the line notifies no one more"
    posted = json.dumps(build_blocks(after)) + build_fallback_text(after)
    # U3 is notified by h8 above: the section line names them in plain text, never as a mention of its own
    assert "which chen raised on 12 Jan" in posted and "which <@U3>" not in posted and "<!channel>" not in posted
    assert before.explanation.count("{@U3}") == 1 and "<@U3>" in posted
    assert json.dumps(build_blocks(after)).count("<@U3>") == 1, "one mention: Slack notifies once, the line adds none"
    plain = build_fallback_text(replace(after, mentions=()))
    assert "which chen raised on 12 Jan" in plain and "<@U3>" not in plain
    # the `tldr` style says nothing of members; a reply of weeks ago is not "recent"
    assert "Its section" not in draft(db, "tldr").explanation
    with db.connection() as conn:
        conn.execute("DELETE FROM messages WHERE text = %s", (REPLY,))
    reply(db, "U3", REPLY, 40)
    assert draft(db).explanation == before.explanation
    # a member who turned mentions off is not named, and a channel that turned full text off gets today's line
    reply(db, "U4", REPLY, 2)
    assert draft(db).explanation == before.explanation
    reply(db, "U2", REPLY, 2)
    assert "which {@U2} raised" in draft(db).explanation
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, "T0LAB", "C1", fulltext=False)
    assert draft(db).explanation == before.explanation


def test_a_paper_without_an_abstract_gets_its_gist_from_its_introduction(db: Database, lab: dict[str, Any]) -> None:
    pid = draft(db).paper.paper_id
    with db.connection() as conn:
        conn.execute("UPDATE papers SET abstract = NULL, tldr = NULL WHERE id = %s", (pid,))
        save_read(conn, pid, PASSAGES)
    shown = draft(db)
    assert shown.paper.paper_id == pid
    assert shown.explanation.startswith("It proposes a hierarchical attention model for clinical notes.")
    assert shown.paper.summary == "It proposes a hierarchical attention model for clinical notes."


def test_a_share_of_a_paper_without_an_abstract_gets_its_gist_from_its_text(db: Database, lab: dict[str, Any]) -> None:
    acl = next(d["acl_id"] for d in lab["lines"] if NEUBIG in d["authors"] and d["acl_id"] not in SHARED.values())
    ts, ref = f"{AS_OF.timestamp():.6f}", PaperRef("acl", acl, f"https://aclanthology.org/{acl}/")
    with db.connection() as conn:
        conn.execute(
            "UPDATE papers SET abstract = 'Abstract not available.', tldr = NULL WHERE id = %s", (lab["ids"][acl],)
        )
        save_read(conn, lab["ids"][acl], PASSAGES)
        index_messages(conn, [Message("T0LAB", "C1", ts, "U3", f"<{ref.url}>", AS_OF, papers=(ref,))])
        found = share_context(conn, "all-MiniLM-L6-v2", "T0LAB", "C1", ts)
    assert not isinstance(found, str), found
    assert found.lines[0] == "Gist: It proposes a hierarchical attention model for clinical notes."
