"""Personal picks are bounded: a member in many channels has the candidates of five of them ranked (where they
liked the most papers first), and a weekly run starts no member's picks once its time is spent, the rest staying
due for the next run."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.knowledge.intake import index_messages
from socialrag.models import Channel, Message, PaperRef
from socialrag.recommender.serve import picks
from socialrag.recommender.serve.picks import Picks, member_profile, send_due_picks

T = "T0LAB"
NOW = datetime(2030, 5, 6, 9, 0, tzinfo=UTC)


def test_a_member_of_seven_channels_has_five_ranked_those_they_liked_most_first(db: Database) -> None:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        for n in range(7):  # U1 shared n papers in channel Cn
            channel = f"C{n}"
            storage.workspaces.upsert_channel(conn, Channel(T, channel, f"lab-{n}"))
            storage.settings.upsert_channel_setting(conn, T, channel, active=True)
            storage.workspaces.replace_channel_members(conn, T, channel, ["U1", "U2"], datetime.now(UTC))
            shares = [
                Message(T, channel, f"{1700000000 + n * 100 + i}.000100", "U1", "read this", NOW,
                        papers=(PaperRef("arxiv", f"2401.{n:02d}{i:03d}", f"https://arxiv.org/abs/2401.{n:02d}{i:03d}"),))
                for i in range(n)
            ]  # fmt: skip
            index_messages(conn, shares)
        profile = member_profile(conn, "all-MiniLM-L6-v2", T, "U1")
        elsewhere = member_profile(conn, "all-MiniLM-L6-v2", T, "U2")  # liked nothing: the channels in order
    assert len(profile.channels) == 7
    assert profile.channels_to_rank() == ["C6", "C5", "C4", "C3", "C2"]
    assert elsewhere.channels_to_rank() == ["C0", "C1", "C2", "C3", "C4"]


class Outlet:
    def __init__(self) -> None:
        self.sent: list[str] = []

    def refresh(self, team_id: str, user_id: str, now: datetime) -> None:
        pass

    def confirm(self, team_id: str, user_id: str, channel_ids: Sequence[str]) -> tuple[set[str], set[str]]:
        return set(channel_ids), set()

    def send(self, team_id: str, user_id: str, found: Picks, attempt: datetime) -> None:
        self.sent.append(user_id)

    def find_sent(self, team_id: str, user_id: str, attempt: datetime) -> list[tuple[int, str]] | None:
        return None


def test_a_weekly_run_whose_time_is_spent_leaves_the_other_members_due(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    with db.connection() as conn:
        storage.workspaces.upsert_team(conn, T)
        for user in ("U1", "U2", "U3"):
            storage.settings.upsert_member_setting(conn, T, user, picks_enabled=True, picks_next_at=NOW)
    asked: list[str] = []

    def find(team: str, user: str) -> Picks:  # the first member's picks take the whole run's time
        asked.append(user)
        return Picks([], [("C1", "lab")])

    monkeypatch.setattr(picks, "PICKS_RUN_SECONDS", 0.0)
    assert send_due_picks(db, find, Outlet(), NOW) == 0
    assert len(asked) == 1, "no second member's picks started once the run's time was spent"
    with db.connection() as conn:
        due = storage.member_picks.load_picks_due(conn, NOW)
    assert len(due) == 2 and asked[0] not in {u for _, u in due}, "the others are still due, for the next run"
    monkeypatch.setattr(picks, "PICKS_RUN_SECONDS", 240.0)
    assert send_due_picks(db, find, Outlet(), NOW + timedelta(minutes=1)) == 0
    assert sorted(asked) == ["U1", "U2", "U3"]
