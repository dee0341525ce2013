"""Slack's agent messaging experience (``agent_view``), through the real bolt app against the Slack stand-in, on the
ACL lab of ``tests/support/labbase.py``: the Messages tab opened (a greeting once, suggested prompts with no
thread), the channel in view (``app_context_changed``), a member's question in the tab answered in its thread as
a stream (the papers with their sources first, the checked written answer after, feedback buttons last), a
click on the buttons kept and counted in `status`, and forgotten with the member.

The four questions: whose content a streamed answer shows (the asker's channels only, even when the message's
``app_context`` names a private channel they left), who may make it act (a member in their own DM; a click's value
PaperPing never wrote is ignored), how much one member causes (one question at a time, every 20 s), and what a
hostile title does (nothing in the stream can notify or link elsewhere)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any
from urllib.parse import urlencode

import pytest

from socialrag.db import Database
from tests.slack.test_group_memory import HOSTILE, lab, wait
from tests.support.harness import Harness, T, count
from tests.support.openai_standin import OpenAIStandIn
from tests.support.slack_standin import SlackStandIn

pytestmark = pytest.mark.slow


def in_view(channel: str) -> dict[str, Any]:
    return {"entities": [{"type": "slack#/types/channel_id", "value": channel, "team_id": T}]}


def ask_in_tab(harness: Harness, text: str, ts: str, view: str | None = "C1", thread: str | None = None) -> None:
    event: dict[str, Any] = {
        "type": "message",
        "channel": "DU2",
        "channel_type": "im",
        "user": "U2",
        "text": text,
        "ts": ts,
        "event_ts": ts,
    }
    if view:
        event["app_context"] = in_view(view)
    if thread:
        event["thread_ts"] = thread
    harness.event(event)


def stream_in(standin: SlackStandIn, thread: str) -> dict[str, Any]:
    """The stopped stream answering in ``thread``."""
    return wait(
        lambda: next(
            (s for s in standin.streams.values() if s["post"]["thread_ts"] == thread and s["stopped"]),
            None,
        )
    )


def click(harness: Harness, stream: dict[str, Any], value: str, user: str = "U2") -> None:
    payload = {
        "type": "block_actions",
        "team": {"id": T, "domain": "lab"},
        "user": {"id": user, "team_id": T},
        "api_app_id": "A1",
        "token": "x",
        "container": {"type": "message", "message_ts": stream["post"]["ts"], "channel_id": "DU2"},
        "trigger_id": "1.2.3",
        "channel": {"id": "DU2", "name": "directmessage"},
        "actions": [
            {
                "action_id": "answer_feedback",
                "block_id": "b1",
                "value": value,
                "type": "feedback_buttons",
                "action_ts": f"{time.time():.6f}",
            }
        ],
    }
    response = harness.signed(urlencode({"payload": json.dumps(payload)}), "application/x-www-form-urlencoded")
    assert response.status_code == 200
    time.sleep(0.5)


def test_the_messages_tab_greets_once_suggests_and_answers_streamed_with_sources_and_feedback(
    db: Database, tmp_path: Path
) -> None:
    harness, standin = lab(db, tmp_path)
    try:
        opened = {"type": "app_home_opened", "user": "U2", "channel": "DU2", "tab": "messages", "event_ts": "1"}
        harness.event(opened)
        harness.event({**opened, "event_ts": "2"})
        harness.settle()
        greetings = [p for p in standin.posts if p["channel"] == "DU2" and "Ask me what" in p["text"]]
        assert len(greetings) == 1, "greeted once, not at every opening"
        prompts = [a for a in standin.assistant if a["channel"] == "DU2" and "prompts" in a]
        assert prompts and all(a["thread_ts"] == "" for a in prompts), "agent_view's prompts take no thread"
        assert "What did I miss?" in prompts[-1]["prompts"] and "Read about" not in prompts[-1]["prompts"]
        # the member looks at #nlp-lab: kept for them, and the prompts name its words
        harness.event({"type": "app_context_changed", "user": "U2", "channel": "DU2", "context": in_view("C1")})
        harness.settle()
        assert "Read about" in [a for a in standin.assistant if "prompts" in a][-1]["prompts"]
        assert count(db, "SELECT count(*) FROM assistant_threads WHERE user_id = 'U2' AND context_channel_id = 'C1'")

        ask_in_tab(harness, "What have we read about attention explanations?", "1700003000.000100", view=None)
        stream = stream_in(standin, "1700003000.000100")
        text = stream["post"]["text"]
        assert text.startswith("**What #nlp-lab read about attention explanations**:"), text
        assert "Learning to Deceive" in text and "[thread](https://lab.slack.com/" in text
        tasks = [c for c in stream["chunks"] if c["type"] == "task_update"]
        assert tasks and tasks[-1]["status"] == "complete" and tasks[-1]["sources"][0]["url"].startswith("https://")
        feedback = stream["blocks"][0]["elements"][0]
        assert feedback["type"] == "feedback_buttons" and feedback["positive_button"]["value"] == "helpful:C1"
        statuses = [a for a in standin.assistant if a.get("status") and a["thread_ts"] == "1700003000.000100"]
        assert statuses, "the thread shows PaperPing at work meanwhile"

        click(harness, stream, "helpful:C1")
        click(harness, stream, "not:C1")  # a second click replaces the first
        click(harness, stream, "helpful:<!channel>")  # never written by PaperPing: ignored
        assert count(db, "SELECT count(*) FROM answer_feedback") == 1
        assert count(db, "SELECT count(*) FROM answer_feedback WHERE NOT helpful AND about_channel_id = 'C1'") == 1
        status = harness.command("status", user="U1")
        assert "Answers about this channel in the last 30 days: 0 marked helpful, 1 not helpful." in status

        # a reply in the thread continues it, from the channel kept in view
        with db.connection() as conn:
            conn.execute("DELETE FROM member_cooldowns")
        ask_in_tab(harness, "Who here knows about attention?", "1700003000.000300", None, "1700003000.000100")
        follow = wait(lambda: [s for s in standin.streams.values() if "Who in" in s["post"]["text"] and s["stopped"]])
        assert follow[0]["post"]["thread_ts"] == "1700003000.000100"

        harness.command("forget-me confirm", user="U2")
        assert count(db, "SELECT count(*) FROM answer_feedback") == 0
        assert count(db, "SELECT count(*) FROM assistant_threads WHERE user_id = 'U2'") == 0
    finally:
        harness.stop()
        standin.stop()


def test_a_streamed_answer_shows_the_papers_before_the_checked_written_answer(db: Database, tmp_path: Path) -> None:
    def answer(prompt: str) -> str:
        return "The group read [1], shared in the channel."

    model = OpenAIStandIn(answer)
    nowhere = "http://127.0.0.1:9/"
    harness, standin = lab(
        db, tmp_path, offline=False, openai_base_url=model.base_url, s2_api_url=nowhere, arxiv_api_url=nowhere
    )
    try:
        with db.connection() as conn:
            conn.execute(
                "UPDATE papers SET title = %s WHERE id = "
                "(SELECT paper_id FROM paper_ids WHERE value = '2020.acl-main.745')",
                (HOSTILE + " TaBERT tables",),
            )
        ask_in_tab(harness, "what have we read about tables?", "1700004000.000100")
        stream = stream_in(standin, "1700004000.000100")
        pieces = [c["text"] for c in stream["chunks"] if c["type"] == "markdown_text"]
        assert len(pieces) == 2 and "TaBERT" in pieces[0] and "In short" not in pieces[0], pieces
        assert pieces[1] == "\n\n**In short:** The group read \\[1\\], shared in the channel.", pieces
        starts = standin.calls_to("chat.startStream")
        assert starts and "TaBERT" in starts[0].params["chunks"], "the list is sent before the LLM has written"
        whole = json.dumps(stream)
        assert "<!channel>" not in whole and "<@U1>" not in whole, "a hostile title can neither notify nor mention"
        assert "](https://evil.example.com" not in whole, "nor link"
        # the private channel the member left, named as in view: nothing of it, and no buttons on a refusal
        with db.connection() as conn:
            conn.execute("DELETE FROM member_cooldowns")
        ask_in_tab(harness, "what have we read about attention?", "1700004000.000300", view="G9")
        refused = stream_in(standin, "1700004000.000300")
        assert "both in now" in refused["post"]["text"] and not refused["blocks"]
        assert "secret" not in json.dumps(standin.streams)
        # one question every 20 s (a refusal spends none): the next says when
        ask_in_tab(harness, "what have we read about parsing?", "1700004000.000500")
        assert "parsing" in stream_in(standin, "1700004000.000500")["post"]["text"]
        ask_in_tab(harness, "what have we read about dialogue?", "1700004000.000700")
        assert "ask again from" in stream_in(standin, "1700004000.000700")["post"]["text"]
    finally:
        harness.stop()
        standin.stop()
        model.stop()


def test_the_sources_of_a_streamed_answer_show_titles_escaped(db: Database, tmp_path: Path) -> None:
    """The sources under a streamed answer gave each title as the cleaning of others' words left it, unescaped:
    markup the cleaning missed (a broadcast nested more deeply than it unpicks) reached Slack as markup. Now each
    source's title is escaped as every other view escapes a title: no angle bracket or bare ampersand is left."""
    harness, standin = lab(db, tmp_path)
    nested = "<!channel|all " + "<x " * 24 + " >" * 24 + " >"  # deeper than the cleaning unpicks
    try:
        with db.connection() as conn:
            conn.execute(
                "UPDATE papers SET title = %s WHERE id = "
                "(SELECT paper_id FROM paper_ids WHERE value = '2020.acl-main.745')",
                (f"{nested} TaBERT & tables <!channel> <@U123>",),
            )
        ask_in_tab(harness, "what have we read about tables?", "1700006000.000100")
        stream = stream_in(standin, "1700006000.000100")
        shown = [src["text"] for c in stream["chunks"] if c["type"] == "task_update" for src in c.get("sources", [])]
        titles = [text for text in shown if "TaBERT" in text]
        assert titles and all("&amp; tables" in text for text in titles), shown
        assert not any("<" in text or ">" in text for text in shown), shown
        whole = json.dumps(stream)
        assert "<!channel" not in whole and "<@U123" not in whole, "nothing in the stream can notify anyone"
    finally:
        harness.stop()
        standin.stop()


def test_an_answer_keeps_to_its_time_and_a_dm_question_spends_no_channels_llm_cap(db: Database, tmp_path: Path) -> None:
    """Findings 9 and 10: a question from the Messages tab with no channel in view counts against the member's
    hourly LLM cap only (the channel's cap is the channel's questions'); and an answer whose model stalls is
    streamed whole within 30 s, while another member's `/paperping ask` meanwhile is answered within 30 s too."""
    import threading

    model = OpenAIStandIn(lambda prompt: "The group read [1], shared in the channel.")
    nowhere = "http://127.0.0.1:9/"
    harness, standin = lab(
        db, tmp_path, offline=False, openai_base_url=model.base_url, s2_api_url=nowhere, arxiv_api_url=nowhere,
        llm_per_channel_hour=1,
    )  # fmt: skip
    try:
        for n in (1, 3):
            with db.connection() as conn:
                conn.execute("DELETE FROM member_cooldowns")
            ask_in_tab(harness, "what have we read about attention?", f"1700005000.00000{n}", view=None)
            assert "**In short:**" in stream_in(standin, f"1700005000.00000{n}")["post"]["text"]
        assert count(db, "SELECT count(*) FROM llm_usage WHERE channel_id <> ''") == 0, "no channel's cap spent"
        assert count(db, "SELECT sum(calls) FROM llm_usage WHERE user_id = 'U2'") == 2, "the member's own is"

        model.delay = 45.0  # the model stalls past the answer's time
        with db.connection() as conn:
            conn.execute("DELETE FROM member_cooldowns")
        other: dict[str, Any] = {}

        def meanwhile() -> None:
            started = time.monotonic()
            other["text"] = harness.command("ask what have we read about dialogue?", user="U1", timeout=40)
            other["seconds"] = time.monotonic() - started

        started = time.monotonic()
        ask_in_tab(harness, "what have we read about tables?", "1700005000.000005", view=None)
        thread = threading.Thread(target=meanwhile)
        thread.start()
        stalled = stream_in(standin, "1700005000.000005")
        waited = time.monotonic() - started
        thread.join(45)
        assert waited < 30, waited
        assert "TaBERT" in stalled["post"]["text"] and "_No written answer:" in stalled["post"]["text"]
        assert other["seconds"] < 30 and "dialogue" in other["text"], other
    finally:
        harness.stop()
        standin.stop()
        model.stop()


def test_a_stream_that_fails_midway_is_closed_and_a_dm_is_never_indexed(db: Database, tmp_path: Path) -> None:
    """A stream Slack refuses to stop is stopped again with a note, never left open; a member's edit of a question
    holding a paper link stores nothing; a kept channel in view the member has left does not refuse their next
    question (all their channels are searched)."""
    harness, standin = lab(db, tmp_path)
    try:
        standin.fail_next["chat.stopStream"] = 1
        ask_in_tab(harness, "what have we read about attention?", "1700006000.000100")
        stream = stream_in(standin, "1700006000.000100")
        assert "Something went wrong while I looked" in stream["post"]["text"]
        assert "Learning to Deceive" in stream["post"]["text"], "what was shown stays"

        before = count(db, "SELECT count(*) FROM messages")
        edited = {
            "type": "message",
            "subtype": "message_changed",
            "channel": "DU2",
            "channel_type": "im",
            "event_ts": "1700006000.000300",
            "message": {
                "type": "message",
                "user": "U2",
                "text": "what about <https://aclanthology.org/2020.acl-main.1/>?",
                "ts": "1700006000.000100",
                "edited": {"user": "U2", "ts": "1700006000.000300"},
            },
            "previous_message": {"type": "message", "user": "U2", "text": "what", "ts": "1700006000.000100"},
        }
        harness.event(edited)
        assert count(db, "SELECT count(*) FROM messages") == before
        assert count(db, "SELECT count(*) FROM messages WHERE channel_id LIKE 'D%%'") == 0

        harness.event({"type": "app_context_changed", "user": "U2", "channel": "DU2", "context": in_view("G9")})
        with db.connection() as conn:
            conn.execute("DELETE FROM member_cooldowns")
        ask_in_tab(harness, "what have we read about attention?", "1700006000.000500", view=None)
        answered = stream_in(standin, "1700006000.000500")["post"]["text"]
        assert "Learning to Deceive" in answered and "both in now" not in answered
    finally:
        harness.stop()
        standin.stop()


def test_the_suggested_prompts_share_the_members_two_slow_places(db: Database, tmp_path: Path) -> None:
    """Building the prompts is slow work of the member who changed the channel in view: it takes one of the two
    places each member holds, not two more of its own, so a member switching channels while two questions run
    gets no prompts (a courtesy) rather than four places of the slow pool."""
    import threading

    harness, standin = lab(db, tmp_path)
    release = threading.Event()
    try:
        for _ in range(2):  # two questions of U2's, still running
            assert harness.ctx.slow.submit(lambda: release.wait(20), owner=f"{T}:U2")
        before = len([a for a in standin.assistant if "prompts" in a])
        harness.event({"type": "app_context_changed", "user": "U2", "channel": "DU2", "context": in_view("C1")})
        time.sleep(1.0)
        assert len([a for a in standin.assistant if "prompts" in a]) == before, "no third place for the prompts"
        release.set()
        harness.settle()
        harness.event({"type": "app_context_changed", "user": "U2", "channel": "DU2", "context": in_view("C2")})
        harness.settle()
        assert len([a for a in standin.assistant if "prompts" in a]) == before + 1
    finally:
        release.set()
        harness.stop()
        standin.stop()
