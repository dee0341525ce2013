"""The one small exception tree of PaperPing. Adapters turn transport errors into these."""

from __future__ import annotations


class PaperPingError(Exception):
    """Base of every error PaperPing raises on purpose."""


class ConfigError(PaperPingError):
    """A setting is missing or has a value PaperPing cannot use."""


class DatabaseError(PaperPingError):
    """The database could not be reached or started."""


class InputError(PaperPingError):
    """Something a user gave us (a file, an argument) is malformed; the message says what to do."""


class BadRecord(InputError):
    """One record from outside (a message, a catalog line) is malformed; it is reported and skipped, and the
    records around it are kept."""


class SourceError(PaperPingError):
    """An outside service (Slack, Semantic Scholar, arXiv, Crossref, an LLM) failed."""

    def __init__(self, source: str, message: str, *, retry_after: float | None = None) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.detail = message  # what happened, without the source's name (said to members as it is)
        self.retry_after = retry_after


class PermanentError(SourceError):
    """The service refused in a way that retrying will not change (a channel gone, PaperPing removed from it,
    a revoked token)."""


class OutcomeUnknown(SourceError):
    """The service may have done what was asked: its answer was lost, or said it failed partway. Not repeated
    where doing it twice would show (a second file in a channel)."""


class RateLimited(SourceError):
    """The service answered 429 and we gave up waiting within our budget."""


class NotFound(SourceError):
    """The service does not know the thing we asked for."""


class KeyMismatch(PaperPingError):
    """The token key does not open a stored bot token (a wrong or rotated ``PAPERPING_TOKEN_KEY``). Not a
    reason to stop a channel: the right key brings everything back."""
