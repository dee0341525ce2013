"""A member's own commands (`link-author`, `forget-me`) with hostile input and at awkward moments, through the real
bolt app and slack_sdk against the Slack stand-in: what is typed is kept only when it is what the command takes, and
a forget-me leaves nothing of the member whatever was being written at the time."""

from __future__ import annotations

import threading
import time
from datetime import UTC, datetime

import pytest

from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.models import Message, PaperRef
from tests.support.harness import Harness, T, count, message_event

pytestmark = pytest.mark.slow


def test_link_author_keeps_only_an_author_id_written_in_ascii_digits_and_of_bounded_length(
    harness: Harness, db: Database
) -> None:
    """The profile-URL form took any script's digits and any length (the bare form already refused both): a
    10,000-digit id or Arabic-Indic digits were stored as the member's author and echoed back."""
    for typed in (
        "https://www.semanticscholar.org/author/Ada/" + "1" * 10_000,
        "https://www.semanticscholar.org/author/\u0661\u0662\u0663\u0664",  # Arabic-Indic 1234
        "\u0660\u0660\u0660\u0660-\u0660\u0660\u0660\u0662-\u0661\u0668\u0662\u0665-\u0660\u0660\u0669\u0667",
        "12345678-1234-1234-1234",  # an ORCID's shape inside a longer number
    ):
        said = harness.command(f"link-author {typed}", user="U2")
        assert "not an author id I can use" in said, (typed[:60], said[:200])
    assert count(db, "SELECT count(*) FROM member_settings WHERE user_id = 'U2'") == 0
    # the usual forms still link
    said = harness.command("link-author https://www.semanticscholar.org/author/Graham-Neubig/1700325", user="U2")
    assert "Semantic Scholar author id is 1700325" in said, said
    assert "ORCID is 0000-0002-1825-009X" in harness.command("link-author 0000-0002-1825-009X", user="U2")


def test_forget_me_waits_for_an_import_under_way_and_deletes_what_it_wrote(harness: Harness, db: Database) -> None:
    """An import (or a history page) read the forget list, then wrote the member's share in a transaction still
    open when they typed forget-me: the forget-me ended first, found nothing yet to delete, and the import's commit
    then kept the share of a member on the forget list. Now the forget-me waits for it and deletes it."""
    share = Message(
        T,
        "C1",
        "1700000100.000100",
        "U2",
        "read <https://arxiv.org/abs/1706.03762>",
        datetime(2023, 11, 14, tzinfo=UTC),
        papers=(PaperRef("arxiv", "1706.03762", "https://arxiv.org/abs/1706.03762"),),
    )
    harness.event(message_event("1700000050.000100", "read <https://arxiv.org/abs/2401.00001>", user="U1"))
    importing = db.connect()
    try:
        index_messages(importing, [share])  # the import's page, not committed yet
        answers: list[str] = []
        forget = threading.Thread(target=lambda: answers.append(harness.command("forget-me confirm", timeout=30)))
        forget.start()
        time.sleep(2.0)  # the forget-me is under way while the import's transaction is open
        importing.commit()
    finally:
        importing.close()
    forget.join(40)
    assert answers and answers[0].startswith("Done: I deleted 1 stored messages"), answers
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'U2'") == 0
    assert count(db, "SELECT count(*) FROM forgotten_members WHERE user_id = 'U2'") == 1
    # and what is imported after the forget-me leaves them out
    with db.connection() as conn:
        index_messages(conn, [share])
    assert count(db, "SELECT count(*) FROM messages WHERE user_id = 'U2'") == 0


def test_forget_me_asked_again_with_nothing_left_does_not_redo_the_workspaces_passes(
    harness: Harness, db: Database
) -> None:
    """forget-me does passes over the whole workspace (every channel's stored posts, its drafts and LLM logs, whose
    outputs it clears). Typed again and again by a member with nothing left, each one did them all again, on the
    listener pool, and cleared what the model wrote since for others. Now a repeat with nothing left costs a few
    lookups; one that finds a row of theirs (written past the list) does the whole work again."""
    harness.event(message_event("1700000100.000100", "read <https://arxiv.org/abs/1706.03762>", user="U2"))
    assert harness.command("forget-me confirm").startswith("Done: I deleted 1 stored messages")
    with db.connection() as conn:  # an answer the model wrote since, for another member
        conn.execute(
            "INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, output,"
            " latency_ms, outcome) VALUES (%s, 'C1', 'final', 2, 'x', 'm', 'for graham', 5, 'ok')",
            (T,),
        )
    for _ in range(3):
        assert harness.command("forget-me confirm").startswith("Done: I deleted 0 stored messages")
    assert count(db, "SELECT count(*) FROM llm_calls WHERE output = 'for graham'") == 1
    assert count(db, "SELECT count(*) FROM forgotten_members WHERE user_id = 'U2'") == 1
    # a row of theirs that got in anyway (written before a restore, say): the next forget-me deletes it
    harness.event(message_event("1700000200.000100", "read <https://arxiv.org/abs/2401.00001>", user="U1"))
    with db.connection() as conn:
        conn.execute(
            "INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)"
            " SELECT id, team_id, channel_id, 'U2', 'eyes', now() FROM messages WHERE ts = '1700000200.000100'"
        )
    said = harness.command("forget-me confirm")
    assert "and 1 reactions of yours" in said, said
    assert count(db, "SELECT count(*) FROM reactions WHERE user_id = 'U2'") == 0
