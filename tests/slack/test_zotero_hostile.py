"""The Zotero push against what a member or Zotero may send it: a group id written with leading zeros, a group the
operator's list gave to another workspace after a channel bound it, an answer of the wrong shape, a key the library
refuses (for one batch, and for weeks). Through the real bolt app and slack_sdk, and the Zotero stand-in."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from slack_sdk import WebClient

from bot.commands import run_command
from socialrag import storage
from socialrag.db import Database
from socialrag.reading.zotero import push_due
from tests.slack.test_zotero_pace import bind, save_many
from tests.support.harness import Harness, T
from tests.support.zotero_standin import ZoteroStandIn


def other_workspace(harness: Harness) -> WebClient:
    """Channel C7 of workspace T0B, with its member U9."""
    harness.standin.state.channels["C7"] = {"id": "C7", "name": "other-lab", "members": ["U9", "UBOT"]}
    harness.standin.state.users["U9"] = {"id": "U9", "team_id": "T0B", "name": "nina"}
    return WebClient(token="x", base_url=harness.standin.url)


def state(db: Database, group: str = "4242") -> tuple[int, str | None]:
    with db.connection() as conn:
        return storage.reading_list.load_zotero_state(conn, T, "C1", group)


def test_a_group_id_with_leading_zeros_is_the_same_library(harness: Harness, db: Database) -> None:
    """Zotero reads `/groups/04242` as group 4242, but PaperPing bound the text: another workspace's member bound
    `04242` while group 4242 was this workspace's (or listed for it alone), and sent their saves to its library."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero)  # T's C1 holds 4242
        client = other_workspace(harness)
        other = {"team_id": "T0B", "channel_id": "C7", "user_id": "U9", "text": "zotero 04242"}
        answer = run_command(harness.ctx, client, other)
        assert "belongs to another workspace's PaperPing" in answer and "Done" not in answer
        with db.connection() as conn:
            assert storage.settings.load_channel_settings(conn, "T0B", "C7").zotero_group_id is None
        harness.ctx.settings = settings.with_changes(zotero_groups=f"{T}=0004242")  # the operator's list, as typed
        answer = run_command(harness.ctx, client, {**other, "text": "zotero 0004242"})
        assert "not one this workspace may send to" in answer
        for odd in ("zotero ٤٢٤٢", "zotero 0", "zotero 00"):  # digits of another script; no group at all
            assert "Try `/paperping zotero 123456`" in run_command(harness.ctx, client, {**other, "text": odd})
        assert "Done: saved papers go to Zotero group 4242" in harness.command("zotero 04242"), "as Zotero reads it"
        assert zotero.requests == []
    finally:
        zotero.stop()


def test_the_push_keeps_to_the_operators_list(harness: Harness, db: Database) -> None:
    """A channel that bound a group before the operator listed it for another workspace went on sending there:
    the list said "that workspace's alone", and this workspace's saves still went to its library (while `status`
    said they went there)."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero)
        save_many(db, 3)
        now = datetime.now(UTC)
        assert push_due(db, settings.with_changes(zotero_groups="T0B=4242"), now) == 0
        assert push_due(db, settings.with_changes(zotero_groups=f"{T}=5151"), now) == 0, "T may use 5151 only"
        assert zotero.requests == [], "nothing went to a group the list does not give this workspace"
        harness.ctx.settings = settings.with_changes(zotero_groups="T0B=4242")
        said = harness.command("status")
        assert "Zotero group 4242 is not this workspace's to send to" in said and "Saved papers go to" not in said
        harness.ctx.settings = settings.with_changes(zotero_groups=f"{T}=4242")
        assert push_due(db, harness.ctx.settings, now) == 3
        assert "Saved papers go to Zotero group 4242: 3 sent so far." in harness.command("status")
    finally:
        zotero.stop()


def test_an_answer_of_the_wrong_shape_waits_as_a_refusal_does(harness: Harness, db: Database) -> None:
    """A 200 whose per-item results were not maps of indexes raised out of the push: nothing was recorded, and
    the same batch went again at every tick. It now counts as no answer, said in `status`, tried again later."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero)
        save_many(db, 2)
        now = datetime.now(UTC)
        for odd in ({"success": ["ABCD2345"]}, {"success": {"first": "ABCD2345"}}, {"success": {}, "failed": [1]}):
            zotero.odd_answers, zotero.odd_answer = 1, odd
            asked = len(zotero.requests)
            assert push_due(db, settings, now) == 0
            assert push_due(db, settings, now + timedelta(minutes=1)) == 0
            assert len(zotero.requests) == asked + 1, f"{odd}: asked once, not at every tick"
            sent, error = state(db)
            assert sent == 0 and error is not None and "did not answer as expected" in error
            now += timedelta(days=2)
        assert push_due(db, settings, now) == 2 and len(zotero.items["4242"]) == 2
    finally:
        zotero.stop()


def test_a_library_that_refuses_the_key_is_asked_once_a_round(harness: Harness, db: Database) -> None:
    """A key that may not write to the group made the push send every batch of the channel's list in turn, each
    refused the same way. The first refusal now stands for the whole list, which waits as one refused paper does."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero).with_changes(zotero_api_key="revoked")
        save_many(db, 160)  # four batches
        now = datetime.now(UTC)
        assert push_due(db, settings, now) == 0
        assert len(zotero.requests) == 1, zotero.requests
        with db.connection() as conn:
            failures = storage.reading_list.load_zotero_failures(conn, T, "C1", "4242")
        assert len(failures) == 160 and set(failures.values()) == {1}, "every paper recorded as refused"
        assert "may not write" in (state(db)[1] or "")
        assert push_due(db, settings, now + timedelta(minutes=5)) == 0 and len(zotero.requests) == 1
        assert push_due(db, settings.with_changes(zotero_api_key="zkey"), now + timedelta(hours=2)) == 160
    finally:
        zotero.stop()


def test_a_key_refused_for_weeks_still_waits_a_day(harness: Harness, db: Database) -> None:
    """Each refusal in a row doubled a paper's wait, up to a day; past 35 refusals the doubling overflowed, the
    push raised before recording anything, and a revoked key was asked again at every tick from then on."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero).with_changes(zotero_api_key="revoked")
        save_many(db, 1)
        now = datetime.now(UTC)
        for day in range(40):
            push_due(db, settings, now + timedelta(days=day))
        assert len(zotero.requests) == 40, "once a day"
        with db.connection() as conn:
            assert list(storage.reading_list.load_zotero_failures(conn, T, "C1", "4242").values()) == [40]
        for minutes in (1, 10, 60):
            assert push_due(db, settings, now + timedelta(days=39, minutes=minutes)) == 0
        assert len(zotero.requests) == 40, "not at every tick"
        assert push_due(db, settings, now + timedelta(days=40, minutes=1)) == 0 and len(zotero.requests) == 41
    finally:
        zotero.stop()


def test_status_shows_the_kind_of_a_zotero_failure_not_its_words(harness: Harness, db: Database) -> None:
    """A 500's whole text went into `status`, for anyone in the channel: the address PaperPing writes to (an
    operator's proxy, say) and whatever the server answered. `status` now says "HTTP 500"."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero)
        save_many(db, 1)
        zotero.server_errors, zotero.error_body = 1, "proxy db-7.internal: connection pool exhausted"
        assert push_due(db, settings, datetime.now(UTC)) == 0
        said = harness.command("status")
        assert "did not answer as expected (HTTP 500)" in said
        assert "db-7" not in said and "127.0.0.1" not in said and "groups/4242" not in said
    finally:
        zotero.stop()


def test_an_answer_far_longer_than_a_write_needs_is_not_read(harness: Harness, db: Database) -> None:
    """The answer to a write was read whole, however long, within the request's time: a server sending megabytes
    at full speed filled the tick's memory. Past four megabytes it is a failure, and the paper waits."""
    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    try:
        settings = bind(harness, zotero)
        save_many(db, 1)
        zotero.padding = 6_000_000
        assert push_due(db, settings, datetime.now(UTC)) == 0
        sent, error = state(db)
        assert sent == 0 and "over 4000000 bytes" in (error or "")
        zotero.padding = 0  # the retry finds the item stored: sent, and one item
        assert push_due(db, settings, datetime.now(UTC) + timedelta(hours=2)) == 1
        assert len(zotero.items["4242"]) == 1
    finally:
        zotero.stop()


def test_a_long_list_does_not_hold_other_channels_back(harness: Harness, db: Database) -> None:
    """The push sent each channel's whole list before the next channel's: one channel with thousands of saves
    (first in the order) took every tick's time until it was done, and no other channel's papers went meanwhile.
    Channels now take turns, a batch each."""
    zotero = ZoteroStandIn("zkey", {"4242": set(), "5151": set()}).start()
    try:
        settings = bind(harness, zotero, http_timeout=0.3)
        save_many(db, 500)  # C1: ten batches
        harness.standin.state.channels["C9"] = {"id": "C9", "name": "reading", "members": ["U2", "UBOT"]}
        harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C9")
        harness.ctx.channels.activate(T, "C9")
        assert "Zotero group 5151" in harness.command("zotero 5151", channel="C9")
        harness.command("save https://arxiv.org/abs/1706.03762", channel="C9")
        zotero.held_answers = 20  # stored, but each answer comes too late: a tick has time for three or four writes
        push_due(db, settings, datetime.now(UTC))
        assert [path for _, path in zotero.requests][:2] == ["/groups/4242/items", "/groups/5151/items"]
        assert len(zotero.items["5151"]) == 1, "C9's paper went in the same tick"
    finally:
        zotero.stop()
