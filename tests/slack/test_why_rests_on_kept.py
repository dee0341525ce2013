"""`/paperping why` and App Home say only what the channel still keeps: a reply deleted in Slack is no longer
quoted, a reason whose messages went (deleted, or their writer forgotten) is left out, and PaperPing's own post,
once deleted, is neither explained nor listed."""

from __future__ import annotations

import json

from psycopg.types.json import Jsonb
from slack_sdk import WebClient

from socialrag import storage
from socialrag.db import Database
from socialrag.models import (
    AuthorDiscussedHere,
    Draft,
    EarlierReception,
    PaperMeta,
    RelatedToEarlierPaper,
    SocialSignal,
    draft_json,
)
from tests.support.harness import Harness, T, message_event

SHARE_TS, REPLY_TS, POST_TS = "1700000001.000100", "1700000002.000100", "1700000100.000100"
WORDS = "the RIPPLe regulariser is a neat trick"


def _post_pointing_at_the_thread(db: Database) -> tuple[str, str]:
    """PaperPing's post, its reasons resting on U3's share and U1's reply as a post stores them. Returns the
    share's and the reply's permalinks."""
    with db.connection() as conn:
        rows = dict(conn.execute("SELECT ts, permalink FROM messages").fetchall())
        reply_id = storage.messages.load_message_id(conn, T, "C1", REPLY_TS)
        share, reply = rows[SHARE_TS], rows[REPLY_TS]
        assert share and reply and reply_id
        signals = (
            SocialSignal(RelatedToEarlierPaper("Weight Poisoning", "cites", 0.7, sharer="U3"), 3.0, ("U3",), (share,)),
            SocialSignal(
                EarlierReception("Weight Poisoning", 0, 0, 1, ("U1",), first_reply_id=reply_id), 1.0, (), (reply,)
            ),
            SocialSignal(AuthorDiscussedHere("Graham Neubig", 2), 1.0),
        )
        pid = storage.papers.ensure_papers(conn, [("arxiv", "2005.00870")])[("arxiv", "2005.00870")]
        conn.execute("UPDATE papers SET title = 'Predicting Performance' WHERE id = %s", (pid,))
        paper = PaperMeta(pid, "Predicting Performance", "https://arxiv.org/abs/2005.00870", (), None, 2020, None)
        draft = Draft(T, "C1", paper, "template", "It builds on a thread here.", signals, share, "Weight Poisoning")
        conn.execute(
            "INSERT INTO recommendations (team_id, channel_id, slot_key, paper_id, status, style, draft, message_ts,"
            " posted_at) VALUES (%s, 'C1', 'why-kept', %s, 'posted', 'template', %s, %s, now())",
            (T, pid, Jsonb(draft_json(draft)), POST_TS),
        )
    return share, reply


def _deleted(harness: Harness, ts: str) -> None:
    harness.event({"type": "message", "subtype": "message_deleted", "channel": "C1", "deleted_ts": ts, "ts": ts})


def _home(harness: Harness) -> str:
    harness.event({"type": "app_home_opened", "user": "U1", "channel": "D1", "tab": "home", "event_ts": "1.0"})
    harness.settle()
    return json.dumps(harness.standin.views["U1"])


def test_why_and_app_home_say_only_what_the_channel_still_keeps(harness: Harness, db: Database) -> None:
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    harness.event(message_event(SHARE_TS, "<https://arxiv.org/abs/2004.06660>", user="U3"))
    harness.event(message_event(REPLY_TS, WORDS, user="U1", thread_ts=SHARE_TS))
    share, reply = _post_pointing_at_the_thread(db)
    why = harness.command("why")
    assert f'first reply: "{WORDS}"' in why and share in why and reply in why and "Graham Neubig" in why
    assert "Predicting Performance" in _home(harness)

    _deleted(harness, REPLY_TS)  # U1 deletes their reply in Slack
    why = harness.command("why")
    assert "RIPPLe" not in why and reply not in why and "• h6" not in why, "the reply is neither quoted nor linked"
    assert share in why
    with db.connection() as conn:  # the deletion took the reason out of the stored post as well
        stored = conn.execute("SELECT draft::text FROM recommendations").fetchone()
    assert stored is not None and reply not in stored[0] and share in stored[0]

    assert "deleted 1 stored messages" in harness.command("forget-me confirm", user="U3")  # U3 asks to be forgotten
    why = harness.command("why")
    assert share not in why and "U3" not in why and "• h5" not in why and "Graham Neubig" in why
    with db.connection() as conn:
        stored = conn.execute("SELECT draft::text FROM recommendations").fetchone()
    assert stored is not None and share not in stored[0] and WORDS not in stored[0]

    _deleted(harness, POST_TS)  # an admin deletes PaperPing's post itself: the event alone is enough
    assert "haven't posted here yet" in harness.command("why")
    with db.connection() as conn:
        gone = conn.execute("SELECT deleted_at IS NOT NULL, draft::text FROM recommendations").fetchone()
    assert gone is not None and gone[0] and "Weight Poisoning" not in gone[1], "only paper, style and score kept"
    assert "Predicting Performance" not in _home(harness), "App Home lists no post deleted in Slack"
