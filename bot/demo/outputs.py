"""What the demo writes: the posts' Block Kit (``blocks.json``), the Slack-like page of everything PaperPing posted
in the lab's week (``index.html``), and one page per thing a member sees (``pieces/NAME.html``: a post, the
digest, a context reply, an answer, the profile, App Home), from which ``bot.demo.pictures`` makes the tour's
pictures."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from bot.app_context import AppContext
from bot.commands.profile import render_profile
from bot.demo.slack_page import Shown, html_page
from bot.views.home_tab import channel_lines, member_controls
from bot.views.post_blocks import build_blocks, build_fallback_text, mrkdwn
from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge import load_click_counts
from socialrag.recommender import ChannelProfile

TEAM, CHANNEL, CHANNEL_NAME = "T0DEMO", "C0DEMO", "nlp-reading"
BOT = "UPAPERPING"  # PaperPing's own user in the demo's workspace
PLACES = {"home": "PaperPing · Home", "agent": "PaperPing · Messages"}  # the pieces shown outside the channel
VIEWER = "U09INES"  # the member whose App Home and profile answer the pictures show

Piece = tuple[datetime, str, list[dict[str, Any]]]  # when, what it is, its blocks


def load_clicks(db: Database, posts: Sequence[Shown]) -> dict[str, dict[str, int]]:
    """The counts each post's buttons show, by the post's ts."""
    with db.connection() as conn:
        return {p.ts: load_click_counts(conn, TEAM, CHANNEL, p.ts) for p in posts}


def write_outputs(
    posts: Sequence[Shown],
    names: dict[str, str],
    out: Path,
    clicks: dict[str, dict[str, int]],
    more: Mapping[str, Piece],
    private: Mapping[str, Piece],
) -> None:
    """``blocks.json``, the page of the channel (``index.html``), and one page per piece (``pieces/``): the first
    post, each of ``more`` (posted in the channel) and each of ``private`` (what only one member sees)."""
    out.mkdir(parents=True, exist_ok=True)
    payload = [
        {
            "channel": CHANNEL,
            "text": build_fallback_text(p.draft),
            "blocks": build_blocks(p.draft, clicks.get(p.ts)),
            "posted_at": p.at.isoformat(),
        }
        for p in posts
    ]
    (out / "blocks.json").write_text(json.dumps(payload, indent=2))
    (out / "index.html").write_text(
        html_page(posts, names, clicks, CHANNEL_NAME, list(more.values())), encoding="utf-8"
    )
    pieces = out / "pieces"
    pieces.mkdir(exist_ok=True)
    (pieces / "post.html").write_text(html_page(posts[:1], names, clicks, CHANNEL_NAME), encoding="utf-8")
    for name, piece in {**more, **private}.items():
        header = PLACES.get(name)
        (pieces / f"{name}.html").write_text(
            html_page([], names, clicks, CHANNEL_NAME, [piece], header), encoding="utf-8"
        )


def private_pieces(settings: Settings, db: Database, channel: ChannelProfile, at: datetime) -> dict[str, Piece]:
    """What one member sees alone: the answer to `/paperping profile` (``channel``, as of ``at``), and their App
    Home."""
    profile = render_profile(channel, "the local catalog (the demo makes no network call)")
    ctx = AppContext(settings, db)
    with db.connection() as conn:
        lines = channel_lines(ctx, conn, TEAM, CHANNEL, CHANNEL_NAME, at)
        member = storage.settings.load_member_setting(conn, TEAM, VIEWER)
    home = [{"type": "section", "text": mrkdwn("*PaperPing*")}, {"type": "section", "text": mrkdwn("\n".join(lines))}]
    home += [b for b in member_controls(member) if b["type"] != "divider"]
    return {
        "profile": (
            at,
            " · only visible to @ines, who typed /paperping profile",
            [{"type": "section", "text": mrkdwn(profile)}],
        ),
        "home": (at, " · App Home, as @ines sees it", home),
    }
