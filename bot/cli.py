"""The ``paperping`` command. It builds the settings, database and clients and passes them down."""

from __future__ import annotations

import argparse
import json
import logging
import sys
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from bot.indexing import embed_all, run_indexing
from socialrag import storage
from socialrag.config import Settings, clear_empty_settings
from socialrag.db import Database, open_database
from socialrag.errors import PaperPingError
from socialrag.knowledge import describe_index
from socialrag.recommender import describe_ranker, load_fit
from socialrag.storage.queue import IndexProgress

log = logging.getLogger("paperping")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="paperping", description="PaperPing: paper recommendations for Slack channels"
    )
    parser.add_argument("-v", "--verbose", action="store_true", help="log what happens")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    sub.add_parser("migrate", help="bring the database schema up to date")
    sub.add_parser("keygen", help="print a new key for PAPERPING_TOKEN_KEY")

    demo = sub.add_parser("demo", help="the whole workflow offline on a fictional lab channel (no Slack needed)")
    demo.add_argument("--home", type=Path, help="keep the demo's database here (default: a temporary folder)")
    demo.add_argument("--out", type=Path, default=Path("paperping-demo"), help="where to write the HTML and JSON")

    run = sub.add_parser("run", help="run the Slack app and post on schedule")
    run.add_argument("--http", action="store_true", help="serve HTTP at /slack/events instead of Socket Mode")
    run.add_argument("--port", type=int, default=3000, help="HTTP port (default 3000)")

    imp = sub.add_parser("import-export", help="import a Slack workspace export (zip)")
    imp.add_argument("export", type=Path, help="the export .zip")
    imp.add_argument(
        "--channel", action="append", dest="channels", metavar="NAME", help="only this channel (repeatable)"
    )
    imp.add_argument("--team-id", help="workspace id, when the export does not say")
    imp.add_argument("--team-domain", help="workspace domain (NAME.slack.com) for message permalinks")
    _index_flags(imp)

    back = sub.add_parser("backfill", help="import a channel's history through the Slack Web API")
    back.add_argument("channel", help="channel id (C...) or name")
    back.add_argument("--restart", action="store_true", help="ignore a saved checkpoint and start again")
    _index_flags(back)

    cat = sub.add_parser("catalog", help="the local catalog of candidate papers")
    cat_sub = cat.add_subparsers(dest="catalog_command", required=True, metavar="SUBCOMMAND")
    cat_imp = cat_sub.add_parser("import", help="import papers from a JSON-lines file (.jsonl or .jsonl.gz)")
    cat_imp.add_argument("file", type=Path)
    cat_imp.add_argument("--no-embed", action="store_true", help="do not compute embeddings now")

    idx = sub.add_parser("index", help="fetch missing paper metadata and compute missing embeddings")
    _index_flags(idx)

    rec = sub.add_parser("recommend", help="show what would be posted in a channel, without posting")
    rec.add_argument("channel", help="channel name or id (TEAM_ID/CHANNEL_ID when several workspaces have it)")
    rec.add_argument("--top", type=int, default=5, help="how many ranked candidates to show")
    rec.add_argument("--json", action="store_true", help="print JSON")
    rec.add_argument("--as-of", help="replay: use only history before this ISO time")
    rec.add_argument("--window-days", type=int, help="only candidates published in the N days before --as-of")
    rec.add_argument("--style", help="tldr, template, template+tldr or llm (default: the channel's)")

    ev = sub.add_parser("eval", help="replay a channel's history and measure the ranking against baselines")
    ev.add_argument("channel", help="channel name or id (TEAM_ID/CHANNEL_ID when several workspaces have it)")
    ev.add_argument("--warmup", type=int, default=5, help="shared papers to learn from before the first step")

    rep = sub.add_parser("report", help="write a channel's report: one HTML page with charts, and each chart as PNG")
    rep.add_argument("channel", help="channel name or id (TEAM_ID/CHANNEL_ID when several workspaces have it)")
    rep.add_argument("--out", type=Path, help="the folder to write (default: paperping-report-CHANNEL)")
    rep.add_argument("--since", help="from this ISO date")
    rep.add_argument("--until", help="up to this ISO date (default: now)")
    rep.add_argument("--anonymous", action="store_true", help="pseudonyms instead of members' names")

    fit = sub.add_parser("refit", help="learn a channel's ranking from its history now (the scheduler does it weekly)")
    fit.add_argument("channel", help="channel name or id (TEAM_ID/CHANNEL_ID when several workspaces have it)")

    purge = sub.add_parser("purge", help="delete everything stored about a workspace (after it uninstalled)")
    purge.add_argument("--team", required=True, help="the workspace id (T...)")
    purge.add_argument("--yes", action="store_true", help="really delete (without it, say what would go)")

    st = sub.add_parser("status", help="what the knowledge base holds, per channel")
    st.add_argument("--channel", help="one channel, by name or id")
    st.add_argument("--json", action="store_true", help="print JSON")
    return parser


def _index_flags(p: argparse.ArgumentParser) -> None:
    p.add_argument("--no-metadata", action="store_true", help="do not look paper metadata up now")
    p.add_argument("--no-embed", action="store_true", help="do not compute embeddings now")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING, format="%(levelname)s %(name)s: %(message)s"
    )
    logging.getLogger("paperping.progress").setLevel(logging.INFO)  # long work says how far it is
    logging.getLogger("httpx").setLevel(logging.WARNING)  # a line per request
    # a line per job run, and a warning each time a job still running is not started again (expected: the
    # indexer works through its queue for longer than its interval)
    logging.getLogger("apscheduler").setLevel(logging.ERROR)
    if args.command == "run":  # the service says what it indexes and posts
        for ours in ("bot", "socialrag"):
            logging.getLogger(ours).setLevel(logging.INFO)
    try:
        clear_empty_settings()
        settings = Settings.from_env()
        if args.command == "keygen":
            from socialrag.storage.token_cipher import generate_key

            print(generate_key())
            return 0
        if args.command == "demo":
            from bot.demo.run import run_demo

            run_demo(settings, args.home, args.out)
            return 0
        db = open_database(settings)
        return _dispatch(args, settings, db)
    except PaperPingError as exc:
        print(f"paperping: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("paperping: interrupted; what was imported so far is kept", file=sys.stderr)
        return 130


def _dispatch(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    command = args.command
    if command == "migrate":
        print("database schema is up to date")
        return 0
    if command == "run":
        from bot.run import cmd_run

        return cmd_run(args, settings, db)
    if command == "import-export":
        return cmd_import_export(args, settings, db)
    if command == "backfill":
        from bot.backfill import cmd_backfill

        return cmd_backfill(args, settings, db)
    if command == "catalog":
        return cmd_catalog_import(args, settings, db)
    if command == "index":
        return cmd_index(args, settings, db)
    if command == "recommend":
        from bot.recommend_cmd import cmd_recommend

        return cmd_recommend(args, settings, db)
    if command == "eval":
        from bot.recommend_cmd import cmd_eval

        return cmd_eval(args, settings, db)
    if command == "report":
        from bot.report_cmd import cmd_report

        return cmd_report(args, settings, db)
    if command == "refit":
        from bot.recommend_cmd import cmd_refit

        return cmd_refit(args, settings, db)
    if command == "status":
        return cmd_status(args, db, settings)
    if command == "purge":
        return cmd_purge(args, db)
    raise AssertionError(command)


def cmd_import_export(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    from bot.export import import_export

    started = datetime.now(UTC)
    report = import_export(
        db,
        args.export,
        channels=args.channels,
        team_id=args.team_id,
        domain=args.team_domain or settings.slack_team_domain,
        progress=sys.stderr.isatty(),
    )
    seconds = (datetime.now(UTC) - started).total_seconds()
    for ch in report.channels:
        s = ch.stats
        print(
            f"#{ch.name}: {ch.scanned} messages read, kept {s.messages} with paper links, "
            f"{s.replies} thread replies, {s.reactions} reactions"
        )
    print(f"read {report.scanned} messages in {seconds:.1f}s")
    for problem in report.problems:
        print(f"warning: {problem}", file=sys.stderr)
    if report.problems:
        print(f"{len(report.problems)} file(s) could not be read; everything else was imported", file=sys.stderr)
    run_indexing(args, settings, db)
    return 0


def cmd_catalog_import(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    from socialrag.knowledge import import_catalog

    report = import_catalog(db, args.file, progress=sys.stderr.isatty())
    print(f"catalog: {report.papers} papers imported from {args.file}")
    for problem in report.problems[:20]:
        print(f"warning: {problem}", file=sys.stderr)
    if len(report.problems) > 20:
        print(f"... and {len(report.problems) - 20} more lines skipped", file=sys.stderr)
    if not args.no_embed:
        embed_all(settings, db)
    return 0


def cmd_index(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    run_indexing(args, settings, db)
    return 0


def cmd_purge(args: argparse.Namespace, db: Database) -> int:
    """``paperping purge --team T --yes``: a workspace's channels, messages, reactions, members, settings,
    posts, LLM logs, checkpoints and installation. Public paper metadata stays."""
    with db.connection() as conn:
        channels = [c for c in storage.workspaces.find_channels(conn) if c[0] == args.team]
    if not args.yes:
        print(
            f"paperping: this deletes everything stored about workspace {args.team} ({len(channels)} channels); "
            "add --yes to go ahead",
            file=sys.stderr,
        )
        return 2
    with db.connection() as conn:
        counts = storage.workspaces.purge_team(conn, args.team)
    print(
        f"workspace {args.team}: deleted {counts['channels']} channels, {counts['messages']} messages and "
        f"replies (with their reactions), {counts['members']} members"
    )
    return 0


def cmd_status(args: argparse.Namespace, db: Database, settings: Settings) -> int:
    model = settings.embed_model
    with db.connection() as conn:
        channels = storage.workspaces.find_channels(conn, args.channel)
        if args.channel and not channels:
            print(f"paperping: no stored channel named {args.channel}; `paperping status` lists them", file=sys.stderr)
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
        rankers = [describe_ranker(load_fit(conn, team, cid, settings.popularity_weight)) for team, cid, _ in channels]
    if args.json:
        print(json.dumps({"channels": rows}, indent=2))
        return 0
    if not rows:
        print("no channels yet: import an export (paperping import-export) or backfill a channel")
        return 0
    header = ("channel", "messages", "papers", "reactions", "replies", "members")
    table = [header] + [(f"#{r['name']} ({r['id']})", *(str(r[k]) for k in header[1:])) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    for row in table:
        print(
            "  ".join(
                cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths, strict=True))
            )
        )
    print()
    for r, ranking in zip(rows, rankers, strict=True):
        print(f"#{r['name']}: {ranking}")
        print(f"#{r['name']}: {describe_index(IndexProgress(*(r[k] for k in INDEX_KEYS)))}")
        if r["empty_reason"]:
            print(f"#{r['name']}: the last slot posted nothing: {r['empty_reason']}")
    return 0


INDEX_KEYS = ("papers", "looked_up", "embedded", "waiting", "given_up")


def index_state(conn: Any, team: str, channel: str, model: str) -> dict[str, Any]:
    """A channel's index and why its last slot posted nothing, for `status`."""
    progress = storage.queue.load_index_progress(conn, team, channel, model)
    empty = storage.settings.load_channel_settings(conn, team, channel).empty_reason
    return {
        "looked_up": progress.looked_up,
        "embedded": progress.embedded,
        "waiting": progress.waiting,
        "given_up": progress.given_up,
        "empty_reason": empty,
    }


if __name__ == "__main__":
    sys.exit(main())
