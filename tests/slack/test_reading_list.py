"""The channel's reading list through the real bolt app and slack_sdk against the Slack stand-in: saved by a
:bookmark: reaction and by `/paperping save`, listed newest first and paged, taken off by `unsave`, exported
as BibTeX and RIS through files.uploadV2 (the BibTeX read back by a BibTeX parser), from the CLI as CSL-JSON,
and sent to a Zotero group library (a stand-in of its Web API)."""

from __future__ import annotations

import json
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import bibtexparser
import pytest

from bot.cli import main
from socialrag import storage
from socialrag.db import Database
from socialrag.reading.zotero import push_due
from tests.support.harness import Harness, T, message_event
from tests.support.zotero_standin import ZoteroStandIn


def share(harness: Harness, ts: str, url: str, title: str, user: str = "U2") -> None:
    harness.event(message_event(ts, f"<{url}|{title}>", user=user))


def name_papers(db: Database) -> None:
    """What the metadata lookup would have filled (offline here)."""
    with db.connection() as conn:
        conn.execute(
            "UPDATE papers p SET title = 'Attention Is All You Need', year = 2017 FROM paper_ids i"
            " WHERE i.paper_id = p.id AND i.value = '1706.03762'"
        )
        conn.execute(
            "UPDATE papers p SET title = 'BERT: Pre-training {of} Deep Bidirectional Transformers', year = 2019"
            " FROM paper_ids i WHERE i.paper_id = p.id AND i.value = 'N19-1423'"
        )


def test_save_list_unsave_and_export(
    harness: Harness, db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert "reading list is empty" in harness.command("list")
    share(harness, "1700000001.000100", "https://arxiv.org/abs/1706.03762", "Attention")
    harness.event(
        {
            "type": "reaction_added",
            "user": "U3",
            "reaction": "bookmark",
            "event_ts": "1700000100.000100",
            "item": {"type": "message", "channel": "C1", "ts": "1700000001.000100"},
        }
    )
    assert "Saved `acl N19-1423`" in harness.command("save https://aclanthology.org/N19-1423/", user="U4")
    assert "Paste a paper's link" in harness.command("save nothing here")
    name_papers(db)
    listed = harness.command("list")
    assert "reading list* (2 papers, page 1 of 1)" in listed
    assert listed.index("BERT") < listed.index("Attention"), "newest save first"
    assert "saved by <@U3>" in listed and "saved by <@U4>" in listed
    assert "saved by <@U3>, 14 Nov 2023" in listed, "a save of another year says which"
    assert re.search(r"saved by <@U4>, \d\d \w{3}$", listed, re.MULTILINE), "one of this year does not"
    assert "<https://aclanthology.org/N19-1423|BERT" in listed
    # the BibTeX upload parses back, with clean keys
    assert harness.command("export bibtex") == "Uploaded the reading list (2 papers) here."
    upload = harness.standin.files[-1]
    assert upload["channels"] == ["C1"] and upload["name"] == "reading-list.bib"
    entries = bibtexparser.loads(upload["data"].decode()).entries
    assert sorted(e["ID"] for e in entries) == ["p2017attention", "p2019bert"]  # no authors known offline
    assert {e["title"] for e in entries} >= {"{Attention Is All You Need}"}
    # one upload a channel every ten minutes, said with the first minute it works again
    again = harness.command("export ris")
    assert "`/paperping export` works again from" in again and len(harness.standin.files) == 1
    with db.connection() as conn:  # ten minutes on
        conn.execute("UPDATE channel_settings SET export_asked_at = export_asked_at - interval '11 minutes'")
    assert harness.command("export ris") == "Uploaded the reading list (2 papers) here."
    assert harness.standin.files[-1]["data"].decode().count("ER  - ") == 2
    assert "Try `/paperping export bibtex`" in harness.command("export pdf")
    # the CLI writes the same list as CSL-JSON
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    out = tmp_path / "list.json"
    assert main(["export", "C1", "--format", "csl-json", "--out", str(out)]) == 0
    assert sorted(i["title"] for i in json.loads(out.read_text())) == [
        "Attention Is All You Need",
        "BERT: Pre-training {of} Deep Bidirectional Transformers",
    ]
    assert main(["export", "C1"]) == 0 and "@" in capsys.readouterr().out
    # a member's unsave takes back their own save only (U2 saved nothing here: U3's bookmark keeps it); taking it
    # off for everyone is for the stewards (the inviter, the workspace's admins), not a member or a guest
    harness.command("unsave https://arxiv.org/abs/1706.03762")
    assert "(2 papers" in harness.command("list")
    for who in ("U2", "UG1"):
        refused = harness.command("unsave https://arxiv.org/abs/1706.03762 all", user=who)
        assert "is for the member who invited me and the workspace's admins" in refused, who
    assert "(2 papers" in harness.command("list")
    said = harness.command("unsave https://arxiv.org/abs/1706.03762 all", user="U4")  # a workspace admin
    assert "Took `arxiv 1706.03762` off this channel's reading list for everyone" in said
    assert "(1 paper, page 1 of 1)" in harness.command("list")
    assert "Saved" in harness.command("save https://arxiv.org/abs/1706.03762", user="U2")
    assert "(2 papers" in harness.command("list")
    # App Home shows the lists of the member's channels
    from slack_sdk import WebClient

    from bot.slack.members import refresh_for_member
    from bot.views.home_tab import build_home

    client = WebClient(token="x", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    refresh_for_member(db, harness.ctx.pacer.call, client, T, "U2", datetime.now(UTC))  # as publishing does
    home = json.dumps(build_home(harness.ctx, T, "U2"))
    assert "Reading list* (2;" in home and "Attention Is All You Need" in home
    # after the unsave, only saves made since count: the bookmark from before it is gone from the list
    with db.connection() as conn:
        saved, _ = storage.reading_list.load_reading_list(conn, T, "C1", ["bookmark"], limit=10)
    assert [p.savers for p in saved] == [("U2",), ("U4",)]


def test_a_long_list_is_paged(harness: Harness, db: Database) -> None:
    for i in range(23):
        harness.command(f"save https://arxiv.org/abs/2401.{i:05d}")
    first = harness.command("list")
    assert "(23 papers, page 1 of 3)" in first and "`/paperping list 2` shows the next page" in first
    assert "page 3 of 3" in harness.command("list 3")
    assert "try `/paperping list 3`" in harness.command("list 9")
    assert "Try `/paperping list`" in harness.command("list two")


def test_saved_papers_go_to_the_channels_zotero_library(harness: Harness, db: Database, tmp_path: Path) -> None:
    from slack_sdk import WebClient

    zotero = ZoteroStandIn("zkey", {"4242": {"ABCD2345"}}).start()
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")  # PaperPing was invited to the channel
    try:
        assert "ZOTERO_API_KEY" in harness.command("zotero 4242")
        settings = harness.settings.with_changes(offline=False, zotero_api_key="zkey", zotero_api_url=zotero.url)
        harness.ctx.settings = settings
        assert "Try `/paperping zotero 123456`" in harness.command("zotero twelve")
        assert "Zotero group 4242" in harness.command("zotero 4242 ABCD2345")
        harness.command("save https://arxiv.org/abs/1706.03762")
        harness.command("save https://aclanthology.org/N19-1423/")
        name_papers(db)
        now = datetime.now(UTC)
        zotero.rate_limited = 1  # Zotero asks to wait: nothing is lost, both are tried again later
        assert push_due(db, settings, now) == 0
        assert push_due(db, settings, now + timedelta(minutes=1)) == 0, "not before the retry time"
        with db.connection() as conn:  # Zotero's Retry-After (2 s), honoured by every process, is over
            conn.execute("UPDATE source_pace SET next_at = clock_timestamp() WHERE source = 'zotero'")
        assert push_due(db, settings, now + timedelta(hours=2)) == 2
        items = zotero.items["4242"]
        assert sorted(i["title"] for i in items) == [
            "Attention Is All You Need",
            "BERT: Pre-training {of} Deep Bidirectional Transformers",
        ]
        assert all(i["collections"] == ["ABCD2345"] for i in items)
        assert {i["itemType"] for i in items} == {"preprint"}
        assert push_due(db, settings, now + timedelta(hours=3)) == 0, "each paper goes once"
        # a wrong key: kept with why, and the list itself is untouched
        harness.command("save https://arxiv.org/abs/2401.00001")
        assert push_due(db, settings.with_changes(zotero_api_key="wrong"), now + timedelta(hours=4)) == 0
        with db.connection() as conn:
            sent, error = storage.reading_list.load_zotero_state(conn, T, "C1", "4242")
        assert sent == 2 and error is not None and "may not write" in error
        assert "saved papers stay here only" in harness.command("zotero off")
    finally:
        zotero.stop()


def test_a_lost_zotero_answer_never_makes_a_second_item(harness: Harness, db: Database) -> None:
    """Zotero stores the batch but its answer comes after PaperPing stopped waiting: the paper is tried again
    later with the same item key, Zotero says that item is already there, and the library holds one item. An
    item a member moved to the trash before the retry stays there, and the paper counts as sent."""
    from slack_sdk import WebClient

    zotero = ZoteroStandIn("zkey", {"4242": set()}).start()
    harness.ctx.slack.ensure_channel(WebClient(token="x", base_url=harness.standin.url), T, "C1")
    harness.ctx.channels.activate(T, "C1")
    settings = harness.settings.with_changes(
        offline=False, zotero_api_key="zkey", zotero_api_url=zotero.url, http_timeout=0.3
    )
    harness.ctx.settings = settings
    try:
        assert "Zotero group 4242" in harness.command("zotero 4242")
        harness.command("save https://arxiv.org/abs/1706.03762")
        name_papers(db)
        now = datetime.now(UTC)
        zotero.held_answers = 1
        assert push_due(db, settings, now) == 0
        assert len(zotero.items["4242"]) == 1, "Zotero kept it though PaperPing heard nothing"
        with db.connection() as conn:
            sent, error = storage.reading_list.load_zotero_state(conn, T, "C1", "4242")
        assert sent == 0 and error is not None
        assert push_due(db, settings, now + timedelta(hours=2)) == 1
        assert [i["title"] for i in zotero.items["4242"]] == ["Attention Is All You Need"], "one item, not two"
        with db.connection() as conn:
            assert storage.reading_list.load_zotero_state(conn, T, "C1", "4242") == (1, None)
        assert push_due(db, settings, now + timedelta(hours=3)) == 0, "sent once"
        # the answer is lost again, and a member trashes the new item before the retry: it stays in the trash
        harness.command("save https://aclanthology.org/N19-1423/")
        name_papers(db)
        zotero.held_answers = 1
        assert push_due(db, settings, now + timedelta(hours=4)) == 0
        bert = next(i for i in zotero.items["4242"] if i["title"].startswith("BERT"))
        zotero.trash("4242", bert["key"])
        assert push_due(db, settings, now + timedelta(hours=6)) == 1
        assert len(zotero.items["4242"]) == 2 and bert["deleted"] == 1
        with db.connection() as conn:
            assert storage.reading_list.load_zotero_state(conn, T, "C1", "4242") == (2, None)
    finally:
        zotero.stop()


def test_a_zotero_group_library_belongs_to_one_workspace(harness: Harness, db: Database, tmp_path: Path) -> None:
    """One ZOTERO_API_KEY serves every workspace: a member of another workspace could bind the first one's group
    library and push its own saves there. A group now belongs to the first workspace that binds it (or to the one
    the operator's list names); another is refused without the library being asked anything. After PaperPing
    leaves a channel, nothing more is sent, and `zotero off` still works there."""
    from slack_sdk import WebClient

    from bot.cli import main
    from bot.commands import run_command

    zotero = ZoteroStandIn("zkey", {"4242": set(), "5151": set()}).start()
    settings = harness.settings.with_changes(offline=False, zotero_api_key="zkey", zotero_api_url=zotero.url)
    harness.ctx.settings = settings
    client = WebClient(token="x", base_url=harness.standin.url)
    harness.ctx.slack.ensure_channel(client, T, "C1")
    harness.ctx.channels.activate(T, "C1")
    harness.standin.state.channels["C7"] = {"id": "C7", "name": "other-lab", "members": ["U9", "UBOT"]}
    harness.standin.state.users["U9"] = {"id": "U9", "team_id": "T0B", "name": "nina"}
    try:
        assert "Zotero group 4242" in harness.command("zotero 4242")
        other = {"team_id": "T0B", "channel_id": "C7", "user_id": "U9", "text": "zotero 4242"}
        refused = run_command(harness.ctx, client, other)
        assert "belongs to another workspace's PaperPing" in refused and "Done" not in refused
        assert zotero.requests == [], "the library was asked nothing"
        with db.connection() as conn:
            assert storage.settings.load_channel_settings(conn, "T0B", "C7").zotero_group_id is None
        # the operator gives it to the other workspace: now that one may bind it, and the first may not push there
        monkey_env = {"DATABASE_URL": db.conninfo, "PAPERPING_OFFLINE": "1", "PAPERPING_HOME": str(tmp_path)}
        import os

        saved_env = {k: os.environ.get(k) for k in monkey_env}
        os.environ.update(monkey_env)
        try:
            assert main(["zotero-group", "4242", "--team", "T0B"]) == 0
        finally:
            for k, v in saved_env.items():
                os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
        assert run_command(harness.ctx, client, other).startswith("Done: saved papers go to Zotero group 4242")
        harness.command("save https://arxiv.org/abs/1706.03762")
        name_papers(db)
        assert push_due(db, settings, datetime.now(UTC)) == 0, "C1's saves do not go to T0B's library"
        # the operator's list: a group listed for one workspace is that workspace's alone
        harness.ctx.settings = settings.with_changes(zotero_groups="T0B=5151")
        assert "not one this workspace may send to" in harness.command("zotero 5151")
        # PaperPing leaves C1: nothing more is sent, and `zotero off` still works there
        assert "belongs to another workspace's PaperPing" in harness.command("zotero 4242"), "T0B's now"
        harness.ctx.settings = settings
        assert "Zotero group 5151" in harness.command("zotero 5151")
        harness.event({"type": "channel_left", "channel": "C1", "event_ts": "5.0"})
        harness.standin.state.channels["C1"]["members"] = ["U1", "U2", "U3", "U4"]
        assert push_due(db, settings, datetime.now(UTC) + timedelta(hours=1)) == 0
        assert zotero.items.get("5151", []) == []
        assert "saved papers stay here only" in harness.command("zotero off")
    finally:
        zotero.stop()


def test_an_export_slack_may_have_taken_is_not_uploaded_twice(harness: Harness, db: Database) -> None:
    """Slack fails the first step: nothing reached the channel, so the member may ask again at once. Slack fails the
    step that shares the file (an error it says may come after the work was done): the file may be there, so the
    answer says so and the ten minutes' wait stays, and a second ask cannot post it twice."""
    share(harness, "1700000001.000100", "https://arxiv.org/abs/1706.03762", "Attention")
    assert "Saved" in harness.command("save https://arxiv.org/abs/1706.03762")
    name_papers(db)

    harness.standin.fail_next["files.getUploadURLExternal"] = 1
    said = harness.command("export bibtex")
    assert said == "The upload failed (slack: internal_error); nothing was posted.", said
    assert not harness.standin.files

    harness.standin.fail_next["files.completeUploadExternal"] = 1
    said = harness.command("export bibtex")
    assert said.startswith("Slack did not confirm the upload (internal_error); it may be in the channel"), said
    assert "`/paperping export` works again from" in said
    again = harness.command("export ris")
    assert "The reading list was exported here at" in again
    assert len(harness.standin.calls_to("files.completeUploadExternal")) == 1, "the file was shared at most once"


def test_unsave_of_a_paper_paperping_never_saw_stores_nothing_and_says_so(harness: Harness, db: Database) -> None:
    """Taking back a save of a link nobody shared or saved: there is nothing to take back, and PaperPing neither
    stores the paper nor queues it to be looked up on the member's word."""
    with db.connection() as conn:
        papers = conn.execute("SELECT count(*) FROM papers").fetchone()
    said = harness.command("unsave https://arxiv.org/abs/2401.99999")
    assert said == "`arxiv 2401.99999` is not on this channel's reading list."
    with db.connection() as conn:
        assert conn.execute("SELECT count(*) FROM papers").fetchone() == papers
        assert conn.execute("SELECT count(*) FROM index_queue").fetchone() == (0,)


def test_two_exports_asked_at_once_upload_one_file(harness: Harness, db: Database) -> None:
    """Two members ask for an export at the same moment, while reading the list takes time (a long list; here the
    papers' table is held): one file is uploaded, the other ask is told about the cooldown and reads nothing."""
    assert "Saved" in harness.command("save https://arxiv.org/abs/1706.03762")
    name_papers(db)
    answers: list[str] = []
    with db.connection() as held:
        held.execute("LOCK TABLE papers IN ACCESS EXCLUSIVE MODE")
        asks = [
            threading.Thread(target=lambda u=u: answers.append(harness.command("export bibtex", user=u, timeout=15)))
            for u in ("U2", "U3")
        ]
        for ask in asks:
            ask.start()
        time.sleep(1.5)  # both asks are under way before the list can be read
    for ask in asks:
        ask.join(20)
    harness.settle()
    assert len(harness.standin.files) == 1, "one upload"
    assert len(harness.standin.calls_to("files.getUploadURLExternal")) == 1
    assert any("works again from" in a for a in answers), answers
