"""PaperPing's own events, dropped as bolt drops them, except the deletion of one of its messages."""

from __future__ import annotations

from typing import Any

from slack_bolt.authorization import AuthorizeResult
from slack_bolt.middleware import IgnoringSelfEvents


class OwnEventsIgnored(IgnoringSelfEvents):
    """bolt's ``IgnoringSelfEvents``, but for a ``message_deleted`` event. bolt takes an event's member from the
    deleted message (``previous_message``), so the deletion of PaperPing's own post (by an admin, say) counted as
    PaperPing's own event and was dropped: the post stayed a share with its reactions, and in reports, `why`,
    `status` and App Home. A deletion only takes things out (``knowledge.record_deletion``)."""

    @classmethod
    def _is_self_event(
        cls, auth_result: AuthorizeResult, user_id: str | None, bot_id: str | None, body: dict[str, Any]
    ) -> bool:
        event = body.get("event")
        if isinstance(event, dict) and event.get("type") == "message" and event.get("subtype") == "message_deleted":
            return False
        return bool(super()._is_self_event(auth_result, user_id, bot_id, body))
