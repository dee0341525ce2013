"""``paperping status``: what the knowledge base holds, per channel, with its ranking and index."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import UTC, datetime, timedelta
from typing import Any

import psycopg

from socialrag import storage
from socialrag.cli.gauges import load_figures
from socialrag.cli.subcommand import OpenDatabase, Subcommand
from socialrag.config import Settings
from socialrag.knowledge import describe_index
from socialrag.recommender import describe_ranker, load_emoji_readings, load_fit
from socialrag.storage.queue import IndexProgress
from socialrag.text import printable


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--channel", help="one channel, by name or id")
    parser.add_argument("--json", action="store_true", help="print JSON")


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    db = open_db()
    model = settings.embed_model
    with db.connection() as conn:
        channels = storage.workspaces.find_channels(conn, args.channel)
        if args.channel and not channels:
            print(
                f"paperping: no stored channel named {printable(args.channel)}; `paperping status` lists them",
                file=sys.stderr,
            )
            return 2
        rows = [
            {
                "id": cid,
                "name": name,
                **storage.messages.load_channel_counts(conn, team, cid),
                **index_state(conn, team, cid, model),
            }
            for team, cid, name in channels
        ]
        since = datetime.now(UTC) - FEEDBACK_WINDOW
        for r, (team, cid, _) in zip(rows, channels, strict=True):
            helpful, not_helpful = storage.usage.load_answer_feedback(conn, team, cid, since)
            r["answers_marked"] = {"helpful": helpful, "not_helpful": not_helpful, "days": FEEDBACK_WINDOW.days}
            r["fulltext"] = fulltext_state(conn, team, cid, settings)
        rankers = [describe_ranker(load_fit(conn, team, cid, settings.popularity_weight)) for team, cid, _ in channels]
        emoji = [load_emoji_readings(conn, team, cid, model) for team, cid, _ in channels]
        for r, readings in zip(rows, emoji, strict=True):
            r["emoji_learnt"] = [
                {"emoji": x.emoji, "default": x.default, "reads_as": x.learnt, "why": x.describe()} for x in readings
            ]
    if args.json:
        # the figures /metrics shows (docs/metrics.md), read now; this process's own request counts are not here
        print(json.dumps({"channels": rows, "metrics": load_figures(db)}, indent=2))
        return 0
    if not rows:
        print("no channels yet: import an export (paperping import-export) or backfill a channel")
        return 0
    header = ("channel", "messages", "papers", "reactions", "replies", "members")
    table = [header] + [
        (f"#{printable(r['name'])} ({printable(r['id'])})", *(str(r[k]) for k in header[1:])) for r in rows
    ]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    print()
    for r, ranking in zip(rows, rankers, strict=True):
        name = printable(r["name"])
        print(f"#{name}: {ranking}")
        for x in r["emoji_learnt"]:
            print(f"#{name}: {printable(x['why'])}")
        print(f"#{name}: {describe_index(IndexProgress(*(r[k] for k in INDEX_KEYS)))}")
        marked = r["answers_marked"]
        if marked["helpful"] or marked["not_helpful"]:
            print(
                f"#{name}: answers about it in the last {marked['days']} days: {marked['helpful']} marked "
                f"helpful, {marked['not_helpful']} not helpful"
            )
        print(f"#{name}: {describe_fulltext(r['fulltext'])}")
        if r["empty_reason"]:
            print(f"#{name}: the last slot posted nothing: {printable(r['empty_reason'])}")
    return 0


def fulltext_state(conn: psycopg.Connection, team: str, channel: str, settings: Settings) -> dict[str, Any]:
    """How many of a channel's papers have their open-access full text read, and whether it is read at all."""
    counts = storage.fulltext.load_fulltext_counts(conn, team, channel)
    off = (
        "service" if not settings.fulltext_on
        else "workspace" if not storage.fulltext.load_workspace_fulltext(conn, team)
        else "channel" if not storage.settings.load_channel_settings(conn, team, channel).fulltext
        else None
    )  # fmt: skip
    return {
        "on": off is None,
        "off_for": off,
        "papers": counts.papers,
        "read": counts.read,
        "none": counts.none,
        "unreadable": counts.unreadable,
        "waiting": counts.waiting,
    }


def describe_fulltext(state: dict[str, Any]) -> str:
    said = (
        f"full text read for {state['read']} of its {state['papers']} papers ({state['none']} with no open full "
        f"text, {state['unreadable']} unreadable, {state['waiting']} not looked for yet)"
    )
    where = {"service": "this service (PAPERPING_FULLTEXT=0 or offline)", "workspace": "the workspace"}
    if state["off_for"]:
        return f"{said}; reading is off for {where.get(state['off_for'], 'this channel')}"
    return said


FEEDBACK_WINDOW = timedelta(days=30)  # the members' marks on answers that `status` counts
INDEX_KEYS = ("papers", "looked_up", "embedded", "waiting", "given_up", "unusable")


def index_state(conn: psycopg.Connection, team: str, channel: str, model: str) -> dict[str, Any]:
    """A channel's index and why its last slot posted nothing, for `status`."""
    progress = storage.queue.load_index_progress(conn, team, channel, model)
    empty = storage.settings.load_channel_settings(conn, team, channel).empty_reason
    return {
        "looked_up": progress.looked_up,
        "embedded": progress.embedded,
        "waiting": progress.waiting,
        "given_up": progress.given_up,
        "unusable": progress.unusable,
        "empty_reason": empty,
    }


COMMAND = Subcommand("status", "what the knowledge base holds, per channel", add_arguments, run)
