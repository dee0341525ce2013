"""Commands that steer what PaperPing looks for in a channel: `focus` and `emoji` (`sources` has a module of its
own)."""

from __future__ import annotations

from datetime import timedelta

from bot.commands.about import NOW_COOLDOWN
from bot.commands.base import Command, Invocation, UsageError, command
from bot.views.post_blocks import quote, works_again
from socialrag import storage
from socialrag.knowledge import find_paper_refs, is_emoji_name, normalize_emoji, parse_sentiment

FOCUS_DAYS = 14
FOCUS_MAX_LINKS = 10  # papers a focus may link to
# a channel PaperPing has never posted in gets its first post this soon after a focus, whatever its schedule says
# (a focus is what a new channel with no history was asked for); the minute lets the linked papers be looked up
FIRST_AFTER_FOCUS = timedelta(minutes=1)


def parse_focus(name: str, args: tuple[str, ...], rest: str) -> Command:
    if not rest:
        raise UsageError("Try `/paperping focus retrieval-augmented generation` or paste paper links.")
    return Command(name, text=rest)


@command(
    "focus",
    "`focus TEXT-OR-LINKS` — lean the next recommendations toward a topic for two weeks (`focus off` to stop)",
    parse=parse_focus,
    steers=True,
)
def cmd_focus(inv: Invocation) -> str:
    if inv.text.lower() == "off":
        inv.set(focus_text=None, focus_expires_at=None, focus_paper_ids=[])
        inv.announce("cleared PaperPing's focus.")
        return "Done: no focus."
    refs = find_paper_refs(inv.text)[:FOCUS_MAX_LINKS]
    with inv.ctx.db.connection() as conn:
        ids = storage.papers.ensure_papers(conn, [(r.scheme, r.value) for r in refs])
        paper_ids = list(dict.fromkeys(ids.values()))
        behind = storage.queue.enqueue_for_member(conn, inv.team, inv.user, paper_ids, inv.now)
    inv.ctx.wake.index_soon()  # linked papers are looked up and embedded at once (within the member's hourly cap)
    until = inv.now + timedelta(days=FOCUS_DAYS)
    inv.set(focus_text=inv.text[:500], focus_expires_at=until, focus_paper_ids=paper_ids)
    topic = quote(inv.text, 120)
    inv.announce(f"asked PaperPing to lean toward: {topic} (for {FOCUS_DAYS} days).")
    looking = f" I'm looking up the {len(paper_ids)} linked papers now." if paper_ids else ""
    if behind:
        looking = (
            f" I'm looking up the {len(paper_ids)} linked papers; {behind} of them wait their turn behind the papers "
            f"channels shared (you had {storage.queue.MEMBER_FIRST_PER_HOUR} looked up first this hour)."
        )
    return f"Done: the next recommendations lean toward that for {FOCUS_DAYS} days.{looking}{first_post(inv)}"


def first_post(inv: Invocation) -> str:
    """In a channel PaperPing is in but has never posted in, the first post comes a minute after the focus; the
    sentence saying when (empty elsewhere: the channel's schedule holds). It is a post asked for now, so it keeps
    `now`'s bound: a search that found nothing leaves the channel without a post, and focus after focus must not
    open a search of every source each minute."""
    with inv.ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, inv.team, inv.channel)
        if not s.active or s.paused or s.last_post_at is not None:
            return ""
        asked = storage.settings.take_ask(conn, inv.team, inv.channel, inv.now, NOW_COOLDOWN)
    if asked is not None:
        again = works_again(asked + NOW_COOLDOWN)
        return (
            f" A post was asked for here at {asked:%H:%M} UTC, so the first one comes as the schedule says; a focus "
            f"or `/paperping now` brings it forward again from {again}."
        )
    at = inv.now + FIRST_AFTER_FOCUS
    inv.set(next_post_at=at, slot_at=at)
    return (
        f" The first post here comes at about {works_again(at)}, whatever the schedule says "
        "(`/paperping now` brings it sooner)."
    )


def parse_emoji(name: str, args: tuple[str, ...], rest: str) -> Command:
    if len(args) != 2:
        raise UsageError("Try `/paperping emoji eyes positive` (positive, negative, neutral, or auto).")
    emoji = normalize_emoji(args[0])
    if not is_emoji_name(emoji):
        raise UsageError(f"`{quote(args[0], 40)}` is not an emoji name. Try `/paperping emoji eyes positive`.")
    if args[1].strip().lower() == "auto":
        return Command(name, (emoji, "auto"))
    try:
        return Command(name, (emoji, parse_sentiment(args[1])))
    except ValueError as exc:
        raise UsageError(f"{exc}. Try `/paperping emoji eyes positive`.") from None


EMOJI_SET_BY_HAND = 100  # emoji a channel reads as set by hand, at most (each is read at every post and answer)


@command(
    "emoji",
    "`emoji NAME positive|negative|neutral|auto` — how this channel reads an emoji (auto: as learnt from the channel)",
    parse=parse_emoji,
    steers=True,
)
def cmd_emoji(inv: Invocation) -> str:
    emoji, sentiment = inv.args
    if sentiment == "auto":
        with inv.ctx.db.connection() as conn:
            storage.settings.delete_emoji_override(conn, inv.team, inv.channel, emoji)
        inv.announce(f"let PaperPing read :{emoji}: the way this channel uses it.")
        return f"Done: :{emoji}: is read as PaperPing learns it from this channel (`/paperping status` shows it)."
    with inv.ctx.db.connection() as conn:
        set_now = storage.settings.upsert_emoji_override(
            conn,
            inv.team,
            inv.channel,
            emoji,
            sentiment,  # type: ignore[arg-type]
            most=EMOJI_SET_BY_HAND,
        )
    if not set_now:
        return (
            f"This channel reads {EMOJI_SET_BY_HAND} emoji as set by hand already, so :{emoji}: was not set; "
            "`/paperping emoji NAME auto` on one of them frees a place."
        )
    inv.announce(f"told PaperPing that :{emoji}: reads as {sentiment} here.")
    return f"Done: :{emoji}: counts as {sentiment} in this channel."
