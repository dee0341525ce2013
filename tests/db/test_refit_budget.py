"""The refit chore runs in the tick that posts: it starts no refit after its time in a tick is spent, so a post due
meanwhile waits for a few refits at most, never for every channel due; the rest are refitted at the next tick."""

from __future__ import annotations

from datetime import UTC, datetime

import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge import index_messages
from socialrag.models import Channel, Message, PaperRef
from socialrag.recommender.serve.refits import REFIT_SECONDS, RefitSchedule

T = "T0LAB"
AT = datetime(2025, 3, 3, 10, tzinfo=UTC)


def test_the_refit_chore_starts_no_refit_once_its_time_is_spent(db: Database) -> None:
    channels = ["C1", "C2", "C3", "C4"]
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        for k, channel in enumerate(channels):
            storage.workspaces.upsert_channel(conn, Channel(T, channel, f"reading-{k}"))
            ref = PaperRef("doi", f"10.9999/p{k}", f"https://doi.org/10.9999/p{k}")
            index_messages(conn, [Message(T, channel, f"5.00000{k}", "U2", ref.url, AT, papers=(ref,))])
    clock = [0.0]
    done: list[str] = []

    def slow_refit(conn: psycopg.Connection, team_id: str, channel_id: str) -> None:
        clock[0] += 0.6 * REFIT_SECONDS  # a big channel's refit
        storage.rankers.save_fit(conn, team_id, channel_id, AT, {}, 0, 0)
        done.append(channel_id)

    schedule = RefitSchedule(db, clock=lambda: clock[0])
    assert schedule.run(slow_refit, AT) == 2, "the third would start after the chore's time"
    assert schedule.run(slow_refit, AT) == 2, "the rest at the next tick"
    assert sorted(done) == channels
