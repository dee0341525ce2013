"""A paper's full text where members read about it (issue 56), beside the thread answers (``fulltext_answers``):
whether a channel uses full text at all. Without a full text, or in a channel or workspace that turned it off,
everything stays as it was.
"""

from __future__ import annotations

import psycopg

from socialrag import storage


def text_in_use(conn: psycopg.Connection, team_id: str, channel_id: str) -> bool:
    """Whether this channel's answers and posts may use papers' full text: neither the channel nor its workspace
    turned it off (`/paperping fulltext off`)."""
    if not storage.settings.load_channel_settings(conn, team_id, channel_id).fulltext:
        return False
    return storage.fulltext.load_workspace_fulltext(conn, team_id)
