"""A follow-up as Slack shows it, in the thread of the share it follows: one or two short lines, the paper it is
about linked, the member who shared it named only when they may be (an @-mention), never anyone else. Pure."""

from __future__ import annotations

from datetime import date

from bot.views.post_blocks import escape, link
from socialrag.recommender import FollowUpNote
from socialrag.text import as_data

TITLE_SHOWN = 200


def _day(when: date) -> str:
    return f"{when.day} {when:%B}"


def _shared(note: FollowUpNote, what: str) -> str:
    who = f"<@{note.sharer}> shared" if note.sharer else "shared here"
    return f"The {what} {who} on {_day(note.shared_at)}"


def render_follow_up(note: FollowUpNote) -> str:
    """The reply's text (Slack mrkdwn)."""
    if note.kind == "published":
        venue = as_data(note.venue or "a venue")[:120]  # escaped once, by ``link`` or here
        where = link(note.url, venue) if note.url else escape(venue)
        return f"{_shared(note, 'preprint')} is now published in {where}."
    if note.kind == "version":
        when = f" on {_day(date.fromisoformat(note.date))}" if note.date else ""
        version = f"Version {note.version}"
        return f"{link(note.url, version) if note.url else version} of this paper came out{when}."
    title = as_data(note.title or "a paper")[:TITLE_SHOWN]
    paper = link(note.url, title) if note.url else escape(title)
    if not note.others:
        return f"A new paper builds on this one: {paper}"
    others = " and on ".join(
        link(url, f"the thread on {as_data(t)[:120]}") if url else f"the thread on {escape(as_data(t)[:120])}"
        for t, url in note.others
    )
    return f"A new paper builds on this one and on {others}: {paper}"
