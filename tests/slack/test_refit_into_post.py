"""A channel followed from the service's weekly refit into its next post: the worker's refit chore (as ``paperping
run`` wires it) keeps the default blend for a channel with too few shares to judge on and learns the direction that
orders the blend's first papers; the next slot posts the first paper of that order (not the blend's own first),
through the real slack_sdk into a Slack stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.recommender.rank.refit import load_fit
from socialrag.recommender.serve.service import Recommender
from tests.support.labbase import CachedEmbedder, build_lab
from tests.support.multiworker import T, add_shared_channel
from tests.support.slack_standin import SlackStandIn, SlackState
from tests.support.slots import slot_worker

pytestmark = pytest.mark.slow

CHANNEL = "CREAD"
NOW = datetime(2021, 1, 15, 9, tzinfo=UTC)  # the lab's catalog came out in July 2020
SHARES = 12  # enough picks for a direction (8), too few shares for the judge to weigh a fit against the blend


def reading_channel(db: Database, lab: dict[str, Any]) -> list[int]:
    """#reading: a member shared one of the lab's catalog papers a day for twelve days, each liked by another."""
    ids = lab["ids"]
    shared = [ids[acl] for acl in lab["others"][40 : 40 + SHARES]]
    at = [NOW - timedelta(days=SHARES - k, hours=2) for k in range(SHARES)]
    shares = [(paper, day, day + timedelta(hours=1)) for paper, day in zip(shared, at, strict=True)]
    with db.connection() as conn:  # not due at the first tick: that one only refits
        add_shared_channel(conn, CHANNEL, "reading", shares, style="template", next_post_at=NOW + timedelta(days=1))
    return shared


@pytest.fixture
def service(db: Database, tmp_path: Path) -> Iterator[dict[str, Any]]:
    lab = build_lab(db, tmp_path, CachedEmbedder())
    reading_channel(db, lab)
    slack = SlackStandIn(SlackState(channels={CHANNEL: {"id": CHANNEL, "name": "reading"}})).start()
    recommender = Recommender(Settings(home=tmp_path, offline=True), db, embedder=CachedEmbedder())
    yield {"slack": slack, "recommender": recommender}
    recommender.close()
    slack.stop()


def test_a_refit_that_keeps_the_blend_orders_the_next_post(db: Database, service: dict[str, Any]) -> None:
    slack, recommender = service["slack"], service["recommender"]
    clock = [NOW]
    client = WebClient(token="xoxb-test", base_url=slack.url, retry_handlers=[])
    worker = slot_worker(db, lambda team: client, recommender, chores=(recommender.refit_due,), clock=lambda: clock[0])

    # the first tick: nothing is due, and the refit chore learns the channel
    assert worker.tick() == 0 and not slack.posts
    with db.connection() as conn:
        fit = load_fit(conn, T, CHANNEL, as_of=NOW)
    assert fit.fitted_at == NOW and fit.is_default_blend, fit.decision
    assert fit.decision.startswith("kept the default blend"), fit.decision
    assert fit.orders_shortlist and fit.taste is not None

    # what serving would post now: the blend's first papers in the direction's order (a score it moved says so)
    clock[0] = NOW + timedelta(days=1, minutes=1)
    expected = recommender.recommend(T, CHANNEL, at=clock[0], style="template", top=50)
    assert any("taste" in c.parts for c in expected.candidates), "the direction moved some of the first papers"
    assert expected.draft is not None
    # the same blend without the direction, for a moment, would post another paper
    later = NOW + timedelta(hours=1)
    with db.connection() as conn:
        storage.rankers.save_fit(conn, T, CHANNEL, later, {**fit.to_json(), "shortlist": False}, fit.shares, fit.pairs)
    blend_alone = recommender.recommend(T, CHANNEL, at=clock[0], style="template", top=50)
    with db.connection() as conn:
        conn.execute("DELETE FROM channel_rankers WHERE channel_id = %s AND fitted_at = %s", (CHANNEL, later))
    assert blend_alone.draft is not None and blend_alone.draft.paper.paper_id != expected.draft.paper.paper_id

    # the slot: the same paper is posted, through slack_sdk into the stand-in
    assert worker.tick() == 1
    (post,) = slack.posts
    assert post["channel"] == CHANNEL
    assert post["metadata"]["event_payload"]["paper_id"] == expected.draft.paper.paper_id
    with db.connection() as conn:  # after the post's tick, the fit in force still orders the shortlist
        assert load_fit(conn, T, CHANNEL).orders_shortlist
