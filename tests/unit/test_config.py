"""Settings from the environment: an empty variable means "not set", for PaperPing and for the libraries."""

from __future__ import annotations

from pathlib import Path

import pytest

from socialrag.config import Settings, clear_empty_settings
from socialrag.errors import ConfigError
from socialrag.recommender.explain.llm import OPENAI_DEFAULT_URL, LLMClient


def test_empty_means_not_set() -> None:
    # what `OPENAI_BASE_URL: ${OPENAI_BASE_URL:-}` in a compose file hands the process
    env = {"OPENAI_API_KEY": "sk-test", "OPENAI_BASE_URL": "", "SLACK_APP_TOKEN": "  ", "PAPERPING_HOME": "/data"}
    settings = Settings.from_env(env)
    assert settings.openai_base_url is None and settings.slack_app_token is None
    assert settings.llm_configured
    assert sorted(clear_empty_settings(env)) == ["OPENAI_BASE_URL", "SLACK_APP_TOKEN"]
    assert env == {"OPENAI_API_KEY": "sk-test", "PAPERPING_HOME": "/data"}


def test_the_llm_client_never_takes_an_empty_base_url(monkeypatch: pytest.MonkeyPatch) -> None:
    """The openai package reads OPENAI_BASE_URL itself when given None; PaperPing always passes one."""
    monkeypatch.setenv("OPENAI_BASE_URL", "")
    client = LLMClient(model="m", base_url=None, api_key="sk-test")
    assert str(client.client.base_url).rstrip("/") == OPENAI_DEFAULT_URL
    local = LLMClient(model="m", base_url="http://127.0.0.1:8000/v1", api_key=None)
    assert str(local.client.base_url).rstrip("/") == "http://127.0.0.1:8000/v1"


def test_offline_means_no_llm() -> None:
    assert not Settings.from_env({"OPENAI_API_KEY": "sk", "PAPERPING_OFFLINE": "1"}).llm_configured
    assert not Settings.from_env({}).llm_configured


def test_a_bad_number_says_which_setting() -> None:
    with pytest.raises(ConfigError, match="PAPERPING_TICK_SECONDS must be a number"):
        Settings.from_env({"PAPERPING_TICK_SECONDS": "soon"})


def test_a_count_takes_zero_and_an_amount_does_not() -> None:
    """The HTTP front's per-address cap is off at 0 (its default, for a front behind a proxy); a number of
    seconds or of papers is never 0, and neither is negative."""
    assert Settings.from_env({}).http_peer_connections == 0
    assert Settings.from_env({"PAPERPING_HTTP_PEER_CONNECTIONS": "0"}).http_peer_connections == 0
    assert Settings.from_env({"PAPERPING_HTTP_PEER_CONNECTIONS": "50"}).http_peer_connections == 50
    with pytest.raises(ConfigError, match="PAPERPING_HTTP_PEER_CONNECTIONS must be 0 or more"):
        Settings.from_env({"PAPERPING_HTTP_PEER_CONNECTIONS": "-1"})
    with pytest.raises(ConfigError, match="PAPERPING_TICK_SECONDS must be positive"):
        Settings.from_env({"PAPERPING_TICK_SECONDS": "0"})


@pytest.mark.parametrize(
    ("variable", "value", "said"),
    [
        ("PAPERPING_OFFLINE", "ture", "PAPERPING_OFFLINE is 1 or 0"),  # read as off, it went online
        ("PAPERPING_FULLTEXT", "disabled", "PAPERPING_FULLTEXT is 1 or 0"),
        ("PAPERPING_HTTP_TIMEOUT", "inf", "must be a finite number"),  # no deadline on any source
        ("PAPERPING_TICK_SECONDS", "nan", "must be a finite number"),  # passes every comparison
        ("PAPERPING_TICK_SECONDS", "0.001", "from 1 to 3,600"),  # the database asked a thousand times a second
        ("PAPERPING_SIGNAL_WINDOW_DAYS", "99999999999", "from 1 to 36,500"),  # overflows a date in every slot
        ("PAPERPING_MENTION_QUIET_DAYS", "1e9", "from 0 to 36,500"),
        ("PAPERPING_EMBED_BATCH", "1e3", "must be a whole number"),
    ],
)
def test_a_setting_out_of_reason_stops_the_start_with_its_name(variable: str, value: str, said: str) -> None:
    with pytest.raises(ConfigError, match=said):
        Settings.from_env({variable: value})


def test_flags_read_the_usual_words() -> None:
    for word, on in (("1", True), ("Yes", True), ("on", True), ("TRUE", True), ("0", False), ("off", False)):
        assert Settings.from_env({"PAPERPING_OFFLINE": word}).offline is on
        assert Settings.from_env({"PAPERPING_FULLTEXT": word}).fulltext is on


def test_paperping_help_lists_every_subcommand_once_by_group(capsys: pytest.CaptureFixture[str]) -> None:
    from bot.cli import GROUPS, SUBCOMMANDS, main

    grouped = [name for _, names in GROUPS for name in names]
    assert sorted(grouped) == sorted(c.name for c in SUBCOMMANDS), "every subcommand in exactly one group"
    with pytest.raises(SystemExit):
        main(["--help"])
    shown = capsys.readouterr().out
    assert shown.index("Trying it:") < shown.index("Running in Slack:") < shown.index("Maintenance:")
    assert "  ask             ask what a channel read and discussed" in shown


def test_paperping_run_says_what_is_missing_before_starting_anything(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bot.cli import main

    for name in ("SLACK_BOT_TOKEN", "SLACK_APP_TOKEN", "SLACK_SIGNING_SECRET", "SLACK_CLIENT_ID", "DATABASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    assert main(["run"]) == 2
    said = capsys.readouterr().err
    assert "SLACK_BOT_TOKEN" in said and "SLACK_APP_TOKEN" in said and "SLACK_SIGNING_SECRET" not in said
    assert main(["run", "--http"]) == 2
    said = capsys.readouterr().err
    assert "SLACK_SIGNING_SECRET" in said and "SLACK_APP_TOKEN" not in said
    assert not (tmp_path / "home").exists(), "no database was started, no migration applied"
