"""The Slack app manifest matches the code: every event a listener handles is subscribed (and nothing else),
and the bot scopes are exactly those that the events and the Web API methods the app calls need."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import yaml

from bot.listeners import register_all
from bot.slack.installation_store import BOT_SCOPES

ROOT = Path(__file__).resolve().parents[2]
MANIFEST = yaml.safe_load((ROOT / "manifest.yml").read_text())

# Slack's documented scopes of each Web API method the app calls (none: any bot token may call it)
METHOD_SCOPES: dict[str, tuple[str, ...]] = {
    "auth_test": (),
    "auth_revoke": (),  # the token Slack issued for an install PaperPing refuses
    "oauth_v2_access": (),  # the install page exchanges the code Slack gives for the bot's token (no token needed)
    "chat_postMessage": ("chat:write",),
    "chat_update": ("chat:write",),
    "chat_postEphemeral": ("chat:write",),
    "conversations_history": ("channels:history", "groups:history", "im:history"),  # im: a picks DM looked for
    "conversations_replies": ("channels:history", "groups:history"),
    "conversations_info": ("channels:read", "groups:read"),
    "conversations_members": ("channels:read", "groups:read"),
    "users_conversations": ("channels:read", "groups:read"),  # a member's channels, before their picks DM
    "users_info": ("users:read",),
    "views_publish": (),
    "files_upload_v2": ("files:write",),
    "files_getUploadURLExternal": ("files:write",),  # the monthly report's upload, step by step
    "files_completeUploadExternal": ("files:write",),
    "conversations_open": ("im:write",),  # a direct message with one member (personal picks)
    # the agent: a streamed answer (chat.startStream / appendStream / stopStream), its thread's status and the
    # Messages tab's suggested prompts
    "chat_stream": ("chat:write",),
    "assistant_threads_setStatus": ("assistant:write",),
    "assistant_threads_setSuggestedPrompts": ("assistant:write",),
}
# the bot events each handled event type arrives as, and the scopes that subscribing to them needs
EVENT_SUBSCRIPTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    # the channels' messages, and a member's question in PaperPing's Messages tab (a DM with the app)
    "message": (
        ("message.channels", "message.groups", "message.im"),
        ("channels:history", "groups:history", "im:history"),
    ),
    "reaction_added": (("reaction_added",), ("reactions:read",)),
    "reaction_removed": (("reaction_removed",), ("reactions:read",)),
    "member_joined_channel": (("member_joined_channel",), ("channels:read", "groups:read")),
    "member_left_channel": (("member_left_channel",), ("channels:read", "groups:read")),
    "channel_left": (("channel_left",), ("channels:read",)),
    "group_left": (("group_left",), ("groups:read",)),
    "app_home_opened": (("app_home_opened",), ()),
    "app_mention": (("app_mention",), ("app_mentions:read",)),
    "app_uninstalled": (("app_uninstalled",), ()),
    "tokens_revoked": (("tokens_revoked",), ()),
    # the agent messaging experience (agent_view): what the member has in view beside the Messages tab
    "app_context_changed": (("app_context_changed",), ("assistant:write",)),
    # the older AI app panel (assistant_view; bolt's Assistant middleware), still served for apps made from an
    # older manifest: the manifest now declares agent_view, whose apps never receive the two thread events, so it
    # subscribes none; the member's messages in a thread arrive as message.im
    "assistant_thread_started": ((), ("assistant:write",)),
    "assistant_thread_context_changed": ((), ("assistant:write",)),
    "assistant_message": (("message.im",), ("im:history", "assistant:write")),
}


class RecordingApp:
    """Takes the listeners PaperPing registers and remembers what they listen to."""

    def __init__(self) -> None:
        self.events: set[str] = set()
        self.commands: set[str] = set()

    def event(self, kind: str) -> Callable[..., Any]:
        self.events.add(kind)
        return lambda *a, **k: a[0] if a else None

    def command(self, name: str) -> Callable[..., Any]:
        self.commands.add(name)
        return lambda *a, **k: None

    def action(self, action_id: str) -> Callable[..., Any]:
        return lambda *a, **k: a[0] if a else None

    def shortcut(self, callback_id: str) -> Callable[..., Any]:
        return lambda *a, **k: None

    def use(self, middleware: Any) -> None:
        from slack_bolt import Assistant

        if isinstance(middleware, Assistant):  # the panel's events reach it, not a listener of their own
            self.events |= {"assistant_thread_started", "assistant_thread_context_changed", "assistant_message"}

    def error(self, handler: Any) -> None:
        pass


def registered() -> RecordingApp:
    app = RecordingApp()
    register_all(app, SimpleNamespace(db=None))  # type: ignore[arg-type]
    return app


def test_every_handled_event_is_subscribed_and_nothing_else() -> None:
    app = registered()
    unknown = app.events - set(EVENT_SUBSCRIPTIONS)
    assert not unknown, f"add these events to EVENT_SUBSCRIPTIONS and the manifest: {unknown}"
    wanted = {sub for kind in app.events for sub in EVENT_SUBSCRIPTIONS[kind][0]}
    subscribed = set(MANIFEST["settings"]["event_subscriptions"]["bot_events"])
    assert subscribed == wanted
    assert {c["command"] for c in MANIFEST["features"]["slash_commands"]} == app.commands == {"/paperping"}


def called_methods() -> set[str]:
    found: set[str] = set()
    for path in (ROOT / "bot").rglob("*.py"):
        found.update(re.findall(r"\bclient\.([A-Za-z_0-9]+)", path.read_text()))
    return found


def test_the_scopes_are_the_ones_the_code_needs() -> None:
    methods = called_methods()
    assert "chat_postMessage" in methods and "conversations_history" in methods, "the scan finds the calls"
    unknown = methods - set(METHOD_SCOPES)
    assert not unknown, f"say which scopes these Web API methods need in METHOD_SCOPES: {unknown}"
    app = registered()
    needed = {s for m in methods for s in METHOD_SCOPES[m]}
    needed |= {s for kind in app.events for s in EVENT_SUBSCRIPTIONS[kind][1]}
    needed.add("commands")  # the slash command
    requested = set(MANIFEST["oauth_config"]["scopes"]["bot"])
    assert requested == needed, f"missing: {needed - requested}; not needed: {requested - needed}"
    assert set(BOT_SCOPES) == requested, "OAuth installs ask for what the manifest lists"
