"""Build Slack workspace exports (the documented zip layout) for tests."""

from __future__ import annotations

import json
import zipfile
from collections import defaultdict
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

TEAM = "T0LAB"


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
