"""Build Slack workspace exports (the documented zip layout) for tests."""

from __future__ import annotations

import json
import zipfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TEAM = "T0LAB"


T0 = 1_700_000_000.0  # the lab export's first message
DAY = 86_400.0


def user(uid: str, name: str, real: str | None = None) -> dict[str, Any]:
    return {
        "id": uid,
        "team_id": TEAM,
        "name": name.lower(),
        "real_name": real or name,
        "deleted": False,
        "is_bot": False,
        "profile": {"display_name": name, "real_name": real or name},
        "tz": "Europe/Berlin",
    }


def msg(ts: float, uid: str, text: str, **extra: Any) -> dict[str, Any]:
    m: dict[str, Any] = {"type": "message", "user": uid, "text": text, "ts": f"{ts:.6f}"}
    m.update(extra)
    return m


def write_export(
    path: Path,
    channels: dict[str, tuple[str, list[str], list[dict[str, Any]]]],
    users: list[dict[str, Any]],
    *,
    raw_files: dict[str, bytes] | None = None,
) -> Path:
    """channels: name -> (channel id, member ids, messages). Messages are split into day files by ts."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("users.json", json.dumps(users))
        meta = [
            {"id": cid, "name": name, "members": members, "created": 1500000000}
            for name, (cid, members, _) in channels.items()
        ]
        zf.writestr("channels.json", json.dumps(meta))
        for name, (_cid, _members, messages) in channels.items():
            days: dict[str, list[dict[str, Any]]] = defaultdict(list)
            for m in messages:
                day = datetime.fromtimestamp(float(m["ts"]), UTC).strftime("%Y-%m-%d")
                days[day].append(m)
            for day, items in sorted(days.items()):
                zf.writestr(f"{name}/{day}.json", json.dumps(items))
        for name, data in (raw_files or {}).items():
            zf.writestr(name, data)
    return path


def lab_export(tmp_path: Path, **kw: object) -> Path:
    users = [user("U1", "ana"), user("U2", "ben"), user("U3", "chen"), user("U9", "outsider")]
    general = [
        msg(T0, "U1", "Morning! Coffee anyone?"),  # no link: never stored
        msg(
            T0 + 10,
            "U1",
            "<https://arxiv.org/abs/1706.03762v5|Attention Is All You Need> worth a read",
            reply_count=2,
            thread_ts=f"{T0 + 10:.6f}",
            reactions=[
                {"name": "+1", "users": ["U2", "U3"], "count": 2},
                {"name": "eyes", "users": ["U2"], "count": 1},
            ],
        ),
        msg(
            T0 + 20,
            "U2",
            "I liked section 3",
            thread_ts=f"{T0 + 10:.6f}",
            parent_user_id="U1",
            reactions=[{"name": "heart", "users": ["U1"], "count": 1}],
        ),
        msg(T0 + 30, "U3", "same here", thread_ts=f"{T0 + 10:.6f}", parent_user_id="U1"),
        msg(T0 + 40, "U2", "lunch?", thread_ts=f"{T0:.6f}"),  # reply in a thread without a paper: dropped
        msg(
            T0 + DAY,
            "U3",
            "Also the PDF https://arxiv.org/pdf/1706.03762.pdf and <https://aclanthology.org/N19-1423/|BERT>",
            reactions=[{"name": "-1", "users": ["U1"], "count": 1}],
        ),
        msg(T0 + DAY + 5, "U2", "joined", subtype="channel_join"),
        msg(
            T0 + DAY + 6,
            "U2",
            "",
            subtype="bot_message",
            bot_id="B1",
            attachments=[{"title": "RoBERTa", "title_link": "https://arxiv.org/abs/1907.11692"}],
        ),
        msg(
            T0 + DAY + 7,
            "U2",
            "look at this thread",
            attachments=[
                {
                    "is_msg_unfurl": True,
                    "from_url": "https://lab.slack.com/archives/C1/p1",
                    "text": "https://arxiv.org/abs/2005.14165",
                }
            ],
        ),
        msg(
            T0 + 2 * DAY,
            "U1",
            "broadcast reply with a paper <https://arxiv.org/abs/2005.14165>",
            subtype="thread_broadcast",
            thread_ts=f"{T0 + 10:.6f}",
        ),
    ]
    random = [
        msg(T0 + 3 * DAY, "U9", "<https://openreview.net/forum?id=rJl-b3RcF7|Lottery tickets>"),
        msg(
            T0 + 3 * DAY + 9,
            "U9",
            "slides + <https://arxiv.org/abs/2310.06825>",
            subtype="file_share",
            files=[{"id": "F1", "name": "slides.pdf"}],
        ),
    ]
    return write_export(
        tmp_path / "export.zip",
        {"general": ("C1", ["U1", "U2", "U3"], general), "random": ("C2", ["U9"], random)},
        users,
        **kw,  # type: ignore[arg-type]
    )
