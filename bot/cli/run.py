"""``paperping run``: the subcommand's options. The process itself (``bot.cli.process``: the Slack app, the
posting tick, the indexer) is loaded only when the subcommand runs, so that other subcommands start fast."""

from __future__ import annotations

import argparse

from socialrag.cli.subcommand import OpenDatabase, Subcommand
from socialrag.config import Settings
from socialrag.errors import ConfigError


def run_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--http", action="store_true", help="serve HTTP at /slack/events instead of Socket Mode")
    parser.add_argument("--port", type=int, default=3000, help="HTTP port (default 3000)")


def missing_for_run(settings: Settings, *, http: bool) -> list[str]:
    """What `paperping run` lacks to reach Slack, one sentence a setting, in the order to set them."""
    missing = []
    if not settings.slack_bot_token and not (settings.slack_client_id and settings.slack_client_secret):
        missing.append(
            "SLACK_BOT_TOKEN: the bot token (xoxb-...) from your Slack app's OAuth & Permissions page, once it is "
            "installed in your workspace (or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET, to install it by OAuth)"
        )
    if http and not settings.slack_signing_secret:
        missing.append("SLACK_SIGNING_SECRET: from your Slack app's Basic Information page (--http verifies requests)")
    if not http and not settings.slack_app_token:
        missing.append(
            "SLACK_APP_TOKEN: an app-level token (xapp-...) with the connections:write scope, from your Slack app's "
            "Basic Information page (Socket Mode, what `paperping run` starts without --http)"
        )
    return missing


def run(args: argparse.Namespace, settings: Settings, open_db: OpenDatabase) -> int:
    """``paperping run``: the Slack app and this process's share of the scheduled posts. What is missing to reach
    Slack is said first, before the database is started or migrated."""
    missing = missing_for_run(settings, http=args.http)
    if missing:
        lines = "\n".join(f"  - {m}" for m in missing)
        raise ConfigError(
            f"`paperping run` cannot reach Slack yet; set:\n{lines}\n"
            "docs/slack.md says where each comes from; `paperping demo` runs the whole workflow offline without them."
        )
    from bot.cli.process import cmd_run

    return cmd_run(args, settings, open_db())


RUN = Subcommand("run", "run the Slack app and post on schedule", run_arguments, run)
