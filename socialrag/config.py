"""Settings from the environment. This module is the only reader of ``os.environ``."""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TypeVar

from socialrag.errors import ConfigError

DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2"
_Num = TypeVar("_Num", int, float)

# name -> (default, meaning); the README's settings table is checked against this in a unit test.
# Weight of popularity in the default blend a channel's ranking starts from (PAPERPING_POPULARITY_WEIGHT).
DEFAULT_POPULARITY_WEIGHT = 0.05

SETTINGS_HELP: dict[str, tuple[str, str]] = {
    "PAPERPING_HOME": ("~/.paperping", "where the embedded Postgres and other local state live"),
    "PAPERPING_OFFLINE": ("0", "1 makes no network call at all (no metadata lookups, no Slack, no LLM)"),
    "DATABASE_URL": ("(unset)", "a Postgres with pgvector to use instead of the embedded one"),
    "SLACK_API_URL": ("https://slack.com/api/", "base of the Slack Web API"),
    "SLACK_BOT_TOKEN": ("(unset)", "bot token (xoxb-...) for a single workspace"),
    "SLACK_SIGNING_SECRET": ("(unset)", "signing secret; every HTTP request from Slack is checked against it"),
    "SLACK_APP_TOKEN": ("(unset)", "app-level token (xapp-...); set it to run in Socket Mode"),
    "SLACK_CLIENT_ID": ("(unset)", "with SLACK_CLIENT_SECRET: OAuth installation for many workspaces"),
    "SLACK_CLIENT_SECRET": ("(unset)", "OAuth client secret"),
    "PAPERPING_TOKEN_KEY": (
        "(unset)",
        "key that encrypts bot tokens stored in Postgres; required with OAuth (`paperping keygen` makes one)",
    ),
    "PAPERPING_TICK_SECONDS": ("60", "how often each process looks for channels due a post"),
    "SLACK_TEAM_DOMAIN": (
        "(unset)",
        "workspace domain (the NAME in NAME.slack.com) for permalinks of imported messages",
    ),
    "S2_API_URL": ("https://api.semanticscholar.org/", "base of the Semantic Scholar API"),
    "S2_API_KEY": ("(unset)", "optional Semantic Scholar API key"),
    "ARXIV_API_URL": ("https://export.arxiv.org/api/", "base of the arXiv API"),
    "CROSSREF_API_URL": ("https://api.crossref.org/", "base of the Crossref REST API"),
    "CROSSREF_MAILTO": ("(unset)", "contact address sent to Crossref (its polite pool)"),
    "OPENAI_BASE_URL": ("(unset: OpenAI)", "an OpenAI-compatible server for the llm style"),
    "OPENAI_API_KEY": ("(unset)", "key for that server"),
    "PAPERPING_EMBED_MODEL": (DEFAULT_EMBED_MODEL, "sentence-transformers model name or local path"),
    "PAPERPING_EMBED_BATCH": ("64", "texts per embedding batch"),
    "PAPERPING_EMBED_DEVICE": (
        "auto",
        "where embeddings are computed: auto (an NVIDIA GPU when torch sees one, else the CPU), cpu, cuda, cuda:N",
    ),
    "PAPERPING_METADATA_MAX_AGE_DAYS": ("30", "paper metadata older than this is fetched again"),
    "PAPERPING_METADATA_RETRY_HOURS": ("24", "a paper whose metadata could not be had is retried after this"),
    "PAPERPING_HTTP_TIMEOUT": ("20", "seconds before an outside HTTP call is given up"),
    "PAPERPING_LLM_MODEL": ("gpt-4o-mini", "model name asked of the OpenAI-compatible server"),
    "PAPERPING_LLM_TIMEOUT": ("30", "seconds before an LLM call is given up (the post then falls back)"),
    "PAPERPING_EXPLANATION_LIMIT": ("400", "most characters of a post's explanation"),
    "PAPERPING_MENTION_QUIET_DAYS": ("7", "a member @-mentioned this recently is named without a mention"),
    "PAPERPING_HALF_LIFE_DAYS": ("60", "half-life of engagement when scoring (older reactions count less)"),
    "PAPERPING_SIGNAL_WINDOW_DAYS": ("90", "look-back window of the social signals"),
    "PAPERPING_POPULARITY_WEIGHT": (
        str(DEFAULT_POPULARITY_WEIGHT),
        "weight of popularity (citations, upvotes) in the default ranking a channel starts from",
    ),
}

_TRUE = {"1", "true", "yes", "on"}
# Variables that libraries PaperPing uses read by themselves (the openai package reads OPENAI_*).
LIBRARY_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")


def clear_empty_settings(env: MutableMapping[str, str] | None = None) -> list[str]:
    """Remove settings set to an empty string, so that empty means "not set" for PaperPing and for the
    libraries that read the environment themselves (a compose file's ``${VAR:-}`` gives an empty string).
    Returns the names removed."""
    e = os.environ if env is None else env
    names = [n for n in dict.fromkeys((*SETTINGS_HELP, *LIBRARY_VARIABLES)) if n in e and not e[n].strip()]
    for name in names:
        del e[name]
    return names


@dataclass(frozen=True)
class Settings:
    """Everything PaperPing reads from its environment, with defaults."""

    home: Path
    offline: bool = False
    database_url: str | None = None
    slack_api_url: str = "https://slack.com/api/"
    slack_bot_token: str | None = None
    slack_team_domain: str | None = None
    slack_signing_secret: str | None = None
    slack_app_token: str | None = None
    slack_client_id: str | None = None
    slack_client_secret: str | None = None
    token_key: str | None = None
    tick_seconds: float = 60.0
    s2_api_url: str = "https://api.semanticscholar.org/"
    s2_api_key: str | None = None
    arxiv_api_url: str = "https://export.arxiv.org/api/"
    crossref_api_url: str = "https://api.crossref.org/"
    crossref_mailto: str | None = None
    openai_base_url: str | None = None
    openai_api_key: str | None = None
    embed_model: str = DEFAULT_EMBED_MODEL
    embed_batch: int = 64
    embed_device: str = "auto"
    metadata_max_age_days: float = 30.0
    metadata_retry_hours: float = 24.0
    http_timeout: float = 20.0
    llm_model: str = "gpt-4o-mini"
    llm_timeout: float = 30.0
    explanation_limit: int = 400
    mention_quiet_days: float = 7.0
    half_life_days: float = 60.0
    signal_window_days: int = 90
    popularity_weight: float = DEFAULT_POPULARITY_WEIGHT

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read settings from ``env`` (default: the process environment)."""
        e = os.environ if env is None else env

        def opt(name: str) -> str | None:
            value = e.get(name, "").strip()
            return value or None

        return cls(
            home=Path(opt("PAPERPING_HOME") or "~/.paperping").expanduser(),
            offline=(opt("PAPERPING_OFFLINE") or "0").lower() in _TRUE,
            database_url=opt("DATABASE_URL"),
            slack_api_url=_with_slash(opt("SLACK_API_URL") or cls.slack_api_url),
            slack_bot_token=opt("SLACK_BOT_TOKEN"),
            slack_team_domain=opt("SLACK_TEAM_DOMAIN"),
            slack_signing_secret=opt("SLACK_SIGNING_SECRET"),
            slack_app_token=opt("SLACK_APP_TOKEN"),
            slack_client_id=opt("SLACK_CLIENT_ID"),
            slack_client_secret=opt("SLACK_CLIENT_SECRET"),
            token_key=opt("PAPERPING_TOKEN_KEY"),
            tick_seconds=_number(e, "PAPERPING_TICK_SECONDS", 60.0, float),
            s2_api_url=_with_slash(opt("S2_API_URL") or cls.s2_api_url),
            s2_api_key=opt("S2_API_KEY"),
            arxiv_api_url=_with_slash(opt("ARXIV_API_URL") or cls.arxiv_api_url),
            crossref_api_url=_with_slash(opt("CROSSREF_API_URL") or cls.crossref_api_url),
            crossref_mailto=opt("CROSSREF_MAILTO"),
            openai_base_url=opt("OPENAI_BASE_URL"),
            openai_api_key=opt("OPENAI_API_KEY"),
            embed_model=opt("PAPERPING_EMBED_MODEL") or DEFAULT_EMBED_MODEL,
            embed_batch=_number(e, "PAPERPING_EMBED_BATCH", 64, int),
            embed_device=_device(opt("PAPERPING_EMBED_DEVICE") or "auto"),
            metadata_max_age_days=_number(e, "PAPERPING_METADATA_MAX_AGE_DAYS", 30.0, float),
            metadata_retry_hours=_number(e, "PAPERPING_METADATA_RETRY_HOURS", 24.0, float),
            http_timeout=_number(e, "PAPERPING_HTTP_TIMEOUT", 20.0, float),
            llm_model=opt("PAPERPING_LLM_MODEL") or "gpt-4o-mini",
            llm_timeout=_number(e, "PAPERPING_LLM_TIMEOUT", 30.0, float),
            explanation_limit=_number(e, "PAPERPING_EXPLANATION_LIMIT", 400, int),
            mention_quiet_days=_number(e, "PAPERPING_MENTION_QUIET_DAYS", 7.0, float),
            half_life_days=_number(e, "PAPERPING_HALF_LIFE_DAYS", 60.0, float),
            signal_window_days=_number(e, "PAPERPING_SIGNAL_WINDOW_DAYS", 90, int),
            popularity_weight=_number(e, "PAPERPING_POPULARITY_WEIGHT", DEFAULT_POPULARITY_WEIGHT, float),
        )

    @property
    def llm_configured(self) -> bool:
        """An OpenAI-compatible server is set (and the network may be used)."""
        return not self.offline and bool(self.openai_api_key or self.openai_base_url)

    def with_changes(self, **changes: object) -> Settings:
        """A copy with some fields replaced (command-line flags use this)."""
        return replace(self, **changes)  # type: ignore[arg-type]


def _device(value: str) -> str:
    device = value.lower()
    if device in ("auto", "cpu", "cuda", "mps") or re.fullmatch(r"cuda:\d+", device):
        return device
    raise ConfigError(f"PAPERPING_EMBED_DEVICE must be auto, cpu, cuda, cuda:N or mps, got {value!r}")


def _with_slash(url: str) -> str:
    return url if url.endswith("/") else url + "/"


def _number(env: Mapping[str, str], name: str, default: _Num, kind: type[_Num]) -> _Num:
    raw = env.get(name, "").strip()
    if not raw:
        return default
    try:
        value = kind(raw)
    except ValueError:
        raise ConfigError(f"{name} must be a number, got {raw!r}") from None
    if value <= 0:
        raise ConfigError(f"{name} must be positive, got {raw!r}")
    return value
