"""Slack payloads (Web API, export files, events) turned into ``socialrag.models``. No business rules."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from socialrag.links import find_paper_refs
from socialrag.models import Channel, Member, Message, Reaction

# Subtypes that can carry a paper link a person or a bot shared; joins, topics and the like cannot.
CONTENT_SUBTYPES = frozenset({None, "thread_broadcast", "bot_message", "file_share", "me_message", "reply_broadcast"})


def ts_to_datetime(ts: str) -> datetime:
    """Slack's ``1700000000.000100`` as an aware UTC datetime."""
    return datetime.fromtimestamp(float(ts), UTC)


def build_permalink(domain: str | None, channel_id: str, ts: str, thread_ts: str | None = None) -> str:
    """A message link in Slack's own form, for when the Web API's ``chat.getPermalink`` is not at hand."""
    host = f"https://{domain}.slack.com" if domain else "https://slack.com"
    link = f"{host}/archives/{channel_id}/p{ts.replace('.', '')}"
    if thread_ts and thread_ts != ts:
        link += f"?thread_ts={thread_ts}&cid={channel_id}"
    return link


def _is_message_share(att: Mapping[str, Any]) -> bool:
    if att.get("is_msg_unfurl") or att.get("is_share") or att.get("is_reply_unfurl"):
        return True
    origin = str(att.get("from_url") or att.get("original_url") or "")
    return ".slack.com/archives/" in origin


def may_share_paper(raw: Mapping[str, Any]) -> bool:
    """A cheap first look: can this message contain a paper link at all? (Most chatter cannot.)"""
    if raw.get("attachments"):
        return True
    text = raw.get("text")
    if not isinstance(text, str):
        return False
    return "http" in text or "arxiv:" in text or "arXiv:" in text or "doi:" in text or "DOI:" in text


def link_text(raw: Mapping[str, Any]) -> str:
    """The text in which to look for paper links: the message and its link attachments, not shared messages."""
    parts = [str(raw.get("text") or "")]
    for att in raw.get("attachments") or ():
        if not isinstance(att, Mapping) or _is_message_share(att):
            continue
        for key in ("title_link", "from_url", "original_url"):
            if att.get(key):
                parts.append(f"<{att[key]}|{att.get('title') or ''}>" if key == "title_link" else str(att[key]))
    return "\n".join(parts)


def message_from_slack(
    raw: Mapping[str, Any],
    team_id: str,
    channel_id: str,
    *,
    domain: str | None = None,
    permalink: str | None = None,
) -> Message | None:
    """One Slack message as a ``Message``, or None for kinds that never carry a shared paper."""
    subtype = raw.get("subtype")
    ts = raw.get("ts")
    if subtype not in CONTENT_SUBTYPES or not isinstance(ts, str) or raw.get("type", "message") != "message":
        return None
    try:
        posted_at = ts_to_datetime(ts)
    except ValueError:
        return None
    thread_ts = raw.get("thread_ts") if isinstance(raw.get("thread_ts"), str) else None
    edited = raw.get("edited")
    edited_at = None
    if isinstance(edited, Mapping) and isinstance(edited.get("ts"), str):
        try:
            edited_at = ts_to_datetime(edited["ts"])
        except ValueError:
            edited_at = None
    return Message(
        team_id=team_id,
        channel_id=channel_id,
        ts=ts,
        user_id=raw.get("user") or raw.get("bot_id"),
        text=str(raw.get("text") or ""),
        posted_at=posted_at,
        thread_ts=thread_ts,
        subtype=subtype,
        permalink=permalink or build_permalink(domain, channel_id, ts, thread_ts),
        edited_at=edited_at,
        reply_count=int(raw.get("reply_count") or 0),
        papers=find_paper_refs(link_text(raw)),
        reactions=reactions_from_slack(raw.get("reactions")),
    )


def reactions_from_slack(raw: Any) -> tuple[Reaction, ...]:
    """Slack's ``reactions`` list (name, users, count) as one ``Reaction`` per member and emoji."""
    if not isinstance(raw, list):
        return ()
    out = []
    for entry in raw:
        if not isinstance(entry, Mapping) or not entry.get("name"):
            continue
        for user in entry.get("users") or ():
            if isinstance(user, str):
                out.append(Reaction(user_id=user, emoji=str(entry["name"])))
    return tuple(out)


def member_from_slack(raw: Mapping[str, Any], team_id: str | None = None) -> Member | None:
    """A ``users.json`` entry or a ``users.info`` user as a ``Member``."""
    user_id = raw.get("id")
    if not isinstance(user_id, str):
        return None
    profile = raw.get("profile") if isinstance(raw.get("profile"), Mapping) else {}
    assert isinstance(profile, Mapping)
    display = (
        profile.get("display_name") or raw.get("real_name") or profile.get("real_name") or raw.get("name") or user_id
    )
    return Member(
        team_id=str(raw.get("team_id") or team_id or ""),
        user_id=user_id,
        display_name=str(display),
        real_name=raw.get("real_name") or profile.get("real_name"),
        is_bot=bool(raw.get("is_bot")),
        deleted=bool(raw.get("deleted")),
        timezone=raw.get("tz"),
    )


def channel_from_slack(raw: Mapping[str, Any], team_id: str) -> Channel | None:
    channel_id = raw.get("id")
    name = raw.get("name")
    if not isinstance(channel_id, str) or not isinstance(name, str):
        return None
    members = tuple(m for m in raw.get("members") or () if isinstance(m, str))
    return Channel(team_id=team_id, channel_id=channel_id, name=name, member_ids=members)
