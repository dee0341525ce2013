"""A history read against a Slack that misbehaves or shows odd shapes: a deleted thread's first message left as a
tombstone, a cursor that comes back, a Retry-After that is not a number of seconds. Through the real slack_sdk
WebClient against the local stand-in of the Slack Web API."""

from __future__ import annotations

import threading
import time
from typing import Any

import pytest
from slack_sdk import WebClient

from bot.slack.backfill import backfill_channel
from bot.slack.pacer import HistoryPacer
from socialrag import storage
from socialrag.db import Database
from socialrag.errors import InputError, SourceError
from tests.slack.test_backfill import T0, _stored, _ts, lab_state
from tests.support.slack_standin import Call, SlackStandIn

ARXIV = "<https://arxiv.org/abs/2401.10000|Paper 0>"


def _read(db: Database, server: SlackStandIn, sleeps: list[float] | None = None) -> Any:
    pacer = HistoryPacer(sleep=(sleeps if sleeps is not None else []).append, clock=lambda: 0.0)
    return backfill_channel(db, WebClient(token="xoxb-test", base_url=server.url), "C1", pacer=pacer)


def test_a_thread_whose_first_message_was_deleted_leaves_the_base_on_the_next_read(db: Database) -> None:
    """While PaperPing was out of #papers, the share that opened a thread was deleted: Slack leaves a tombstone in
    its place (the thread's replies stay). Reading the history again takes the share and its thread out, and
    remembers the deletion."""
    state = lab_state(12)  # shares at 0, 3, 6, 9; threads on 0 and 6
    server = SlackStandIn(state).start()
    try:
        _read(db, server)
        assert {_ts(6), _ts(6, 1), _ts(6, 2)} <= set(_stored(db))
        for m in state.messages["C1"]:
            if m["ts"] == _ts(6):
                m.clear()
                m.update(
                    type="message",
                    subtype="tombstone",
                    hidden=True,
                    user="USLACKBOT",
                    text="This message was deleted.",
                    ts=_ts(6),
                    thread_ts=_ts(6),
                    reply_count=2,
                )
        report = _read(db, server)
    finally:
        server.stop()
    assert not {_ts(6), _ts(6, 1), _ts(6, 2)} & set(_stored(db))
    assert report.removed == 3
    with db.connection() as conn:
        assert storage.deletions.load_deleted(conn, [("T0LAB", "C1", _ts(6))]) == {("T0LAB", "C1", _ts(6))}


@pytest.mark.parametrize("method", ["conversations.history", "conversations.replies"])
def test_a_cursor_that_comes_back_ends_the_read_with_an_error(db: Database, method: str) -> None:
    """Slack answers ``has_more`` with the cursor it was just given: the read stops with Slack's error after the
    page that repeated it, instead of reading the same page for ever."""
    server = SlackStandIn(lab_state(12)).start()
    server.page_cap = 2

    def loop(call: Call, answer: dict[str, Any]) -> dict[str, Any]:
        if len(server.calls_to(method)) > 50:  # the stand-in stops looping, so that the old code ends too
            return answer
        first = call.params.get("cursor") or answer["response_metadata"]["next_cursor"]
        return {**answer, "has_more": True, "response_metadata": {"next_cursor": first}}

    server.rewrite[method] = loop
    try:
        with pytest.raises(SourceError, match="cursor"):
            _read(db, server)
        calls = len(server.calls_to(method))
    finally:
        server.stop()
    assert calls <= 3


@pytest.mark.parametrize("retry_after", ["nan", "inf", "-5", "Wed, 21 Oct 2015 07:28:00 GMT", "1e12"])
def test_a_retry_after_that_is_not_a_number_of_seconds_is_waited_out_sensibly(db: Database, retry_after: str) -> None:
    """A 429 whose Retry-After is not a plain number of seconds (not a number, negative, a date, or longer than a
    day) is waited out as a minute, Slack's own pace for history, and the read completes."""
    server = SlackStandIn(lab_state(12)).start()
    server.rate_limits = {"conversations.history": 1}
    server.retry_after = retry_after
    sleeps: list[float] = []
    try:
        report = _read(db, server, sleeps)
    finally:
        server.stop()
    assert report.pages >= 1 and sleeps and all(0 < s <= 3600 for s in sleeps)


def test_a_long_thread_cut_short_resumes_at_its_page(db: Database) -> None:
    """A share with 60 replies, read 10 a page (Slack's slow tier reads a page a minute, so a thread of thousands
    takes hours): the read fails on its fourth page and resumes from there, not from the thread's first page."""
    state = lab_state(1)  # one share, at T0
    root = _ts(0)
    state.messages["C1"] = [
        {"type": "message", "user": "U1", "ts": root, "thread_ts": root, "reply_count": 60, "text": ARXIV},
        *(
            {"type": "message", "user": "U2", "ts": f"{T0 + 1 + i:.6f}", "thread_ts": root, "text": f"r{i}"}
            for i in range(60)
        ),
    ]
    server = SlackStandIn(state).start()
    server.page_cap = 10

    def fail_fourth(call: Call, answer: dict[str, Any]) -> dict[str, Any]:
        return (
            {"ok": False, "error": "internal_error"} if len(server.calls_to("conversations.replies")) == 4 else answer
        )

    server.rewrite["conversations.replies"] = fail_fourth
    try:
        with pytest.raises(SourceError):
            _read(db, server)
        report = _read(db, server)
        calls = server.calls_to("conversations.replies")
    finally:
        server.stop()
    assert report.resumed and calls[4].params.get("cursor") == calls[3].params.get("cursor")
    assert len(calls) == 8, "seven pages and the one that failed"
    assert len(_stored(db)) == 61


def test_two_processes_never_read_one_channels_history_at_once(db: Database) -> None:
    """Two processes of ``paperping run`` start together and both resume the channel's unfinished read: the second
    finds the first reading it, reads nothing, and the first completes."""
    server = SlackStandIn(lab_state(60)).start()
    server.page_cap = 15
    server.hold_seconds = 3.0
    server.hold = lambda call: call.method == "conversations.history" and bool(call.params.get("cursor"))
    first: list[Any] = []
    reader = threading.Thread(target=lambda: first.append(_read(db, server)))
    try:
        reader.start()
        while not server.calls_to("conversations.history")[1:]:
            time.sleep(0.05)
        server.hold = None
        before = len(server.calls_to("conversations.history"))
        with pytest.raises(InputError, match="already"):
            _read(db, server)
        during = len(server.calls_to("conversations.history")) - before
        reader.join(60)
    finally:
        server.stop()
    assert during <= 1, "the second read asked Slack for no page of its own"
    assert first and first[0].pages == 4
    with db.connection() as conn:
        assert conn.execute("SELECT completed_at IS NOT NULL FROM import_checkpoints").fetchall() == [(True,)]
