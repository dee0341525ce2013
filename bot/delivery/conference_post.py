"""The Slack side of the conference planner (what is in the plan is decided by
``socialrag.recommender.serve.conference``): one message in the channel, the plan as Markdown and CSV files in its
thread, and the top ten as a reply there. Members are named in plain text: a list of ten papers notifies nobody."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass

from slack_sdk import WebClient

from bot.delivery.short_messages import post_text
from bot.delivery.uploads import Upload, upload_files
from bot.slack.pacer import SlackPacer
from bot.views.post_blocks import link, quote
from socialrag.errors import OutcomeUnknown, SourceError
from socialrag.recommender import SHOWN, ConferencePlan, render_csv, render_markdown, render_plain
from socialrag.text import visible

log = logging.getLogger(__name__)


def top_ten_text(plan: ConferencePlan, names: dict[str, str]) -> str:
    """The thread's reply: the first ``SHOWN`` papers, each linked with its one line of why."""
    lines = [f"*The first {min(SHOWN, len(plan.papers))}* (the files hold {len(plan.papers)}):"]
    for i, p in enumerate(plan.papers[:SHOWN], 1):
        lines.append(f"{i}. {link(p.url, ' '.join(p.title.split())[:200])} — {quote(render_plain(p.why, names), 300)}")
    return "\n".join(lines)


def file_stem(venue: str, year: int) -> str:
    """The files' name before their extension (``ACL-2025``): the venue's letters, digits, dots and hyphens only.
    The venue is the member's words or a source's metadata; in a file name the channel sees, a right-to-left
    override (U+202E) before ``dm.exe`` would show the name as ending in ``exe.md``, and a ``/`` would name a folder."""
    name = re.sub(r"[^\w.-]+", "-", visible(venue)).strip("-.")[:100]
    return f"{name or 'conference'}-{year}"


@dataclass(frozen=True)
class PlanPosted:
    """The plan's message is in the channel; what its files' upload failed with (``OutcomeUnknown`` when Slack may
    have them) and what the reply with the first ten failed with, None for each that is there."""

    files: SourceError | None = None
    first_ten: SourceError | None = None


def post_plan(
    client: WebClient, pacer: SlackPacer, channel: str, channel_name: str, plan: ConferencePlan, asker: str,
    names: dict[str, str],
) -> PlanPosted:  # fmt: skip
    """Post the plan in the channel: its message, the files and the first ten in its thread. The first ten go there
    whatever became of the files; what failed after the message is returned (``PlanPosted``). Raises
    ``SourceError`` only when the message itself could not be posted: then nothing of the plan is in the channel."""
    head = (
        f"*{quote(plan.venue, 80)} {plan.year}*: the papers this channel would most want to see, ranked with its own "
        f"ranking ({len(plan.papers)} of {plan.found}; asked by <@{asker}>). The files and the first ten are in the "
        "thread."
    )
    ts = post_text(pacer, client, channel, head)
    stem = file_stem(plan.venue, plan.year)
    files = [
        Upload(f"{stem}.md", render_markdown(plan, names, channel_name).encode(), f"{stem}.md"),
        Upload(f"{stem}.csv", render_csv(plan, names).encode(), f"{stem}.csv"),
    ]
    failed: SourceError | None = None
    try:
        upload_files(pacer, client, channel, files, thread_ts=ts)
    except SourceError as exc:
        failed = exc
    top = top_ten_text(plan, names)
    if failed is not None and not isinstance(failed, OutcomeUnknown):
        top += "\n_The files could not be uploaded; ask again later for them._"
    try:
        post_text(pacer, client, channel, top, thread_ts=ts)
    except SourceError as exc:  # the message (and maybe the files) is there all the same: not a failed planner
        log.warning("the planner's first ten in %s were not posted: %s", channel, exc)
        return PlanPosted(failed, exc)
    return PlanPosted(failed)
