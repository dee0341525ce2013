"""A ``Draft`` as Slack Block Kit blocks and a plain-text fallback. Pure."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from socialrag.knowledge import display_reaction, is_click, is_emoji_name, normalize_emoji
from socialrag.models import Digest, Draft
from socialrag.recommender import MEMBER_TOKEN
from socialrag.text import as_data, ascii_digits, visible


def escape(text: str) -> str:
    """Slack's three control characters, escaped as its mrkdwn asks."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def render_mentions(text: str, draft: Draft) -> str:
    """``{@U1}`` as ``<@U1>`` for members to notify, at the first place the text names them; as their plain name
    everywhere else and for the others (a line added after the signals' text, such as the full text's section
    line, names a member and never mentions them, though the signals mention them above)."""
    mentioned: set[str] = set()

    def one(m: re.Match[str]) -> str:
        uid = m.group(1)
        if uid in draft.mentions and uid not in mentioned:
            mentioned.add(uid)
            return f"<@{uid}>"
        return escape(draft.named.get(uid, uid))

    return MEMBER_TOKEN.sub(one, escape(text))


def safe_url(url: str) -> str:
    """A URL fit for ``<url|label>``: the characters that would end or split the markup percent-encoded."""
    return url.replace("&", "&amp;").replace("<", "%3C").replace(">", "%3E").replace("|", "%7C").replace(" ", "%20")


WEB_ADDRESS = re.compile(r"https?://[^\s/]", re.IGNORECASE)


def link(url: str, label: str) -> str:
    """``<url|label>`` with the label escaped (and no ``|`` to split it); the bare label without a URL, or with an
    address that is not a web page's: a source's ``!channel``, ``@U1`` or ``mailto:`` would be markup of its own
    (``<!channel|title>`` notifies the channel). Invisible characters of the label go (``visible``)."""
    label = escape(visible(label)).replace("|", "¦")
    return f"<{safe_url(url)}|{label}>" if url and WEB_ADDRESS.match(url) else label


def titled_link(url: str, title: str) -> str:
    """A paper's title on one line, at most 200 characters, linked (``link``)."""
    return link(url, " ".join(title.split())[:200])


def mrkdwn(text: str) -> dict[str, Any]:
    """A mrkdwn text object that Slack takes as written: ``verbatim`` stops it from turning a plain @here,
    #channel or address in the text into a notification or a link of its own."""
    return {"type": "mrkdwn", "text": text, "verbatim": True}


SECTION_LIMIT = 3000  # Slack's most characters in a section's text
MESSAGE_BLOCKS = 50  # Slack's most blocks in a message
# Slack refuses a message whose blocks hold more than about 13,000 characters together (``msg_blocks_too_long``,
# below every documented limit): PaperPing keeps a message's blocks under this many
MESSAGE_BLOCK_CHARS = 12_000


def sections(text: str, limit: int = SECTION_LIMIT) -> list[str]:
    """The text in sections of whole lines, each within Slack's ``limit`` characters for a section; a line longer
    than that is split at spaces (at ``limit`` where a word is longer still), so nothing is lost."""
    parts: list[str] = []
    for line in text.split("\n"):
        for piece in _pieces(line, limit):
            if parts and len(parts[-1]) + 1 + len(piece) <= limit:
                parts[-1] += "\n" + piece
            else:
                parts.append(piece)
    return [part for part in parts if part.strip()]  # Slack refuses an empty section


def _pieces(line: str, limit: int) -> list[str]:
    """``line`` in pieces of at most ``limit`` characters, split at the last space before each limit."""
    pieces = []
    while len(line) > limit:
        cut = line.rfind(" ", 1, limit + 1)
        cut = cut if cut > 0 else limit
        pieces.append(line[:cut])
        line = line[cut:].lstrip(" ")
    pieces.append(line)
    return pieces


def section_messages(text: str) -> list[list[str]]:
    """``text`` as messages of sections (``sections``), each message within Slack's ``MESSAGE_BLOCKS`` blocks and
    ``MESSAGE_BLOCK_CHARS`` characters: one message for any ordinary text, several for a very long one, none for a
    blank one."""
    messages: list[list[str]] = []
    size = 0
    for part in sections(text):
        if not messages or len(messages[-1]) >= MESSAGE_BLOCKS or size + len(part) > MESSAGE_BLOCK_CHARS:
            messages.append([])
            size = 0
        messages[-1].append(part)
        size += len(part)
    return messages


HEADLINE_LIMIT = 200  # characters of a title shown as the headline; a longer one is cut at a word


def headline(draft: Draft) -> str:
    """The paper's title, bold and linked: the first thing a member reads in the post."""
    title = " ".join(draft.paper.title.split()) or draft.paper.url or "Untitled paper"
    if len(title) > HEADLINE_LIMIT:
        title = title[: HEADLINE_LIMIT - 1].rsplit(" ", 1)[0] + "…"
    return f"*{link(draft.paper.url, title)}*"


def metadata_line(draft: Draft) -> str:
    """Authors, venue and year under the headline (empty when none is known)."""
    p = draft.paper
    parts = []
    if p.authors:
        parts.append(escape(", ".join(p.authors)))
    venue = venue_year(draft)
    if venue:
        parts.append(venue)
    return " · ".join(parts)


def venue_year(draft: Draft) -> str:
    """The paper's venue and year, escaped (empty when neither is known)."""
    return escape(" ".join(x for x in (draft.paper.venue or "", str(draft.paper.year or "")) if x))


FEEDBACK_BLOCK = "paperping_feedback"
# the buttons under each post: (kind, action id, label); a click is stored like a reaction (``CLICKS``)
BUTTONS: tuple[tuple[str, str, str], ...] = (
    ("relevant", "feedback_relevant", "Relevant"),
    ("not_for_us", "feedback_not_for_us", "Not for us"),
    ("save", "feedback_save", "Save"),
)


def feedback_actions(
    counts: Mapping[str, int] | None = None, paper_id: int | None = None, *, rating: bool = False
) -> dict[str, Any]:
    """The row of three buttons under a post (or under one paper of a digest: ``paper_id``), each with how
    many members clicked it so far; the first day's papers to rate have only *Relevant* and *Not for us*."""
    counts = counts or {}
    elements = []
    for kind, action_id, label in BUTTONS[:2] if rating else BUTTONS:
        n = int(counts.get(kind, 0))
        text = f"{label} · {n}" if n > 0 else label
        value = kind if paper_id is None else f"{kind}:{paper_id}"
        elements.append(
            {"type": "button", "action_id": action_id, "value": value, "text": {"type": "plain_text", "text": text}}
        )
    block_id = FEEDBACK_BLOCK if paper_id is None else f"{FEEDBACK_BLOCK}:{paper_id}"
    return {"type": "actions", "block_id": block_id, "elements": elements}


def digest_paper(block_id: str) -> int | None:
    """The paper a digest's row of buttons is for (None: a single post's row)."""
    _, _, tail = block_id.partition(":")
    return int(tail) if block_id.startswith(FEEDBACK_BLOCK + ":") and ascii_digits(tail) and len(tail) < 19 else None


def digest_line(draft: Draft) -> str:
    """One paper of a digest: its linked title, venue and year, then its hook to the group."""
    title = headline(draft)
    venue = venue_year(draft)
    where = f" · {venue}" if venue else ""
    return f"{title}{where}\n{render_mentions(draft.explanation, draft)}"


ONBOARDING_HEADING = (
    "To learn what this channel reads, here are {n} papers drawn wide from what it has so far. Rate them "
    "*Relevant* or *Not for us*: the next picks start from your ratings."
)


def digest_heading(digest: Digest) -> str:
    n = len(digest.drafts)
    return ONBOARDING_HEADING.format(n=n) if digest.kind == "onboarding" else f"This week's {n} papers for the channel:"


def build_digest_blocks(digest: Digest, counts: Mapping[int, Mapping[str, int]] | None = None) -> list[dict[str, Any]]:
    """The digest: a one-line heading, then each paper with its line and its own row of buttons (the first day's
    papers to rate: two buttons)."""
    counts = counts or {}
    rating = digest.kind == "onboarding"
    blocks: list[dict[str, Any]] = [{"type": "section", "text": mrkdwn(digest_heading(digest))}]
    for draft in digest.drafts:
        blocks.append({"type": "section", "text": mrkdwn(digest_line(draft))})
        if draft.thread_link:
            label = f"Earlier thread: {draft.thread_title}" if draft.thread_title else "Earlier thread"
            blocks.append({"type": "context", "elements": [mrkdwn(link(draft.thread_link, label))]})
        blocks.append(feedback_actions(counts.get(draft.paper.paper_id), draft.paper.paper_id, rating=rating))
    return blocks


def build_digest_text(digest: Digest) -> str:
    """The digest's notification and screen-reader text: the titles with their links."""
    titles = "; ".join(link(d.paper.url, d.paper.title) for d in digest.drafts)
    if digest.kind == "onboarding":
        return f"{len(digest.drafts)} papers to rate Relevant or Not for us: {titles}"
    return f"This week's {len(digest.drafts)} papers: {titles}"


def build_blocks(draft: Draft, counts: Mapping[str, int] | None = None) -> list[dict[str, Any]]:
    """The post: the paper's title as the headline, its authors and venue, the explanation, the earlier thread,
    then the feedback buttons with their counts."""
    blocks: list[dict[str, Any]] = [{"type": "section", "text": mrkdwn(headline(draft))}]
    meta = metadata_line(draft)
    if meta:
        blocks.append({"type": "context", "elements": [mrkdwn(meta)]})
    blocks.append({"type": "section", "text": mrkdwn(render_mentions(draft.explanation, draft))})
    if draft.note:
        blocks.append({"type": "context", "elements": [mrkdwn(quote(draft.note, 300))]})
    if draft.thread_link:
        label = f"Earlier thread: {draft.thread_title}" if draft.thread_title else "Earlier thread"
        blocks.append({"type": "context", "elements": [mrkdwn(link(draft.thread_link, label))]})
    blocks.append(feedback_actions(counts))
    return blocks


def build_fallback_text(draft: Draft) -> str:
    """The notification and screen-reader text: the title with its link, then the explanation."""
    text = render_mentions(draft.explanation, draft).replace("*", "")
    return f"{link(draft.paper.url, draft.paper.title)}: {text}"


def quote(text: str, limit: int) -> str:
    """Text a member or a paper's metadata supplied, shown in a message: its markup dropped, then escaped, so
    that it can neither notify nor link."""
    return escape(as_data(text)[:limit])


def quote_in_code(text: str, limit: int) -> str:
    """``quote``, for text shown inside a code span: without the backtick that would end it and turn the rest of
    the line into markup."""
    return quote(text, limit).replace("`", "")


def clip(text: str, limit: int) -> str:
    """Text others wrote, its markup dropped and cut at a word when longer than ``limit``, with "…" to say so (a
    title in a list of examples); not escaped yet (``link`` and ``quote_short`` escape it)."""
    plain = as_data(text)
    if len(plain) > limit:
        plain = plain[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:-") + "…"
    return plain


def quote_short(text: str, limit: int) -> str:
    """``quote``, cut at a word when longer than ``limit``, with "…" to say so."""
    return escape(clip(text, limit))


def describe_received(emoji: Mapping[str, int], replies: int) -> str:
    """How a post was received, as members read it: ``:+1: 2, relevant 1, 3 replies`` (names no Slack emoji
    could have, from an export file, are left out)."""
    shown = [
        (display_reaction(name), n)
        for name, n in emoji.items()
        if is_click(name) or is_emoji_name(normalize_emoji(name))
    ]
    parts = [f"{label} {n}" for label, n in sorted(shown, key=lambda x: (-x[1], x[0]))]
    if replies:
        parts.append(f"{replies} {'reply' if replies == 1 else 'replies'}")
    return ", ".join(parts) or "no reactions yet"


def works_again(at: datetime) -> str:
    """The first whole minute at which a cooldown ending at ``at`` is over ("from 03:33 UTC" for 03:32:40): a
    member who asks at the minute named is never refused again."""
    ceiled = at.replace(second=0, microsecond=0)
    if ceiled < at:
        ceiled += timedelta(minutes=1)
    return f"{ceiled:%H:%M} UTC"
