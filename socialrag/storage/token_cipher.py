"""Bot tokens at rest: encrypted with a key from the environment (``PAPERPING_TOKEN_KEY``), Fernet from the
``cryptography`` package (AES-128-CBC with an HMAC-SHA256 over it). A token stored before encryption was
turned on is read as it is and encrypted the next time it is saved."""

from __future__ import annotations

from cryptography.fernet import Fernet, InvalidToken

from socialrag.errors import ConfigError

PREFIX = "enc1:"


def generate_key() -> str:
    """A new key for ``PAPERPING_TOKEN_KEY``."""
    return Fernet.generate_key().decode()


class TokenCipher:
    def __init__(self, key: str) -> None:
        try:
            self._fernet = Fernet(key.encode())
        except (ValueError, TypeError):
            raise ConfigError(
                "PAPERPING_TOKEN_KEY is not a valid key: it is 44 characters of URL-safe base64; "
                "`paperping keygen` prints a new one"
            ) from None

    def encrypt(self, token: str) -> str:
        return PREFIX + self._fernet.encrypt(token.encode()).decode()

    def decrypt(self, stored: str) -> str:
        if not stored.startswith(PREFIX):
            return stored  # saved before tokens were encrypted
        try:
            return self._fernet.decrypt(stored[len(PREFIX) :].encode()).decode()
        except InvalidToken:
            raise ConfigError(
                "PAPERPING_TOKEN_KEY does not open the stored bot tokens: set the key they were saved with"
            ) from None
