"""The Slack app's test harness: the real bolt app on a local port, signed requests, a Web API stand-in."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from socialrag.db import Database
from tests.support.harness import Harness, lab_state
from tests.support.slack_standin import SlackStandIn


@pytest.fixture
def harness(db: Database, tmp_path: Path) -> Iterator[Harness]:
    standin = SlackStandIn(lab_state()).start()
    h = Harness(db, standin, tmp_path)
    yield h
    h.stop()
    standin.stop()
