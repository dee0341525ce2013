"""Slack payloads (Web API, export files, events) turned into ``socialrag.models``. No business rules."""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from socialrag.errors import BadRecord
from socialrag.knowledge import find_paper_refs
from socialrag.models import Channel, Member, Message, Reaction
from socialrag.text import ascii_digits

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
    attachments = raw.get("attachments")
    for att in attachments if isinstance(attachments, list) else ():
        if not isinstance(att, Mapping) or _is_message_share(att):
            continue
        for key in ("title_link", "from_url", "original_url"):
            if att.get(key):
                parts.append(f"<{att[key]}|{att.get('title') or ''}>" if key == "title_link" else str(att[key]))
    return "\n".join(parts)


_TS = re.compile(r"\d{1,10}\.\d{1,6}")
LAST_TS = 4_102_444_800.0  # 2100-01-01: a ts past it is not a real message time
# an edit time further ahead of this host's clock is none a real edit has: a day leaves room for a host whose clock
# is behind Slack's (a live edit taken as unknown would be dropped as older than a stored one)
EDIT_AHEAD = timedelta(days=1)


def parse_ts(value: object, field: str = "ts") -> tuple[str, datetime]:
    """A Slack timestamp (``1700000000.000100``) and its time; ``BadRecord`` for anything else."""
    if not isinstance(value, str) or not _TS.fullmatch(value) or float(value) >= LAST_TS:
        raise BadRecord(f"{field} {str(value)[:40]!r} is not a Slack timestamp")
    return value, ts_to_datetime(value)


# half of a surrogate pair (a JSON ``\ud83d`` without its other half: an emoji cut in two), which UTF-8 cannot hold:
# a live event holding one failed as a whole, and Slack's copies of it alike
_LONE_SURROGATE = re.compile(r"[\ud800-\udfff]")


def _text(value: object) -> str:
    return _LONE_SURROGATE.sub("", value.replace("\x00", "")) if isinstance(value, str) else ""


def _reply_count(value: object) -> int:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1_000_000:
        return value
    if isinstance(value, str) and ascii_digits(value) and len(value) < 7:
        return int(value)
    raise BadRecord(f"reply_count {str(value)[:40]!r} is not a count")


def message_from_slack(
    raw: Mapping[str, Any],
    team_id: str,
    channel_id: str,
    *,
    domain: str | None = None,
    permalink: str | None = None,
) -> Message | None:
    """One Slack message as a ``Message``, None for kinds that never carry a shared paper, or ``BadRecord``
    saying which field is malformed."""
    subtype = raw.get("subtype")
    if not (subtype is None or isinstance(subtype, str)) or subtype not in CONTENT_SUBTYPES:
        return None
    if raw.get("type", "message") != "message":
        return None
    ts, posted_at = parse_ts(raw.get("ts"))
    thread_ts = parse_ts(raw["thread_ts"], "thread_ts")[0] if raw.get("thread_ts") is not None else None
    user = raw.get("user") or raw.get("bot_id")
    if user is not None and not isinstance(user, str):
        raise BadRecord(f"user {str(user)[:40]!r} is not a member id")
    edited = raw.get("edited")
    edited_at = None
    if isinstance(edited, Mapping):
        try:
            edited_at = parse_ts(edited.get("ts"))[1]
        except BadRecord:
            edited_at = None
    if edited_at is not None and not posted_at <= edited_at <= datetime.now(UTC) + EDIT_AHEAD:
        edited_at = None  # a time no edit has (before the message, or an export's 2099): unknown
    return Message(
        team_id=team_id,
        channel_id=channel_id,
        ts=ts,
        user_id=_text(user) or None,
        text=_text(raw.get("text")),
        posted_at=posted_at,
        thread_ts=thread_ts,
        subtype=subtype,
        permalink=permalink or build_permalink(domain, channel_id, ts, thread_ts),
        edited_at=edited_at,
        reply_count=_reply_count(raw.get("reply_count")),
        papers=find_paper_refs(_text(link_text(raw))),
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
        users = entry.get("users")
        if not isinstance(users, list) or not isinstance(entry["name"], str):
            continue  # a malformed entry (users given as a string would be read letter by letter)
        for user in users:
            if isinstance(user, str) and user:
                out.append(Reaction(user_id=_text(user), emoji=_text(entry["name"])))
    return tuple(out)


def member_from_slack(raw: Mapping[str, Any], team_id: str | None = None) -> Member | None:
    """A ``users.json`` entry or a ``users.info`` user as a ``Member`` of the workspace ``team_id`` (the tenant
    whose channels they appear in). A member of another organisation in a Slack Connect channel carries their
    own ``team_id``; they are still a member of this workspace's knowledge base, scoped like everyone else."""
    user_id = raw.get("id")
    if not isinstance(user_id, str):
        return None
    profile = raw.get("profile") if isinstance(raw.get("profile"), Mapping) else {}
    assert isinstance(profile, Mapping)
    display = (
        profile.get("display_name") or raw.get("real_name") or profile.get("real_name") or raw.get("name") or user_id
    )
    real = raw.get("real_name") or profile.get("real_name")
    tz = _text(raw.get("tz"))  # a NUL in it failed the whole channel's members (Postgres text holds none)
    return Member(
        team_id=team_id or _text(raw.get("team_id")) or "",
        user_id=_text(user_id),
        display_name=_text(display) or _text(user_id),
        real_name=_text(real) or None,
        is_bot=raw.get("is_bot") is True,
        deleted=raw.get("deleted") is True,
        timezone=tz if 0 < len(tz) < 64 else None,
    )


def channel_from_slack(raw: Mapping[str, Any], team_id: str) -> Channel | None:
    channel_id = raw.get("id")
    name = raw.get("name")
    if not isinstance(channel_id, str) or not isinstance(name, str):
        return None
    listed = raw.get("members")
    members = tuple(_text(m) for m in listed if isinstance(m, str)) if isinstance(listed, list) else ()
    return Channel(team_id=team_id, channel_id=_text(channel_id), name=_text(name), member_ids=members)
