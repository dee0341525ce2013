"""Private channels stay private: a channel's member list is what Slack says now, not every member PaperPing ever
saw there. Through signed events into the real bolt app and the Slack stand-in."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

from socialrag import storage
from socialrag.db import Database
from tests.support.harness import Harness, T
from tests.support.members import members_of, wait_until


def home_of(harness: Harness, user: str) -> str:
    harness.standin.views.pop(user, None)
    harness.event({"type": "app_home_opened", "user": user, "channel": "D1", "tab": "home", "event_ts": "9.0"})
    wait_until(lambda: user in harness.standin.views)
    return json.dumps(harness.standin.views[user])


def test_a_member_who_left_while_paperping_was_out_is_not_shown_the_private_channel(
    harness: Harness, db: Database
) -> None:
    """PaperPing is removed from a private channel; a member leaves meanwhile (no event reaches PaperPing); it is
    invited back. The member who left is no member any more: their App Home does not name the channel. Before,
    membership was only ever added, and the member still saw the channel and its reading list."""
    standin = harness.standin
    standin.state.channels["G1"] = {
        "id": "G1",
        "name": "secret-lab",
        "is_private": True,
        "members": ["U1", "U2", "UBOT"],
    }
    standin.state.messages["G1"] = []
    join = {"type": "member_joined_channel", "user": "UBOT", "channel": "G1", "team": T, "channel_type": "G"}
    harness.event({**join, "event_ts": "1.0"})
    wait_until(lambda: members_of(db, "G1") >= {"U1", "U2"})
    assert "secret-lab" in home_of(harness, "U2")

    harness.event({"type": "group_left", "channel": "G1", "event_ts": "2.0"})
    standin.state.channels["G1"]["members"] = ["U1", "UBOT"]  # U2 left; PaperPing was not there to hear it
    harness.event({**join, "event_ts": "3.0"})  # invited back
    wait_until(lambda: "U2" not in members_of(db, "G1"))
    assert "secret-lab" not in home_of(harness, "U2")
    assert "secret-lab" in home_of(harness, "U1")


def test_a_list_older_than_a_day_is_read_again_before_anything_reaches_a_member_in_private(
    harness: Harness, db: Database
) -> None:
    """The member_left_channel event was lost and PaperPing stayed in: a day on, the list is read again before the
    member's App Home is built; a list Slack will not give is not trusted at all."""
    standin = harness.standin
    standin.state.channels["G2"] = {
        "id": "G2",
        "name": "quiet-group",
        "is_private": True,
        "members": ["U1", "U3", "UBOT"],
    }
    standin.state.messages["G2"] = []
    harness.event({"type": "member_joined_channel", "user": "UBOT", "channel": "G2", "team": T, "event_ts": "1.0"})
    wait_until(lambda: members_of(db, "G2") >= {"U1", "U3"})
    standin.state.channels["G2"]["members"] = ["U1", "UBOT"]  # U3 left; the event never came
    assert "quiet-group" in home_of(harness, "U3"), "within a day the list read at the join stands"
    with db.connection() as conn:
        conn.execute(
            "UPDATE channels SET members_read_at = %s WHERE channel_id = 'G2'", (datetime.now(UTC) - timedelta(days=2),)
        )
    assert "quiet-group" not in home_of(harness, "U3")
    assert "U3" not in members_of(db, "G2")
    # Slack cannot be asked (the channel is gone from the stand-in): the stale list is not trusted
    with db.connection() as conn:
        conn.execute(
            "UPDATE channels SET members_read_at = %s WHERE channel_id = 'G2'", (datetime.now(UTC) - timedelta(days=2),)
        )
        storage.workspaces.add_channel_member(conn, T, "G2", "U1")
    del standin.state.channels["G2"]
    assert "quiet-group" not in home_of(harness, "U1")


def test_the_hourly_sweep_replaces_lists_older_than_a_day(harness: Harness, db: Database) -> None:
    from slack_sdk import WebClient

    from bot.slack.members import refresh_stale_lists

    standin = harness.standin
    harness.event({"type": "member_joined_channel", "user": "UBOT", "channel": "C1", "team": T, "event_ts": "1.0"})
    wait_until(lambda: "U3" in members_of(db, "C1"))
    standin.state.channels["C1"]["members"] = ["U1", "U2", "UBOT"]
    client = WebClient(token="x", base_url=standin.url)
    now = datetime.now(UTC)
    assert refresh_stale_lists(db, harness.ctx.pacer.call, lambda team: client, now) == 0, "read within the day"
    assert refresh_stale_lists(db, harness.ctx.pacer.call, lambda team: client, now + timedelta(days=2)) == 1
    assert members_of(db, "C1") == {"U1", "U2", "UBOT"}


def test_status_names_a_failing_source_without_what_another_workspace_asked_it(harness: Harness, db: Database) -> None:
    """Crossref refuses the lookups of a paper shared in another workspace's private channel, its answer echoing
    the DOI asked for. `status` anywhere says Crossref is held and why in a word (HTTP 400), never the words of the
    answer: they are another workspace's question."""
    import httpx

    from socialrag.knowledge.intake import index_messages
    from socialrag.knowledge.links import find_paper_refs
    from socialrag.knowledge.papers.crossref import Crossref
    from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
    from socialrag.models import Channel, Message
    from tests.support.labbase import CachedEmbedder

    secret = "10.5555/their-unpublished-result"

    def refuse(request: httpx.Request) -> httpx.Response:
        return httpx.Response(400, text=f'{{"status":"failed","message":"no work for DOI {secret} in this route"}}')

    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, "T0OTHER", domain="other")
        storage.workspaces.upsert_channel(conn, Channel("T0OTHER", "G7", "their-secret-lab"))
        shared = Message("T0OTHER", "G7", "1.0", "U9", f"https://doi.org/{secret}", datetime.now(UTC),
                         papers=find_paper_refs(f"https://doi.org/{secret}"))  # fmt: skip
        index_messages(conn, [shared])
    crossref = Crossref("https://api.crossref.org/", transport=httpx.MockTransport(refuse), min_interval=0.0)
    indexer = Indexer(db, CachedEmbedder(), [crossref], IndexerConfig(first_wait=timedelta(seconds=0)))
    clock = [datetime.now(UTC) + timedelta(seconds=1)]
    indexer.clock = lambda: clock[0]
    for _ in range(3):
        indexer.run_batch()
        clock[0] += timedelta(seconds=5)
    with db.connection() as conn:
        (failing,) = storage.source_pace.load_failing_sources(conn)
    assert failing.source == "crossref" and secret in (failing.last_error or ""), "the answer is kept for the admin"
    said = harness.command("status")
    assert "Crossref has failed 3 times in a row" in said and "HTTP 400" in said, said
    assert "their-unpublished-result" not in said and "no work for DOI" not in said, said
