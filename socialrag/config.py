"""Settings from the environment. This module is the only reader of ``os.environ``.

Every setting is one row of ``SETTINGS``: its variable, the ``Settings`` field it fills, how it is read, its
default and what it means. The dataclass's defaults, ``from_env`` and the table of docs/configuration.md (checked
by a unit test) all come from that one list.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from socialrag.setting import Setting
from socialrag.setting import zotero_allow_list as zotero_allow_list  # its home was here

DEFAULT_EMBED_MODEL = "all-MiniLM-L6-v2"
# Weight of popularity in the default blend a channel's ranking starts from (PAPERPING_POPULARITY_WEIGHT).
DEFAULT_POPULARITY_WEIGHT = 0.05

_METRICS_TOKEN = "bearer token `/metrics` asks for (401 without it); unset, it answers only this machine's loopback"
_METRICS_PORT = "in Socket Mode, a port serving only `/metrics`, `/healthz` and `/readyz` (docs/metrics.md)"
_PEER_CONNECTIONS = "open connections the HTTP front lets one address hold (0: no cap, for a front behind a proxy)"
_EMBED_CACHE = "the vectors of papers' title and abstract, kept for every home on this machine; off: none"
SETTINGS: tuple[Setting, ...] = (
    Setting("PAPERPING_HOME", "home", "path", "~/.paperping", "where the embedded Postgres and other local state live"),
    Setting(
        "PAPERPING_OFFLINE",
        "offline",
        "flag",
        "0",
        "1 makes no network call at all (no metadata lookups, no Slack, no LLM)",
    ),
    Setting(
        "DATABASE_URL", "database_url", "text", None, "a Postgres with pgvector to use instead of the embedded one"
    ),
    Setting("SLACK_API_URL", "slack_api_url", "url", "https://slack.com/api/", "base of the Slack Web API"),
    Setting("SLACK_BOT_TOKEN", "slack_bot_token", "text", None, "bot token (xoxb-...) for a single workspace"),
    Setting(
        "SLACK_SIGNING_SECRET",
        "slack_signing_secret",
        "text",
        None,
        "signing secret; every HTTP request from Slack is checked against it",
    ),
    Setting(
        "SLACK_APP_TOKEN", "slack_app_token", "text", None, "app-level token (xapp-...); set it to run in Socket Mode"
    ),
    Setting(
        "SLACK_CLIENT_ID",
        "slack_client_id",
        "text",
        None,
        "with SLACK_CLIENT_SECRET: OAuth installation for many workspaces",
    ),
    Setting("SLACK_CLIENT_SECRET", "slack_client_secret", "text", None, "OAuth client secret"),
    Setting(
        "PAPERPING_TOKEN_KEY",
        "token_key",
        "text",
        None,
        "key that encrypts bot tokens stored in Postgres; required with OAuth (`paperping keygen` makes one); "
        "several keys, comma-separated and the newest first, while rotating",
    ),
    Setting(
        "PAPERPING_TICK_SECONDS", "tick_seconds", "float", "60", "how often each process looks for channels due a post"
    ),
    Setting(
        "SLACK_TEAM_DOMAIN",
        "slack_team_domain",
        "text",
        None,
        "workspace domain (the NAME in NAME.slack.com) for permalinks of imported messages",
    ),
    Setting("S2_API_URL", "s2_api_url", "url", "https://api.semanticscholar.org/", "base of the Semantic Scholar API"),
    Setting("S2_API_KEY", "s2_api_key", "text", None, "optional Semantic Scholar API key"),
    Setting("ARXIV_API_URL", "arxiv_api_url", "url", "https://export.arxiv.org/api/", "base of the arXiv API"),
    Setting(
        "CROSSREF_API_URL", "crossref_api_url", "url", "https://api.crossref.org/", "base of the Crossref REST API"
    ),
    Setting("CROSSREF_MAILTO", "crossref_mailto", "text", None, "contact address sent to Crossref (its polite pool)"),
    Setting("OPENALEX_API_URL", "openalex_api_url", "url", "https://api.openalex.org/", "base of the OpenAlex API"),
    Setting(
        "OPENALEX_MAILTO",
        "openalex_mailto",
        "text",
        None,
        "contact address sent to OpenAlex (its polite pool) and to PubMed; unset: CROSSREF_MAILTO's",
    ),
    Setting(
        "PUBMED_API_URL",
        "pubmed_api_url",
        "url",
        "https://eutils.ncbi.nlm.nih.gov/entrez/eutils/",
        "base of PubMed's E-utilities",
    ),
    Setting("PUBMED_API_KEY", "pubmed_api_key", "text", None, "optional NCBI API key (10 requests a second, not 3)"),
    Setting(
        "BIORXIV_API_URL", "biorxiv_api_url", "url", "https://api.biorxiv.org/", "base of the bioRxiv and medRxiv API"
    ),
    Setting(
        "PAPERPING_FULLTEXT",
        "fulltext",
        "flag",
        "1",
        "0 turns off reading papers' open-access full text for the whole service (channels and workspaces can turn it "
        "off for themselves: `/paperping fulltext off`)",
    ),
    Setting(
        "ARXIV_URL", "arxiv_url", "url", "https://arxiv.org/", "arXiv's site: a paper's HTML (html/ID) and PDF (pdf/ID)"
    ),
    Setting(
        "ACL_ANTHOLOGY_URL",
        "acl_anthology_url",
        "url",
        "https://aclanthology.org/",
        "the ACL Anthology: a paper's PDF (ID.pdf)",
    ),
    Setting(
        "BIORXIV_URL",
        "biorxiv_url",
        "url",
        "https://www.biorxiv.org/",
        "bioRxiv's site: the JATS XML of a preprint's version",
    ),
    Setting(
        "MEDRXIV_URL",
        "medrxiv_url",
        "url",
        "https://www.medrxiv.org/",
        "medRxiv's site: the JATS XML of a preprint's version",
    ),
    Setting(
        "PMC_URL",
        "pmc_url",
        "url",
        "https://pmc.ncbi.nlm.nih.gov/api/oai/v1/mh/",
        "PubMed Central's OAI-PMH service: the JATS XML of an open-access article (GetRecord, metadataPrefix pmc)",
    ),
    Setting("ZOTERO_API_URL", "zotero_api_url", "url", "https://api.zotero.org/", "base of Zotero's Web API"),
    Setting(
        "ORCID_API_URL",
        "orcid_api_url",
        "url",
        "https://pub.orcid.org/v3.0/",
        "base of ORCID's public API (the name on an ORCID record, for `/paperping follow ORCID`)",
    ),
    Setting(
        "ZOTERO_API_KEY",
        "zotero_api_key",
        "text",
        None,
        "Zotero API key with write access to the group libraries channels send their reading lists to "
        "(`/paperping zotero GROUP_ID`); without it the Zotero push is off",
    ),
    Setting(
        "PAPERPING_ZOTERO_GROUPS",
        "zotero_groups",
        "text",
        None,
        "which Zotero group libraries each workspace may send to, as `T0123=123456,234567;T0456=345678`; a group "
        "listed is that workspace's alone. Unset: a group belongs to the first workspace that binds it "
        "(`paperping zotero-group` moves it)",
    ),
    Setting(
        "OPENAI_BASE_URL",
        "openai_base_url",
        "text",
        None,
        "an OpenAI-compatible server for the llm style",
        shown="(unset: OpenAI)",
    ),
    Setting("OPENAI_API_KEY", "openai_api_key", "text", None, "key for that server"),
    Setting(
        "PAPERPING_EMBED_MODEL",
        "embed_model",
        "text",
        DEFAULT_EMBED_MODEL,
        "sentence-transformers model name or local path",
    ),
    Setting("PAPERPING_EMBED_BATCH", "embed_batch", "int", "64", "texts per embedding batch"),
    Setting("PAPERPING_EMBED_CACHE", "embed_cache", "path", "~/.cache/paperping/embeddings", _EMBED_CACHE),
    Setting(
        "PAPERPING_EMBED_DEVICE",
        "embed_device",
        "device",
        "auto",
        "where embeddings are computed: auto (an NVIDIA GPU when torch sees one, else the CPU), cpu, cuda, cuda:N",
    ),
    Setting(
        "PAPERPING_METADATA_MAX_AGE_DAYS",
        "metadata_max_age_days",
        "float",
        "30",
        "paper metadata older than this is fetched again",
    ),
    Setting(
        "PAPERPING_METADATA_RETRY_HOURS",
        "metadata_retry_hours",
        "float",
        "24",
        "a paper whose metadata could not be had is retried after this",
    ),
    Setting("PAPERPING_HTTP_TIMEOUT", "http_timeout", "float", "20", "seconds a source may be silent; 3x a request"),
    Setting(
        "PAPERPING_LLM_MODEL", "llm_model", "text", "gpt-4o-mini", "model name asked of the OpenAI-compatible server"
    ),
    Setting(
        "PAPERPING_LLM_TIMEOUT",
        "llm_timeout",
        "float",
        "30",
        "seconds before an LLM call is given up (the post then falls back)",
    ),
    Setting(
        "PAPERPING_EXPLANATION_LIMIT", "explanation_limit", "int", "400", "most characters of a post's explanation"
    ),
    Setting(
        "PAPERPING_LLM_PER_MEMBER_HOUR",
        "llm_per_member_hour",
        "int",
        "10",
        "most LLM calls PaperPing makes for one member's questions in an hour (answers in threads); past it the "
        "member is told so and gets the abstract",
    ),
    Setting(
        "PAPERPING_LLM_PER_CHANNEL_HOUR",
        "llm_per_channel_hour",
        "int",
        "30",
        "most LLM calls PaperPing makes for questions in one channel in an hour",
    ),
    Setting(
        "PAPERPING_FOLLOWUPS_EVERY_MINUTES",
        "followups_every_minutes",
        "float",
        "1440",
        "how often PaperPing asks its sources about a paper a channel shared, to notice that it was published, got "
        "a new version or was built on (`/paperping follow-ups`)",
    ),
    Setting(
        "PAPERPING_AUTHORS_EVERY_MINUTES",
        "authors_every_minutes",
        "float",
        "1440",
        "how often PaperPing asks Semantic Scholar for the papers of the authors a channel follows and of members "
        "who let the channel hear of theirs (`/paperping follow`, `/paperping my-papers`)",
    ),
    Setting(
        "PAPERPING_MENTION_QUIET_DAYS",
        "mention_quiet_days",
        "float",
        "7",
        "a member @-mentioned this recently is named without a mention",
    ),
    Setting(
        "PAPERPING_HALF_LIFE_DAYS",
        "half_life_days",
        "float",
        "60",
        "half-life of engagement when scoring (older reactions count less)",
    ),
    Setting(
        "PAPERPING_SIGNAL_WINDOW_DAYS", "signal_window_days", "int", "90", "look-back window of the social signals"
    ),
    Setting(
        "PAPERPING_POPULARITY_WEIGHT",
        "popularity_weight",
        "float",
        str(DEFAULT_POPULARITY_WEIGHT),
        "weight of popularity (citations, upvotes) in the default ranking a channel starts from",
    ),
    Setting("PAPERPING_METRICS_TOKEN", "metrics_token", "text", None, _METRICS_TOKEN),
    Setting("PAPERPING_METRICS_PORT", "metrics_port", "text", None, _METRICS_PORT),
    Setting("PAPERPING_HTTP_PEER_CONNECTIONS", "http_peer_connections", "count", "0", _PEER_CONNECTIONS),
)
# a number's least and most: beyond them a value is a typo, or overflows a date (checked as it is read)
_DAYS, _TIMEOUT, _EVERY = (0, 36500), (0, 600), (0, 525600)
_BOUNDS = {"tick_seconds": (1, 3600), "http_timeout": _TIMEOUT, "llm_timeout": _TIMEOUT, "half_life_days": _DAYS}
_BOUNDS |= {"metadata_max_age_days": _DAYS, "metadata_retry_hours": (0, 876000), "mention_quiet_days": _DAYS}
_BOUNDS |= {"signal_window_days": (1, 36500), "followups_every_minutes": _EVERY, "authors_every_minutes": _EVERY}
SETTINGS = tuple(replace(s, bounds=_BOUNDS.get(s.field)) for s in SETTINGS)
# name -> (default, meaning); docs/configuration.md's settings table is checked against this in a unit test.
SETTINGS_HELP: dict[str, tuple[str, str]] = {s.variable: (s.documented_default, s.meaning) for s in SETTINGS}
_BY_FIELD = {s.field: s for s in SETTINGS}
# Variables that libraries PaperPing uses read by themselves (the openai package reads OPENAI_*).
LIBRARY_VARIABLES = ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OPENAI_ORG_ID", "OPENAI_PROJECT_ID")


def _default(field: str) -> Any:
    return _BY_FIELD[field].read({})


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
    """Everything PaperPing reads from its environment, with the defaults of ``SETTINGS``."""

    home: Path
    offline: bool = _default("offline")
    database_url: str | None = _default("database_url")
    slack_api_url: str = _default("slack_api_url")
    slack_bot_token: str | None = _default("slack_bot_token")
    slack_signing_secret: str | None = _default("slack_signing_secret")
    slack_app_token: str | None = _default("slack_app_token")
    slack_client_id: str | None = _default("slack_client_id")
    slack_client_secret: str | None = _default("slack_client_secret")
    token_key: str | None = _default("token_key")
    tick_seconds: float = _default("tick_seconds")
    slack_team_domain: str | None = _default("slack_team_domain")
    s2_api_url: str = _default("s2_api_url")
    s2_api_key: str | None = _default("s2_api_key")
    arxiv_api_url: str = _default("arxiv_api_url")
    crossref_api_url: str = _default("crossref_api_url")
    crossref_mailto: str | None = _default("crossref_mailto")
    openalex_api_url: str = _default("openalex_api_url")
    openalex_mailto: str | None = _default("openalex_mailto")
    pubmed_api_url: str = _default("pubmed_api_url")
    pubmed_api_key: str | None = _default("pubmed_api_key")
    biorxiv_api_url: str = _default("biorxiv_api_url")
    fulltext: bool = _default("fulltext")
    arxiv_url: str = _default("arxiv_url")
    acl_anthology_url: str = _default("acl_anthology_url")
    biorxiv_url: str = _default("biorxiv_url")
    medrxiv_url: str = _default("medrxiv_url")
    pmc_url: str = _default("pmc_url")
    zotero_api_url: str = _default("zotero_api_url")
    orcid_api_url: str = _default("orcid_api_url")
    zotero_api_key: str | None = _default("zotero_api_key")
    zotero_groups: str | None = _default("zotero_groups")
    openai_base_url: str | None = _default("openai_base_url")
    openai_api_key: str | None = _default("openai_api_key")
    embed_model: str = _default("embed_model")
    embed_batch: int = _default("embed_batch")
    embed_cache: Path = _default("embed_cache")  # noqa: RUF009 (a Path is never changed in place)
    embed_device: str = _default("embed_device")
    metadata_max_age_days: float = _default("metadata_max_age_days")
    metadata_retry_hours: float = _default("metadata_retry_hours")
    http_timeout: float = _default("http_timeout")
    llm_model: str = _default("llm_model")
    llm_timeout: float = _default("llm_timeout")
    explanation_limit: int = _default("explanation_limit")
    llm_per_member_hour: int = _default("llm_per_member_hour")
    llm_per_channel_hour: int = _default("llm_per_channel_hour")
    followups_every_minutes: float = _default("followups_every_minutes")
    authors_every_minutes: float = _default("authors_every_minutes")
    mention_quiet_days: float = _default("mention_quiet_days")
    half_life_days: float = _default("half_life_days")
    signal_window_days: int = _default("signal_window_days")
    popularity_weight: float = _default("popularity_weight")
    metrics_token: str | None = _default("metrics_token")
    metrics_port: str | None = _default("metrics_port")
    http_peer_connections: int = _default("http_peer_connections")

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Settings:
        """Read settings from ``env`` (default: the process environment)."""
        e = os.environ if env is None else env
        return cls(**{f.name: _BY_FIELD[f.name].read(e) for f in fields(cls)})

    @property
    def contact_email(self) -> str | None:
        """The contact address sent to OpenAlex and PubMed: ``OPENALEX_MAILTO``, else ``CROSSREF_MAILTO``."""
        return self.openalex_mailto or self.crossref_mailto

    @property
    def llm_configured(self) -> bool:
        """An OpenAI-compatible server is set (and the network may be used)."""
        return not self.offline and bool(self.openai_api_key or self.openai_base_url)

    @property
    def fulltext_on(self) -> bool:
        """Papers' open-access full text is read (``PAPERPING_FULLTEXT``, and the network may be used)."""
        return self.fulltext and not self.offline

    @property
    def embed_cache_dir(self) -> Path | None:
        """The embedding cache's folder, shared by every home; None when it is off."""
        return None if self.embed_cache.name.lower() in ("off", "none", "0") else self.embed_cache

    def with_changes(self, **changes: object) -> Settings:
        """A copy with some fields replaced (command-line flags use this)."""
        return replace(self, **changes)  # type: ignore[arg-type]
