"""How a request is authorized with many workspaces (OAuth): the workspace's installation is read from Postgres
once, and the ids of PaperPing's bot stored with it stand in for Slack's ``auth.test``, so that a signed request
costs no call to Slack. An installation stored without those ids is checked with ``auth.test`` once per token,
and the answer is kept for the life of the process.

Bolt answers a request it could not authorize with a 200 saying that the app is no longer installed, and Slack
never sends that event again. That answer is right only when there is no installation, or Slack says its token
is dead. A failure that passes (the database away, Slack answering 429 or an internal error, a token key that does
not open the stored token) raises instead: bolt answers 500, and Slack sends the event again."""

from __future__ import annotations

import logging

from slack_bolt import BoltContext
from slack_bolt.authorization import AuthorizeResult
from slack_bolt.authorization.authorize import Authorize
from slack_sdk import WebClient
from slack_sdk.errors import SlackApiError
from slack_sdk.oauth.installation_store import Bot, InstallationStore

from socialrag.errors import RateLimited, SourceError

log = logging.getLogger(__name__)

# what Slack says of a token that no retry brings back: the workspace is answered as one without PaperPing
DEAD_TOKEN_ERRORS = frozenset(
    {"account_inactive", "invalid_auth", "not_authed", "token_revoked", "token_expired", "team_access_not_granted"}
)


class StoredAuthorize(Authorize):
    """Bolt's ``authorize`` for OAuth mode, from the installation store (``find_bot``: one read a request)."""

    def __init__(self, installations: InstallationStore) -> None:
        self.installations = installations
        self._checked: dict[str, AuthorizeResult] = {}  # bot token -> what auth.test said of it

    def __call__(
        self,
        *,
        context: BoltContext,
        enterprise_id: str | None,
        team_id: str | None,
        user_id: str | None,
        actor_enterprise_id: str | None = None,
        actor_team_id: str | None = None,
        actor_user_id: str | None = None,
    ) -> AuthorizeResult | None:
        """The workspace's bot, or None when PaperPing is not installed there. Raises (``DatabaseError``,
        ``KeyMismatch``, ``SourceError``) when that cannot be known now."""
        bot = self.installations.find_bot(
            enterprise_id=enterprise_id, team_id=team_id, is_enterprise_install=context.is_enterprise_install
        )
        if bot is None or not bot.bot_token:
            return None
        if bot.bot_user_id and bot.bot_id:
            return AuthorizeResult(
                enterprise_id=bot.enterprise_id,
                team_id=bot.team_id,
                team=bot.team_name,
                bot_user_id=bot.bot_user_id,
                bot_id=bot.bot_id,
                bot_token=bot.bot_token,
                bot_scopes=bot.bot_scopes or None,
            )
        known = self._checked.get(bot.bot_token)
        return known if known is not None else self._check(context.client, bot)

    def _check(self, client: WebClient, bot: Bot) -> AuthorizeResult | None:
        """``auth.test`` of an installation stored without its bot's ids; kept when Slack answers."""
        try:
            answer = client.auth_test(token=bot.bot_token)
        except SlackApiError as exc:
            error = str(exc.response.get("error") or exc.response.status_code)
            if error in DEAD_TOKEN_ERRORS:
                log.warning("the bot token of workspace %s is refused by Slack (%s)", bot.team_id, error)
                return None
            kind = RateLimited if exc.response.status_code == 429 else SourceError
            raise kind("slack", f"auth.test for workspace {bot.team_id}: {error}") from exc
        except OSError as exc:  # Slack not reached
            raise SourceError("slack", f"auth.test for workspace {bot.team_id}: {exc}") from exc
        found = AuthorizeResult.from_auth_test_response(
            auth_test_response=answer, bot_token=bot.bot_token, bot_scopes=bot.bot_scopes or None
        )
        self._checked[bot.bot_token] = found
        return found
