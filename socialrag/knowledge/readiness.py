"""What members are told about a channel's index and whether a post can come: the sentences of
``/paperping now``, ``/paperping status``, ``paperping status`` and App Home. Pure: facts in, sentences out."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from socialrag.storage.queue import IndexProgress
from socialrag.storage.settings import ChannelSettings

STEER = "set a focus or a source (`/paperping focus ...`, `/paperping sources ...`)"


@dataclass(frozen=True)
class Readiness:
    """What a post in the channel now would wait for, and the sentence that says so."""

    kind: str  # "ready", "indexing" (the post follows when done) or "none" (no candidate can be found yet)
    sentence: str


def focus_active(channel: ChannelSettings, now: datetime) -> bool:
    """Whether the channel's settings have a focus that has not run out (`/paperping focus`)."""
    until = channel.focus_expires_at
    return bool(channel.focus_text) and until is not None and until > now


READY_SHARES = 20  # papers of a channel indexed (newest first) that a first post may start from


def enough_to_post(progress: IndexProgress, reading_history: bool) -> bool:
    """Whether what is indexed of the channel is enough to post from: all of it, or ``READY_SHARES`` of its
    papers. History is read newest first and its papers indexed in that order, so the first post starts from
    what the group reads now while older history and slow lookups go on in the background."""
    done = not reading_history and not progress.unusable  # lookups that only enrich a usable paper never hold it
    return done or progress.embedded >= READY_SHARES


def assess(progress: IndexProgress, reading_history: bool, focused: bool, named_terms: bool) -> Readiness:
    """Whether a post can be made now. A channel with nothing indexed, no focus and nothing named for a source to
    search (arXiv, bioRxiv or medRxiv categories, a PubMed query) has nothing to start from: no post is promised."""
    if enough_to_post(progress, reading_history) and progress.embedded:
        if reading_history or progress.unusable:
            return Readiness(
                "ready",
                f"On it: a recommendation from the newest {progress.embedded} papers shared here will appear in a "
                "moment; I keep reading the rest of the history.",
            )
        return Readiness("ready", "On it: a recommendation will appear here in a moment.")
    if reading_history:
        return Readiness("indexing", "I'm still reading this channel's history; the post follows when it is read.")
    if progress.unusable:
        done = progress.stored - progress.unusable
        return Readiness(
            "indexing", f"Indexing {done} of {progress.stored} papers shared here; the post follows when it is done."
        )
    if not progress.embedded and not focused and not named_terms:
        return Readiness("none", f"No candidate yet: nothing shared here is indexed; {STEER}.")
    return Readiness("ready", "On it: a recommendation will appear here in a moment.")


def describe_index(progress: IndexProgress) -> str:
    """One line on the channel's index."""
    if not progress.stored:
        return "Index: no paper shared here yet."
    parts = [f"{progress.looked_up} looked up", f"{progress.embedded} embedded"]
    if progress.waiting:
        parts.append(f"{progress.waiting} waiting")
    if progress.given_up:
        parts.append(f"{progress.given_up} given up (no source knows them; they still count as shared)")
    return f"Index: {progress.stored} papers shared here; " + ", ".join(parts) + "."


def describe_empty(reason: str | None, at: datetime | None, next_at: datetime | None) -> str | None:
    """Why the last slot posted nothing, and when PaperPing tries again; None after a post."""
    if not reason:
        return None
    when = f" at {at:%a %d %b %H:%M} UTC" if at else ""
    again = f"; trying again {next_at:%a %H:%M} UTC" if next_at else ""
    return f"The last slot{when} posted nothing: {reason}{again}."
