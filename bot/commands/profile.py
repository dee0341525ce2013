"""`/paperping profile`: what PaperPing believes this channel reads, in words a member can check, and the
topics members mute or boost. `profile mute N|WORDS`, `profile boost N|WORDS` and `profile reset` change what
the whole channel gets: they follow the channel-settings rule and are announced in the channel.
"""

from __future__ import annotations

from bot.commands.about import posted_recently, take_post_ask
from bot.commands.base import Command, Invocation, UsageError, command
from bot.commands.sources import describe_sources
from bot.views.post_blocks import clip, link, quote, quote_short
from socialrag import storage
from socialrag.recommender import ChannelProfile

_HINT = (
    "Try `/paperping profile`, `/paperping profile mute 2`, `/paperping profile boost protein design` or "
    "`/paperping profile reset`."
)
ACTIONS = {"mute": "mute", "boost": "boost", "reset": "reset"}


def parse_profile(name: str, args: tuple[str, ...], rest: str) -> Command:
    if not args:
        return Command(name)
    action = ACTIONS.get(args[0].lower())
    if action is None:
        raise UsageError(_HINT)
    if action == "reset":
        if len(args) > 1:
            raise UsageError(_HINT)
        return Command(name, ("reset",))
    what = rest.split(None, 1)[1].strip() if len(rest.split(None, 1)) > 1 else ""
    if not what:
        raise UsageError(f"Which topic? {_HINT}")
    return Command(name, (action,), what[:200])


@command(
    "profile",
    "`profile` — what I believe this channel reads; `profile mute N|WORDS`, `profile boost N|WORDS` or "
    "`profile reset` steer it",
    parse=parse_profile,
    steers=lambda c: bool(c.args),
    slow=True,
)
def cmd_profile(inv: Invocation) -> str:
    recommender = inv.ctx.recommender
    if recommender is None:
        return "The profile is kept where PaperPing runs as a service (`paperping run`)."
    if inv.args == ("reset",):
        with inv.ctx.db.connection() as conn:
            gone = storage.topic_steering.delete_steering(conn, inv.team, inv.channel)
        inv.announce("reset this channel's profile: no topic is muted or boosted any more.")
        return f"Done: {gone} muted or boosted topics forgotten; the picks follow the channel's history alone."
    if inv.args:
        action = inv.args[0]
        row = recommender.steer_topic(inv.team, inv.channel, inv.text, action, inv.user)
        if row is None:
            return f"I couldn't tell which topic `{quote(inv.text, 60)}` means. {_HINT}"
        done = "muted" if action == "mute" else "boosted"
        label = quote(row.label, 80)
        inv.announce(f"{done} the topic *{label}* in PaperPing's profile of this channel.")
        titled = f", and any paper whose title says *{quote(' '.join(row.words), 80)}*," if row.words else ""
        effect = (
            f"papers close to it{titled} won't be posted here"
            if action == "mute"
            else "papers close to it come first, and a post says when that topic drove it"
        )
        return f"Done: {done} *{label}*: {effect}. `/paperping profile reset` undoes it."
    profile = recommender.profile(inv.team, inv.channel)
    return render_profile(profile, describe_sources(inv.ctx, inv.team, inv.channel))


def render_profile(profile: ChannelProfile, sources: str) -> str:
    """The profile as a member reads it: short lines, names and titles as data, the example threads linked."""
    lines = [f"*What I believe this channel reads*, from the {profile.papers} papers shared here:"]
    if profile.topics:
        lines.append("*Main topics* (number them to mute or boost):")
        for i, topic in enumerate(profile.topics, 1):
            examples = "; ".join(
                link(url, clip(title, 70)) if url else quote_short(title, 70) for title, url in topic.examples
            )
            lines.append(f"{i}. *{quote(topic.label, 80)}* ({len(topic.paper_ids)} papers), e.g. {examples}")
    else:
        lines.append("Main topics: not enough papers shared here yet to tell (two on a topic make one).")
    if profile.followed:
        lines.append("Authors followed: " + ", ".join(quote(n, 60) for n in profile.followed[:8]))
    if profile.venues:
        lines.append("Venues read most: " + ", ".join(f"{quote(v, 60)} ({n})" for v, n in profile.venues))
    lines.append(f"Sources: {sources.rstrip('.')}.")
    focus = quote(profile.focus, 120) if profile.focus else "none (`/paperping focus` sets one)"
    lines.append(f"Focus: {focus}")
    if profile.muted or profile.boosted:
        steered = [f"muted {quote(m, 60)}" for m in profile.muted]
        steered += [f"boosted {quote(b, 60)}" for b in profile.boosted]
        lines.append("Steered: " + "; ".join(steered))
    lines.append(profile.ranking)
    lines.append(_HINT)
    return "\n".join(lines)


@command(
    "start-over",
    "`start-over` — five papers drawn wide to rate *Relevant* or *Not for us*; the picks after them start from "
    "your ratings",
    steers=True,
)
def cmd_start_over(inv: Invocation) -> str:
    with inv.ctx.db.connection() as conn:
        s = storage.settings.load_channel_settings(conn, inv.team, inv.channel)
        refused = posted_recently(s, inv.now, "start-over")
        if refused:
            return refused
        if s.active and s.slot_at is not None and s.next_post_at is not None and s.next_post_at <= inv.now:
            return "A post is already on its way here; `/paperping start-over` works once it is out."
    refused = take_post_ask(inv, s, "start-over")
    if refused:
        return refused
    with inv.ctx.db.connection() as conn:
        storage.topic_steering.start_over(conn, inv.team, inv.channel, inv.now)
    inv.post_now()
    inv.announce("asked PaperPing to start over: five papers to rate come next.")
    return "Done: five papers to rate come in a moment; the picks after them start from your ratings."
