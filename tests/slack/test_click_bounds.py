"""The buttons on PaperPing's posts and digests, as an attacker would click them, through the real bolt app and
slack_sdk against the Slack stand-in: a button a post does not show counts nothing (the payload's ``block_id`` is
the clicking client's word), and a burst of clicks on one post updates it a bounded number of times."""

from __future__ import annotations

import json
import time
from datetime import datetime
from typing import Any
from urllib.parse import urlencode

from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import READING_LIST_EMOJI
from socialrag.models import Digest, Draft, NoPost, PaperMeta, Style
from tests.slack.test_feedback import NOW, click, labels, post_one, send
from tests.support.harness import Harness, T, count
from tests.support.slots import slot_worker

PAPERS = (("1706.03762", "Attention Is All You Need"), ("2005.14165", "Language Models are Few-Shot Learners"))


class DigestChooser:
    """A digest channel's slot gets a digest of the two papers (``kind``: weekly, or the first day's to rate)."""

    def __init__(self, drafts: tuple[Draft, ...], kind: str) -> None:
        self.drafts, self.kind = drafts, kind

    def draft_for_slot(self, team_id: str, channel_id: str, at: datetime, style: Style | None) -> Draft | NoPost:
        return NoPost("a digest channel")

    def digest_for_slot(self, team_id: str, channel_id: str, at: datetime, size: int) -> Digest | NoPost:
        return Digest(team_id, channel_id, self.drafts, self.kind)


def post_digest(harness: Harness, db: Database, kind: str = "weekly") -> tuple[dict[str, Any], list[int]]:
    """PaperPing posts a digest of two papers in #nlp-lab; returns the message and the papers' ids."""
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1", NOW)
    drafts = []
    with db.connection() as conn:
        ids = storage.papers.ensure_papers(conn, [("arxiv", a) for a, _ in PAPERS])
        storage.settings.upsert_channel_setting(
            conn, T, "C1", next_post_at=NOW, frequency="weekly-digest", digest_size=3
        )
    for arxiv, title in PAPERS:
        pid = ids[("arxiv", arxiv)]
        url = f"https://arxiv.org/abs/{arxiv}"
        paper = PaperMeta(pid, title, url, ("A. Author",), "NeurIPS", 2020, None, {"arxiv": arxiv})
        drafts.append(Draft(T, "C1", paper, "template", "It is close to what you read.", ()))
    worker = slot_worker(db, lambda team: client, DigestChooser(tuple(drafts), kind), clock=lambda: NOW)
    assert worker.tick() == 1
    (post,) = [p for p in harness.standin.posts if p.get("blocks")]
    rows = [int(b["block_id"].split(":")[1]) for b in post["blocks"] if b["type"] == "actions"]
    assert sorted(rows) == sorted(ids.values()), "one row of buttons a paper"
    return post, rows


def reading_list(db: Database) -> list[int]:
    with db.connection() as conn:
        saved, _ = storage.reading_list.load_reading_list(conn, T, "C1", READING_LIST_EMOJI, limit=10)
    return [s.paper_id for s in saved]


def test_a_digest_click_naming_no_paper_of_it_counts_nothing(harness: Harness, db: Database) -> None:
    """A click whose row named no paper was counted on the digest itself, which is kept as a share of every paper
    it lists: one forged *Save* put all of them on the reading list, and a *Relevant* counted for each."""
    post, papers = post_digest(harness, db)
    t0 = NOW.timestamp() + 60
    send(harness, click(harness, post, "U3", "save", t0))  # the row of a single post, on a digest
    assert "not one of this post's" in harness.standin.responses[-1]["text"]
    send(harness, click(harness, post, "U3", "relevant", t0 + 1))
    assert "not one of this post's" in harness.standin.responses[-1]["text"]
    assert count(db, "SELECT count(*) FROM reactions") == 0
    assert reading_list(db) == []
    # a row for a paper the digest does not list, one PaperPing knows
    with db.connection() as conn:
        other = storage.papers.ensure_papers(conn, [("arxiv", "1810.04805")])[("arxiv", "1810.04805")]
    send(harness, click(harness, post, "U3", "save", t0 + 2, paper=other))
    assert "not one of this post's" in harness.standin.responses[-1]["text"]
    assert count(db, "SELECT count(*) FROM reactions") == 0 and not harness.standin.updates
    # the digest's own rows count, each for its paper
    send(harness, click(harness, post, "U3", "save", t0 + 3, paper=papers[1]))
    assert reading_list(db) == [papers[1]]


def test_the_first_days_papers_to_rate_take_no_save(harness: Harness, db: Database) -> None:
    """The papers to rate show *Relevant* and *Not for us* only; a *Save* sent for one of them was stored."""
    post, papers = post_digest(harness, db, kind="onboarding")
    rows = [b for b in post["blocks"] if b["type"] == "actions"]
    assert all([e["action_id"] for e in b["elements"]] == ["feedback_relevant", "feedback_not_for_us"] for b in rows)
    send(harness, click(harness, post, "U3", "save", NOW.timestamp() + 60, paper=papers[0]))
    assert "not one of this post's" in harness.standin.responses[-1]["text"]
    assert count(db, "SELECT count(*) FROM reactions") == 0 and reading_list(db) == []
    send(harness, click(harness, post, "U3", "relevant", NOW.timestamp() + 61, paper=papers[0]))
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:relevant'") == 1


def test_a_single_posts_click_naming_a_paper_is_told_the_button_is_not_its(harness: Harness, db: Database) -> None:
    """A click on a single post whose row named a paper was told the post is no longer kept, which it is."""
    post = post_one(harness, db)
    pid = post["metadata"]["event_payload"]["paper_id"]
    send(harness, click(harness, post, "U3", "relevant", NOW.timestamp() + 60, paper=pid))
    said = harness.standin.responses[-1]["text"]
    assert "not one of this post's" in said and "no longer kept" not in said
    assert count(db, "SELECT count(*) FROM reactions") == 0


def test_a_burst_of_clicks_on_a_post_updates_it_twice_with_the_last_counts(harness: Harness, db: Database) -> None:
    """Each click updated the post itself: a burst of clicks while Slack asked to wait (429) held one of bolt's
    listener threads a click for as long, and sent Slack one chat.update a click once the wait was over. One
    update of a post runs at a time now; the clicks that came meanwhile are shown by one more, read afterwards."""
    post = post_one(harness, db)
    harness.standin.rate_limits["chat.update"] = 1
    harness.standin.retry_after = 2
    members = [f"U{n}" for n in range(10, 22)]
    t0 = NOW.timestamp() + 60
    for i, member in enumerate(members):
        payload = click(harness, post, member, "relevant", t0 + i)
        response = harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
        assert response.status_code == 200
    for _ in range(200):
        stored = count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:relevant'")
        if stored == len(members) and harness.standin.updates and labels(harness)[0] == f"Relevant · {len(members)}":
            break
        time.sleep(0.05)
    time.sleep(1.0)  # any update still to come
    assert labels(harness) == [f"Relevant · {len(members)}", "Not for us", "Save"]
    assert len(harness.standin.updates) <= 2, f"{len(harness.standin.updates)} updates for one burst"
    # a click after the burst updates the post again
    send(harness, click(harness, post, members[0], "relevant", t0 + 100))
    assert labels(harness) == [f"Relevant · {len(members) - 1}", "Not for us", "Save"]
