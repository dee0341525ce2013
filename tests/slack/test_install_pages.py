"""PaperPing's OAuth pages over the real HTTP front: what a visitor's query can put into the link to Slack, and
what an install Slack answers but PaperPing cannot keep ends with."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from bot.app import build_app
from bot.app_context import AppContext
from bot.slack.http_front import HttpFront
from socialrag.config import Settings
from socialrag.db import Database
from tests.support.harness import SECRET, lab_state
from tests.support.slack_standin import SlackStandIn


@pytest.fixture
def browser(db: Database, tmp_path: Path) -> Iterator[httpx.Client]:
    standin = SlackStandIn(lab_state()).start()
    settings = Settings(
        home=tmp_path,
        offline=True,
        slack_signing_secret=SECRET,
        slack_api_url=standin.url,
        slack_client_id="111.222",
        slack_client_secret="client-secret",
        token_key="sPzJ8m0TtTYUCLUWcaE6JhS2CYk1dNBhUYQHdGa_VXE=",
    )
    server = HttpFront(build_app(settings, db, AppContext(settings, db)), "127.0.0.1", 0, signing_secret=SECRET, db=db)
    server.start()
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{server.port}", timeout=10) as client:
            yield client
    finally:
        server.stop()
        standin.stop()


def link_to_slack(page: httpx.Response) -> dict[str, list[str]]:
    """The query of the install page's link to Slack, as Slack would read it."""
    assert page.status_code == 200, page.text[:300]
    found = re.search(r'href="(https://slack\.com/[^"]+)"', page.text)
    assert found is not None, page.text[:300]
    url = urlsplit(html.unescape(found.group(1)))
    assert url.netloc == "slack.com" and url.path == "/oauth/v2/authorize", url
    return parse_qs(url.query, keep_blank_values=True)


def test_a_workspace_id_in_the_install_link_preselects_it(browser: httpx.Client) -> None:
    query = link_to_slack(browser.get("/slack/install", params={"team": "T0LAB"}))
    assert query["team"] == ["T0LAB"] and query["client_id"] == ["111.222"]


@pytest.mark.parametrize(
    "team",
    [
        "T0LAB&user_scope=channels:history,chat:write",
        "T0LAB&scope=admin,channels:write",
        "T0LAB&redirect_uri=https://elsewhere.example/steal",
        "T0LAB#",
        "x" * 5000,
        "é",
    ],
)
def test_a_team_value_cannot_add_to_what_slack_is_asked(browser: httpx.Client, team: str) -> None:
    """A link to PaperPing's own install page, with ``&user_scope=...`` hidden in ``?team=``, would have Slack ask
    a workspace admin for permissions PaperPing never asks for."""
    query = link_to_slack(browser.get("/slack/install", params={"team": team}))
    assert query["user_scope"] == [""], query
    assert len(query["scope"]) == 1 and "admin" not in query["scope"][0], query
    assert "redirect_uri" not in query and "team" not in query, query
