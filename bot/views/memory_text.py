"""An answer about the channel's history (`/paperping ask`, a mention, the AI app panel) as Slack text: the written
answer when there is one, then the papers with who shared them and when, their thread, and how the group received
them. Members are named in plain text, never mentioned; every title, name and quoted reply is shown as data. Pure.

Two dialects of the same answer: Slack's ``mrkdwn`` for messages, and the ``markdown`` that Slack's streamed
answers take (``chat.startStream``: ``**bold**``, ``[label](url)``), where every character of others' text that
markdown would read as markup is escaped."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from bot.views.post_blocks import escape, link, safe_url
from socialrag.recommender import MemoryAnswer, MemoryItem, Person
from socialrag.text import as_data

MAX_CHARS = 3500  # an answer stays well inside one message (Slack cuts a text at 40,000, a section at 3,000)
_URL_OK = re.compile(r"https://[^\s<>|]+\Z")
_REFERENCE = re.compile(r"(\\?)\[(\d+)(\\?)\]")  # [2], or \[2\] as markdown escapes it


_MARKUP = re.compile(r"([\\`*_\[\]()#~|!])")


def md_escape(text: str) -> str:
    """Text shown as written in Slack's markdown: ``&``, ``<`` and ``>`` as entities (no mention, no link can
    form), and each markdown control character behind a backslash."""
    return _MARKUP.sub(r"\\\1", escape(text))


def md_link(url: str, label: str) -> str:
    """``[label](url)``, the label escaped; the bare label without a URL."""
    label = md_escape(label)
    return f"[{label}]({safe_url(url).replace('(', '%28').replace(')', '%29')})" if url else label


@dataclass(frozen=True)
class Dialect:
    """How one kind of Slack text writes others' words, a link and emphasis."""

    text: Callable[[str], str]
    link: Callable[[str, str], str]
    bold: str  # the marker around bold text

    def quote(self, text: str, limit: int) -> str:
        """Text others wrote, its markup dropped, cut to ``limit`` and escaped: it can neither notify nor link."""
        return self.text(as_data(text)[:limit])

    def strong(self, text: str) -> str:
        return f"{self.bold}{text}{self.bold}"


MRKDWN = Dialect(escape, link, "*")
MARKDOWN = Dialect(md_escape, md_link, "**")


def _plural(n: int, one: str, many: str | None = None) -> str:
    return f"{n} {one if n == 1 else (many or one + 's')}"


def reception(item: MemoryItem) -> str:
    """How the group received a paper: "3 replies, 2 reactions, 1 save" (or "no reply or reaction yet")."""
    counts = ((item.replies, "reply", "replies"), (item.reactions, "reaction", None), (item.saves, "save", None))
    parts = [_plural(n, one, many) for n, one, many in counts if n]
    return ", ".join(parts) if parts else "no reply or reaction yet"


def item_line(n: int, item: MemoryItem, channels: Mapping[str, str], several: bool, d: Dialect = MRKDWN) -> str:
    """One paper: its title linked, who shared it and when (in which channel, when the answer spans several),
    its thread, its reception, the gist of its thread for a discussion question, and the passage of its full text
    the question matched."""
    url = item.url if item.url and _URL_OK.match(item.url) else ""
    title = d.link(url, " ".join(item.title.split())[:200])
    who = (
        f"shared by {d.quote(item.shared_by_name or 'a member', 60)}"
        if not item.posted_by_paperping or item.shared_by
        else "posted by PaperPing"
    )
    where = f" in #{d.text(channels.get(item.channel_id, item.channel_id))}" if several else ""
    thread = f" · {d.link(item.permalink, 'thread')}" if item.permalink and _URL_OK.match(item.permalink) else ""
    lines = [f"{n}. {title} — {who}{where} on {item.shared_at:%d %b %Y}{thread} · {reception(item)}"]
    lines += [f"> {d.quote(g, 220)}" for g in item.gist]
    if item.passage is not None:  # the passage of its full text the question matched
        section = d.quote(item.passage.section.replace("*", ""), 120)
        where = f"From {d.strong(section)}" if section else "From its text"
        lines.append(f"> {where}: “{d.quote(item.passage.text, 300)}”")
    return "\n".join(lines)


def render_answer(answer: MemoryAnswer, channels: Mapping[str, str], d: Dialect = MRKDWN) -> str:
    """The whole answer in ``d`` (mrkdwn unless said), cut to ``MAX_CHARS``, with the channels not searched in
    time said last."""
    body, left_out = _body(answer, channels, d), unsearched_note(answer)
    return _cut(f"{body}\n{left_out}" if left_out else body)


def _body(answer: MemoryAnswer, channels: Mapping[str, str], d: Dialect) -> str:
    several = len(answer.channels) > 1
    where = (
        "your channels"
        if several
        else f"#{d.text(channels.get(answer.channels[0], answer.channels[0]))}"
        if answer.channels
        else "this channel"
    )
    topic = d.quote(" ".join(answer.words), 80)
    when = f" {answer.period}" if answer.period else ""
    if answer.kind == "missed":
        since = f" since {answer.since:%d %b}" if answer.since else ""
        head = f"{d.strong(f'What happened in {where}{since}')}, the most discussed first:"
        if not answer.items:
            return f"Nothing new in {where}{since}: no paper was shared, discussed or reacted to."
    elif answer.kind == "who":
        return _who(answer, where, topic, channels, d)
    else:
        verb = "discussed" if answer.kind == "discussion" else "read"
        if not answer.items and not topic and when:
            done = "discussed" if answer.kind == "discussion" else "shared"
            return f"No paper was {done} in {where}{when}."
        if not answer.items:
            about = d.strong(topic or "that")
            return f"I found nothing in {where} about {about}{when}. Try other words, or a paper's title."
        if topic:
            head = f"{d.strong(f'What {where} {verb} about {topic}{when}')}:"
        else:
            head = (
                f"{d.strong(f'What {where} {verb}{when}')}, the most discussed first:"
                if when
                else f"{d.strong(f'From {where}')}:"
            )
    lines = [head]
    if answer.text:
        lines.append(written_part(answer, d))
    lines += [item_line(n, item, channels, several, d) for n, item in enumerate(answer.items, start=1)]
    if note_part(answer, d):
        lines.append(note_part(answer, d))
    return "\n".join(lines)


def written_part(answer: MemoryAnswer, d: Dialect = MRKDWN) -> str:
    """The checked written answer, its ``[n]`` pointing to the numbered papers; "" when there is none."""
    return _references(d.quote(answer.text, 600), answer.items) if answer.text else ""


def note_part(answer: MemoryAnswer, d: Dialect = MRKDWN) -> str:
    """Why a list came without its written answer; "" when nothing needs saying."""
    if not answer.note or answer.kind not in ("papers", "discussion"):
        return ""
    return f"_No written answer: {d.quote(answer.note, 160)}._"


def unsearched_note(answer: MemoryAnswer) -> str:
    """The channels left out for want of time; "" when every channel asked about was searched."""
    if not answer.unsearched:
        return ""
    searched = len(answer.channels)
    return (
        f"_I searched {searched} of your {searched + answer.unsearched} channels in the time an answer has; ask "
        "beside one of the others to search it._"
    )


def _references(text: str, items: tuple[MemoryItem, ...]) -> str:
    """The written answer, its ``[n]`` kept as they are: the numbered list below is what they point to."""
    return _REFERENCE.sub(lambda m: m.group(0) if 1 <= int(m.group(2)) <= len(items) else "", text)


def _who(answer: MemoryAnswer, where: str, topic: str, channels: Mapping[str, str], d: Dialect) -> str:
    when = f" {answer.period}" if answer.period else ""
    about = f"papers on {d.strong(topic)}" if topic else "papers"
    if not answer.people:
        return f"I found nobody in {where} who shared, discussed or saved {about}{when}."
    several = len(answer.channels) > 1
    what = f"with {topic}" if topic else "most with its papers"
    head = d.strong(f"Who in {where} has engaged {what}{when}")
    lines = [f"{head} (from what they shared, replied to, reacted to and saved):"]
    for p in answer.people:
        inside = f" in #{d.text(channels.get(p.channel_id, p.channel_id))}" if several else ""
        did = f"{_plural(p.papers, 'paper')} on it" if topic else _did(p)
        lines.append(f"• {d.quote(p.name, 60)}{inside}: {did}")
    if answer.items:
        lines.append("The papers this rests on:")
        lines += [item_line(n, item, channels, several, d) for n, item in enumerate(answer.items, start=1)]
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
