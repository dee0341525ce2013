"""The core's slot worker posting into a Slack stand-in, for tests that decide what a slot posts with a plain
function (or hand it a ``Recommender``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from bot.delivery.slot_posts import ClientFor, SlackOutlet
from bot.slack.pacer import SlackPacer
from socialrag.db import Database
from socialrag.models import Digest, Draft, NoPost, Style
from socialrag.recommender import SlotChooser, SlotWorker

# (team id, channel id, slot time, the channel's chosen style or None) -> the draft, or why there is none
Recommend = Callable[[str, str, datetime, Style | None], Draft | NoPost | None]


@dataclass
class Chooser:
    """A ``SlotChooser`` from a function; a digest channel's slot gets nothing."""

    recommend: Recommend

    def draft_for_slot(self, team_id: str, channel_id: str, at: datetime, style: Style | None) -> Draft | NoPost:
        made = self.recommend(team_id, channel_id, at, style)
        return made if made is not None else NoPost("no candidate was found")

    def digest_for_slot(self, team_id: str, channel_id: str, at: datetime, size: int) -> Digest | NoPost:
        return NoPost("this test makes no digest")


def slot_worker(db: Database, client_for: ClientFor, chooser: SlotChooser | Recommend, **kw: Any) -> SlotWorker:
    """A slot worker posting through ``client_for``'s clients; ``chooser`` a ``Recommender`` or a function."""
    pacer = kw.pop("pacer", None) or SlackPacer()
    pick = chooser if hasattr(chooser, "draft_for_slot") else Chooser(chooser)  # type: ignore[arg-type]
    return SlotWorker(db, SlackOutlet(client_for, pacer), pick, **kw)
