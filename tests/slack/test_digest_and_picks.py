"""A weekly digest, personal picks and the group's tone, through the real bolt app and slack_sdk against the
Slack stand-in (and the LLM stand-in): a digest of five papers with varied hooks and buttons per paper; a
member's direct message that holds only what they may see; the length and language a channel chose reach
the prompt, and the monthly report says which lengths drew answers."""

from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from slack_sdk import WebClient

from bot.delivery.picks_dm import send_due_picks
from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.models import Channel, Message, PaperRef
from socialrag.recommender import Recommender
from socialrag.report.data import load_report_data
from socialrag.report.page import month_summary
from tests.slack.test_feedback import click, send
from tests.support.harness import Harness, T, count, lab_state
from tests.support.labbase import AS_OF, SHARED, CachedEmbedder, build_lab
from tests.support.openai_standin import OpenAIStandIn, chain_answer
from tests.support.service_lab import wait_for
from tests.support.slack_standin import SlackStandIn
from tests.support.slots import slot_worker


def test_a_weekly_digest_of_five_papers(harness: Harness, db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    assert "Try `/paperping frequency" in harness.command("frequency weekly-digest 9")
    assert "digest of 5 papers" in harness.command("frequency weekly-digest 5")
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    harness.ctx.channels.activate(T, "C1", AS_OF)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=AS_OF, weekdays_only=False)
    with Recommender(harness.settings, db, embedder=CachedEmbedder()) as rec:
        worker = slot_worker(db, lambda team: client, rec, clock=lambda: AS_OF)
        assert worker.tick() == 1
    (post,) = [p for p in harness.standin.posts if p.get("metadata")]
    print(json.dumps(post["blocks"], indent=1)[:4000])
    rows = [b for b in post["blocks"] if b["type"] == "actions"]
    papers = [int(b["block_id"].split(":")[1]) for b in rows]
    assert len(rows) == 5 and len(set(papers)) == 5, "one row of buttons per paper"
    assert all([e["text"]["text"] for e in b["elements"]] == ["Relevant", "Not for us", "Save"] for b in rows)
    threads = [b["elements"][0]["text"] for b in post["blocks"] if b["type"] == "context"]
    assert len(threads) == len(set(threads)), "no two papers hang on the same earlier thread"
    with db.connection() as conn:
        stored = conn.execute("SELECT draft FROM recommendations WHERE status = 'posted'").fetchone()[0]
        nxt = storage.settings.load_channel_settings(conn, T, "C1").next_post_at
    related = [s["related_paper_id"] for d in stored["digest"] for s in d["signals"] if s["related_paper_id"]]
    assert len({d["paper"]["paper_id"] for d in stored["digest"]}) == 5
    # across the digest's papers (one paper may name the same earlier paper in its h5 and its h7)
    earlier = [{s["related_paper_id"] for s in d["signals"] if s["kind"] in ("h5", "h7")} for d in stored["digest"]]
    assert sum(len(e) for e in earlier) == len(set().union(*earlier)) and related
    assert nxt is not None and nxt - AS_OF >= timedelta(days=6), "the next digest comes a week later"
    # a save on the third paper counts for that paper only, and puts it on the reading list
    send(harness, click(harness, post, "U3", "save", AS_OF.timestamp() + 99, paper=papers[2]))
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:save'") == 1
    shown = harness.standin.updates[-1]["blocks"]
    labels = {b["block_id"]: [e["text"]["text"] for e in b["elements"]] for b in shown if b["type"] == "actions"}
    assert labels[f"paperping_feedback:{papers[2]}"] == ["Relevant", "Not for us", "Save · 1"]
    assert sum(1 for v in labels.values() if "Save · 1" in v) == 1
    title = stored["digest"][2]["paper"]["title"]
    assert title[:30] in harness.command("list")
    # a question in the digest's thread is about the paper whose title it names (no LLM here: its abstract)
    harness.ctx.recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    asked = f"{AS_OF.timestamp() + 300:.6f}"
    question = f"<@UBOT> what does {title} find?"
    harness.event({"type": "app_mention", "channel": "C1", "user": "U2", "text": question, "ts": asked,
                   "thread_ts": post["ts"], "event_ts": asked})  # fmt: skip
    wait_for(lambda: any(p.get("thread_ts") == post["ts"] for p in harness.standin.posts), 10, "the answer")
    (answer,) = [p for p in harness.standin.posts if p.get("thread_ts") == post["ts"]]
    assert "no language model is configured" in answer["text"] and title[:30] in answer["text"]
    # deleting the digest takes its papers' clicks with it
    harness.event({"type": "message", "subtype": "message_deleted", "channel": "C1", "deleted_ts": post["ts"]})
    assert count(db, "SELECT count(*) FROM reactions WHERE emoji = 'button:save'") == 0
    # in a digest channel, `/paperping now` posts a digest
    assert harness.command("now")
    with Recommender(harness.settings, db, embedder=CachedEmbedder()) as rec:
        worker = slot_worker(db, lambda team: client, rec)
        assert worker.tick() == 1
    again = [p for p in harness.standin.posts if p.get("metadata")][-1]
    assert again["ts"] != post["ts"] and sum(1 for b in again["blocks"] if b["type"] == "actions") >= 3
    offered = [int(b["block_id"].split(":")[1]) for b in again["blocks"] if b["type"] == "actions"]
    assert not set(offered) & set(papers), "none of the deleted digest's five papers is offered again"


def _second_channel(db: Database) -> None:
    """#secret-lab, which U1 is in and U3 is not: it shares a paper close to what U3 reads."""
    with db.connection() as conn:
        storage.workspaces.upsert_channel(conn, Channel(T, "C2", "secret-lab"))
        storage.workspaces.add_channel_member(conn, T, "C2", "U1")
        storage.settings.upsert_channel_setting(conn, T, "C2", active=True)
        ref = PaperRef("acl", SHARED["deceive"], f"https://aclanthology.org/{SHARED['deceive']}/")
        at = AS_OF - timedelta(days=3)
        index_messages(
            conn,
            [
                Message(
                    T,
                    "C2",
                    "1610000000.000100",
                    "U1",
                    "our secret",
                    at,
                    permalink="https://lab.slack.com/archives/C2/p1",
                    papers=(ref,),
                )
            ],
        )


def test_personal_picks_hold_only_what_the_member_may_see(harness: Harness, db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    _second_channel(db)
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    harness.ctx.recommender = recommender
    assert "once a week" in harness.command("for-me on", user="U3")
    with db.connection() as conn:
        assert storage.member_picks.load_picks_due(conn, datetime.now(UTC)) == [], "the first comes in a week"
    answer = harness.command("for-me now", user="U3")
    assert answer.startswith("Sent you 5 papers"), answer
    (dm,) = [p for p in harness.standin.posts if p["channel"] == "DU3"]
    text = dm["text"]
    print(text)
    assert text.count("\n• ") == 5 and "from <#C1>" in text
    assert "C2" not in text and "secret" not in text, "nothing of a channel U3 is not in"
    assert "<@" not in text and "<!" not in text
    for name in ("graham", "ben", "dee", "chen"):
        assert not re.search(rf"\b{name}\b", text, re.IGNORECASE), f"no other member: {name}"
    first = set(re.findall(r"<(https://aclanthology[^|>]+)\|", text))
    assert len(first) == 5
    # each one ranks every channel of the member: once every ten minutes, said with when it works again
    again = harness.command("for-me now", user="U3")
    assert "`/paperping for-me now` works again from" in again
    assert len([p for p in harness.standin.posts if p["channel"] == "DU3"]) == 1
    # the weekly run a week later: sent again, none of the same papers
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    later = datetime.now(UTC) + timedelta(days=8)
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 1
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 0, "once a week"
    second = [p for p in harness.standin.posts if p["channel"] == "DU3"][-1]["text"]
    assert not first & set(re.findall(r"<(https://aclanthology[^|>]+)\|", second))
    # a member in no channel with PaperPing gets no empty message, and `off` stops the weekly ones
    assert "no channel with PaperPing" in harness.command("for-me now", user="UG1")
    harness.command("for-me off", user="U3")
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(days=8)) == 0
    recommender.close()


def test_length_and_language_reach_the_prompt_and_the_report(db: Database, tmp_path: Path) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    model = OpenAIStandIn(chain_answer)
    standin = SlackStandIn(lab_state()).start()
    nowhere = "http://127.0.0.1:9/"
    settings = {"offline": False, "openai_base_url": model.base_url, "s2_api_url": nowhere, "arxiv_api_url": nowhere}
    harness = Harness(db, standin, tmp_path, **settings)
    try:
        assert "explanations here are short" in harness.command("length short")
        answer = harness.command("language de")
        assert "German" in answer and "stay in English" in answer
        assert "Try `/paperping language de`" in harness.command("language klingon")
        client = WebClient(token="xoxb-test", base_url=standin.url)
        harness.ctx.channels.activate(T, "C1", AS_OF)
        with db.connection() as conn:
            storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=AS_OF, weekdays_only=False)
        with Recommender(harness.settings, db, embedder=CachedEmbedder()) as rec:
            assert slot_worker(db, lambda team: client, rec, clock=lambda: AS_OF).tick() == 1
        final = [p for p in model.prompts if p.startswith("You edit a draft")][-1]
        assert "at most 200 characters" in final and "Write the final message in German" in final
        with db.connection() as conn:
            length, explanation = conn.execute(
                "SELECT explanation_length, draft->>'explanation' FROM recommendations WHERE status = 'posted'"
            ).fetchone()
            report = load_report_data(conn, T, "C1", since=AS_OF - timedelta(days=1), until=AS_OF + timedelta(days=9))
        assert length == "short" and len(explanation) <= 200
        _, text = month_summary(report, tmp_path / "month.png")
        assert "By explanation length: short: 0 of 1 answered" in text
    finally:
        harness.stop()
        standin.stop()
        model.stop()


def test_a_dm_slack_refuses_for_good_stops_the_picks_and_says_why(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """A refused DM (`cannot_dm_bot`, `user_not_found`, too long) was retried every hour for ever, each time
    ranking every channel of the member. A refusal for good now stops the member's picks; status and App Home
    say why, and `for-me on` starts them again."""
    from bot.views.home_tab import build_home

    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    harness.ctx.recommender = recommender
    assert "once a week" in harness.command("for-me on", user="U3")
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    gone = harness.standin.state.users.pop("U3")  # the account Slack no longer knows
    later = datetime.now(UTC) + timedelta(days=8)
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 0
    opened = len(harness.standin.calls_to("conversations.open"))
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(hours=2)) == 0
    assert len(harness.standin.calls_to("conversations.open")) == opened, "not tried again every hour"
    with db.connection() as conn:
        mine = storage.settings.load_member_setting(conn, T, "U3")
    assert not mine.picks_enabled and mine.picks_stopped_reason == "Slack no longer knows this account"
    harness.standin.state.users["U3"] = gone
    assert "Your personal picks stopped: Slack no longer knows this account" in harness.command("status", user="U3")
    assert "stopped: Slack no longer knows this account" in json.dumps(build_home(harness.ctx, T, "U3"))
    assert "once a week" in harness.command("for-me on", user="U3")
    with db.connection() as conn:
        assert storage.settings.load_member_setting(conn, T, "U3").picks_stopped_reason is None
    recommender.close()


def test_a_workspace_refusal_keeps_each_members_picks_on(harness: Harness, db: Database, tmp_path: Path) -> None:
    """PaperPing lacking `im:write`, or its token dead (`account_inactive` is Slack's word for a bot token of a
    deleted workspace or user, not for the member): before, each member's weekly picks stopped for good, with
    that reason, and stayed off after an admin reinstalled PaperPing. Now they stay on and are tried a day later."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    harness.ctx.recommender = recommender
    for user in ("U3", "U4"):
        assert "once a week" in harness.command("for-me on", user=user)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    later = datetime.now(UTC) + timedelta(days=8)
    refusals = {"U3": "missing_scope", "U4": "account_inactive"}
    harness.standin.rewrite["conversations.open"] = lambda call, answer: (
        {"ok": False, "error": refusals[call.params["users"]]} if call.params.get("users") in refusals else answer
    )
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 0
    with db.connection() as conn:
        mine = [storage.settings.load_member_setting(conn, T, u) for u in ("U3", "U4")]
    assert all(m.picks_enabled and m.picks_stopped_reason is None for m in mine), "kept on"
    assert all(m.picks_next_at is not None and m.picks_next_at > later + timedelta(hours=1) for m in mine)
    opened = len(harness.standin.calls_to("conversations.open"))
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(hours=2)) == 0
    assert len(harness.standin.calls_to("conversations.open")) == opened, "not every hour"
    harness.standin.rewrite.pop("conversations.open")
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(days=1)) == 2
    assert sorted(p["channel"] for p in harness.standin.posts if p["channel"].startswith("D")) == ["DU3", "DU4"]
    recommender.close()


def test_hostile_titles_and_links_keep_the_picks_dm_within_what_slack_takes() -> None:
    """Titles of 200 `&` (each five characters once escaped) and 2,000-character addresses: before, a line passed
    Slack's 3,000 characters and was cut inside its link, and the message passed the ~13,000 Slack takes
    (`msg_blocks_too_long`), so the member's picks were refused and ranked again every hour, never sent."""
    from bot.delivery.picks_dm import picks_text
    from bot.views.post_blocks import mrkdwn, sections
    from socialrag.recommender import Picks
    from socialrag.recommender.serve.on_demand import Like
    from socialrag.recommender.serve.picks import Pick

    url = "https://doi.org/10.1/" + "x" * 2000
    likes = [Like(k, "&" * 300, url, 0.9, "<&>" * 100, url + "?thread", None) for k in range(5)]
    text = picks_text(Picks([Pick("C1", like) for like in likes]))
    blocks = [{"type": "section", "text": mrkdwn(part)} for part in sections(text)]
    assert SlackStandIn.refused_blocks({"blocks": json.dumps(blocks)}) is None
    assert text.count("\n• ") == 5 and "<!" not in text and "<@" not in text
    assert all(line.count("<") == line.count(">") for line in text.split("\n")), "no link cut in two"


def test_a_dm_section_stays_within_slacks_3000_characters() -> None:
    from bot.views.post_blocks import SECTION_LIMIT, sections

    text = "*Papers picked for you*\n" + "\n".join(f"• {'a very long title ' * 40} {k}" for k in range(8))
    parts = sections(text)
    assert all(len(p) <= SECTION_LIMIT for p in parts) and len(parts) > 1
    assert "\n".join(parts) == text, "whole lines, nothing lost"
    from bot.views.post_blocks import section_messages

    assert sections("x" * 3000 + "\n\n") == ["x" * 3000] and section_messages(" \n ") == [], "no empty section"
    long = sections("word " * 1500 + "x" * 5000)
    assert all(len(p) <= SECTION_LIMIT for p in long), "a line longer than a section is split"
    assert "".join(long).replace(" ", "").replace("\n", "") == ("word" * 1500 + "x" * 5000), "nothing lost"


def test_a_network_failure_on_one_members_picks_costs_only_that_member_an_hour(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """Slack did not answer U3's conversations.open in time: before, the error escaped the weekly run after U3's
    week was claimed (U3 missed that week, and the members after U3 were skipped for that tick)."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    harness.ctx.recommender = recommender
    for user in ("U3", "U4"):
        assert "once a week" in harness.command("for-me on", user=user)
    client = WebClient(token="xoxb-test", base_url=harness.standin.url, timeout=1)
    harness.standin.hold_seconds = 3.0
    harness.standin.hold = lambda call: call.method == "conversations.open" and call.params.get("users") == "U3"
    later = datetime.now(UTC) + timedelta(days=8)
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 1
    assert [p["channel"] for p in harness.standin.posts if p["channel"].startswith("D")] == ["DU4"]
    with db.connection() as conn:
        retry = storage.settings.load_member_setting(conn, T, "U3").picks_next_at
    assert retry is not None and retry <= later + timedelta(hours=1), "U3 is tried again within the hour"
    harness.standin.hold = None
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(hours=1)) == 1
    assert [p["channel"] for p in harness.standin.posts if p["channel"].startswith("D")] == ["DU4", "DU3"]
    recommender.close()


def test_a_digest_names_no_member_who_left_the_channel(harness: Harness, db: Database, tmp_path: Path) -> None:
    """ben shared threads the week's papers hang on, then left the channel: the digest still links those threads
    but names him nowhere, as context replies and the planner do not."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    harness.event({"type": "member_left_channel", "user": "U2", "channel": "C1", "team": T, "event_ts": "2.0"})
    assert "digest of 5 papers" in harness.command("frequency weekly-digest 5", user="U3")
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, "C1", next_post_at=AS_OF, weekdays_only=False)
    with Recommender(harness.settings, db, embedder=CachedEmbedder()) as rec:
        assert slot_worker(db, lambda team: client, rec, clock=lambda: AS_OF).tick() == 1
    (post,) = [p for p in harness.standin.posts if p.get("metadata")]
    shown = json.dumps(post["blocks"]) + post["text"]
    assert "archives/C1/p" in shown, "the earlier threads are linked"
    assert "ben" not in shown and "U2" not in shown
    with db.connection() as conn:
        stored = json.dumps(conn.execute("SELECT draft FROM recommendations WHERE status = 'posted'").fetchone()[0])
    assert '"U2"' not in stored, "nor does what PaperPing keeps of the post rest on him"


def _quiet_picks(harness: Harness, db: Database, tmp_path: Path) -> tuple[Recommender, WebClient, datetime]:
    """U3's weekly picks on, a week on, with a client that waits a second for Slack's answers."""
    build_lab(db, tmp_path, CachedEmbedder())
    harness.ctx.channels.activate(T, "C1", AS_OF)
    recommender = Recommender(harness.settings, db, embedder=CachedEmbedder())
    harness.ctx.recommender = recommender
    assert "once a week" in harness.command("for-me on", user="U3")
    return recommender, WebClient(token="xoxb-test", base_url=harness.standin.url, timeout=1), datetime.now(UTC)


def _dms(harness: Harness, channel: str = "DU3") -> list[dict[str, Any]]:
    return [p for p in harness.standin.posts if p["channel"] == channel]


def test_a_dm_slack_took_but_never_answered_is_not_sent_again(harness: Harness, db: Database, tmp_path: Path) -> None:
    """Slack posted U3's picks but its answer came after the client's timeout: before, the run within the hour sent
    the same picks again. Now that run finds PaperPing's own message of that try in the DM and records it; a message
    of another app carrying the same metadata is not taken for it."""
    recommender, client, now = _quiet_picks(harness, db, tmp_path)
    harness.standin.hold_seconds = 3.0
    harness.standin.late_answer = lambda call: call.method == "chat.postMessage" and call.params["channel"] == "DU3"
    later = now + timedelta(days=8)
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 0
    (dm,) = _dms(harness)
    with db.connection() as conn:
        assert storage.member_picks.load_picks_sent(conn, T, "U3") == set(), "nothing recorded: no answer came"
        retry = storage.settings.load_member_setting(conn, T, "U3").picks_next_at
    assert retry is not None and retry <= later + timedelta(hours=1)
    harness.standin.late_answer = None
    try_key = f"{later.timestamp():.6f}"  # the try the DM's metadata names
    forged = {"event_type": "paperping_picks", "event_payload": {"attempt": try_key, "picks": ["999999:C1"]}}
    harness.standin.state.messages["DU3"].append(
        {"type": "message", "user": "UOTHER", "bot_id": "BOTHER", "ts": f"{int(time.time()) + 60}.000001",
         "text": "not PaperPing's", "metadata": forged}
    )  # fmt: skip
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(hours=1)) == 1
    assert _dms(harness) == [dm], "not sent twice"
    assert dm["metadata"]["event_payload"]["attempt"] == try_key
    shown = {int(p.split(":")[0]) for p in dm["metadata"]["event_payload"]["picks"]}
    with db.connection() as conn:
        assert storage.member_picks.load_picks_sent(conn, T, "U3") == shown and len(shown) == 5
        assert storage.settings.load_member_setting(conn, T, "U3").picks_attempt_at is None
    assert len(harness.standin.calls_to("conversations.history")) == 1, "one page of the DM read, once"
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(days=8)) == 1
    assert len(_dms(harness)) == 2 and len(harness.standin.calls_to("conversations.history")) == 1
    recommender.close()


def test_a_member_who_left_without_an_event_gets_no_picks_from_that_channel(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """U3 left #reading-group, where their picks came from, and Slack's `member_left_channel` never came: the stored
    list, read within the day, still named U3, and the DM drew from the channel. Now Slack confirms the member's
    channels before the DM goes; the picks are ranked again without the one they left."""
    recommender, client, now = _quiet_picks(harness, db, tmp_path)
    harness.standin.state.channels["C2"] = {"id": "C2", "name": "reading-group", "members": ["U3", "UBOT"]}
    ref = PaperRef("acl", SHARED["deceive"], f"https://aclanthology.org/{SHARED['deceive']}/")
    link = "https://lab.slack.com/archives/C2/p1"
    shared = Message(T, "C2", "1610000000.000100", "U3", "read", AS_OF, permalink=link, papers=(ref,))
    with db.connection() as conn:
        storage.workspaces.upsert_channel(conn, Channel(T, "C2", "reading-group"))
        storage.settings.upsert_channel_setting(conn, T, "C2", active=True)
        storage.workspaces.replace_channel_members(conn, T, "C2", ["U3"], datetime.now(UTC))
        index_messages(conn, [shared])
        storage.settings.upsert_member_setting(conn, T, "U3", picks_next_at=now)  # due now: every list is fresh
    assert {p.channel_id for p in recommender.personal_picks(T, "U3").picks} == {"C2"}
    harness.standin.leave_quietly("C2", "U3")
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, datetime.now(UTC)) == 1
    (dm,) = _dms(harness)
    assert "C2" not in dm["text"] and dm["text"].count("from <#C1>") == 5
    with db.connection() as conn:
        assert not storage.workspaces.in_channel(conn, T, "C2", "U3"), "the stored list follows Slack"
    harness.standin.leave_quietly("C1", "U3")
    assert "no channel with PaperPing" in harness.command("for-me now", user="U3")
    recommender.close()


def test_a_membership_check_slack_does_not_answer_sends_nothing_until_it_does(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """Slack failed to list U3's channels: before, the DM went from the stored list all the same. Now nothing goes
    from a channel Slack did not confirm; the picks are tried again within the hour."""
    recommender, client, now = _quiet_picks(harness, db, tmp_path)
    harness.standin.fail_next["users.conversations"] = 1
    later = now + timedelta(days=8)
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 0
    assert _dms(harness) == []
    harness.standin.rate_limits["users.conversations"] = 1  # a 429 is waited out as the pacer waits any
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(hours=1)) == 1
    assert len(_dms(harness)) == 1 and "from <#C1>" in _dms(harness)[0]["text"]
    recommender.close()


def _lost_answer(harness: Harness, db: Database, tmp_path: Path) -> tuple[Recommender, WebClient, datetime, set[int]]:
    """U3's weekly picks posted a week on, Slack's answer lost: the picks the DM names, nothing recorded."""
    recommender, client, now = _quiet_picks(harness, db, tmp_path)
    harness.standin.hold_seconds = 3.0
    harness.standin.late_answer = lambda call: call.method == "chat.postMessage" and call.params["channel"] == "DU3"
    later = now + timedelta(days=8)
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 0
    harness.standin.late_answer = None
    (dm,) = _dms(harness)
    return recommender, client, later, {int(p.split(":")[0]) for p in dm["metadata"]["event_payload"]["picks"]}


def test_a_lost_answers_dm_whose_paper_went_meanwhile_is_recorded_without_it(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """One of the papers of a DM whose answer was lost is merged into another before the next try finds the DM:
    before, recording it failed on the gone paper at every try, hourly, and the member's picks never went again.
    Now the DM is recorded without the gone paper, and the try closed."""
    recommender, client, later, shown = _lost_answer(harness, db, tmp_path)
    gone = min(shown)
    with db.connection() as conn:
        keep = conn.execute("SELECT min(id) FROM papers WHERE id <> ALL(%(s)s)", {"s": sorted(shown)}).fetchone()[0]
        storage.identities.merge_papers(conn, keep, [gone])
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(hours=1)) == 1
    assert len(_dms(harness)) == 1, "not sent twice"
    with db.connection() as conn:
        assert storage.member_picks.load_picks_sent(conn, T, "U3") == shown - {gone}
        assert storage.settings.load_member_setting(conn, T, "U3").picks_attempt_at is None
    recommender.close()


def test_a_lost_answers_dm_that_cannot_be_looked_for_holds_the_picks_a_day_not_for_good(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """The DM of a lost answer cannot be looked for (an install without `im:history`): before, every try failed on
    the look and the member's picks never went again. Now a try is looked for a day; after that the picks go."""
    recommender, client, later, _shown = _lost_answer(harness, db, tmp_path)
    harness.standin.missing_scopes.add("conversations.history")
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later + timedelta(hours=1)) == 0
    assert len(_dms(harness)) == 1
    with db.connection() as conn:
        held = storage.settings.load_member_setting(conn, T, "U3").picks_next_at
    assert held is not None
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, held) == 1
    assert len(_dms(harness)) == 2
    with db.connection() as conn:
        assert storage.settings.load_member_setting(conn, T, "U3").picks_attempt_at is None
    recommender.close()


def test_a_channel_list_slack_answers_without_channels_removes_no_membership(
    harness: Harness, db: Database, tmp_path: Path
) -> None:
    """Slack answered `users.conversations` with `ok` and no list of channels: before, every channel of U3 was taken
    for one they left and removed from the stored lists. Now that answer is no answer: nothing is removed or sent,
    and the picks go at the next try."""
    recommender, client, now = _quiet_picks(harness, db, tmp_path)
    later = now + timedelta(days=8)
    for odd in ({"ok": True}, {"ok": True, "channels": None}, {"ok": True, "channels": [], "response_metadata": "x"}):
        harness.standin.rewrite["users.conversations"] = lambda call, answer, odd=odd: odd
        assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 0
        with db.connection() as conn:
            assert storage.workspaces.in_channel(conn, T, "C1", "U3"), odd
            storage.settings.upsert_member_setting(conn, T, "U3", picks_next_at=later)
    assert _dms(harness) == []
    del harness.standin.rewrite["users.conversations"]
    assert send_due_picks(db, recommender, harness.ctx.pacer, lambda team: client, later) == 1
    assert "from <#C1>" in _dms(harness)[0]["text"]
    recommender.close()


def test_for_me_now_says_when_slack_may_have_taken_the_dm(harness: Harness, db: Database, tmp_path: Path) -> None:
    """Slack answers the DM with a server error (it may have posted it all the same): the member is told so, and
    when the command works again, rather than that nothing was sent."""
    _quiet_picks(harness, db, tmp_path)
    harness.standin.fail_next["chat.postMessage"] = 10
    answer = harness.command("for-me now", user="U3", timeout=20)
    assert "may have gone" in answer and "`/paperping for-me now` works again from" in answer, answer
    assert "nothing was sent" not in answer, answer
    with db.connection() as conn:
        assert storage.settings.load_member_setting(conn, T, "U3").picks_attempt_at is not None, "looked for first"


def test_picks_another_process_is_sending_are_not_sent_again(harness: Harness, db: Database, tmp_path: Path) -> None:
    """The weekly run was sending U3's picks (its try marked a moment ago) when U3 typed `for-me now`: the command
    took that try for one whose answer was lost, found no DM yet, and sent the picks a second time. Now a try under
    way for less than five minutes is the other process's, and the member is told their picks are on the way."""
    _quiet_picks(harness, db, tmp_path)
    with db.connection() as conn:
        storage.settings.upsert_member_setting(
            conn, T, "U3", picks_attempt_at=datetime.now(UTC) - timedelta(seconds=30)
        )
    answer = harness.command("for-me now", user="U3", timeout=20)
    assert "being sent right now" in answer, answer
    assert _dms(harness) == [] and harness.standin.calls_to("conversations.history") == []
