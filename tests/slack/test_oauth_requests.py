"""Requests in OAuth mode (many workspaces): a signed request is authorized from the stored installation without
asking Slack, an installation stored without its bot's ids is checked with ``auth.test`` once, and a check that
fails for a while (Slack answering 429 or an internal error) is answered with an error so that Slack sends the
event again; a slash command's member is told to try again, never to reinstall."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlencode

import httpx
import pytest
from slack_sdk.oauth.installation_store import Installation

from bot.slack.installation_store import PostgresInstallationStore
from socialrag.db import Database
from socialrag.token_cipher import TokenCipher
from tests.support.harness import SECRET, Harness, T, count, lab_state, message_event
from tests.support.service_lab import event_callback, slack_headers, wait_for
from tests.support.slack_standin import SlackStandIn

KEY = "sPzJ8m0TtTYUCLUWcaE6JhS2CYk1dNBhUYQHdGa_VXE="
PAPER = "<https://arxiv.org/abs/1706.03762|Attention is all you need>"


def install(db: Database, *, with_ids: bool = True) -> None:
    """The lab's installation, as the OAuth flow stores it (or as an older row, without the bot's ids)."""
    PostgresInstallationStore(db, TokenCipher(KEY)).save(
        Installation(
            team_id=T,
            team_name="Lab",
            bot_token="xoxb-lab",
            bot_user_id="UBOT" if with_ids else None,
            bot_id="BBOT" if with_ids else None,
            user_id="U4",
            bot_scopes=["chat:write"],
        )
    )


@pytest.fixture
def oauth(db: Database, tmp_path: Path) -> Iterator[Harness]:
    standin = SlackStandIn(lab_state()).start()
    h = Harness(
        db, standin, tmp_path, slack_bot_token=None, slack_client_id="111.222", slack_client_secret="cs", token_key=KEY
    )
    yield h
    h.stop()
    standin.stop()


def post_event(h: Harness, event_id: str, ts: str, text: str = PAPER, **headers: str) -> httpx.Response:
    body = json.dumps(event_callback(message_event(ts, text), event_id))
    answer = httpx.post(h.url, content=body, headers={**slack_headers(body, "application/json", SECRET), **headers})
    time.sleep(0.3)
    return answer


def test_a_stored_installation_authorizes_requests_without_asking_slack(oauth: Harness, db: Database) -> None:
    install(db)
    assert post_event(oauth, "EvA0", "1700000000.000100").status_code == 200  # the channel is seen once
    before = len(oauth.standin.calls_to("auth.test"))
    for i in range(1, 4):
        assert post_event(oauth, f"EvA{i}", f"170000000{i}.000100", f"{PAPER} #{i}").status_code == 200
    assert len(oauth.standin.calls_to("auth.test")) == before, "no auth.test for a stored installation"
    assert count(db, "SELECT count(*) FROM messages WHERE team_id = %s", T) == 4


def test_an_installation_without_its_bot_ids_is_checked_once(oauth: Harness, db: Database) -> None:
    install(db, with_ids=False)
    reaction = {"type": "reaction_added", "user": "U2", "reaction": "eyes", "event_ts": "1700000100.000100"}
    for i in range(3):
        item = {"type": "message", "channel": "C1", "ts": f"170000000{i}.000100"}
        assert oauth.event({**reaction, "item": item}).status_code == 200
    assert len(oauth.standin.calls_to("auth.test")) == 1, "auth.test once for the token, then remembered"


@pytest.mark.parametrize("trouble", ["429", "internal_error"])
def test_a_failing_check_is_answered_with_an_error_and_the_resend_is_handled(
    oauth: Harness, db: Database, trouble: str
) -> None:
    install(db, with_ids=False)
    if trouble == "429":
        oauth.standin.rate_limits["auth.test"] = 1
    else:
        oauth.standin.fail_next["auth.test"] = 1
    first = post_event(oauth, "EvB1", "1700000002.000100")
    assert first.status_code >= 500, "Slack must send the event again"
    assert "reinstall" not in first.text
    assert count(db, "SELECT count(*) FROM messages") == 0
    again = post_event(
        oauth, "EvB1", "1700000002.000100", **{"X-Slack-Retry-Num": "1", "X-Slack-Retry-Reason": "http_error"}
    )
    assert again.status_code == 200
    assert count(db, "SELECT count(*) FROM messages WHERE team_id = %s", T) == 1, "the resent event is stored"


def test_a_command_whose_installation_cannot_be_checked_is_told_to_try_again(oauth: Harness, db: Database) -> None:
    install(db, with_ids=False)
    oauth.standin.rate_limits["auth.test"] = 1
    body = urlencode(
        {
            "team_id": T,
            "channel_id": "C1",
            "user_id": "U2",
            "command": "/paperping",
            "text": "status",
            "response_url": oauth.standin.response_url,
            "trigger_id": "1",
        }
    )
    answer = oauth.signed(body, "application/x-www-form-urlencoded")
    time.sleep(0.3)
    assert answer.status_code == 200 and "Try again in a minute" in answer.text
    assert not any("reinstall" in str(r.get("text")) for r in oauth.standin.responses), "never told to reinstall"


def test_a_workspace_without_an_installation_is_answered_as_one(oauth: Harness, db: Database) -> None:
    install(db)
    body = event_callback(message_event("1700000003.000100", PAPER), "EvC1")
    body["team_id"] = "T0NOTHERE"
    answer = oauth.signed(json.dumps(body), "application/json")
    assert answer.status_code == 200, "nothing to send again: PaperPing is not installed there"
    assert count(db, "SELECT count(*) FROM messages") == 0


def shared_channel_event(event: dict[str, object], event_id: str) -> dict[str, object]:
    """An event in a Slack Connect channel that a partner organisation created: the outer ``team_id`` is theirs,
    the one authorization Slack names is the lab's installation, whose token answers it."""
    body = event_callback(event, event_id)
    body["team_id"] = "T0PARTNER"
    body["authorizations"] = [{"team_id": T, "user_id": "UBOT", "is_bot": True, "is_enterprise_install": False}]
    body["is_ext_shared_channel"] = True
    return body


def tenants(db: Database) -> dict[str, list[tuple[str, ...]]]:
    with db.connection() as conn:
        return {
            table: conn.execute(f"SELECT DISTINCT team_id FROM {table} ORDER BY 1").fetchall()
            for table in ("messages", "channels", "reactions")
        } | {"teams": conn.execute("SELECT team_id, name, domain FROM teams ORDER BY 1").fetchall()}


def check_stored_under_the_lab(h: Harness, db: Database) -> None:
    share = message_event("1700000009.000100", PAPER)
    assert h.signed(json.dumps(shared_channel_event(share, "EvS1")), "application/json").status_code == 200
    time.sleep(0.3)
    reaction = {
        "type": "reaction_added",
        "user": "U3",
        "reaction": "fire",
        "item": {"type": "message", "channel": "C1", "ts": "1700000009.000100"},
        "event_ts": "1700000010.000100",
    }
    assert h.signed(json.dumps(shared_channel_event(reaction, "EvS2")), "application/json").status_code == 200
    time.sleep(0.3)
    found = tenants(db)
    assert found["messages"] == found["channels"] == found["reactions"] == [(T,)], found
    assert found["teams"] == [(T, "Lab", "lab")], "no row of the partner's workspace, nor the lab's name on it"


def test_a_shared_channel_is_stored_under_the_installation_that_answers_it(oauth: Harness, db: Database) -> None:
    install(db)
    check_stored_under_the_lab(oauth, db)


def test_a_shared_channel_is_stored_under_the_workspace_of_the_bot_token(harness: Harness, db: Database) -> None:
    check_stored_under_the_lab(harness, db)


def test_the_workspace_name_is_kept_only_for_the_tokens_own_workspace(harness: Harness, db: Database) -> None:
    from slack_sdk import WebClient

    directory = harness.ctx.slack
    client = WebClient(token="xoxb-test", base_url=harness.standin.url)
    assert directory.bot_user_id(client, "T0PARTNER") == "UBOT"
    assert tenants(db)["teams"] == [(T, "Lab", "lab")]


def test_a_mention_in_a_shared_channel_not_seen_yet_is_answered_for_the_installation(
    harness: Harness, db: Database
) -> None:
    """The first thing PaperPing hears of a partner's Slack Connect channel is a question to it: the channel is
    stored, and the question answered, under the lab's workspace whose token answers it, not the partner's outer
    team_id."""
    ts = "1700000020.000100"
    mention = {"type": "app_mention", "channel": "C1", "user": "U2", "ts": ts, "event_ts": ts,
               "text": "<@UBOT> what have we read about attention?"}  # fmt: skip
    assert harness.signed(json.dumps(shared_channel_event(mention, "EvM1")), "application/json").status_code == 200
    wait_for(lambda: any(p.get("thread_ts") == ts for p in harness.standin.posts), 20, "the answer in a thread")
    found = tenants(db)
    assert found["channels"] == [(T,)] and found["teams"] == [(T, "Lab", "lab")], found
