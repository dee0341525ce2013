"""A member's new paper as the channel hears of it (`/paperping my-papers on`): one line, the paper linked, the
member @-mentioned when they keep mentions on, else named in plain text. Pure."""

from __future__ import annotations

from bot.views.post_blocks import link, quote
from socialrag.recommender import OwnPaperNote

TITLE_SHOWN = 200


def render_own_paper(note: OwnPaperNote) -> str:
    title = " ".join(note.title.split())[:TITLE_SHOWN]
    paper = link(note.url, title) if note.url else quote(title, TITLE_SHOWN)
    who = f"<@{note.member}>" if note.mention else quote(note.name, 80)
    others = " and co-authors" if note.coauthors else ""
    return f"New from the group: {paper} by {who}{others}."
