"""The demo's posts as one HTML page that looks like the channel in Slack."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Protocol

from bot.views.post_blocks import build_blocks
from socialrag.models import Draft
from socialrag.templates import templates


class Shown(Protocol):
    """A demo post (``bot.demo.workflow.Post``): its draft, when and under which ts it was posted."""

    @property
    def draft(self) -> Draft: ...

    @property
    def at(self) -> datetime: ...

    @property
    def ts(self) -> str: ...


@dataclass(frozen=True)
class Segment:
    """A piece of a message's text as Slack shows it: plain text, an @-mention or a link, bold or not."""

    kind: str  # "text", "mention", "channel", "code" or "link"
    text: str
    url: str = ""
    bold: bool = False


@dataclass(frozen=True)
class Block:
    kind: str  # "section", "context" or "actions"
    segments: tuple[Segment, ...] = ()
    labels: tuple[str, ...] = ()


@dataclass(frozen=True)
class Rendered:
    when: str
    what: str
    blocks: tuple[Block, ...]


BOLD = re.compile(r"\*([^*\n]+)\*")
PIECE = re.compile(r"<@([A-Z0-9]+)>|<(https?://[^|>]+)\|([^>]+)>|<#[A-Z0-9]+\|([^>]+)>|`([^`\n]+)`")


def parse_mrkdwn(text: str, names: dict[str, str]) -> tuple[Segment, ...]:
    """Slack mrkdwn (as PaperPing writes it: escaped text, mentions, labelled links, bold) as segments of plain
    text, Slack's escapes undone; the page escapes each segment again."""
    segments: list[Segment] = []
    at = 0
    for bold in BOLD.finditer(text):
        segments += _pieces(text[at : bold.start()], names, bold=False)
        segments += _pieces(bold.group(1), names, bold=True)
        at = bold.end()
    return tuple(segments + _pieces(text[at:], names, bold=False))


def _pieces(text: str, names: dict[str, str], *, bold: bool) -> list[Segment]:
    found: list[Segment] = []
    at = 0
    for m in PIECE.finditer(text):
        if m.start() > at:
            found.append(Segment("text", html.unescape(text[at : m.start()]), bold=bold))
        if m.group(1):
            found.append(Segment("mention", names.get(m.group(1), ""), bold=bold))
        elif m.group(4):  # a channel, as Slack shows it: its name after a #
            found.append(Segment("channel", html.unescape(m.group(4)), bold=bold))
        elif m.group(5):  # `code`, as Slack shows it: in a monospaced box
            found.append(Segment("code", html.unescape(m.group(5)), bold=bold))
        else:
            found.append(Segment("link", html.unescape(m.group(3)), html.unescape(m.group(2)), bold=bold))
        at = m.end()
    if at < len(text):
        found.append(Segment("text", html.unescape(text[at:]), bold=bold))
    return found


def _block(block: dict[str, Any], names: dict[str, str]) -> Block:
    if block["type"] == "actions":
        return Block("actions", labels=tuple(e["text"]["text"] for e in block["elements"]))
    if block["type"] == "section":
        return Block("section", parse_mrkdwn(block["text"]["text"], names))
    return Block("context", parse_mrkdwn(block["elements"][0]["text"], names))


FOOTER = "PaperPing demo: a fictional channel sharing real ACL Anthology papers (CC BY 4.0)."


def html_page(
    posts: Sequence[Shown],
    names: dict[str, str],
    clicks: dict[str, dict[str, int]],
    channel_name: str,
    more: Sequence[tuple[datetime, str, list[dict[str, Any]]]] = (),
    header: str | None = None,
    footer: str = FOOTER,
) -> str:
    """The posts as the channel shows them, with their buttons and counts (``templates/slack_page.html.j2``);
    ``more``: other messages of PaperPing's (when, what it is, its blocks), such as a context reply and a digest;
    ``header``: the page's heading when it is not the channel (App Home, the Messages tab); ``footer``: what the
    page's data is."""
    shown = [(p.at, "", build_blocks(p.draft, clicks.get(p.ts))) for p in posts] + list(more)
    messages = [
        Rendered(f"{at:%a %d %b, %H:%M}", what, tuple(_block(b, names) for b in blocks))
        for at, what, blocks in sorted(shown, key=lambda x: x[0])
    ]
    page = templates("bot.demo").get_template("slack_page.html.j2")
    return page.render(channel=channel_name, messages=messages, header=header, footer=footer)
