"""The Slack side of the conference planner (what is in the plan is decided by
``socialrag.recommender.serve.conference``): one message in the channel, the plan as Markdown and CSV files in its
thread, and the top ten as a reply there. Members are named in plain text: a list of ten papers notifies nobody."""

from __future__ import annotations

from typing import Any

from slack_sdk import WebClient

from bot.slack.pacer import SlackPacer
from bot.views.post_blocks import link, mrkdwn, quote
from socialrag.recommender import SHOWN, ConferencePlan, render_csv, render_markdown, render_plain


def top_ten_text(plan: ConferencePlan, names: dict[str, str]) -> str:
    """The thread's reply: the first ``SHOWN`` papers, each linked with its one line of why."""
    lines = [f"*The first {min(SHOWN, len(plan.papers))}* (the files hold {len(plan.papers)}):"]
    for i, p in enumerate(plan.papers[:SHOWN], 1):
        lines.append(f"{i}. {link(p.url, ' '.join(p.title.split())[:200])} — {quote(render_plain(p.why, names), 300)}")
    return "\n".join(lines)


def post_plan(
    client: WebClient, pacer: SlackPacer, channel: str, channel_name: str, plan: ConferencePlan, asker: str,
    names: dict[str, str],
) -> str:  # fmt: skip
    """Post the plan in the channel; the ts of its message."""
    head = (
        f"*{quote(plan.venue, 80)} {plan.year}*: the papers this channel would most want to see, ranked with its own "
        f"ranking ({len(plan.papers)} of {plan.found}; asked by <@{asker}>). The files and the first ten are in the "
        "thread."
    )
    posted: Any = pacer.post(
        client.chat_postMessage, channel=channel, text=head, blocks=[{"type": "section", "text": mrkdwn(head)}],
        unfurl_links=False, unfurl_media=False,
    )  # fmt: skip
    ts = str(posted["ts"])
    stem = f"{plan.venue}-{plan.year}".replace(" ", "-")
    pacer.call(
        client.files_upload_v2,
        channel=channel,
        thread_ts=ts,
        file_uploads=[
            {"content": render_markdown(plan, names, channel_name), "filename": f"{stem}.md", "title": f"{stem}.md"},
            {"content": render_csv(plan, names), "filename": f"{stem}.csv", "title": f"{stem}.csv"},
        ],
    )
    text = top_ten_text(plan, names)
    pacer.post(
        client.chat_postMessage, channel=channel, thread_ts=ts, text=text,
        blocks=[{"type": "section", "text": mrkdwn(text)}], unfurl_links=False, unfurl_media=False,
    )  # fmt: skip
    return ts
