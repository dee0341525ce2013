"""Bot tokens at rest: encrypted with keys from the environment (``PAPERPING_TOKEN_KEY``), Fernet from the
``cryptography`` package (AES-128-CBC with an HMAC-SHA256 over it).

``PAPERPING_TOKEN_KEY`` may hold several keys, comma-separated, the newest first (``cryptography``'s
MultiFernet): a token opens with any of them and is written with the first. ``paperping run`` checks the keys
against the stored tokens when it starts (``bot.app.check_token_keys``) and re-encrypts with
the first key every token written with an older one, or stored before encryption was turned on.
"""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken, MultiFernet

from socialrag.errors import ConfigError, KeyMismatch

PREFIX = "enc1:"


def generate_key() -> str:
    """A new key for ``PAPERPING_TOKEN_KEY``."""
    return Fernet.generate_key().decode()


class TokenCipher:
    def __init__(self, keys: str) -> None:
        parts = [k.strip() for k in keys.split(",") if k.strip()]
        try:
            fernets = [Fernet(k.encode()) for k in parts]
        except (ValueError, TypeError):
            raise ConfigError(
                "PAPERPING_TOKEN_KEY is not a valid key: each key is 44 characters of URL-safe base64 (several "
                "keys are separated by commas, the newest first); `paperping keygen` prints a new one"
            ) from None
        if not fernets:
            raise ConfigError("PAPERPING_TOKEN_KEY holds no key; `paperping keygen` prints one")
        self._newest = fernets[0]
        self._fernet = MultiFernet(fernets)

    def encrypt(self, token: str) -> str:
        return PREFIX + self._newest.encrypt(token.encode()).decode()

    def decrypt(self, stored: str) -> str:
        if not stored.startswith(PREFIX):
            return stored  # saved before tokens were encrypted (``check_token_keys`` encrypts it at start)
        try:
            return self._fernet.decrypt(stored[len(PREFIX) :].encode()).decode()
        except InvalidToken:
            raise KeyMismatch(
                "PAPERPING_TOKEN_KEY does not open this workspace's stored bot token: set the key it was saved "
                "with (several keys may be given, comma-separated, the newest first)"
            ) from None

    def rotate(self, stored: str) -> str | None:
        """``stored`` written again under the first key, or None when it is under that key already. Raises
        ``KeyMismatch`` when no key opens it; a token stored before encryption is encrypted."""
        if stored.startswith(PREFIX):
            try:
                self._newest.decrypt(stored[len(PREFIX) :].encode())
                return None
            except InvalidToken:
                pass
        return self.encrypt(self.decrypt(stored))
