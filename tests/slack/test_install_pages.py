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
from tests.support.harness import SECRET, count, lab_state
from tests.support.slack_standin import SlackStandIn


@pytest.fixture
def standin() -> Iterator[SlackStandIn]:
    server = SlackStandIn(lab_state()).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def browser(db: Database, tmp_path: Path, standin: SlackStandIn) -> Iterator[httpx.Client]:
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


@pytest.mark.parametrize(
    "error",
    [
        "Your workspace was suspended. Call +1 555 0100 to restore it",
        "<b>reinstall</b> at https://elsewhere.example",
        "x" * 5000,
        "access_denied\nSee https://elsewhere.example",
    ],
)
def test_the_failure_page_shows_no_text_from_the_link(browser: httpx.Client, error: str) -> None:
    """Slack sends an installer back with ``?error=CODE``; anyone can write such a link to PaperPing's address, so
    the page names a code, never the link's text."""
    page = browser.get("/slack/oauth_redirect", params={"error": error})
    assert "unknown_error" in page.text, page.text[:500]
    for word in ("555", "suspended", "elsewhere", "reinstall", "x" * 60):
        assert word not in page.text, page.text[:500]


def test_the_failure_page_names_slacks_own_code(browser: httpx.Client) -> None:
    assert "access_denied" in browser.get("/slack/oauth_redirect", params={"error": "access_denied"}).text


def come_back_from_slack(browser: httpx.Client, code: str) -> httpx.Response:
    """The install page, then Slack sending the same browser back with ``code`` and the page's state."""
    page = browser.get("/slack/install")
    state = re.search(r"state=([\w\-]+)", page.text)
    assert state is not None
    cookie = page.headers["set-cookie"].split(";")[0]
    return browser.get(f"/slack/oauth_redirect?code={code}&state={state.group(1)}", headers={"Cookie": cookie})


def test_an_organisation_wide_install_is_refused_with_a_page_saying_so(
    browser: httpx.Client, db: Database, standin: SlackStandIn
) -> None:
    """An Enterprise Grid organisation-wide install names no workspace: nothing is stored, the installer is told
    why instead of a bare server error, and the token Slack issued for it is revoked rather than left working."""
    done = come_back_from_slack(browser, "org-code")
    assert "organization_wide_install_not_supported" in done.text, done.text[:500]
    assert count(db, "SELECT count(*) FROM installations") == 0
    assert [call.token for call in standin.calls_to("auth.revoke")] == ["xoxb-org"]


def test_slack_out_of_reach_gives_the_installer_a_page_to_start_again(
    browser: httpx.Client, db: Database, standin: SlackStandIn
) -> None:
    """Slack cannot be reached to exchange the code (the network, a timeout): the installer gets the failure page
    naming the reason, with the link to start again, not a bare server error; nothing is stored."""
    standin.stop()
    done = come_back_from_slack(browser, "good-code")
    assert done.status_code == 502, done.text[:500]
    assert "slack_unreachable" in done.text and 'href="/slack/install"' in done.text, done.text[:500]
    assert count(db, "SELECT count(*) FROM installations") == 0


def test_a_workspace_install_is_kept_and_nothing_is_revoked(
    browser: httpx.Client, db: Database, standin: SlackStandIn
) -> None:
    done = come_back_from_slack(browser, "good-code")
    assert done.status_code == 200, done.text[:500]
    assert count(db, "SELECT count(*) FROM installations WHERE team_id = 'T0NEW'") == 1
    assert standin.calls_to("auth.revoke") == []


def test_a_token_whose_check_fails_is_revoked_and_the_installer_starts_again(
    browser: httpx.Client, db: Database, standin: SlackStandIn
) -> None:
    """Slack issues the token, then fails the ``auth.test`` made with it: the token is revoked, not left working
    unkept, and the installer gets the page with the link to start again; nothing is stored."""
    standin.fail_next["auth.test"] = 1
    done = come_back_from_slack(browser, "good-code")
    assert done.status_code == 502, done.text[:500]
    assert "slack_unreachable" in done.text and 'href="/slack/install"' in done.text, done.text[:500]
    assert count(db, "SELECT count(*) FROM installations") == 0
    assert [call.token for call in standin.calls_to("auth.revoke")] == ["xoxb-installed"]


def test_a_token_that_cannot_be_stored_is_revoked(browser: httpx.Client, db: Database, standin: SlackStandIn) -> None:
    """The database refuses the install's row (here its table is gone): the installer gets bolt's failure page,
    and the token Slack issued is revoked rather than left working unkept."""
    with db.connection() as conn:
        conn.execute("ALTER TABLE installations RENAME TO installations_away")
    done = come_back_from_slack(browser, "good-code")
    assert done.status_code >= 400, done.text[:500]
    assert [call.token for call in standin.calls_to("auth.revoke")] == ["xoxb-installed"]
