"""An older copy of a message never replaces the newer one PaperPing heard live: a Slack export taken before an
edit, a history page read before it, or an edit event heard after a later one. Link previews added to a message
without a new edit, and real edits, still apply. Through signed events into the real bolt app, the real export
importer and the real history read against the Slack stand-in."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from slack_sdk import WebClient

from bot.slack.backfill import backfill_channel
from bot.slack.pacer import HistoryPacer
from bot.slack.workspace_export import import_export
from socialrag.db import Database
from tests.slack.test_event_shapes import changed
from tests.support.exports import msg, user, write_export
from tests.support.harness import Harness, count, message_event

T0 = 1_700_000_000.0
ROOT = f"{T0 + 10:.6f}"
OLD = "<https://arxiv.org/abs/1706.03762|Attention>"
NEW = "<https://arxiv.org/abs/1810.04805|BERT>"
EDIT_1, EDIT_2 = f"{T0 + 500:.6f}", f"{T0 + 900:.6f}"


def edited(text: str, at: str, **extra: Any) -> dict[str, Any]:
    return {"type": "message", "user": "U2", "ts": ROOT, "text": text, "edited": {"user": "U2", "ts": at}, **extra}


def stored(db: Database) -> tuple[str, list[str]]:
    with db.connection() as conn:
        text = conn.execute("SELECT text FROM messages WHERE ts = %s", (ROOT,)).fetchone()
        papers = conn.execute(
            "SELECT i.value FROM message_papers mp JOIN paper_ids i USING (paper_id) ORDER BY 1"
        ).fetchall()
    return (text[0] if text else ""), [p[0] for p in papers]


def share_then_edit(h: Harness) -> None:
    h.event(message_event(ROOT, f"read this {OLD}"))
    h.event(changed(edited(f"actually read this {NEW}", EDIT_1), EDIT_1))
    assert stored(h.db) == (f"actually read this {NEW}", ["1810.04805"])


def test_an_older_export_leaves_the_newer_edit_and_its_paper(harness: Harness, db: Database, tmp_path: Path) -> None:
    """The lab imports an export taken before the member edited their share: the edit's text and paper stay."""
    share_then_edit(harness)
    export = write_export(
        tmp_path / "old.zip",
        {"nlp-lab": ("C1", ["U2"], [msg(T0 + 10, "U2", f"read this {OLD}")])},
        [user("U2", "ben")],
    )
    import_export(db, export, progress=False)
    assert stored(db) == (f"actually read this {NEW}", ["1810.04805"])
    assert count(db, "SELECT count(*) FROM messages WHERE edited_at IS NOT NULL") == 1


def test_a_history_read_of_an_older_copy_leaves_the_newer_edit(harness: Harness, db: Database) -> None:
    """A history page read before the edit (Slack still gave the first text) is saved after the live edit."""
    share_then_edit(harness)
    harness.standin.state.messages["C1"] = [{"type": "message", "user": "U2", "ts": ROOT, "text": f"read this {OLD}"}]
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    backfill_channel(db, client, "C1", pacer=HistoryPacer(sleep=lambda s: None))
    assert stored(db) == (f"actually read this {NEW}", ["1810.04805"])


def test_an_edit_heard_after_a_later_one_changes_nothing(harness: Harness, db: Database) -> None:
    """Slack resends the first edit (which took the link out) after the second (which put a new one in): the
    share, its paper and its thread stay as the second edit left them."""
    harness.event(message_event(ROOT, f"read this {OLD}"))
    harness.event(changed(edited(f"now this {NEW}", EDIT_2), EDIT_2))
    harness.event(changed(edited("never mind", EDIT_1), EDIT_1))
    assert stored(db) == (f"now this {NEW}", ["1810.04805"])


def test_a_link_preview_and_a_real_edit_still_apply(harness: Harness, db: Database, tmp_path: Path) -> None:
    """Slack adds a link preview to an edited share without a new edit (same ``edited``), and the member edits it
    again after an older export was imported: both reach the base."""
    share_then_edit(harness)
    preview = [{"title": "RoBERTa", "title_link": "https://arxiv.org/abs/1907.11692"}]
    harness.event(changed(edited(f"actually read this {NEW}", EDIT_1, attachments=preview), f"{T0 + 600:.6f}"))
    assert stored(db) == (f"actually read this {NEW}", ["1810.04805", "1907.11692"])
    harness.event(changed(edited(f"just {OLD}", EDIT_2), EDIT_2))
    assert stored(db) == (f"just {OLD}", ["1706.03762"])
