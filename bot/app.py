"""The bolt ``App`` built from settings: one workspace on a bot token, or many through OAuth installations
kept in Postgres (``bot.slack.installation_store``), each request authorized from them (``bot.slack.authorization``);
every listener, the middleware that handles each event once and the error handler are registered by
``bot.listeners``; each request is counted for ``/metrics``."""

from __future__ import annotations

from typing import Any

from slack_bolt import App
from slack_bolt.oauth.oauth_settings import OAuthSettings
from slack_sdk import WebClient

from bot import listeners
from bot.app_context import AppContext
from bot.slack.authorization import StoredAuthorize
from bot.slack.installation_store import (
    BOT_SCOPES,
    CALLBACK_PAGES,
    InstallFlow,
    PostgresInstallationStore,
    SignedStateStore,
    TeamCheckedUrls,
    token_cipher,
)
from bot.slack.metrics import count_requests
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import ConfigError


def build_app(settings: Settings, db: Database, ctx: AppContext, *, socket_mode: bool = False) -> App:
    """The bolt app with PaperPing's listeners, talking to ``SLACK_API_URL``."""
    if not socket_mode and not settings.slack_signing_secret:
        raise ConfigError("SLACK_SIGNING_SECRET is not set: PaperPing refuses requests it cannot verify")
    common: dict[str, Any] = {
        "signing_secret": settings.slack_signing_secret or "unused-in-socket-mode",
        # handle an event before answering Slack, so that a failure is answered as one and Slack retries
        "process_before_response": True,
        # bolt's own drop of PaperPing's own events, in ``listeners.register_all``, lets a deletion of its post through
        "ignoring_self_events_enabled": False,
    }
    if settings.slack_client_id and settings.slack_client_secret:
        installations = PostgresInstallationStore(db, token_cipher(settings))
        oauth = OAuthSettings(
            client_id=settings.slack_client_id,
            client_secret=settings.slack_client_secret,
            scopes=BOT_SCOPES,
            installation_store=installations,
            installation_store_bot_only=True,
            state_store=SignedStateStore(db, settings.slack_client_secret),
            authorization_url="https://slack.com/oauth/v2/authorize",
            callback_options=CALLBACK_PAGES,  # bolt's pages, never showing a visitor's text
        )
        generated = oauth.authorize_url_generator  # the same URL, with a ?team= that is no workspace id dropped
        oauth.authorize_url_generator = TeamCheckedUrls(
            client_id=generated.client_id,
            redirect_uri=generated.redirect_uri,
            scopes=generated.scopes,
            user_scopes=generated.user_scopes,
            authorization_url=generated.authorization_url,
        )
        client = WebClient(base_url=settings.slack_api_url)
        app = App(
            **common,
            # one read of the workspace's bot a request, and no auth.test: see bot.slack.authorization (bolt
            # takes an ``Authorize`` as it is, though its annotation names plain functions only)
            authorize=StoredAuthorize(installations),  # type: ignore[arg-type]
            installation_store_bot_only=True,
            oauth_flow=InstallFlow(client=client, settings=oauth),  # bolt's, with a page when Slack is away
            client=client,
        )
    elif settings.slack_bot_token:
        app = App(**common, client=WebClient(token=settings.slack_bot_token, base_url=settings.slack_api_url))
    else:
        raise ConfigError("set SLACK_BOT_TOKEN (one workspace) or SLACK_CLIENT_ID and SLACK_CLIENT_SECRET (OAuth)")
    listeners.register_all(app, ctx)
    count_requests(app, ctx.metrics)  # how every request ended, for /metrics
    return app
