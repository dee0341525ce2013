"""Exactly one post per slot, however slow a recommendation is and wherever a process dies on the way; one
channel's failure never stops the others; a failure that cannot heal stops the channel and says why."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from slack_sdk import WebClient

from bot.delivery.slot_posts import SlackOutlet
from bot.slack.pacer import SlackPacer
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.models import Digest, Draft, PaperMeta, Style
from socialrag.recommender import Posted, SlotWorker
from socialrag.recommender.retrieve.candidates import CandidateQuery
from socialrag.recommender.serve.pipeline import gather_candidates
from socialrag.recommender.serve.service import Recommender
from tests.support.labbase import CachedEmbedder, build_lab
from tests.support.multiworker import T, add_due_channels
from tests.support.slack_standin import SlackStandIn, SlackState
from tests.support.slots import Chooser, Recommend, slot_worker

pytestmark = pytest.mark.slow


@pytest.fixture
def setup(db: Database, tmp_path: Path) -> Iterator[dict[str, Any]]:
    build_lab(db, tmp_path, CachedEmbedder())
    channels = add_due_channels(db, 2, datetime.now(UTC))
    members = {"U2": {"id": "U2", "team_id": T, "name": "ben"}}  # who types `/paperping now` below
    slack = SlackStandIn(SlackState(channels={c: {"id": c, "name": c} for c in channels}, users=members)).start()
    recommender = Recommender(Settings(home=tmp_path, offline=True), db, embedder=CachedEmbedder())
    yield {"channels": channels, "slack": slack, "recommend": recommender.draft_for_slot}
    recommender.close()
    slack.stop()


def slow(recommend: Recommend, seconds: float, calls: list[str], entered: threading.Event | None = None) -> Recommend:
    def wrapped(team: str, channel: str, now: datetime, style: Style | None) -> Draft | None:
        calls.append(channel)
        if entered is not None:
            entered.set()  # the worker has claimed the slot by now
        time.sleep(seconds)
        return recommend(team, channel, now, style)

    return wrapped


def worker(db: Database, slack: SlackStandIn, recommend: Recommend, **kw: Any) -> SlotWorker:
    client = WebClient(token="xoxb-test", base_url=slack.url, retry_handlers=[])
    return slot_worker(db, lambda team: client, recommend, **kw)


def only_first_channel(db: Database, channels: list[str]) -> None:
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(
            conn, T, channels[1], next_post_at=datetime.now(UTC) + timedelta(days=1)
        )


@pytest.mark.parametrize("renewed", [True, False], ids=["lease-renewed", "lease-lapsed"])
def test_a_slow_recommendation_and_a_second_worker_make_one_post(
    db: Database, setup: dict[str, Any], renewed: bool
) -> None:
    """Worker A's recommendation outlives its lease. Renewed, worker B never gets the slot; lapsed, B takes
    the slot over and posts, and A, losing the compare-and-set, does not."""
    slack, channels = setup["slack"], setup["channels"]
    only_first_channel(db, channels)
    calls: list[str] = []
    lease = timedelta(seconds=2)  # renewed every 0.2 s, it would take a stall of 1.8 s to lapse
    entered = threading.Event()
    a_slow = slow(setup["recommend"], 6.0, calls, entered)
    a = worker(db, slack, a_slow, lease=lease, renew_every=0.2 if renewed else 60)
    b = worker(db, slack, slow(setup["recommend"], 0.0, calls), lease=lease, renew_every=0.2)
    served_a: list[int] = []
    thread = threading.Thread(target=lambda: served_a.append(a.tick()))
    thread.start()
    assert entered.wait(30), "A claimed the slot"
    time.sleep(2.6)  # A's first lease, taken before it began to recommend, has run out
    served_b = b.tick()
    thread.join(timeout=30)
    posts = [p for p in slack.posts if p["channel"] == channels[0]]
    assert len(posts) == 1, posts
    with db.connection() as conn:
        rows = conn.execute("SELECT status, claimed_by, message_ts FROM recommendations").fetchall()
    assert len(rows) == 1 and rows[0][0] == "posted" and rows[0][2] == posts[0]["ts"]
    if renewed:
        assert served_b == 0 and rows[0][1] == a.worker_id, "B never saw the channel due"
    else:
        assert calls.count(channels[0]) == 2 and rows[0][1] == b.worker_id, "B took the lapsed slot over"


def test_one_failing_channel_does_not_stop_the_others(db: Database, setup: dict[str, Any]) -> None:
    slack, channels = setup["slack"], setup["channels"]

    def flaky(team: str, channel: str, now: datetime, style: Style | None) -> Draft | None:
        if channel == channels[0]:
            json.loads("<html>Service Unavailable</html>")  # a source answering HTML
        return setup["recommend"](team, channel, now, style)

    w = worker(db, slack, flaky)
    assert w.tick() == 2
    assert [p["channel"] for p in slack.posts] == [channels[1]]
    with db.connection() as conn:
        first = storage.settings.load_channel_settings(conn, T, channels[0])
    assert first.active and first.failures == 1 and first.stopped_reason is None
    retry_in = first.next_post_at - datetime.now(UTC)
    assert timedelta(minutes=4) < retry_in <= timedelta(minutes=5), "a transient failure retries after 5 minutes"
    with db.connection() as conn:  # the second failure in a row waits twice as long
        storage.settings.upsert_channel_setting(conn, T, channels[0], next_post_at=datetime.now(UTC))
    w.tick()
    with db.connection() as conn:
        again = storage.settings.load_channel_settings(conn, T, channels[0])
    assert again.failures == 2 and again.next_post_at - datetime.now(UTC) > timedelta(minutes=9)


def test_a_permanent_failure_stops_the_channel_and_says_why(db: Database, setup: dict[str, Any]) -> None:
    slack, channels = setup["slack"], setup["channels"]
    only_first_channel(db, channels)
    del slack.state.channels[channels[0]]  # the channel is gone: chat.postMessage answers channel_not_found
    w = worker(db, slack, setup["recommend"])
    assert w.tick() == 1
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, channels[0])
    assert not s.active and s.stopped_reason == "slack: channel_not_found"
    assert w.tick() == 0, "no retry of what cannot succeed"


def test_a_source_answering_nonsense_costs_only_its_candidates(db: Database, setup: dict[str, Any]) -> None:
    class Broken:
        name = "broken"

        def fetch_candidates(self, conn: Any, query: CandidateQuery) -> list[int]:
            raise json.JSONDecodeError("Expecting value", "<html>", 0)

    class One:
        name = "one"

        def fetch_candidates(self, conn: Any, query: CandidateQuery) -> list[int]:
            return [12345]

    with db.connection() as conn:
        from socialrag.recommender.retrieve.context import load_channel_context

        ctx = load_channel_context(conn, T, setup["channels"][0], datetime.now(UTC), "all-MiniLM-L6-v2")
        found = gather_candidates(conn, [Broken(), One()], CandidateQuery(ctx, {}, "all-MiniLM-L6-v2", None))
    assert found == {12345: "one"}


def test_now_has_a_cooldown(db: Database, setup: dict[str, Any]) -> None:
    from bot.app_context import AppContext
    from bot.commands import run_command

    slack, channels = setup["slack"], setup["channels"]
    ctx = AppContext(Settings(home=Path("."), offline=True), db)
    client = WebClient(token="xoxb-test", base_url=slack.url)
    body = {"team_id": T, "channel_id": channels[1], "user_id": "U2", "text": "now"}
    assert run_command(ctx, client, body).startswith("On it")
    assert run_command(ctx, client, body) == "A recommendation is already on its way here."
    with db.connection() as conn:
        storage.posts.schedule_next(
            conn, T, channels[1], datetime.now(UTC) + timedelta(days=1), posted_at=datetime.now(UTC)
        )
    assert "works again from" in run_command(ctx, client, body)
    # the cooldown ends at 03:32:40: the answer names 03:33, the first minute at which asking works
    from bot.commands.about import NOW_COOLDOWN

    posted = datetime(2026, 11, 24, 3, 32, 40, tzinfo=UTC) - NOW_COOLDOWN
    with db.connection() as conn:
        storage.posts.schedule_next(conn, T, channels[1], posted + timedelta(days=1), posted_at=posted)
    said = run_command(ctx, client, body, now=datetime(2026, 11, 24, 3, 31, tzinfo=UTC))
    assert "works again from 03:33 UTC" in said, said


def test_one_now_at_a_time_waits_for_a_slot_under_way(db: Database, setup: dict[str, Any]) -> None:
    """A slot under way has no `now` cooldown, and each `now` typed meanwhile waited for it, holding one of the four
    slow workers for up to 90 seconds. Now one `now` of the channel waits; another is answered at once, and the
    post comes all the same."""
    from bot.app_context import AppContext
    from bot.commands import run_command

    slack, channel = setup["slack"], setup["channels"][1]
    ctx = AppContext(Settings(home=Path("."), offline=True), db)
    ctx.wake.scheduler = lambda: None  # as `paperping run` sets it: `now` waits to say what came of the slot
    client = WebClient(token="xoxb-test", base_url=slack.url)
    now = datetime.now(UTC)
    with db.connection() as conn:  # a worker has taken the channel's slot and is drafting its post
        storage.settings.upsert_channel_setting(conn, T, channel, slot_at=now, next_post_at=now)
    body = {"team_id": T, "channel_id": channel, "user_id": "U2", "text": "now"}
    said: dict[str, str] = {}
    first = threading.Thread(target=lambda: said.update(first=run_command(ctx, client, body)))
    first.start()
    time.sleep(1.5)  # the first `now` is waiting for the slot
    second = threading.Thread(target=lambda: said.update(second=run_command(ctx, client, body)))
    second.start()
    second.join(timeout=10)
    try:
        assert not second.is_alive(), "the second `now` waited for the slot too"
        assert said["second"] == "A recommendation is already on its way here; it will appear in the channel."
    finally:
        with db.connection() as conn:  # the worker posts
            storage.posts.schedule_next(conn, T, channel, now + timedelta(days=1), posted_at=datetime.now(UTC))
        first.join(timeout=10)
        second.join(timeout=100)
    assert said["first"] == "Posted: the recommendation is in the channel."


def test_a_key_that_cannot_open_the_token_never_stops_a_channel(db: Database, setup: dict[str, Any]) -> None:
    """A wrong or rotated PAPERPING_TOKEN_KEY is not the channel's fault: the post is retried later and the
    channel stays active, so setting the right key brings it back with no `/paperping resume`."""
    from slack_sdk.oauth.installation_store import Installation

    from bot.slack.installation_store import PostgresInstallationStore, token_for
    from socialrag.token_cipher import TokenCipher, generate_key

    channels = setup["channels"]
    only_first_channel(db, channels)
    saved_with = generate_key()
    PostgresInstallationStore(db, TokenCipher(saved_with)).save(
        Installation(team_id=T, bot_token="xoxb-lab", bot_user_id="UB", user_id="U1", bot_scopes=["chat:write"])
    )
    wrong = Settings(home=Path("."), slack_client_id="1.2", slack_client_secret="s", token_key=generate_key())
    asked: list[str] = []
    w = slot_worker(db, lambda team: WebClient(token=token_for(wrong, db, team)), slow(setup["recommend"], 0, asked))
    w.tick()  # the slot is taken and its post fails
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, channels[0])
    assert s.active and s.stopped_reason is None and s.failures == 1
    assert s.next_post_at is not None and s.next_post_at > datetime.now(UTC), "retried later, not given up"
    assert asked == [], "no recommendation (nor LLM call) is made for a post that cannot go out"


class BrokenOutlet(SlackOutlet):
    """A Slack outlet whose post raises ``error``: before Slack has the message, or just after Slack accepted it.
    ``SystemExit`` passes every handler of the worker, like a kill."""

    def __init__(self, client: WebClient, error: BaseException, *, after_slack: bool = False) -> None:
        super().__init__(lambda team: client, SlackPacer())
        self.error, self.after_slack = error, after_slack

    def post(self, draft: Draft | Digest, slot_key: str) -> Posted:
        if self.after_slack:
            super().post(draft, slot_key)
        raise self.error


@pytest.fixture
def one_channel(db: Database) -> Iterator[dict[str, Any]]:
    """#lab, due now, and a chooser that always drafts the same paper (counting its calls). The tests tick up to 25
    minutes past ``now`` and expect no second post of the day: within half an hour of midnight, ``now`` is an hour
    later, past midnight, so those ticks stay on the day of the post (a run at 23:44 UTC posted again at 00:06).
    Later, not earlier: the slot's row is stamped by the database's clock, and a draft older than the worker's
    ``now`` is what sends it looking for a post already made."""
    now = datetime.now(UTC)
    if (now + timedelta(minutes=30)).date() != now.date():
        now += timedelta(hours=1)
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T, domain="lab")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES (%s, 'C1', 'lab')", (T,))
        pid = storage.papers.ensure_papers(conn, [("arxiv", "1706.03762")])[("arxiv", "1706.03762")]
        due = {"active": True, "next_post_at": now - timedelta(minutes=1), "frequency": "daily"}
        anytime = {"weekdays_only": False, "post_start_hour": 0, "post_end_hour": 24}
        storage.settings.upsert_channel_setting(conn, T, "C1", **due, **anytime)
    link = "https://arxiv.org/abs/1706.03762"
    paper = PaperMeta(pid, "Attention Is All You Need", link, (), None, None, None, {"arxiv": "1706.03762"})
    calls: list[str] = []

    def recommend(team: str, channel: str, at: datetime, style: Style | None) -> Draft:
        calls.append(channel)
        return Draft(T, channel, paper, "template", "It proposes the Transformer.", ())

    slack = SlackStandIn(SlackState(channels={"C1": {"id": "C1", "name": "lab"}})).start()
    client = WebClient(token="xoxb-test", base_url=slack.url, retry_handlers=[])
    yield {"now": now, "slack": slack, "client": client, "chooser": Chooser(recommend), "calls": calls}
    slack.stop()


def next_day(at: datetime) -> datetime:
    """The start of the day after ``at`` (UTC, #lab's zone): a daily channel's next slot is then or later, whatever
    the hour of ``at``."""
    return (at + timedelta(days=1)).astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)


def killed_while_posting(db: Database, setup: dict[str, Any], *, after_slack: bool) -> SlotWorker:
    """A worker takes #lab's slot, records its draft, moves it to sending, and dies in ``chat.postMessage``."""
    now = setup["now"]
    outlet = BrokenOutlet(setup["client"], SystemExit("killed while posting"), after_slack=after_slack)
    dying = SlotWorker(db, outlet, setup["chooser"], clock=lambda: now)
    with pytest.raises(SystemExit):
        dying.tick()
    with db.connection() as conn:
        assert conn.execute("SELECT status FROM recommendations").fetchall() == [("sending",)]
    return dying


def ticks_at(db: Database, setup: dict[str, Any], at: datetime, worker_id: str | None = None) -> int:
    kw = {"worker_id": worker_id} if worker_id else {}
    return slot_worker(db, lambda team: setup["client"], setup["chooser"], clock=lambda: at, **kw).tick()


@pytest.mark.parametrize("restarted", [True, False], ids=["another-process", "same-process"])
def test_a_post_cut_short_before_slack_had_it_goes_out_once_when_its_lease_lapses(
    db: Database, one_channel: dict[str, Any], restarted: bool
) -> None:
    """The process is killed (or, living on, could not record the failure) after the slot moved to sending and
    before Slack had the post: once the lease lapses the next tick finds no post in the channel, drafts again,
    posts once, records it and schedules the next slot."""
    slack, now, calls = one_channel["slack"], one_channel["now"], one_channel["calls"]
    dying = killed_while_posting(db, one_channel, after_slack=False)
    same = None if restarted else dying.worker_id
    assert slack.posts == [] and calls == ["C1"]
    assert ticks_at(db, one_channel, now + timedelta(minutes=5), same) == 0, "the lease still holds the slot"
    later = now + timedelta(minutes=11)
    assert ticks_at(db, one_channel, later, same) == 1
    assert len(slack.posts) == 1 and calls == ["C1", "C1"]
    with db.connection() as conn:
        rows = conn.execute("SELECT status, message_ts FROM recommendations").fetchall()
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert rows == [("posted", slack.posts[0]["ts"])]
    assert s.last_post_at == later and s.next_post_at is not None and s.next_post_at >= next_day(later)
    assert ticks_at(db, one_channel, later + timedelta(minutes=11)) == 0 and len(slack.posts) == 1


def test_a_post_slack_accepted_before_the_kill_is_recorded_not_repeated(
    db: Database, one_channel: dict[str, Any]
) -> None:
    """Slack accepted the post and the process died before recording it: the next tick finds the post by its
    slot, records it, and neither recommends nor posts again. The post is stored as PaperPing's share of its paper
    from the slot's stored draft (reactions and replies to it feed back), and a followed author's paper in it waits
    no more, as if it had just been sent."""
    slack, now, calls = one_channel["slack"], one_channel["now"], one_channel["calls"]
    with db.connection() as conn:  # the paper is a followed author's new paper, waiting for a post
        conn.execute(
            """INSERT INTO author_news (team_id, channel_id, paper_id, s2_author_id, kind, noticed_at)
               SELECT %s, 'C1', paper_id, '1741101', 'followed', now() FROM paper_ids WHERE value = '1706.03762'""",
            (T,),
        )
    killed_while_posting(db, one_channel, after_slack=True)
    assert len(slack.posts) == 1
    later = now + timedelta(minutes=11)
    assert ticks_at(db, one_channel, later) == 1
    assert len(slack.posts) == 1 and calls == ["C1"], "found in the channel, not posted again"
    with db.connection() as conn:
        rows = conn.execute("SELECT status, message_ts FROM recommendations").fetchall()
        s = storage.settings.load_channel_settings(conn, T, "C1")
        stored = conn.execute(
            """SELECT m.ts, i.value FROM messages m JOIN message_papers mp ON mp.message_id = m.id
                 JOIN paper_ids i ON i.paper_id = mp.paper_id"""
        ).fetchall()
        news = conn.execute("SELECT status FROM author_news").fetchall()
    assert rows == [("posted", slack.posts[0]["ts"])]
    assert stored == [(slack.posts[0]["ts"], "1706.03762")], "the post is stored as PaperPing's share of its paper"
    assert news == [("posted",)], "the followed author's paper went out"
    assert s.last_post_at == later and s.next_post_at is not None and s.next_post_at >= next_day(later)


def test_a_digest_slack_accepted_before_the_kill_is_stored_as_a_share_of_each_of_its_papers(
    db: Database, one_channel: dict[str, Any]
) -> None:
    """A digest found in the channel after a kill is kept from the slot's stored digest, as one just sent is: the
    message found, a share of each paper it lists, and each paper under its own key for its buttons."""
    slack, now = one_channel["slack"], one_channel["now"]
    with db.connection() as conn:
        other = storage.papers.ensure_papers(conn, [("arxiv", "1810.04805")])[("arxiv", "1810.04805")]
    first = one_channel["chooser"].draft_for_slot(T, "C1", now, None)
    second = PaperMeta(other, "BERT", "https://arxiv.org/abs/1810.04805", (), None, None, None, {"arxiv": "1810.04805"})
    digest = Digest(T, "C1", (first, Draft(T, "C1", second, "template", "It pre-trains encoders.", ())))
    one_channel["chooser"] = Chooser(lambda team, channel, at, style: digest)  # type: ignore[arg-type,return-value]
    killed_while_posting(db, one_channel, after_slack=True)
    assert ticks_at(db, one_channel, now + timedelta(minutes=11)) == 1
    ts = slack.posts[0]["ts"]
    with db.connection() as conn:
        rows = conn.execute("SELECT status, message_ts FROM recommendations").fetchall()
        stored = conn.execute(
            """SELECT m.ts, i.value FROM messages m JOIN message_papers mp ON mp.message_id = m.id
                 JOIN paper_ids i ON i.paper_id = mp.paper_id ORDER BY m.ts, i.value"""
        ).fetchall()
    assert len(slack.posts) == 1 and rows == [("posted", ts)]
    assert stored == [
        (ts, "1706.03762"),
        (ts, "1810.04805"),
        (f"{ts}/{first.paper.paper_id}", "1706.03762"),
        (f"{ts}/{other}", "1810.04805"),
    ]


def test_a_message_by_another_app_or_a_member_carrying_the_slot_mark_is_not_taken_for_its_post(
    db: Database, one_channel: dict[str, Any]
) -> None:
    """Any app in the workspace may post a message with PaperPing's slot metadata (the slot key is a time anyone
    can work out). Found while a failed slot waited for its retry, such a message was recorded as the slot's post
    and kept as PaperPing's share of the paper under its poster's id, and the slot's own post never went out. Only
    a message by PaperPing itself is its slot's post."""
    slack, now = one_channel["slack"], one_channel["now"]
    outlet = BrokenOutlet(one_channel["client"], OSError("connection reset by peer"))
    assert SlotWorker(db, outlet, one_channel["chooser"], clock=lambda: now).tick() == 1
    with db.connection() as conn:
        ((status, slot_key),) = conn.execute("SELECT status, slot_key FROM recommendations").fetchall()
    assert status == "failed" and slack.posts == []
    mark = {"event_type": "paperping_recommendation", "event_payload": {"slot_key": slot_key, "paper_id": 1}}
    text = "Paper of the day: <https://arxiv.org/abs/1706.03762|Attention Is All You Need>"
    for i, author in enumerate(({"user": "UOTHER", "bot_id": "BOTHER", "app_id": "AOTHER"}, {"user": "U2"})):
        forged = {"type": "message", **author, "ts": f"{int(time.time())}.{900000 + i:06d}", "text": text}
        slack.state.messages.setdefault("C1", []).append({**forged, "metadata": mark})
    later = now + timedelta(minutes=11)
    assert ticks_at(db, one_channel, later) == 1
    assert len(slack.posts) == 1, "the slot's own post went out"
    with db.connection() as conn:
        rows = conn.execute("SELECT status, message_ts FROM recommendations").fetchall()
        stored = conn.execute("SELECT user_id, ts FROM messages").fetchall()
    assert rows == [("posted", slack.posts[0]["ts"])]
    assert stored == [("UBOT", slack.posts[0]["ts"])], "no one else's message is kept as PaperPing's share"


@pytest.mark.parametrize("found", [False, True], ids=["just-sent", "found-after-a-kill"])
def test_a_post_the_database_will_not_keep_is_recorded_all_the_same_and_not_sent_again(
    db: Database, one_channel: dict[str, Any], found: bool
) -> None:
    """The database refuses the post as PaperPing's share (a value it cannot store). Undone together with the
    slot's record, the slot was marked failed, and every retry found the post, was refused again and failed
    again: the channel never posted again. The slot is recorded as posted all the same, and closed."""
    slack, now = one_channel["slack"], one_channel["now"]
    with db.connection() as conn:  # every message PaperPing would keep is refused
        conn.execute(
            """CREATE FUNCTION refuse_message() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION USING ERRCODE = '22021', MESSAGE = 'invalid byte sequence for encoding'; END $$"""
        )
        conn.execute(
            "CREATE TRIGGER refuse_message BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION refuse_message()"
        )
    at = now
    if found:
        killed_while_posting(db, one_channel, after_slack=True)
        at = now + timedelta(minutes=11)
    assert ticks_at(db, one_channel, at) == 1
    with db.connection() as conn:
        rows = conn.execute("SELECT status, message_ts FROM recommendations").fetchall()
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert len(slack.posts) == 1 and rows == [("posted", slack.posts[0]["ts"])]
    assert s.slot_at is None and s.next_post_at is not None and s.next_post_at >= next_day(at)
    assert ticks_at(db, one_channel, at + timedelta(minutes=11)) == 0 and len(slack.posts) == 1


def test_a_found_post_slack_describes_oddly_is_recorded_not_stored(db: Database, one_channel: dict[str, Any]) -> None:
    """A field of the found post that Slack gives malformed (a ``reply_count`` that is not a count) made every
    retry of the slot fail before recording it, so the channel never posted again. The post is recorded (not
    stored) and the slot closed."""
    slack, now = one_channel["slack"], one_channel["now"]
    killed_while_posting(db, one_channel, after_slack=True)
    slack.rewrite["conversations.history"] = lambda call, answer: {
        **answer,
        "messages": [{**m, "reply_count": "lots"} for m in answer.get("messages", [])],
    }
    later = now + timedelta(minutes=11)
    assert ticks_at(db, one_channel, later) == 1
    with db.connection() as conn:
        rows = conn.execute("SELECT status, message_ts FROM recommendations").fetchall()
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert len(slack.posts) == 1 and rows == [("posted", slack.posts[0]["ts"])]
    assert s.slot_at is None and s.last_post_at == later


def test_a_failure_the_database_would_not_record_is_retried_when_its_lease_lapses(
    db: Database, one_channel: dict[str, Any]
) -> None:
    """Slack fails the post and the database then refuses to record the failure: the tick goes on, the slot
    stays sending, and once its lease lapses the next tick posts it once."""
    slack, now = one_channel["slack"], one_channel["now"]
    with db.connection() as conn:  # the database refuses to mark a slot failed (a full disk would do the same)
        conn.execute(
            """CREATE FUNCTION refuse_failed() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'could not extend file: no space left on device'; END $$"""
        )
        conn.execute(
            """CREATE TRIGGER refuse_failed BEFORE UPDATE ON recommendations FOR EACH ROW
               WHEN (NEW.status = 'failed') EXECUTE FUNCTION refuse_failed()"""
        )
    outlet = BrokenOutlet(one_channel["client"], OSError("connection reset by peer"))
    assert SlotWorker(db, outlet, one_channel["chooser"], clock=lambda: now).tick() == 1, "the tick goes on"
    with db.connection() as conn:
        assert conn.execute("SELECT status FROM recommendations").fetchall() == [("sending",)]
        conn.execute("DROP TRIGGER refuse_failed ON recommendations")
    later = now + timedelta(minutes=11)
    assert ticks_at(db, one_channel, later) == 1
    with db.connection() as conn:
        rows = conn.execute("SELECT status, message_ts FROM recommendations").fetchall()
    assert len(slack.posts) == 1 and rows == [("posted", slack.posts[0]["ts"])]


def test_a_post_recorded_before_its_next_slot_was_scheduled_does_not_stall_the_channel(
    db: Database, one_channel: dict[str, Any]
) -> None:
    """The post went out and was recorded, then the next slot could not be scheduled nor the failure recorded (a
    full disk; a kill at that moment leaves the same rows). The slot, posted, could never be taken again: every
    ten minutes the channel was claimed, said to be "served by another worker", and never posted again."""
    slack, now = one_channel["slack"], one_channel["now"]
    with db.connection() as conn:  # the database refuses every write after the post's record
        conn.execute(
            """CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql AS $$
               BEGIN RAISE EXCEPTION 'could not extend file: no space left on device'; END $$"""
        )
        conn.execute(
            """CREATE TRIGGER refuse_failed BEFORE UPDATE ON recommendations FOR EACH ROW
               WHEN (NEW.status = 'failed') EXECUTE FUNCTION refuse_write()"""
        )
        conn.execute(
            """CREATE TRIGGER refuse_next BEFORE UPDATE ON channel_settings FOR EACH ROW
               WHEN (NEW.last_post_at IS DISTINCT FROM OLD.last_post_at) EXECUTE FUNCTION refuse_write()"""
        )
    assert ticks_at(db, one_channel, now) == 1
    with db.connection() as conn:
        assert conn.execute("SELECT status FROM recommendations").fetchall() == [("posted",)]
        conn.execute("DROP TRIGGER refuse_failed ON recommendations")
        conn.execute("DROP TRIGGER refuse_next ON channel_settings")
    later = now + timedelta(minutes=11)
    assert ticks_at(db, one_channel, later) == 1
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, "C1")
    assert len(slack.posts) == 1, "not posted again"
    assert s.slot_at is None and s.last_post_at is not None, "the slot is closed"
    assert s.next_post_at is not None and s.next_post_at >= next_day(later), "the next slot is scheduled"


def test_now_that_found_nothing_holds_the_cooldown_too(db: Database, setup: dict[str, Any]) -> None:
    """A `now` whose slot found nothing to post opened a whole search all the same (sources, ranking, an LLM): a
    second `now` (or `start-over`), by anyone, within the ten minutes is refused and says why, instead of opening
    search after search while the channel has nothing to post."""
    from bot.app_context import AppContext
    from bot.commands import run_command

    slack, channels = setup["slack"], setup["channels"]
    slack.state.users["U3"] = {"id": "U3", "team_id": T, "name": "chen"}
    ctx = AppContext(Settings(home=Path("."), offline=True), db)
    client = WebClient(token="xoxb-test", base_url=slack.url)
    body = {"team_id": T, "channel_id": channels[1], "user_id": "U2", "text": "now"}
    calls: list[str] = []

    def nothing(team: str, channel: str, now: datetime, style: Style | None) -> Draft | None:
        calls.append(channel)
        return None

    w = worker(db, slack, nothing)
    with db.connection() as conn:  # neither channel is due: only what `now` opens runs
        for channel in channels:
            storage.settings.upsert_channel_setting(
                conn, T, channel, next_post_at=datetime.now(UTC) + timedelta(days=1)
            )
    assert run_command(ctx, client, body).startswith("On it")
    assert w.tick() == 1 and calls == [channels[1]]
    with db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, T, channels[1])
    assert s.empty_reason and s.last_post_at is None and s.next_post_at > datetime.now(UTC) + timedelta(minutes=20)
    for text, user in (("now", "U2"), ("now", "U3"), ("start-over", "U3")):
        said = run_command(ctx, client, {**body, "text": text, "user_id": user})
        assert f"`/paperping {text}` works again from" in said and "found nothing" in said, said
    assert w.tick() == 0 and calls == [channels[1]], "no second search was opened"
    later = datetime.now(UTC) + timedelta(minutes=11)
    assert not run_command(ctx, client, body, now=later).startswith("I looked"), "ten minutes on, `now` works"


def test_a_first_day_post_slack_failed_is_offered_again_by_the_retry(db: Database, setup: dict[str, Any]) -> None:
    """A new channel's first slot drafts the five papers to rate and Slack fails the post: the retry posts the
    first day's papers, not an ordinary pick (the first day is not lost), and offers them once."""
    slack, channels = setup["slack"], setup["channels"]
    only_first_channel(db, channels)
    client = WebClient(token="xoxb-test", base_url=slack.url, retry_handlers=[])
    outlet = BrokenOutlet(client, OSError("connection reset by peer"))
    first = SlotWorker(db, outlet, Chooser(setup["recommend"]))
    assert first.tick() == 1
    with db.connection() as conn:
        offered = storage.topic_steering.load_onboarding(conn, T, channels[0])
        assert offered is not None and len(offered.paper_ids) == 5, "the first try drafted the first day"
        assert conn.execute("SELECT status FROM recommendations").fetchall() == [("failed",)]
        storage.settings.upsert_channel_setting(conn, T, channels[0], next_post_at=datetime.now(UTC))
    assert worker(db, slack, setup["recommend"], worker_id=first.worker_id).tick() == 1  # its retry
    (post,) = [p for p in slack.posts if p["channel"] == channels[0]]
    buttons = [b for b in post["blocks"] if b.get("type") == "actions"]
    assert len(buttons) == 5, "the retry posted the five papers to rate"
    with db.connection() as conn:
        again = storage.topic_steering.load_onboarding(conn, T, channels[0])
        assert again is not None and len(again.paper_ids) == 5
        assert conn.execute("SELECT status FROM recommendations").fetchall() == [("posted",)]
    later = setup["recommend"](T, channels[0], datetime.now(UTC), None)
    assert not (isinstance(later, Digest) and later.kind == "onboarding"), "offered once"


def first_day_posts(slack: SlackStandIn, channel: str) -> list[dict[str, Any]]:
    """The posts in ``channel`` that offer papers to rate (the first day's five buttons)."""
    posts = [p for p in slack.posts if p["channel"] == channel]
    return [p for p in posts if len([b for b in p["blocks"] if b.get("type") == "actions"]) == 5]


def test_a_first_day_drafted_by_a_process_killed_before_its_slot_stored_the_draft_is_offered_again(
    db: Database, setup: dict[str, Any]
) -> None:
    """The worker keeps the first day's five papers as it drafts them and is killed before its slot stores the
    draft (a deploy, the memory killer): once the lease lapses, the next worker offers the first day, not an
    ordinary pick, and offers it once."""
    slack, channels = setup["slack"], setup["channels"]
    only_first_channel(db, channels)
    now = datetime.now(UTC)

    def drafts_then_dies(team: str, channel: str, at: datetime, style: Style | None) -> Draft | None:
        setup["recommend"](team, channel, at, style)
        raise SystemExit("killed after drafting")

    with pytest.raises(SystemExit):
        worker(db, slack, drafts_then_dies, clock=lambda: now).tick()
    with db.connection() as conn:
        offered = storage.topic_steering.load_onboarding(conn, T, channels[0])
        assert offered is not None and len(offered.paper_ids) == 5, "the dying try drafted the first day"
        assert conn.execute("SELECT status, draft FROM recommendations").fetchall() == [("posting", {})], (
            "no draft stored"
        )
    later = now + timedelta(minutes=11)  # the dead worker's lease has lapsed
    assert worker(db, slack, setup["recommend"], clock=lambda: later).tick() == 1
    assert len(first_day_posts(slack, channels[0])) == 1, "the retry posted the five papers to rate"
    with db.connection() as conn:
        again = storage.topic_steering.load_onboarding(conn, T, channels[0])
        assert again is not None and len(again.paper_ids) == 5
        assert conn.execute("SELECT status FROM recommendations").fetchall() == [("posted",)]
    assert not isinstance(setup["recommend"](T, channels[0], later, None), Digest), "offered once"


def test_a_later_slot_that_fails_does_not_offer_the_first_day_again(db: Database, setup: dict[str, Any]) -> None:
    """The first day went out; the next slot's post fails in Slack and is retried: neither try, nor the retry's
    post, offers the five papers to rate again."""
    slack, channels = setup["slack"], setup["channels"]
    only_first_channel(db, channels)
    assert worker(db, slack, setup["recommend"]).tick() == 1
    assert len(first_day_posts(slack, channels[0])) == 1
    client = WebClient(token="xoxb-test", base_url=slack.url, retry_handlers=[])
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, channels[0], next_post_at=datetime.now(UTC))
    failing = SlotWorker(db, BrokenOutlet(client, OSError("connection reset by peer")), Chooser(setup["recommend"]))
    assert failing.tick() == 1
    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, channels[0], next_post_at=datetime.now(UTC))
    assert worker(db, slack, setup["recommend"], worker_id=failing.worker_id).tick() == 1  # its retry
    posts = [p for p in slack.posts if p["channel"] == channels[0]]
    assert len(posts) == 2 and len(first_day_posts(slack, channels[0])) == 1, "the first day went out once"
    with db.connection() as conn:
        offered = storage.topic_steering.load_onboarding(conn, T, channels[0])
        assert offered is not None and len(offered.paper_ids) == 5
