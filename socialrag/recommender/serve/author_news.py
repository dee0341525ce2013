"""Step 4 for the group's own papers: a member who linked their Semantic Scholar author profile and let the channel
hear of their papers (`/paperping my-papers on`) gets each new paper announced there once ("New from the group:
TITLE by @alice and co-authors"). This module decides what is announced; the group space's side sends it."""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import PaperPingError
from socialrag.recommender.explain.generate import paper_url

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OwnPaperNote:
    member: str  # the member whose paper it is (their id)
    mention: bool  # whether they keep mentions on (else they are named in plain text)
    name: str  # their display name
    title: str
    url: str | None
    coauthors: int  # authors besides the member


# (team id, channel id, what to announce) -> the message's ts
SendNews = Callable[[str, str, OwnPaperNote], str]


def announce_member_papers(db: Database, send: SendNews, now: datetime | None = None) -> int:
    """Announce the members' new papers that wait, each once, in the channels they chose; how many went."""
    now = now or datetime.now(UTC)
    with db.connection() as conn:
        due = storage.followed_authors.load_member_news(conn, now)
    sent = 0
    for news in due:
        with db.connection() as conn:
            if not storage.followed_authors.claim_news(conn, news, now):
                continue
            infos = storage.context_rows.load_paper_infos(conn, [news.paper_id])
            ids = storage.papers.load_identities(conn, [news.paper_id]).get(news.paper_id, {})
            member = storage.settings.load_member_setting(conn, news.team_id, news.user_id)
            name = storage.workspaces.load_member_names(conn, news.team_id).get(news.user_id, "a member")
        info = infos.get(news.paper_id)
        if info is None or not info.title:
            continue
        url = paper_url(ids, info.url) or None
        note = OwnPaperNote(news.user_id, member.mentions_enabled, name, info.title, url, max(0, len(info.authors) - 1))
        try:
            send(news.team_id, news.channel_id, note)
            sent += 1
        except PaperPingError as exc:  # claimed: never announced twice
            log.warning("announcing a member's paper in %s failed: %s", news.channel_id, exc)
    return sent
