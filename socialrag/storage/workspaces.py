"""Workspaces, channels and members: who and where, with the members of each channel."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta

import psycopg

from socialrag.models import Channel, Member
from socialrag.storage.embeddings import drop_orphaned_papers, forget_text_vectors
from socialrag.storage.locks import hold_forget_lists
from socialrag.storage.queue import requeue_shared


def upsert_team(conn: psycopg.Connection, team_id: str, name: str | None = None, domain: str | None = None) -> None:
    conn.execute(
        """
        INSERT INTO teams (team_id, name, domain) VALUES (%(team_id)s, %(name)s, %(domain)s)
        ON CONFLICT (team_id) DO UPDATE
           SET name = COALESCE(EXCLUDED.name, teams.name), domain = COALESCE(EXCLUDED.domain, teams.domain)
         WHERE (teams.name, teams.domain) IS DISTINCT FROM
               (COALESCE(EXCLUDED.name, teams.name), COALESCE(EXCLUDED.domain, teams.domain))
        """,
        {"team_id": team_id, "name": name, "domain": domain},
    )


def team_exists(conn: psycopg.Connection, team_id: str) -> bool:
    return conn.execute("SELECT 1 FROM teams WHERE team_id = %(t)s", {"t": team_id}).fetchone() is not None


def load_team_footprint(conn: psycopg.Connection, team_id: str) -> tuple[int, int, bool, int, int]:
    """(messages, members, whether the workspace itself or its installation is stored, members on its forget
    list, messages remembered as deleted): what a purge says it takes."""
    row = conn.execute(
        """
        SELECT (SELECT count(*) FROM messages WHERE team_id = %(t)s),
               (SELECT count(*) FROM members WHERE team_id = %(t)s),
               EXISTS (SELECT 1 FROM teams WHERE team_id = %(t)s)
               OR EXISTS (SELECT 1 FROM installations WHERE team_id = %(t)s),
               (SELECT count(*) FROM forgotten_members WHERE team_id = %(t)s),
               (SELECT count(*) FROM deleted_messages WHERE team_id = %(t)s)
        """,
        {"t": team_id},
    ).fetchone()
    assert row is not None
    return int(row[0]), int(row[1]), bool(row[2]), int(row[3]), int(row[4])


def load_team_ids(conn: psycopg.Connection) -> list[str]:
    """The workspaces stored, by id."""
    return [r[0] for r in conn.execute("SELECT team_id FROM teams ORDER BY team_id").fetchall()]


def load_team_domain(conn: psycopg.Connection, team_id: str) -> str | None:
    row = conn.execute("SELECT domain FROM teams WHERE team_id = %(t)s", {"t": team_id}).fetchone()
    return row[0] if row else None


def update_team_timezone(conn: psycopg.Connection, team_id: str) -> None:
    """The workspace's timezone, taken as the one most of its known members use (Slack gives no other)."""
    conn.execute(
        """
        UPDATE teams SET timezone = (SELECT mode() WITHIN GROUP (ORDER BY timezone) FROM members
                                      WHERE team_id = %(t)s AND timezone IS NOT NULL AND NOT is_bot)
         WHERE team_id = %(t)s
        """,
        {"t": team_id},
    )


def load_channel_timezone(conn: psycopg.Connection, team_id: str, channel_id: str) -> str | None:
    """The timezone a channel's days and weeks are counted in: its own (``hours``), else the workspace's, as the
    schedule counts them."""
    row = conn.execute(
        """
        SELECT COALESCE(
            (SELECT timezone FROM channel_settings WHERE team_id = %(t)s AND channel_id = %(c)s),
            (SELECT timezone FROM teams WHERE team_id = %(t)s))
        """,
        {"t": team_id, "c": channel_id},
    ).fetchone()
    return row[0] if row else None


def load_member_timezone(conn: psycopg.Connection, team_id: str, user_id: str) -> str | None:
    """A member's own timezone, as Slack's profile said it when last read, else the workspace's."""
    row = conn.execute(
        """
        SELECT COALESCE(
            (SELECT timezone FROM members WHERE team_id = %(t)s AND user_id = %(u)s),
            (SELECT timezone FROM teams WHERE team_id = %(t)s))
        """,
        {"t": team_id, "u": user_id},
    ).fetchone()
    return row[0] if row else None


def upsert_channel(conn: psycopg.Connection, channel: Channel) -> None:
    """A channel's row and its name; the members it lists (an export's, a demo's) are added only to a channel whose
    member list Slack has not given yet: a list read from ``conversations.members`` is Slack's, and an older
    description never adds back a member who left (``replace_channel_members`` alone changes it)."""
    hold_forget_lists(conn, [channel.team_id])  # before the channel's row: a forget-me may change it
    conn.execute(
        """
        INSERT INTO channels (team_id, channel_id, name) VALUES (%(team_id)s, %(channel_id)s, %(name)s)
        ON CONFLICT (team_id, channel_id) DO UPDATE SET name = EXCLUDED.name
         WHERE channels.name IS DISTINCT FROM EXCLUDED.name
        """,
        {"team_id": channel.team_id, "channel_id": channel.channel_id, "name": channel.name},
    )
    if channel.member_ids:
        conn.execute(
            """
            INSERT INTO channel_members (team_id, channel_id, user_id)
            SELECT %(team_id)s, %(channel_id)s, u FROM unnest(%(users)s::text[]) AS u
             WHERE NOT EXISTS (SELECT 1 FROM forgotten_members f WHERE f.team_id = %(team_id)s AND f.user_id = u)
               AND NOT EXISTS (SELECT 1 FROM channels c WHERE c.team_id = %(team_id)s AND c.channel_id = %(channel_id)s
                                                          AND c.members_read_at IS NOT NULL)
            ON CONFLICT DO NOTHING
            """,
            {"team_id": channel.team_id, "channel_id": channel.channel_id, "users": list(channel.member_ids)},
        )


def rename_channel(conn: psycopg.Connection, team_id: str, channel_id: str, name: str) -> None:
    """A stored channel's new name, as Slack said when it was renamed (a channel not stored stays unknown)."""
    conn.execute(
        "UPDATE channels SET name = %(n)s WHERE team_id = %(t)s AND channel_id = %(c)s AND name IS DISTINCT FROM %(n)s",
        {"t": team_id, "c": channel_id, "n": name},
    )


def replace_channel_members(
    conn: psycopg.Connection, team_id: str, channel_id: str, user_ids: Sequence[str], now: datetime
) -> int:
    """The channel's members are exactly these, as Slack's ``conversations.members`` just said (forgotten members
    stay out): a member who left while PaperPing was not there to hear it is no longer one. Returns how many
    stored members were dropped."""
    hold_forget_lists(conn, [team_id])  # a forget-me under way ends first, and its member is not added back
    params = {"t": team_id, "c": channel_id, "users": list(user_ids), "now": now}
    dropped = conn.execute(
        """
        DELETE FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s AND NOT user_id = ANY(%(users)s)
        """,
        params,
    ).rowcount
    conn.execute(
        """
        INSERT INTO channel_members (team_id, channel_id, user_id)
        SELECT %(t)s, %(c)s, u FROM unnest(%(users)s::text[]) AS u
         WHERE EXISTS (SELECT 1 FROM channels WHERE team_id = %(t)s AND channel_id = %(c)s)
           AND NOT EXISTS (SELECT 1 FROM forgotten_members f WHERE f.team_id = %(t)s AND f.user_id = u)
        ON CONFLICT DO NOTHING
        """,
        params,
    )
    conn.execute("UPDATE channels SET members_read_at = %(now)s WHERE team_id = %(t)s AND channel_id = %(c)s", params)
    return dropped


def load_stale_member_lists(
    conn: psycopg.Connection,
    before: datetime | None,
    *,
    team_id: str | None = None,
    user_id: str | None = None,
    tried_before: datetime | None = None,
) -> list[tuple[str, str]]:
    """(team, channel) of active channels whose member list was last read before ``before`` (or never; None:
    every one); with ``team_id``, that workspace's; with ``user_id``, only the channels that member is stored in;
    with ``tried_before``, only those not tried since. Those tried longest ago (``record_member_list_try``) come
    first, so one Slack never lists holds none back."""
    rows = conn.execute(
        """
        SELECT c.team_id, c.channel_id FROM channels c JOIN channel_settings s USING (team_id, channel_id)
         WHERE s.active
           AND (%(before)s::timestamptz IS NULL OR c.members_read_at IS NULL OR c.members_read_at < %(before)s)
           AND (%(t)s::text IS NULL OR c.team_id = %(t)s)
           AND (%(u)s::text IS NULL OR EXISTS (
                SELECT 1 FROM channel_members m
                 WHERE m.team_id = c.team_id AND m.channel_id = c.channel_id AND m.user_id = %(u)s))
           AND (%(tried)s::timestamptz IS NULL OR c.members_tried_at IS NULL OR c.members_tried_at < %(tried)s)
         ORDER BY c.members_tried_at NULLS FIRST, c.members_read_at NULLS FIRST, c.team_id, c.channel_id
        """,
        {"before": before, "t": team_id, "u": user_id, "tried": tried_before},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def record_member_list_try(conn: psycopg.Connection, team_id: str, channel_id: str, now: datetime) -> None:
    """PaperPing asked Slack for the channel's member list now (whether Slack gave it or not)."""
    conn.execute(
        "UPDATE channels SET members_tried_at = %(now)s WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"t": team_id, "c": channel_id, "now": now},
    )


def find_channels(conn: psycopg.Connection, name_or_id: str | None = None) -> list[tuple[str, str, str]]:
    """(team_id, channel_id, name) of stored channels, all or those matching a name or id."""
    if name_or_id is None:
        rows = conn.execute("SELECT team_id, channel_id, name FROM channels ORDER BY name, team_id").fetchall()
    else:
        wanted = name_or_id.lstrip("#")
        rows = conn.execute(
            """
            SELECT team_id, channel_id, name FROM channels
             WHERE channel_id = %(w)s OR name = %(w)s ORDER BY name, team_id
            """,
            {"w": wanted},
        ).fetchall()
    return [(r[0], r[1], r[2]) for r in rows]


def deactivate_channels(conn: psycopg.Connection, team_id: str, channel_id: str | None = None) -> int:
    """Stop scheduling posts in one channel, or in every channel of a workspace; returns how many stopped."""
    return conn.execute(
        """
        UPDATE channel_settings SET active = false, next_post_at = NULL, slot_at = NULL
         WHERE team_id = %(t)s AND (%(c)s::text IS NULL OR channel_id = %(c)s) AND active
        """,
        {"t": team_id, "c": channel_id},
    ).rowcount


def upsert_members(conn: psycopg.Connection, members: Sequence[Member]) -> None:
    if not members:
        return
    hold_forget_lists(conn, [m.team_id for m in members])
    conn.execute(  # a member's workspace row first (one the base has not seen yet must not break the batch)
        "INSERT INTO teams (team_id) SELECT DISTINCT unnest(%(t)s::text[]) ON CONFLICT DO NOTHING",
        {"t": sorted({m.team_id for m in members})},
    )
    conn.execute(
        """
        INSERT INTO members (team_id, user_id, display_name, is_bot, deleted, timezone)
        SELECT * FROM unnest(%(team)s::text[], %(user)s::text[], %(display)s::text[],
                             %(bot)s::boolean[], %(deleted)s::boolean[], %(tz)s::text[]) AS u(t, uid, d, b, x, z)
         WHERE NOT EXISTS (SELECT 1 FROM forgotten_members f WHERE f.team_id = u.t AND f.user_id = u.uid)
        ON CONFLICT (team_id, user_id) DO UPDATE
           SET display_name = EXCLUDED.display_name, is_bot = EXCLUDED.is_bot,
               deleted = EXCLUDED.deleted, timezone = EXCLUDED.timezone, updated_at = now()
         WHERE (members.display_name, members.is_bot, members.deleted, members.timezone)
               IS DISTINCT FROM
               (EXCLUDED.display_name, EXCLUDED.is_bot, EXCLUDED.deleted, EXCLUDED.timezone)
        """,
        {
            "team": [m.team_id for m in members],
            "user": [m.user_id for m in members],
            "display": [m.display_name for m in members],
            "bot": [m.is_bot for m in members],
            "deleted": [m.deleted for m in members],
            "tz": [m.timezone for m in members],
        },
    )


def load_member_ids(conn: psycopg.Connection, team_id: str) -> set[str]:
    rows = conn.execute("SELECT user_id FROM members WHERE team_id = %(t)s", {"t": team_id}).fetchall()
    return {r[0] for r in rows}


def load_member_names(conn: psycopg.Connection, team_id: str) -> dict[str, str]:
    """Member id -> display name, for one workspace."""
    rows = conn.execute("SELECT user_id, display_name FROM members WHERE team_id = %(t)s", {"t": team_id}).fetchall()
    return {r[0]: r[1] for r in rows}


MEMBER_LIST_FRESH = timedelta(days=1)  # a channel's member list older than this is read again before private use


def load_member_channels(
    conn: psycopg.Connection, team_id: str, user_id: str, *, current: bool = False
) -> list[tuple[str, str]]:
    """The active channels PaperPing shares with a member: (channel id, name), by name. With ``current``, only
    channels whose member list Slack gave within ``MEMBER_LIST_FRESH``: what reaches a member in private (a DM,
    App Home) never rests on a list that may still name someone who left."""
    rows = conn.execute(
        """
        SELECT c.channel_id, c.name FROM channels c
          JOIN channel_settings s USING (team_id, channel_id)
          JOIN channel_members m USING (team_id, channel_id)
         WHERE c.team_id = %(t)s AND m.user_id = %(u)s AND s.active
           AND (NOT %(current)s OR c.members_read_at >= now() - %(fresh)s)
         ORDER BY c.name
        """,
        {"t": team_id, "u": user_id, "current": current, "fresh": MEMBER_LIST_FRESH},
    ).fetchall()
    return [(r[0], r[1]) for r in rows]


def add_channel_member(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str) -> None:
    """A member joined the channel (none on the workspace's forget list, nor one whose forget-me is under way)."""
    hold_forget_lists(conn, [team_id])
    conn.execute(
        """
        INSERT INTO channel_members (team_id, channel_id, user_id)
        SELECT %(t)s, %(c)s, %(u)s
         WHERE EXISTS (SELECT 1 FROM channels WHERE team_id = %(t)s AND channel_id = %(c)s)
           AND NOT EXISTS (SELECT 1 FROM forgotten_members WHERE team_id = %(t)s AND user_id = %(u)s)
        ON CONFLICT DO NOTHING
        """,
        {"t": team_id, "c": channel_id, "u": user_id},
    )


def in_channel(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str) -> bool:
    """Whether the member is in the channel, as its stored member list says."""
    row = conn.execute(
        "SELECT 1 FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s AND user_id = %(u)s",
        {"t": team_id, "c": channel_id, "u": user_id},
    ).fetchone()
    return row is not None


def load_channel_member_ids(conn: psycopg.Connection, team_id: str, channel_id: str) -> set[str]:
    """The channel's members, as its stored member list says (empty while Slack has not given one)."""
    rows = conn.execute(
        "SELECT user_id FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s",
        {"t": team_id, "c": channel_id},
    ).fetchall()
    return {r[0] for r in rows}


def remove_channel_member(conn: psycopg.Connection, team_id: str, channel_id: str, user_id: str) -> None:
    conn.execute(
        "DELETE FROM channel_members WHERE team_id = %(t)s AND channel_id = %(c)s AND user_id = %(u)s",
        {"t": team_id, "c": channel_id, "u": user_id},
    )


# every paper a workspace refers to anywhere, read before a purge deletes its rows
_TEAM_PAPERS = """
SELECT paper_id FROM message_papers WHERE team_id = %(t)s
UNION SELECT paper_id FROM recommendations WHERE team_id = %(t)s AND paper_id IS NOT NULL
UNION SELECT paper_id FROM saved_papers WHERE team_id = %(t)s
UNION SELECT paper_id FROM reading_list_removals WHERE team_id = %(t)s
UNION SELECT paper_id FROM zotero_items WHERE team_id = %(t)s
UNION SELECT paper_id FROM personal_picks WHERE team_id = %(t)s
UNION SELECT unnest(focus_paper_ids) FROM channel_settings WHERE team_id = %(t)s
"""


def purge_team(
    conn: psycopg.Connection, team_id: str, *, keep_forget_list: bool = True, at: datetime | None = None
) -> dict[str, int]:
    """Everything PaperPing holds of a workspace: its channels with their messages, reactions, settings and
    posts, its members and their settings, checkpoints, LLM logs, events seen, reactions remembered as taken off
    and its installation.
    Public paper metadata, shared by every workspace, stays. So do the workspace's forget list (member ids and
    when they asked) and the messages remembered as deleted or edited to link no paper (their ids and times, for
    ``storage.deletions.KEPT``), unless ``keep_forget_list`` is false: a later installation that imports an old
    export must not store those members or messages again. The purge itself is noted (``purged_teams``: the id
    and when, now or ``at``), so that a restore of an older backup deletes the workspace again."""
    params = {"t": team_id}
    made_here = forget_text_vectors(conn, "m.team_id = %(t)s", params)
    referred = [r[0] for r in conn.execute(_TEAM_PAPERS, params).fetchall()]
    counts = {
        "messages": conn.execute("DELETE FROM messages WHERE team_id = %(t)s", params).rowcount,
        "members": conn.execute("DELETE FROM members WHERE team_id = %(t)s", params).rowcount,
    }
    for table in (
        "member_settings",
        "personal_picks",
        "import_checkpoints",
        "llm_calls",
        "processed_events",
        "removed_reactions",
        "installations",
        "assistant_threads",
        "answer_feedback",
        *(() if keep_forget_list else ("forgotten_members", "deleted_messages")),
    ):
        # the table names are fixed here, never from input
        conn.execute(f"DELETE FROM {table} WHERE team_id = %(t)s", params)
    counts["channels"] = conn.execute("DELETE FROM channels WHERE team_id = %(t)s", params).rowcount
    conn.execute("DELETE FROM teams WHERE team_id = %(t)s", params)
    conn.execute(
        "INSERT INTO purged_teams (team_id, purged_at) VALUES (%(t)s, COALESCE(%(at)s::timestamptz, now()))"
        " ON CONFLICT (team_id) DO UPDATE SET purged_at = GREATEST(purged_teams.purged_at, EXCLUDED.purged_at)",
        {**params, "at": at},
    )
    # papers only this workspace's links brought in (not the catalog's, not shared elsewhere, never recommended
    # elsewhere) go with it, and so do papers it brought in by a command (a focus, a saved or asked-about link)
    # that no source knows: their identifiers were its own; shared papers that lost their text-made vector are
    # embedded again
    counts["papers"] = drop_orphaned_papers(conn, made_here, referred)
    requeue_shared(conn, made_here)
    return counts


def load_channel_name(conn: psycopg.Connection, team_id: str, channel_id: str) -> str | None:
    """The channel's name as PaperPing last saw it."""
    row = conn.execute(
        "SELECT name FROM channels WHERE team_id = %(t)s AND channel_id = %(c)s", {"t": team_id, "c": channel_id}
    ).fetchone()
    return str(row[0]) if row and row[0] else None
