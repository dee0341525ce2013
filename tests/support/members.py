"""What the tests of member lists read back: a channel's stored members, and a wait for a background job's effect."""

from __future__ import annotations

import time
from collections.abc import Callable

from socialrag.db import Database


def members_of(db: Database, channel: str) -> set[str]:
    """The member ids stored for ``channel`` (in any workspace)."""
    with db.connection() as conn:
        rows = conn.execute("SELECT user_id FROM channel_members WHERE channel_id = %s", (channel,)).fetchall()
    return {r[0] for r in rows}


def wait_until(check: Callable[[], object], seconds: float = 10.0) -> None:
    """Poll ``check`` every 0.1 s until it is true; fail after ``seconds``."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.1)
    raise AssertionError("not reached in time")
