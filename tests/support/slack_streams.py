"""The Slack stand-in's streamed messages (``chat.startStream`` / ``appendStream`` / ``stopStream``), as Slack
documents them: a stream is a reply in a thread (``thread_ts``), outside a DM it needs the recipient; its pieces
are chunks (``markdown_text`` of at most 12,000 characters, ``task_update`` with an id, a title and one of four
states, its sources https links); a stopped stream takes no more; ``stopStream``'s blocks are checked like a
message's, and a ``context_actions`` block holds at most five elements, feedback buttons with texts of at most 75
characters and values of at most 2,000."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

MAX_MARKDOWN = 12_000
TASK_STATES = ("pending", "in_progress", "complete", "error")


def _loads(value: Any) -> Any:
    return json.loads(value) if isinstance(value, str) else value


def refused_chunks(chunks: Any) -> str | None:
    """Slack's refusal of a stream's chunks, if it would refuse them."""
    if not isinstance(chunks, list):
        return "invalid_chunks"
    for chunk in chunks:
        kind = chunk.get("type") if isinstance(chunk, dict) else None
        if kind == "markdown_text":
            if not isinstance(chunk.get("text"), str) or len(chunk["text"]) > MAX_MARKDOWN:
                return "invalid_chunks"
        elif kind == "task_update":
            if not chunk.get("id") or not chunk.get("title") or chunk.get("status") not in TASK_STATES:
                return "invalid_chunks"
            for source in chunk.get("sources") or []:
                if source.get("type") != "url" or not str(source.get("url", "")).startswith("https://"):
                    return "invalid_chunks"
                if not source.get("text"):
                    return "invalid_chunks"
        elif kind not in ("plan_update", "blocks"):
            return "invalid_chunks"
    return None


def refused_feedback(blocks: list[Any]) -> str | None:
    for block in blocks:
        if not isinstance(block, dict) or block.get("type") != "context_actions":
            continue
        elements = block.get("elements") or []
        if not elements or len(elements) > 5:
            return "invalid_blocks"
        for element in elements:
            if element.get("type") != "feedback_buttons":
                continue
            for side in ("positive_button", "negative_button"):
                button = element.get(side) or {}
                text = (button.get("text") or {}).get("text", "")
                if not text or len(text) > 75 or not button.get("value") or len(button["value"]) > 2000:
                    return "invalid_blocks"
    return None


class StreamedMessages:
    """Mixed into the stand-in: ``streams`` keeps each stream's message, its chunks in order and whether it
    stopped. The message is also in ``posts``, its ``text`` the markdown so far."""

    lock: threading.Lock
    clock: int
    state: Any
    posts: list[dict[str, Any]]

    def __init__(self) -> None:
        self.streams: dict[str, dict[str, Any]] = {}

    @staticmethod
    def refused_blocks(params: dict[str, str]) -> str | None:  # the stand-in's own
        raise NotImplementedError

    def api_chat_startStream(self, params: dict[str, str]) -> dict[str, Any]:
        channel, thread = params.get("channel", ""), params.get("thread_ts", "")
        if channel not in self.state.channels:
            return {"ok": False, "error": "channel_not_found"}
        if not thread:
            return {"ok": False, "error": "invalid_arguments"}
        if not channel.startswith("D") and not (params.get("recipient_user_id") and params.get("recipient_team_id")):
            return {"ok": False, "error": "missing_recipient_user_id"}
        chunks = _loads(params.get("chunks") or "[]")
        refused = refused_chunks(chunks)
        if refused:
            return {"ok": False, "error": refused}
        with self.lock:
            self.clock += 1
            ts = f"{int(time.time())}.{self.clock:06d}"
            post: dict[str, Any] = {
                "channel": channel,
                "type": "message",
                "user": "UBOT",
                "bot_id": "BBOT",
                "ts": ts,
                "thread_ts": thread,
                "text": "",
                "streamed": True,
            }
            self.streams[ts] = {"post": post, "chunks": [], "stopped": False, "blocks": None}
            self.posts.append(post)
            self.state.messages.setdefault(channel, []).append(post)
            self._add(ts, chunks)
        return {"ok": True, "channel": channel, "ts": ts}

    def _add(self, ts: str, chunks: list[dict[str, Any]]) -> None:
        stream = self.streams[ts]
        stream["chunks"] += chunks
        stream["post"]["text"] += "".join(c["text"] for c in chunks if c.get("type") == "markdown_text")

    def api_chat_appendStream(self, params: dict[str, str]) -> dict[str, Any]:
        return self._more(params, stop=False)

    def api_chat_stopStream(self, params: dict[str, str]) -> dict[str, Any]:
        return self._more(params, stop=True)

    def _more(self, params: dict[str, str], stop: bool) -> dict[str, Any]:
        ts = params.get("ts", "")
        chunks = _loads(params.get("chunks") or "[]")
        if params.get("markdown_text"):
            chunks = [*chunks, {"type": "markdown_text", "text": params["markdown_text"]}]
        refused = refused_chunks(chunks)
        blocks = _loads(params.get("blocks") or "[]") if stop else []
        refused = refused or self.refused_blocks({"blocks": params.get("blocks", "")}) or refused_feedback(blocks)
        with self.lock:
            stream = self.streams.get(ts)
            if stream is None or stream["post"]["channel"] != params.get("channel"):
                return {"ok": False, "error": "message_not_found"}
            if stream["stopped"]:
                return {"ok": False, "error": "message_not_in_streaming_state"}
            if refused:
                return {"ok": False, "error": refused}
            self._add(ts, chunks)
            if stop:
                stream["stopped"] = True
                stream["blocks"] = blocks
                stream["post"]["blocks"] = blocks
        return {"ok": True, "channel": params.get("channel"), "ts": ts}
