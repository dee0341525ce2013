"""The demo's posts as one HTML page that looks like the channel in Slack."""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from datetime import datetime
from typing import Any, Protocol

from bot.views.post_blocks import build_blocks
from socialrag.models import Draft


class Shown(Protocol):
    """A demo post (``bot.demo.workflow.Post``): its draft, when and under which ts it was posted."""

    @property
    def draft(self) -> Draft: ...

    @property
    def at(self) -> datetime: ...

    @property
    def ts(self) -> str: ...


def html_page(
    posts: Sequence[Shown],
    names: dict[str, str],
    clicks: dict[str, dict[str, int]],
    channel_name: str,
    more: Sequence[tuple[datetime, str, list[dict[str, Any]]]] = (),
) -> str:
    """The posts as the channel shows them, with their buttons and counts; ``more``: other messages of
    PaperPing's (when, what it is, its blocks), such as a context reply and a digest."""

    def render(mrkdwn: str) -> str:
        text = re.sub(
            r"<@([A-Z0-9]+)>",
            lambda m: f'<span class="mention">@{html.escape(names.get(m.group(1), ""))}</span>',
            mrkdwn,
        )
        text = re.sub(r"<(https?://[^|>]+)\|([^>]+)>", r'<a href="\1">\2</a>', text)
        return re.sub(r"\*([^*\n]+)\*", r"<b>\1</b>", text)

    shown = [(p.at, "", build_blocks(p.draft, clicks.get(p.ts))) for p in posts] + list(more)
    items = []
    for at, what, blocks in sorted(shown, key=lambda x: x[0]):
        body = []
        for block in blocks:
            if block["type"] == "actions":
                labels = "".join(
                    f'<span class="button">{html.escape(e["text"]["text"])}</span>' for e in block["elements"]
                )
                body.append(f'<div class="actions">{labels}</div>')
            elif block["type"] == "section":
                body.append(f'<div class="text">{render(block["text"]["text"])}</div>')
            else:
                body.append(f'<div class="context">{render(block["elements"][0]["text"])}</div>')
        items.append(
            f'<div class="msg"><div class="avatar">PP</div><div><div class="who">PaperPing '
            f'<span class="app">APP</span> <span class="time">{at:%a %d %b, %H:%M}{html.escape(what)}</span></div>'
            f"{''.join(body)}</div></div>"
        )
    return f"""<!doctype html><html><head><meta charset="utf-8"><title>PaperPing demo · #{channel_name}</title>
<style>
body {{ font-family: -apple-system, "Segoe UI", Helvetica, Arial, sans-serif; background: #fff; color: #1d1c1d;
       max-width: 760px; margin: 0 auto; }}
header {{ border-bottom: 1px solid #ddd; padding: 14px 20px; font-weight: 700; font-size: 18px; }}
.msg {{ display: flex; gap: 10px; padding: 10px 20px; }} .msg:hover {{ background: #f8f8f8; }}
.avatar {{ width: 36px; height: 36px; border-radius: 6px; background: #2c3e50; color: #fff; font-weight: 700;
          display: flex; align-items: center; justify-content: center; font-size: 13px; flex: none; }}
.who {{ font-weight: 700; }} .app {{ background: #eee; color: #666; font-size: 10px; padding: 1px 4px;
border-radius: 3px; }} .time {{ color: #777; font-weight: 400; font-size: 12px; }}
.text {{ margin: 4px 0; line-height: 1.45; font-size: 15px; white-space: pre-line; }}
.context {{ color: #616061; font-size: 13px; margin: 3px 0; white-space: pre-line; }}
.actions {{ margin: 6px 0; }} .button {{ border: 1px solid #ccc; border-radius: 4px; padding: 2px 10px;
margin-right: 6px; font-size: 13px; font-weight: 600; }}
a {{ color: #1264a3; text-decoration: none; }} .mention {{ background: #e8f5fa; color: #1264a3; border-radius: 3px;
padding: 0 2px; }}
footer {{ color: #888; font-size: 12px; padding: 16px 20px; border-top: 1px solid #eee; }}
</style></head><body><header># {channel_name}</header>
{"".join(items)}
<footer>PaperPing demo: a fictional channel sharing real ACL Anthology papers (CC BY 4.0).</footer></body></html>
"""
