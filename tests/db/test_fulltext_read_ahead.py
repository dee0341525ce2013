"""A post's paper read before it goes out (``Recommender.read_now``, set by ``paperping run``): the slot's pick, never
looked for, is read at once from its host, so that the post names the section that meets a member's recent replies;
a channel that turned full text off asks no host; a host that fails leaves the post as it was, on time. On the ACL
lab of ``tests/support/labbase.py``, the real Postgres, and the hosts answering at the transport."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge import FullTextWorker, index_messages
from socialrag.models import Draft, Message
from socialrag.recommender import Recommender
from tests.support.fulltext_hosts import Answer, Web
from tests.support.labbase import AS_OF, CachedEmbedder, build_lab, t
from tests.support.pdfs import text_pdf
from tests.unit.test_fulltext_hosts import HOSTS, reader

ROOT = f"{t('2020-11-02'):.6f}"  # the weight-poisoning thread
REPLY = "Could rare trigger words survive fine-tuning on sentiment data like SST-2?"
PAGES = [
    [
        "A Study of Attacks",
        "1 Introduction",
        "In this paper, we propose a hierarchical attention model for clinical notes.",
    ],
    ["4.3 Robustness", "Rare trigger words inserted in training data survive fine-tuning, as our attacks show."],
    ["6 Conclusion", "The model reads long notes, and what it reads stays in what it learnt from them."],
]


@pytest.fixture
def lab(db: Database, tmp_path: Path) -> dict[str, Any]:
    found = build_lab(db, tmp_path, CachedEmbedder())
    at = AS_OF - timedelta(days=3)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, "T0LAB", "C1", sources=["catalog"], style="template+tldr")
        index_messages(conn, [Message("T0LAB", "C1", f"{at.timestamp():.6f}", "U3", REPLY, at, thread_ts=ROOT)])
    return found


def slot_draft(db: Database, web: Web | None) -> Draft:
    with Recommender(Settings(home=Path("."), offline=True), db, embedder=CachedEmbedder()) as recommender:
        if web is not None:
            recommender.read_now = FullTextWorker(db, recommender.embedder, reader(web)).read_now
        made = recommender.draft_for_slot("T0LAB", "C1", AS_OF, None)
    assert isinstance(made, Draft)
    return made


def acl_pdf(web: Web, draft: Draft, answer: Answer) -> str:
    url = f"{HOSTS.acl}{draft.paper.ids['acl']}.pdf"
    web.on(url, answer)
    return url


def test_the_pick_is_read_before_its_post_and_the_post_names_the_section(db: Database, lab: dict[str, Any]) -> None:
    before = slot_draft(db, None)
    assert "Its section" not in before.explanation
    web = Web()
    url = acl_pdf(web, before, Answer(200, text_pdf(PAGES), "application/pdf"))
    after = slot_draft(db, web)
    assert after.paper.paper_id == before.paper.paper_id and web.asked(url) == 1
    assert "Its section *4.3 Robustness* speaks of" in after.explanation and "which {@U3} raised" in after.explanation
    with db.connection() as conn:
        state = storage.fulltext.load_fulltext_state(conn, after.paper.paper_id)
    assert state is not None and state.status == "read" and state.source_url == url
    # read once: the next slot's pick of the same paper asks no host again
    slot_draft(db, web)
    assert web.asked(url) == 1


def test_a_channel_that_turned_full_text_off_asks_no_host(db: Database, lab: dict[str, Any]) -> None:
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, "T0LAB", "C1", fulltext=False)
    web = Web()
    made = slot_draft(db, web)
    assert not web.seen and "Its section" not in made.explanation


def test_a_failing_host_leaves_the_post_as_it_was(db: Database, lab: dict[str, Any]) -> None:
    before = slot_draft(db, None)
    web = Web()
    acl_pdf(web, before, Answer(500, b"down"))
    after = slot_draft(db, web)
    assert after.explanation == before.explanation and after.paper.paper_id == before.paper.paper_id
    with db.connection() as conn:
        state = storage.fulltext.load_fulltext_state(conn, after.paper.paper_id)
    assert state is not None and state.status == "none" and state.note
