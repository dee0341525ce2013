"""Slack installations: one workspace on a bot token, or many through OAuth installations kept in Postgres with
their bot tokens encrypted (``PAPERPING_TOKEN_KEY``), and the OAuth state store that signs each state."""

from __future__ import annotations

import hashlib
import hmac
import logging
import re
import secrets
from datetime import UTC, datetime, timedelta
from typing import Any

from slack_bolt.error import BoltError
from slack_bolt.oauth import OAuthFlow
from slack_bolt.oauth.callback_options import CallbackOptions, FailureArgs, SuccessArgs
from slack_bolt.request import BoltRequest
from slack_bolt.response import BoltResponse
from slack_sdk.errors import SlackApiError, SlackClientError
from slack_sdk.oauth import AuthorizeUrlGenerator
from slack_sdk.oauth.installation_store import Bot, Installation, InstallationStore
from slack_sdk.oauth.state_store import OAuthStateStore

from socialrag import storage
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import ConfigError, KeyMismatch
from socialrag.token_cipher import TokenCipher

log = logging.getLogger(__name__)

BOT_SCOPES = [
    "app_mentions:read",
    "assistant:write",
    "channels:history",
    "groups:history",
    "channels:read",
    "groups:read",
    "chat:write",
    "files:write",
    "im:history",
    "im:write",
    "commands",
    "reactions:read",
    "users:read",
]


TEAM_ID = re.compile(r"[TE][A-Z0-9]{1,24}")  # a Slack workspace (T...) or Enterprise Grid (E...) id


class TeamCheckedUrls(AuthorizeUrlGenerator):
    """Slack's authorize URL for ``/slack/install``. ``?team=T...`` there preselects a workspace; slack_sdk pastes
    that value into the URL as it came, so one carrying ``&scope=...`` or ``&user_scope=...`` would have Slack ask
    for permissions PaperPing never asks for, from a link on PaperPing's own address. Only a value shaped like a
    workspace id is passed on; anything else is dropped (the member picks the workspace on Slack's page)."""

    def generate(self, state: str, team: str | None = None) -> str:
        return super().generate(state, team if team is not None and TEAM_ID.fullmatch(team) else None)


SLACK_ERROR = re.compile(r"[a-z][a-z0-9_]{0,59}")  # an error code Slack sends back (access_denied...)
ORG_WIDE = "organization_wide_install_not_supported"
UNREACHABLE = "slack_unreachable"


class OrgWideInstall(BoltError):
    """An Enterprise Grid organisation-wide install: Slack names no workspace, and PaperPing keeps one per row."""


def _failure_page(args: FailureArgs) -> BoltResponse:
    """Bolt's failure page, with a reason that is a code, never a visitor's text: the callback's ``?error=`` comes
    from whoever wrote the link, and bolt shows it on PaperPing's page."""
    reason = ORG_WIDE if isinstance(args.error, OrgWideInstall) else args.reason
    shown = reason if SLACK_ERROR.fullmatch(reason or "") else "unknown_error"
    return args.default.failure(
        FailureArgs(
            request=args.request,
            reason=shown,
            error=args.error,
            suggested_status_code=args.suggested_status_code,
            settings=args.settings,
            default=args.default,
        )
    )


def _success_page(args: SuccessArgs) -> BoltResponse:
    return args.default.success(args)


CALLBACK_PAGES = CallbackOptions(success=_success_page, failure=_failure_page)


class SlackUnreachable(BoltError):
    """Slack's ``oauth.v2.access`` did not answer (the network, a timeout), or the ``auth.test`` after it failed."""


class InstallFlow(OAuthFlow):
    """Bolt's OAuth flow, with two ends it leaves open. When Slack cannot be reached to exchange the code, the
    installer gets the failure page (``slack_unreachable``, 502, with the link to start again) instead of a bare
    server error. A token Slack issued for an install PaperPing refuses (organisation-wide) or cannot keep (the
    database fails) is revoked at once, so that no working token is left behind that PaperPing neither keeps nor
    uses."""

    def handle_callback(self, request: BoltRequest) -> BoltResponse:
        try:
            return super().handle_callback(request)
        except SlackUnreachable:
            return self.failure_handler(
                FailureArgs(
                    request=request,
                    reason=UNREACHABLE,
                    suggested_status_code=502,
                    settings=self.settings,
                    default=self.default_callback_options,
                )
            )

    def run_installation(self, code: str) -> Installation | None:
        """The code exchanged for the bot's token (``oauth.v2.access``), then the bot's id asked for with it
        (``auth.test``). A code Slack refuses gives bolt's ``invalid_code`` page (None). When the token was issued
        but its ``auth.test`` fails, the token is revoked before the installer is told to start again: a token
        PaperPing does not keep must not stay working."""
        try:
            issued = self.client.oauth_v2_access(
                code=code,
                client_id=self.settings.client_id,
                client_secret=self.settings.client_secret,
                redirect_uri=self.settings.redirect_uri,
            )
        except SlackApiError as exc:
            log.warning("Slack refused an install's code: %s", exc.response.get("error"))
            return None
        except (SlackClientError, OSError) as exc:  # OSError: refused, reset, timed out
            log.warning("Slack could not be reached to finish an install: %s", type(exc).__name__)
            raise SlackUnreachable(UNREACHABLE) from exc
        token: str | None = issued.get("access_token")
        bot_id: str | None = None
        if token:
            try:
                bot_id = self.client.auth_test(token=token).get("bot_id")
            except (SlackClientError, OSError) as exc:
                log.warning("an install's auth.test failed (%s): its token is revoked", type(exc).__name__)
                self._revoke(token)
                raise SlackUnreachable(UNREACHABLE) from exc
        team = issued.get("team") or {}
        grid = issued.get("enterprise") or {}
        installer = issued.get("authed_user") or {}
        return Installation(
            app_id=issued.get("app_id"),
            enterprise_id=grid.get("id"),
            enterprise_name=grid.get("name"),
            team_id=team.get("id"),
            team_name=team.get("name"),
            bot_token=token,
            bot_id=bot_id,
            bot_user_id=issued.get("bot_user_id"),
            bot_scopes=issued.get("scope") or "",
            user_id=installer.get("id") or "",
            is_enterprise_install=bool(issued.get("is_enterprise_install")),
            token_type=issued.get("token_type"),
        )

    def store_installation(self, request: BoltRequest, installation: Installation) -> None:
        try:
            super().store_installation(request, installation)
        except Exception:  # refused (organisation-wide) or not kept (the database away): no token left working
            self._revoke(installation.bot_token)
            raise

    def _revoke(self, token: str | None) -> None:
        if not token:
            return
        try:
            self.client.auth_revoke(token=token)
        except (SlackClientError, OSError) as exc:
            log.warning("could not revoke the token of a refused install: %s", type(exc).__name__)


class PostgresInstallationStore(InstallationStore):
    """OAuth installations, one row per workspace, the bot token encrypted; removed on uninstall."""

    def __init__(self, db: Database, cipher: TokenCipher) -> None:
        self.db = db
        self.cipher = cipher

    @property
    def logger(self) -> logging.Logger:
        return log

    def save(self, installation: Installation) -> None:
        """Raises ``OrgWideInstall`` (a ``BoltError``: bolt shows its failure page) for an install that names no
        workspace."""
        if not installation.team_id:
            log.warning("refused an organisation-wide install of enterprise %s", installation.enterprise_id)
            raise OrgWideInstall("PaperPing is installed into each workspace, not organisation-wide")
        values = {
            "team_id": installation.team_id,
            "team_name": installation.team_name,
            "bot_token": self.cipher.encrypt(installation.bot_token or ""),
            "bot_user_id": installation.bot_user_id,
            "bot_id": installation.bot_id,
            "installer_id": installation.user_id or None,
            "scopes": ",".join(installation.bot_scopes or []),
        }
        with self.db.connection() as conn:
            storage.installs.upsert_installation(conn, values)

    def find_bot(
        self, *, enterprise_id: str | None, team_id: str | None, is_enterprise_install: bool | None = False
    ) -> Bot | None:
        with self.db.connection() as conn:
            row = storage.installs.load_installation(conn, team_id)
        if row is None:
            return None
        return Bot(
            team_id=row.team_id,
            team_name=row.team_name,
            bot_token=self.cipher.decrypt(row.bot_token),
            bot_user_id=row.bot_user_id or "",
            bot_id=row.bot_id or "",
            installed_at=row.installed_at.timestamp(),
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
            storage.installs.delete_installation(conn, team_id)

    def delete_bot(self, *, enterprise_id: str | None, team_id: str | None) -> None:
        self.delete_installation(enterprise_id=enterprise_id, team_id=team_id)


class SignedStateStore(OAuthStateStore):
    """OAuth ``state`` values signed with the app's client secret, valid for ten minutes and usable once.
    Issuing one (what an anonymous ``GET /slack/install`` does) touches no database; only a state that comes
    back signed and in time is written down, so that it cannot be used twice. Bolt's cookie check binds the
    state to the browser that asked for it."""

    LIFETIME = timedelta(minutes=10)

    def __init__(self, db: Database, secret: str) -> None:
        self.db = db
        self._key = hashlib.sha256(b"paperping-oauth-state:" + secret.encode()).digest()

    @property
    def logger(self) -> logging.Logger:
        return log

    def _mac(self, payload: str) -> str:
        return hmac.new(self._key, payload.encode(), hashlib.sha256).hexdigest()[:32]

    def issue(self, *args: Any, **kwargs: Any) -> str:
        payload = f"{int((datetime.now(UTC) + self.LIFETIME).timestamp())}-{secrets.token_hex(16)}"
        return f"{payload}-{self._mac(payload)}"

    def consume(self, state: str) -> bool:
        payload, _, mac = state.rpartition("-")
        seconds = payload.partition("-")[0]
        if (
            len(state) > 100
            or not seconds.isdigit()
            or not hmac.compare_digest(mac.encode(), self._mac(payload).encode())
        ):
            return False
        until = datetime.fromtimestamp(int(seconds), UTC)
        if until <= datetime.now(UTC):
            return False
        with self.db.connection() as conn:
            return storage.installs.use_oauth_state(conn, state, until)


def token_cipher(settings: Settings) -> TokenCipher:
    """The cipher of stored bot tokens; OAuth mode refuses to start without its key."""
    if not settings.token_key:
        raise ConfigError(
            "PAPERPING_TOKEN_KEY is not set: with OAuth, bot tokens are kept in Postgres encrypted with it. "
            "`paperping keygen` prints a new key"
        )
    return TokenCipher(settings.token_key)


def check_token_keys(db: Database, cipher: TokenCipher) -> list[str]:
    """At start: try the keys on every stored bot token. When encrypted tokens are stored and the keys open
    none of them, refuse to start (a wrong key would otherwise make every workspace fail at its first post).
    Tokens that open but are not under the first key (an older key, or stored before encryption) are written
    again under it. Returns the workspaces whose token the keys do not open, each logged."""
    closed: list[str] = []
    renewed = 0
    with db.connection() as conn:  # one transaction: a key that opens nothing rewrites nothing
        stored = storage.installs.load_stored_tokens(conn)
        for team, token in stored:
            try:
                again = cipher.rotate(token)
            except KeyMismatch:
                closed.append(team)
                continue
            if again is not None:
                storage.installs.update_bot_token(conn, team, again)
                renewed += 1
        if closed and len(closed) == len(stored):
            raise ConfigError(
                f"PAPERPING_TOKEN_KEY opens none of the {len(closed)} stored bot tokens: set the key they were "
                "saved with (to rotate, give the new key first and the old one after it, comma-separated)"
            )
    if renewed:
        log.warning("re-encrypted %d stored bot tokens with the first key of PAPERPING_TOKEN_KEY", renewed)
    for team in closed:
        log.warning("PAPERPING_TOKEN_KEY does not open the stored bot token of workspace %s; its posts wait", team)
    return closed


def token_for(settings: Settings, db: Database, team_id: str) -> str:
    """The bot token of a workspace: the single-workspace token, or its OAuth installation's."""
    if settings.slack_bot_token:
        return settings.slack_bot_token
    bot = PostgresInstallationStore(db, token_cipher(settings)).find_bot(enterprise_id=None, team_id=team_id)
    if bot is None or not bot.bot_token:
        raise ConfigError(f"PaperPing is not installed in workspace {team_id}")
    return bot.bot_token
