"""What the Slack listeners share: settings, the database, the pace of Slack calls, and one object per role:
Slack look-ups (``SlackDirectory``), starting in a channel (``ChannelStarts``) and waking this process's
scheduler and indexer (``Wakeups``)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from bot.directory import SlackDirectory
from bot.joining import ChannelStarts
from bot.pacing import SlackPacer
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.recommender import Recommender


@dataclass
class Wakeups:
    """Set by ``paperping run``: wake the scheduler (``/paperping now`` posts at once) and the indexer (focus
    links are looked up at once). Without them, the next tick does the work."""

    scheduler: Callable[[], None] | None = None
    indexer: Callable[[], None] | None = None

    def post_soon(self) -> None:
        if self.scheduler is not None:
            self.scheduler()

    def index_soon(self) -> None:
        if self.indexer is not None:
            self.indexer()


@dataclass
class AppContext:
    settings: Settings
    db: Database
    pacer: SlackPacer = field(default_factory=SlackPacer)  # the one pace of Slack calls in this process
    wake: Wakeups = field(default_factory=Wakeups)
    recommender: Recommender | None = None  # set by `paperping run`: papers on demand ask it

    def __post_init__(self) -> None:
        self.slack = SlackDirectory(self.db)
        self.channels = ChannelStarts(self.db, self.pacer)
