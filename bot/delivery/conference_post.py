"""The Slack side of the conference planner (what is in the plan is decided by
``socialrag.recommender.serve.conference``): one message in the channel, the plan as Markdown and CSV files in its
thread, and the top ten as a reply there. Members are named in plain text: a list of ten papers notifies nobody."""

from __future__ import annotations

from slack_sdk import WebClient

from bot.delivery.short_messages import post_text
from bot.slack.pacer import SlackPacer
from bot.views.post_blocks import link, quote
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
    ts = post_text(pacer, client, channel, head)
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
    post_text(pacer, client, channel, top_ten_text(plan, names), thread_ts=ts)
    return ts
