"""The group's top list as Slack shows it (`/paperping top`, App Home): each paper linked, what it drew, and who
engaged (members who left the channel are counted, not named). Both places show only to the member who looks, so a
mention there shows the name and notifies nobody. Pure."""

from __future__ import annotations

import re

from bot.views.post_blocks import link
from socialrag.report import TopList, TopPaper

WORDS = {"share": "share", "reply": "reply", "reaction": "reaction", "click": "click", "save": "save"}
PLURALS = {"reply": "replies"}
NAMES_SHOWN = 3
TITLE_SHOWN = 160
MEMBER_ID = re.compile(r"[UW][A-Z0-9]{1,20}")


def describe_counts(counts: dict[str, int]) -> str:
    """``2 shares, 3 replies, 1 save``: what a paper drew, by kind."""
    return ", ".join(f"{n} {WORDS[k] if n == 1 else PLURALS.get(k, WORDS[k] + 's')}" for k, n in counts.items())


def top_line(rank: int, paper: TopPaper) -> str:
    title = link(paper.url or "", " ".join(paper.title.split())[:TITLE_SHOWN])
    names = ", ".join(f"<@{u}>" if MEMBER_ID.fullmatch(u) else "a member" for u in paper.members[:NAMES_SHOWN])
    rest = max(0, len(paper.members) - NAMES_SHOWN) + paper.unnamed  # members who left are among the rest
    counted = f"{rest} member{'s' if rest != 1 else ''}"
    who = (names + (f" and {rest} more" if rest else "")) if names else counted
    return f"{rank}. {title} — {describe_counts(paper.counts)} · {who}"


def render_top_list(top: TopList, limit: int = 10) -> str:
    """The answer to `/paperping top`: the heading, then a line a paper; a sentence when nothing was engaged with."""
    if not top.papers:
        return (
            f"Nothing here drew a share, reply, reaction, click or save in the past {top.period} "
            f"(since {top.since:%d %b %Y})."
        )
    head = f"*The papers this channel engaged with most, past {top.period}* (since {top.since:%d %b %Y}):"
    return "\n".join([head, *(top_line(i, p) for i, p in enumerate(top.papers[:limit], 1))])
