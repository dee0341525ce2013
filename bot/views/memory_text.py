"""An answer about the channel's history (`/paperping ask`, a mention, the AI app panel) as Slack text: the written
answer when there is one, then the papers with who shared them and when, their thread, and how the group received
them. Members are named in plain text, never mentioned; every title, name and quoted reply is shown as data. Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping

from bot.views.post_blocks import escape, link, quote
from socialrag.recommender import MemoryAnswer, MemoryItem, Person

MAX_CHARS = 3500  # an answer stays well inside one message (Slack cuts a text at 40,000, a section at 3,000)
_URL_OK = re.compile(r"https://[^\s<>|]+\Z")
_REFERENCE = re.compile(r"\[(\d+)\]")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def reception(item: MemoryItem) -> str:
    """How the group received a paper: "3 replies, 2 reactions, 1 save" (or "no reply or reaction yet")."""
    counts = ((item.replies, "reply", "replies"), (item.reactions, "reaction", None), (item.saves, "save", None))
    parts = [_plural(n, one, many) for n, one, many in counts if n]
    return ", ".join(parts) if parts else "no reply or reaction yet"


def item_line(n: int, item: MemoryItem, channels: Mapping[str, str], several: bool) -> str:
    """One paper: its title linked, who shared it and when (in which channel, when the answer spans several),
    its thread, its reception, and the gist of its thread for a discussion question."""
    url = item.url if item.url and _URL_OK.match(item.url) else ""
    title = link(url, " ".join(item.title.split())[:200])
    who = (
        f"shared by {quote(item.shared_by_name or 'a member', 60)}"
        if not item.posted_by_paperping or item.shared_by
        else "posted by PaperPing"
    )
    where = f" in #{escape(channels.get(item.channel_id, item.channel_id))}" if several else ""
    thread = f" · {link(item.permalink, 'thread')}" if item.permalink and _URL_OK.match(item.permalink) else ""
    lines = [f"{n}. {title} — {who}{where} on {item.shared_at:%d %b %Y}{thread} · {reception(item)}"]
    lines += [f"> {quote(g, 220)}" for g in item.gist]
    return "\n".join(lines)


def render_answer(answer: MemoryAnswer, channels: Mapping[str, str]) -> str:
    """The whole answer as mrkdwn, cut to ``MAX_CHARS``."""
    several = len(answer.channels) > 1
    where = (
        "your channels"
        if several
        else f"#{escape(channels.get(answer.channels[0], answer.channels[0]))}"
        if answer.channels
        else "this channel"
    )
    topic = quote(" ".join(answer.words), 80)
    when = f" {answer.period}" if answer.period else ""
    if answer.kind == "missed":
        since = f" since {answer.since:%d %b}" if answer.since else ""
        head = f"*What happened in {where}{since}*, the most discussed first:"
        if not answer.items:
            return f"Nothing new in {where}{since}: no paper was shared, discussed or reacted to."
    elif answer.kind == "who":
        return _who(answer, where, topic, channels)
    else:
        verb = "discussed" if answer.kind == "discussion" else "read"
        if not answer.items and not topic and when:
            done = "discussed" if answer.kind == "discussion" else "shared"
            return f"No paper was {done} in {where}{when}."
        if not answer.items:
            return f"I found nothing in {where} about *{topic or 'that'}*{when}. Try other words, or a paper's title."
        if topic:
            head = f"*What {where} {verb} about {topic}{when}*:"
        else:
            head = f"*What {where} {verb}{when}*, the most discussed first:" if when else f"*From {where}*:"
    lines = [head]
    if answer.text:
        lines.append(_references(quote(answer.text, 600), answer.items))
    lines += [item_line(n, item, channels, several) for n, item in enumerate(answer.items, start=1)]
    if answer.note and answer.kind in ("papers", "discussion"):
        lines.append(f"_No written answer: {quote(answer.note, 160)}._")
    return _cut("\n".join(lines))


def _references(text: str, items: tuple[MemoryItem, ...]) -> str:
    """The written answer, its ``[n]`` kept as they are: the numbered list below is what they point to."""
    return _REFERENCE.sub(lambda m: f"[{m.group(1)}]" if 1 <= int(m.group(1)) <= len(items) else "", text)


def _who(answer: MemoryAnswer, where: str, topic: str, channels: Mapping[str, str]) -> str:
    when = f" {answer.period}" if answer.period else ""
    about = f"papers on *{topic}*" if topic else "papers"
    if not answer.people:
        return f"I found nobody in {where} who shared, discussed or saved {about}{when}."
    several = len(answer.channels) > 1
    what = f"with {topic}" if topic else "most with its papers"
    lines = [f"*Who in {where} has engaged {what}{when}* (from what they shared, replied to, reacted to and saved):"]
    for p in answer.people:
        inside = f" in #{escape(channels.get(p.channel_id, p.channel_id))}" if several else ""
        did = f"{_plural(p.papers, 'paper')} on it" if topic else _did(p)
        lines.append(f"• {quote(p.name, 60)}{inside}: {did}")
    if answer.items:
        lines.append("The papers this rests on:")
        lines += [item_line(n, item, channels, several) for n, item in enumerate(answer.items, start=1)]
    return _cut("\n".join(lines))


def _did(p: Person) -> str:
    """What a member did with the channel's papers: "shared 12 papers, replied in 8 threads, reacted to 3 papers"."""
    parts = [f"shared {_plural(p.shared, 'paper')}" if p.shared else ""]
    parts.append(f"replied in {_plural(p.replied, 'thread')}" if p.replied else "")
    parts.append(f"reacted to {_plural(p.reacted, 'paper')}" if p.reacted else "")
    said = ", ".join(x for x in parts if x)
    return said or f"saved {_plural(p.papers, 'paper')}"


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    return text[: MAX_CHARS - 1].rsplit("\n", 1)[0] + "\n…"
