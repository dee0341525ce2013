"""Commands about PaperPing in a channel: `help`, `now` (and what came of it), `status` and `why`."""

from __future__ import annotations

import re
import threading
import time
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from bot.app_context import AppContext
from bot.commands.base import Invocation, command, usage_text
from bot.views.post_blocks import describe_received, quote, works_again
from socialrag import storage
from socialrag.knowledge import Readiness, assess, describe_empty, describe_index, focus_active
from socialrag.models import Digest, EarlierReception, SocialSignal, digest_from_json, signal_from_json
from socialrag.reading.zotero import sends_to
from socialrag.reasons import draft_links, first_reply_ids, keep_standing
from socialrag.recommender import (
    LANGUAGES,
    SILENT_TO_STEP_DOWN,
    describe_fact,
    describe_pace,
    describe_ranker,
    describe_style,
    load_emoji_readings,
    load_fit,
    read_reception,
    silent_streak,
)
from socialrag.report import month_start


@command("help", "`help` — this list", about_member=True)
def cmd_help(inv: Invocation) -> str:
    return usage_text()


NOW_COOLDOWN = timedelta(minutes=10)
SLACK_PERMALINK = re.compile(r"https://([a-z0-9-]+\.)?slack\.com/archives/[A-Z0-9]+/p\d+(\?[\w=&.]*)?\Z")
NOW_WAIT_SECONDS = 90.0


def posted_recently(s: storage.settings.ChannelSettings, now: datetime, command: str) -> str | None:
    """The sentence refusing ``command`` while the channel's last post is younger than ``NOW_COOLDOWN`` (one post
    on demand every ten minutes, whichever command asks for it), or None."""
    last = s.last_post_at
    if last is not None and now - last < NOW_COOLDOWN:
        again = works_again(last + NOW_COOLDOWN)
        return f"I posted here at {last:%H:%M} UTC; `/paperping {command}` works again from {again}."
    return None


def take_post_ask(inv: Invocation, s: storage.settings.ChannelSettings, command: str) -> str | None:
    """Note that ``command`` opens a post now, or the sentence refusing it while the last ask is younger than
    ``NOW_COOLDOWN``: an ask whose search found nothing to post cost as much as one that posted, so it keeps the
    channel's bound too (else each ask opens a search of every source, one after another)."""
    with inv.ctx.db.connection() as conn:
        asked = storage.settings.take_ask(conn, inv.team, inv.channel, inv.now, NOW_COOLDOWN)
    if asked is None:
        return None
    again = works_again(asked + NOW_COOLDOWN)
    if s.empty_at is not None and s.empty_at >= asked and s.empty_reason:
        why = quote(s.empty_reason, 200)
        found = f"I looked for a paper here at {asked:%H:%M} UTC and found nothing to post ({why})"
    else:
        found = f"A post was asked for here at {asked:%H:%M} UTC"
    return f"{found}; `/paperping {command}` works again from {again}."


@command("now", "`now` — post a recommendation now", steers=True, slow=True)
def cmd_now(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, inv.team, inv.channel)
    refused = posted_recently(s, inv.now, "now")
    if refused:
        return refused
    ready = channel_readiness(inv.ctx, inv.team, inv.channel, inv.now)
    if ready.kind == "none":
        return ready.sentence  # nothing to start a search from: no post is promised
    if s.active and s.slot_at is not None and s.next_post_at is not None and s.next_post_at <= inv.now + NOW_COOLDOWN:
        if ready.kind == "indexing" or inv.ctx.wake.scheduler is None:
            waiting = f" {ready.sentence}" if ready.kind == "indexing" else ""
            return "A recommendation is already on its way here." + waiting
        inv.ctx.wake.post_soon()
        return wait_once(inv.ctx, inv.team, inv.channel, inv.now)  # the slot under way: say what came of it
    refused = take_post_ask(inv, s, "now")
    if refused:
        return refused
    inv.post_now()
    if ready.kind == "indexing" or inv.ctx.wake.scheduler is None:
        return ready.sentence
    return wait_once(inv.ctx, inv.team, inv.channel, inv.now)


_WAITED: set[tuple[str, str]] = set()  # channels whose slot a `now` of this process is waiting for
_WAITED_LOCK = threading.Lock()


def wait_once(ctx: AppContext, team: str, channel: str, asked_at: datetime) -> str:
    """``wait_for_slot``, by one `now` of a channel at a time: a slot under way has no cooldown, and each `now`
    waiting on it held a slow worker for up to ``NOW_WAIT_SECONDS``, so two members could fill them all. Another
    `now` meanwhile is answered at once; the post comes to the channel all the same."""
    key = (team, channel)
    with _WAITED_LOCK:
        if key in _WAITED:
            return "A recommendation is already on its way here; it will appear in the channel."
        _WAITED.add(key)
    try:
        return wait_for_slot(ctx, team, channel, asked_at)
    finally:
        with _WAITED_LOCK:
            _WAITED.discard(key)


def channel_readiness(ctx: AppContext, team: str, channel: str, now: datetime) -> Readiness:
    """Whether a post can come now, from the channel's index, its history being read, its focus and sources."""

    with ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, team, channel)
        progress = storage.queue.load_index_progress(conn, team, channel, ctx.settings.embed_model)
        reading = storage.checkpoints.history_being_read(conn, team, channel)
    named = (bool(s.arxiv_categories) and "arxiv" in s.sources) or any(n in s.sources for n in s.source_terms)
    return assess(progress, reading, focus_active(s, now), named and not ctx.settings.offline)


def wait_for_slot(ctx: AppContext, team: str, channel: str, asked_at: datetime) -> str:
    """Wait (a little) for the slot `now` opened, and say what came of it: posted, or why not."""
    deadline = time.monotonic() + NOW_WAIT_SECONDS
    retried = False
    while time.monotonic() < deadline:
        time.sleep(1.0)
        with ctx.db.connection() as conn:
            s = storage.settings.load_channel_settings(conn, team, channel)
        if s.last_post_at is not None and s.last_post_at >= asked_at:
            return "Posted: the recommendation is in the channel."
        if s.empty_at is not None and s.empty_at >= asked_at and not retried:
            # a slot already under way when the member asked may have started before a focus or source they
            # just set: try once more now, with what the channel has now
            retried = True
            asked_at = datetime.now(UTC)
            with ctx.db.connection() as conn:
                storage.settings.upsert_channel_setting(conn, team, channel, next_post_at=asked_at)
            ctx.wake.post_soon()
            continue
        if s.empty_at is not None and s.empty_at >= asked_at:
            nxt = s.next_post_at
            again = f" I'll try again {nxt:%a %H:%M} UTC." if nxt else ""
            return f"Nothing to post yet: {s.empty_reason}.{again}"
    return "On it: this one is taking longer than usual; the post will appear here when it is ready."


FEEDBACK_WINDOW = timedelta(days=30)  # the answers' feedback `status` counts


def describe_answer_feedback(helpful: int, not_helpful: int) -> str:
    """What members said of PaperPing's answers about the channel: "Answers about this channel, last 30 days: 4
    marked helpful, 1 not helpful"."""
    return (
        f"Answers about this channel in the last {FEEDBACK_WINDOW.days} days: {helpful} marked helpful, "
        f"{not_helpful} not helpful."
    )


@command(
    "status",
    "`status` — settings, what I know of this channel, the next post, how the last posts were received",
    slow=True,  # it reads the channel's whole history (the emoji it learnt): seconds in a large channel
)
def cmd_status(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, inv.team, inv.channel)
        counts = storage.messages.load_channel_counts(conn, inv.team, inv.channel)
        posts = storage.posts.load_post_engagement(conn, inv.team, inv.channel, limit=SILENT_TO_STEP_DOWN)
        readings = storage.settings.load_emoji_overrides(conn, inv.team, inv.channel)
        ranker = load_fit(conn, inv.team, inv.channel, inv.ctx.settings.popularity_weight)
        progress = storage.queue.load_index_progress(conn, inv.team, inv.channel, inv.ctx.settings.embed_model)
        emoji = load_emoji_readings(conn, inv.team, inv.channel, inv.ctx.settings.embed_model)
        fulltext = storage.fulltext.load_fulltext_counts(conn, inv.team, inv.channel)
        workspace_reads = storage.fulltext.load_workspace_fulltext(conn, inv.team)
    state = "paused" if s.paused else "active" if s.active else "not in this channel yet"
    if s.stopped_reason and not s.active:
        state = "stopped"
    nxt = s.next_post_at.strftime("%a %d %b %H:%M UTC") if s.next_post_at and not s.paused else "—"
    lines = [
        f"*PaperPing here:* {state}; {describe_pace(s.frequency, s.digest_size)}; style "
        f"{describe_style(s.style, inv.ctx.settings.llm_configured)}; next post {nxt}.",
        describe_tone(s),
        f"Knows {counts['messages']} messages sharing {counts['papers']} papers, {counts['reactions']} reactions, "
        f"{counts['replies']} replies, {counts['members']} members.",
    ]
    lines.append(describe_ranker(ranker))
    lines += [r.describe() + "." for r in emoji]
    lines.append(describe_index(progress))
    lines.append(describe_fulltext(fulltext.read, fulltext.papers, s.fulltext, workspace_reads))
    empty = describe_empty(s.empty_reason, s.empty_at, s.next_post_at)
    if empty:
        lines.append(quote(empty, 400))
    if s.stopped_reason:
        reason = quote(s.stopped_reason, 200)
        lines.append(f"Stopped posting because of: {reason}. `/paperping resume` tries again.")
    if s.report_monthly and s.report_stopped_reason:
        reason = quote(s.report_stopped_reason, 200)
        lines.append(f"Monthly report stopped because of: {reason}. `/paperping report monthly` tries again.")
    unsure = describe_unconfirmed_report(s, inv.now)
    if unsure:
        lines.append(unsure)
    if s.zotero_group_id:
        with inv.ctx.db.connection() as conn:
            sent, error = storage.reading_list.load_zotero_state(conn, inv.team, inv.channel, s.zotero_group_id)
            sending = sends_to(conn, inv.ctx.settings, inv.team, s.zotero_group_id)
        problem = f" The last try failed: {quote(error, 200)}." if error else ""
        group = quote(s.zotero_group_id, 20)
        if sending:
            lines.append(f"Saved papers go to Zotero group {group}: {sent} sent so far.{problem}")
        else:
            lines.append(
                f"Zotero group {group} is not this workspace's to send to (any more), so nothing more goes there "
                f"({sent} sent before). `/paperping zotero off` clears it."
            )
    if s.step_down_reason:
        lines.append(f"Posting less often because {s.step_down_reason}; `/paperping frequency` sets it back.")
    with inv.ctx.db.connection() as conn:  # the member's own: only they see this answer
        mine = storage.settings.load_member_setting(conn, inv.team, inv.user)
        failing = storage.source_pace.load_failing_sources(conn)
    held = [f for f in failing if f.held_until is not None and f.held_until > inv.now]
    # a full-text host is one paper's, maybe another workspace's: not named here
    lines += [describe_failing(f, inv.now) for f in held if not f.source.startswith("fulltext:")]
    if mine.picks_stopped_reason:
        lines.append(
            f"Your personal picks stopped: {quote(mine.picks_stopped_reason, 200)}. `/paperping for-me on` starts "
            "them again."
        )
    if focus_active(s, inv.now):
        lines.append(f"Focus: {quote(s.focus_text or '', 120)} (until {s.focus_expires_at:%d %b}).")
    silent = silent_streak([read_reception(p.emoji, p.replies, readings) for p in posts])
    if silent:
        lines.append(
            f"The last {silent} of my posts drew no reaction, click or reply. Silence alone slows my posts only after "
            f"{SILENT_TO_STEP_DOWN} in a row; *Not for us* (or a negative emoji) on three of five does sooner."
        )
    with inv.ctx.db.connection() as conn:
        marks = storage.usage.load_answer_feedback(conn, inv.team, inv.channel, inv.now - FEEDBACK_WINDOW)
    if any(marks):
        lines.append(describe_answer_feedback(*marks))
    for p in posts[:5]:
        received = describe_received(p.emoji, p.replies)
        lines.append(f"• {p.posted_at:%d %b}: {quote(p.title or 'a paper', 200)} — {received}")
    return "\n".join(lines)


def describe_unconfirmed_report(s: storage.settings.ChannelSettings, now: datetime) -> str | None:
    """This month's monthly report began uploading and Slack never confirmed it (a crash, a lost answer, or an
    upload still under way): it may be in the channel, so it is not uploaded again."""
    began = s.report_uploading_at
    if not s.report_monthly or began is None or began < month_start(now):
        return None
    if s.report_last_at is not None and s.report_last_at >= began:
        return None
    began = began.astimezone(UTC)
    return (
        f"This month's report went to Slack at {began:%H:%M} UTC on {began.day} {began:%B} and Slack "
        "never confirmed it. If it is not in the channel it was lost: PaperPing does not upload it twice. "
        "`/paperping report` posts one now."
    )


def describe_fulltext(read: int, papers: int, channel_on: bool, workspace_on: bool) -> str:
    """How many of the channel's papers PaperPing has read in full, and whether it reads them here."""
    if not workspace_on:
        return "Full text: the workspace's admins turned it off (`/paperping fulltext on workspace`)."
    if not channel_on:
        return "Full text: off here; `/paperping fulltext on` lets me read the open-access copies of papers here."
    return f"Full text: read for {read} of {papers} papers (open-access copies; `/paperping fulltext off` stops it)."


SOURCE_NAMES = {
    "semanticscholar": "Semantic Scholar",
    "arxiv": "arXiv",
    "crossref": "Crossref",
    "openalex": "OpenAlex",
    "pubmed": "PubMed",
    "biorxiv": "bioRxiv and medRxiv",
}


def failure_kind(error: str, source: str) -> str:
    """What kind of failure a source's last error was (``HTTP 400``, ``answered too slowly``), in PaperPing's words
    only: what follows a colon or a parenthesis may be the source's answer to a lookup made for another workspace's
    channel (a refusal quoting the ids it was sent), so it stays in the log and the admin's figures."""
    kind = re.split(r"[:(]", error.removeprefix(source + ": "), maxsplit=1)[0].strip(" ;,.")
    return kind[:60] or "an error"


def describe_failing(f: storage.source_pace.SourceHealth, now: datetime) -> str:
    """A source held as a whole, in a sentence: since when it fails, the kind of its last error, and until when it
    waits."""
    name = SOURCE_NAMES.get(f.source, f.source)
    since = f" since {f.failing_since:%H:%M} UTC" if f.failing_since else ""
    error = f" (last: {quote(failure_kind(f.last_error, f.source), 60)})" if f.last_error else ""
    until = f"{f.held_until:%H:%M} UTC" if f.held_until else "later"
    return (
        f"{name} has failed {f.failures} time{'s' if f.failures != 1 else ''} in a row{since}{error}: it is skipped "
        f"until {until}, for lookups and new papers. Papers the catalog or another source already made usable "
        "don't wait for it."
    )


def describe_tone(s: storage.settings.ChannelSettings) -> str:
    """The channel's explanation length and language, and whether shares get context replies and follow-ups."""
    language = LANGUAGES.get(s.language or "en", "English")
    written = f"{language} (`llm` style; the templates stay in English)" if s.language else "English"
    context = "on: members' shares get a reply with context" if s.share_context else "off"
    follow = "on" if s.follow_ups else "off"
    return f"Explanations: {s.explanation_length}, in {written}. Context on shares: {context}. Follow-ups: {follow}."


@command("why", "`why` — the signals behind my last post")
def cmd_why(inv: Invocation) -> str:
    draft: dict[str, Any] = {}
    fallen, quotes = 0, dict[int, str]()
    with inv.ctx.db.connection() as conn:
        stored = storage.posts.load_last_posted_draft(conn, inv.team, inv.channel)
        ranker = load_fit(conn, inv.team, inv.channel, inv.ctx.settings.popularity_weight)
        if stored:  # only what still rests on the channel's kept messages: nothing deleted or forgotten since
            kept = storage.post_sources.load_kept_links(conn, inv.team, inv.channel, draft_links(stored))
            draft, fallen = keep_standing(stored, kept)
            quotes = storage.post_sources.load_kept_replies(conn, inv.team, inv.channel, first_reply_ids(draft))
    digest = digest_from_json(draft) if draft else None
    if digest is not None:
        return why_digest(digest, describe_ranker(ranker), quotes, fallen)
    if not stored or not stored.get("signals"):
        return "I haven't posted here yet, so there's nothing to explain."
    title = quote(str(draft["paper"]["title"] or "a paper"), 200)
    lines = [f"*Why I posted {title}* (style {draft['style']}, score {draft['score']:.3f}):", describe_ranker(ranker)]
    lines += [describe_signal(signal_from_json(raw), quotes=quotes) for raw in draft["signals"]]
    return "\n".join(lines + describe_fallen(fallen))


def describe_fallen(fallen: int) -> list[str]:
    """The line saying how many of a post's reasons rested only on messages deleted since (none when none did)."""
    if not fallen:
        return []
    reasons = "reason" if fallen == 1 else "reasons"
    return [f"_{fallen} more {reasons} rested on messages deleted since (or a member who asked to be forgotten)._"]


def describe_signal(signal: SocialSignal, indent: str = "", quotes: Mapping[int, str] | None = None) -> str:
    """One signal as a line of `why`: its kind, its fact, and the channel's permalinks it rests on; an earlier
    reception's first reply is quoted when it is in ``quotes`` (the replies still kept, by row)."""
    # titles, names, citing sentences and replies are others' text: quoted, so that they can neither link nor
    # notify; the only links are Slack's own permalinks of the channel's messages
    sources = ", ".join(link for link in signal.permalinks if SLACK_PERMALINK.match(link))
    fact = describe_fact(signal)
    reply = signal.fact.first_reply_id if isinstance(signal.fact, EarlierReception) else None
    if reply is not None and quotes and reply in quotes:
        fact += f', first reply: "{quotes[reply]}"'
    return f"{indent}• {signal.kind}: {quote(fact, 600)}" + (f" — from {sources}" if sources else "")


def why_digest(digest: Digest, ranker: str, quotes: Mapping[int, str] | None = None, fallen: int = 0) -> str:
    """`why` for a post of several papers: the five papers to rate (the first day or a start-over) or a digest."""
    if digest.kind == "onboarding":
        head = (
            f"*Why I posted {len(digest.drafts)} papers to rate*: this channel had little history for me to learn "
            "from (or a member asked to start over), so I offered papers close to what it shared. The ratings "
            "members give them shape my next picks."
        )
    else:
        head = f"*Why I posted this digest of {len(digest.drafts)} papers*:\n{ranker}"
    lines = [head]
    for d in digest.drafts:
        lines.append(f"• {quote(d.paper.title or 'a paper', 200)}")
        lines += [describe_signal(signal, "    ", quotes) for signal in d.signals]
    return "\n".join(lines + describe_fallen(fallen))
