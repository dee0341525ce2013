"""The bolt ``App`` built from settings: one workspace on a bot token, or many through OAuth installations
kept in Postgres; every event takes effect once (Slack retries are de-duplicated by event id)."""

from __future__ import annotations

import logging
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt import App, BoltResponse
from slack_bolt.middleware import Middleware
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_bolt.request import BoltRequest
from slack_sdk import WebClient
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore

from bot.context import AppContext
from bot.listeners import commands, events, home
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import ConfigError

log = logging.getLogger(__name__)

BOT_SCOPES = [
    "channels:history",
    "groups:history",
    "channels:read",
    "groups:read",
    "chat:write",
    "commands",
    "reactions:read",
    "users:read",
    "team:read",
]


class Deduplicate(Middleware):
    """Slack resends an event it thinks was missed; the second copy is acknowledged and dropped."""

    def __init__(self, db: Database) -> None:
        self.db = db

    def process(self, *, req: BoltRequest, resp: BoltResponse, next: Any) -> BoltResponse | None:
        event_id = req.body.get("event_id") if isinstance(req.body, dict) else None
        if event_id:
            with self.db.connection() as conn:
                fresh = conn.execute(
                    "INSERT INTO processed_events (event_id, team_id) VALUES (%(e)s, %(t)s) "
                    "ON CONFLICT DO NOTHING RETURNING 1",
                    {"e": event_id, "t": req.body.get("team_id")},
                ).fetchone()
            if fresh is None:
                log.info("event %s seen before; ignored", event_id)
                return BoltResponse(status=200, body="")
        return next()


class PostgresInstallationStore(InstallationStore):
    """OAuth installations, one row per workspace; removed when the app is uninstalled."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def logger(self) -> logging.Logger:
        return log

    def save(self, installation: Installation) -> None:
        with self.db.connection() as conn:
            conn.execute(
                """
                INSERT INTO installations (team_id, team_name, bot_token, bot_user_id, bot_id, installer_id, scopes)
                VALUES (%(t)s, %(n)s, %(tok)s, %(u)s, %(b)s, %(i)s, %(s)s)
                ON CONFLICT (team_id) DO UPDATE SET team_name = EXCLUDED.team_name, bot_token = EXCLUDED.bot_token,
                    bot_user_id = EXCLUDED.bot_user_id, bot_id = EXCLUDED.bot_id, installer_id = EXCLUDED.installer_id,
                    scopes = EXCLUDED.scopes, installed_at = now()
                """,
                {
                    "t": installation.team_id,
                    "n": installation.team_name,
                    "tok": installation.bot_token,
                    "u": installation.bot_user_id,
                    "b": installation.bot_id,
                    "i": installation.user_id,
                    "s": ",".join(installation.bot_scopes or []),
                },
            )

    def find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        with self.db.connection() as conn:
            row = conn.execute(
                "SELECT team_id, team_name, bot_token, bot_user_id, bot_id, installed_at FROM installations"
                " WHERE team_id = %(t)s",
                {"t": team_id},
            ).fetchone()
        if row is None:
            return None
        return Bot(
            team_id=row[0],
            team_name=row[1],
            bot_token=row[2],
            bot_user_id=row[3],
            bot_id=row[4],
            installed_at=row[5].timestamp(),
        )

    def find_installation(
        self,
        *,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None = None,
        is_enterprise_install: bool | None = False,
    ) -> Installation | None:
        bot = self.find_bot(enterprise_id=enterprise_id, team_id=team_id)
        if bot is None:
            return None
        return Installation(
            team_id=bot.team_id,
            team_name=bot.team_name,
            bot_token=bot.bot_token,
            bot_user_id=bot.bot_user_id,
            bot_id=bot.bot_id,
            user_id=user_id or "",
            installed_at=bot.installed_at,
        )

    def delete_installation(
        self, *, enterprise_id: str | None, team_id: str | None, user_id: str | None = None
    ) -> None:
        with self.db.connection() as conn:
            conn.execute("DELETE FROM installations WHERE team_id = %(t)s", {"t": team_id})

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.delete_installation(enterprise_id=enterprise_id, team_id=team_id)


class PostgresStateStore(OAuthStateStore):
    """OAuth ``state`` values, valid for ten minutes and usable once."""

    def __init__(self, db: Database) -> None:
        self.db = db

    @property
    def logger(self) -> logging.Logger:
        return log

    def issue(self, *args: Any, **kwargs: Any) -> str:
        state = secrets.token_urlsafe(24)
        with self.db.connection() as conn:
            conn.execute(
                "INSERT INTO oauth_states (state, expires_at) VALUES (%(s)s, %(e)s)",
                {"s": state, "e": datetime.now(UTC) + timedelta(minutes=10)},
            )
        return state

    def consume(self, state: str) -> bool:
        with self.db.connection() as conn:
            row = conn.execute(
                "DELETE FROM oauth_states WHERE state = %(s)s RETURNING expires_at", {"s": state}
            ).fetchone()
        return row is not None and row[0] > datetime.now(UTC)


def token_for(settings: Settings, db: Database, team_id: str) -> str:
    """The bot token of a workspace: the single-workspace token, or its OAuth installation's."""
    if settings.slack_bot_token:
        return settings.slack_bot_token
    bot = PostgresInstallationStore(db).find_bot(enterprise_id=None, team_id=team_id)
    if bot is None or not bot.bot_token:
        raise ConfigError(f"PaperPing is not installed in workspace {team_id}")
    return bot.bot_token


def build_app(settings: Settings, db: Database, ctx: AppContext, *, socket_mode: bool = False) -> App:
    """The bolt app with PaperPing's listeners, talking to ``SLACK_API_URL``."""
    if not socket_mode and not settings.slack_signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is not set: PaperPing refuses requests it cannot verify")
    common: dict[str, Any] = {"signing_secret": settings.slack_signing_secret or "unused-in-socket-mode"}
    if settings.slack_client_id and settings.slack_client_secret:
        app = App(
            **common,
            oauth_settings=OAuthSettings(
                client_id=settings.slack_client_id,
                client_secret=settings.slack_client_secret,
                scopes=BOT_SCOPES,
                installation_store=PostgresInstallationStore(db),
                state_store=PostgresStateStore(db),
                authorization_url="https://slack.com/oauth/v2/authorize",
            ),
            client=WebClient(base_url=settings.slack_api_url),
        )
    elif settings.slack_bot_token:
        app = App(**common, client=WebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url))
    else:
        raise ConfigError("set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (OAuth)")
    app.use(Deduplicate(db))
    events.register(app, ctx)
    commands.register(app, ctx)
    home.register(app, ctx)

    def uninstalled(body: dict[str, Any]) -> None:
        PostgresInstallationStore(db).delete_installation(enterprise_id=None, team_id=body.get("team_id"))

    app.event("app_uninstalled")(uninstalled)
    app.event("tokens_revoked")(uninstalled)
    return app
