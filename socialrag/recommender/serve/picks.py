"""Personal picks (`/paperping for-me`): a member's own profile from what they shared, liked, clicked and saved
in the channels they are in with PaperPing, and the papers closest to it from those channels' candidates.

Only channels the member is in now are read, so nothing of a channel reaches a member outside it; the
profile is made of the member's own papers only, and a pick keeps the thread it is close to (a channel's
fact the member can see) but never who shared it. When picks are due, whether they go and what is recorded is
decided here (``send_due_picks``); the group space's side reads member lists and sends (``PicksOutlet``).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from typing import Protocol

import numpy as np
import psycopg

from socialrag import storage
from socialrag.db import Database
from socialrag.errors import OutcomeUnknown, PermanentError
from socialrag.knowledge.emoji import SAVE_EMOJI, normalize_emoji, read_sentiment
from socialrag.recommender.serve.on_demand import Like
from socialrag.storage.embeddings import as_array, load_vectors

log = logging.getLogger(__name__)

# a member's picks rank the candidates of this many of their channels at most (each ranking may ask the paper
# sources), so that a member in forty channels costs what one in five does
PICK_CHANNELS = 5


@dataclass(frozen=True)
class Profile:
    channels: list[tuple[str, str]]  # (channel id, name) the member is in with PaperPing
    vector: np.ndarray | None  # the mean of their papers' vectors (None: nothing to go on)
    excluded: frozenset[int] = frozenset()  # their own papers and the picks already sent
    liked: dict[str, int] = field(default_factory=dict)  # channel id -> how many of its papers the member liked

    def channels_to_rank(self, most: int = PICK_CHANNELS) -> list[str]:
        """The channels whose candidates are ranked for the member, ``most`` at most: those where they liked the
        most papers first, then the others in the order they are listed."""
        ids = [c for c, _ in self.channels]
        order = {c: i for i, c in enumerate(ids)}
        return sorted(ids, key=lambda c: (-self.liked.get(c, 0), order[c]))[:most]


@dataclass(frozen=True)
class Pick:
    channel_id: str
    like: Like


@dataclass
class Picks:
    picks: list[Pick]
    channels: list[tuple[str, str]] = field(default_factory=list)


# (team id, member id) -> the member's picks now (``Recommender.personal_picks``)
FindPicks = Callable[[str, str], Picks]


def member_profile(conn: psycopg.Connection, model: str, team_id: str, user_id: str) -> Profile:
    """What the member engaged with well, in the channels they are in with PaperPing (as Slack said within a
    day: ``load_member_channels(current=True)``), as one vector."""
    channels = storage.workspaces.load_member_channels(conn, team_id, user_id, current=True)
    ids = [c for c, _ in channels]
    engaged = storage.member_picks.load_member_engagement(conn, team_id, user_id, ids) if ids else []
    liked: dict[str, set[int]] = {}
    readings = {c: storage.settings.load_emoji_overrides(conn, team_id, c) for c in {c for c, _, _ in engaged}}
    for channel_id, paper_id, how in engaged:
        if (
            how in ("share", "saved")
            or normalize_emoji(how) in SAVE_EMOJI
            or read_sentiment(how, readings[channel_id]) == "positive"
        ):
            liked.setdefault(channel_id, set()).add(paper_id)
    vectors = []
    for channel_id, papers in liked.items():
        found = load_vectors(conn, model, sorted(papers), channel=(team_id, channel_id))
        vectors += [as_array(v) for v in found.values()]
    sent = storage.member_picks.load_picks_sent(conn, team_id, user_id)
    excluded = frozenset({p for _, p, _ in engaged} | sent)
    counts = {c: len(papers) for c, papers in liked.items()}
    if not vectors:
        return Profile(channels, None, excluded, counts)
    mean = np.mean(np.stack(vectors), axis=0)
    return Profile(channels, np.asarray(mean / (np.linalg.norm(mean) or 1.0), dtype=np.float32), excluded, counts)


def merge_picks(found: list[tuple[str, Like]], top: int) -> list[Pick]:
    """The ``top`` closest papers over all channels, each once (from the channel where it is closest), without
    the member who shared the thread it is near. Pure."""
    best: dict[int, tuple[str, Like]] = {}
    for channel_id, like in found:
        if like.paper_id not in best or like.closeness > best[like.paper_id][1].closeness:
            best[like.paper_id] = (channel_id, like)
    ranked = sorted(best.values(), key=lambda item: -item[1].closeness)[:top]
    return [Pick(channel_id, replace(like, shared_by=None)) for channel_id, like in ranked]


PICKS_EVERY = timedelta(days=7)  # a member's picks come once a week
PICKS_RETRY = timedelta(hours=1)  # a direct message refused for now is tried again after this
PICKS_HELD = timedelta(days=1)  # one the workspace refuses for good (its token, its scopes) is tried again after this
# a try whose answer never came is looked for in the member's DM; a look that still fails this long after the try
# (the DM not readable: an install without ``im:history``) gives the try up, and the picks go again rather than never
PICKS_LOOKED_FOR = timedelta(days=1)
PICKS_IN_FLIGHT = timedelta(minutes=5)  # a try younger than this is another process's, still at work
PICKS_RUN_SECONDS = 240.0  # a run of the weekly picks starts no member's after this; the rest go at the next run


class PicksRefused(PermanentError):
    """The group space refuses the member's direct message for good; ``reason`` says why, in words for them."""

    def __init__(self, reason: str) -> None:
        super().__init__("direct message", reason)
        self.reason = reason


class PicksOutlet(Protocol):
    """The group space's side of personal picks: it reads the member's channels again, says which of them the
    member is in now, and sends the message (with its try, ``attempt``, in it) or finds one sent."""

    def refresh(self, team_id: str, user_id: str, now: datetime) -> None:
        """The member lists of the member's channels read again where they are older than a day."""

    def confirm(self, team_id: str, user_id: str, channel_ids: Sequence[str]) -> tuple[set[str], set[str]]:
        """Of ``channel_ids``, those the group space says the member is in now and those it says they are not
        in; a channel in neither is not known now. Raises when the group space does not answer."""
        ...

    def send(self, team_id: str, user_id: str, picks: Picks, attempt: datetime) -> None:
        """The picks in a direct message to the member; ``PicksRefused`` when that will never go,
        ``OutcomeUnknown`` when the group space may have taken it (its answer never came)."""

    def find_sent(self, team_id: str, user_id: str, attempt: datetime) -> list[tuple[int, str]] | None:
        """The (paper, channel) picks of the direct message of this try, when one is there (its answer never came)."""
        ...


NOTHING_TO_PICK_FROM = "You are in no channel with PaperPing yet, so I have nothing to pick from."
BEING_SENT = "Your picks are being sent right now; they come in a direct message."
NOTHING_NEW = (
    "I have nothing new to pick for you yet: share, react to, click or save papers in the channels you're in "
    "with PaperPing, and ask again."
)


def send_picks(db: Database, find: FindPicks, outlet: PicksOutlet, team: str, user: str, now: datetime) -> str:
    """Send the member their picks now; what happened, in a sentence for them. The try is marked under way first
    (``claim_picks_attempt``): one another process is at work on says so (``BEING_SENT``), and one whose answer
    never came is looked for (``_look_for``), and recorded instead of sent twice. The member lists of their
    channels are read again, and Slack confirms the member is in each channel the message would draw from: it names
    only channels they are in."""
    with db.connection() as conn:
        attempt = storage.settings.claim_picks_attempt(conn, team, user, now)
    if attempt is not None and abs(now - attempt) < PICKS_IN_FLIGHT:
        return BEING_SENT  # the weekly run and `for-me now` at once: the other is sending them
    if attempt is not None:  # the last try's answer never came: Slack may have posted it all the same
        posted = _look_for(outlet, team, user, attempt, now)
        _record(db, team, user, posted or [], attempt)
        if posted is not None:
            return f"Sent you {len(posted)} papers in a direct message."
        with db.connection() as conn:
            if storage.settings.claim_picks_attempt(conn, team, user, now) is not None:
                return BEING_SENT
    try:
        outlet.refresh(team, user, now)
        found = confirmed_picks(db, find, outlet, team, user)
        said = NOTHING_TO_PICK_FROM if not found.channels else NOTHING_NEW if not found.picks else None
        if said is None:
            outlet.send(team, user, found, now)
    except OutcomeUnknown:  # Slack may have posted it: the next try looks for it first
        raise
    except Exception:  # a refusal, no DM opened, Slack or the ranking out of reach: nothing was posted
        _record(db, team, user, [], None)
        raise
    if said is not None:
        _record(db, team, user, [], None)
        return said
    _record(db, team, user, [(p.like.paper_id, p.channel_id) for p in found.picks], now)
    return f"Sent you {len(found.picks)} papers in a direct message."


def confirmed_picks(db: Database, find: FindPicks, outlet: PicksOutlet, team: str, user: str) -> Picks:
    """The member's picks from channels Slack says they are in now. A channel Slack says they left (its
    ``member_left_channel`` event lost) leaves the stored list, and the picks are ranked again without it; one
    Slack does not say of is left out this time. Slack not answering raises: nothing rests on a stale list."""
    found = find(team, user)
    if not found.picks:
        return found
    inside, left = outlet.confirm(team, user, [c for c, _ in found.channels])
    if left:
        log.info("personal picks for %s/%s: Slack says they left %s", team, user, ", ".join(sorted(left)))
        with db.connection() as conn:
            for channel_id in left:
                storage.workspaces.remove_channel_member(conn, team, channel_id, user)
        found = find(team, user)
    return Picks([p for p in found.picks if p.channel_id in inside], found.channels)


def _look_for(
    outlet: PicksOutlet, team: str, user: str, attempt: datetime, now: datetime
) -> list[tuple[int, str]] | None:
    """The picks of the try ``attempt``'s DM when the group space has it; a look that fails is raised, unless the
    try is older than ``PICKS_LOOKED_FOR`` (the DM not readable for a day): then it is given up, as not sent."""
    try:
        return outlet.find_sent(team, user, attempt)
    except PicksRefused:
        raise
    except Exception as exc:
        if now - attempt < PICKS_LOOKED_FOR:
            raise
        log.warning(
            "personal picks for %s/%s: the DM of the try at %s cannot be looked for (%r); given up",
            team,
            user,
            attempt,
            exc,
        )
        return None


def _record(db: Database, team: str, user: str, picks: list[tuple[int, str]], at: datetime | None) -> None:
    """The picks that went (sent at ``at``) recorded, and the member's try closed."""
    with db.connection() as conn:
        if picks and at is not None:
            storage.member_picks.record_picks_sent(conn, team, user, picks, at)
        storage.settings.upsert_member_setting(conn, team, user, picks_attempt_at=None)


def send_due_picks(db: Database, find: FindPicks, outlet: PicksOutlet, now: datetime) -> int:
    """The weekly picks that are due, each taken by one process; a refusal for now is retried within the hour,
    one for good stops the member's picks with why, and one that is the workspace's for good (a dead token, a missing
    scope) keeps them on, tried again a day later. Returns how many went. A run starts no member's picks after
    ``PICKS_RUN_SECONDS``: it shares its process with the scheduled posts, and the members left are still due."""
    until = time.monotonic() + PICKS_RUN_SECONDS
    with db.connection() as conn:
        due = storage.member_picks.load_picks_due(conn, now)
    sent = 0
    for started, (team, user) in enumerate(due):
        if started and time.monotonic() > until:
            break
        with db.connection() as conn:
            if not storage.member_picks.claim_picks(conn, team, user, now, now + PICKS_EVERY):
                continue
        try:
            sent += send_picks(db, find, outlet, team, user, now).startswith("Sent")
        except PicksRefused as exc:  # stopped, with why, until the member turns them on again
            log.warning("personal picks for %s/%s stopped: %s", team, user, exc)
            with db.connection() as conn:
                storage.settings.upsert_member_setting(
                    conn, team, user, picks_enabled=False, picks_stopped_reason=exc.reason
                )
        except PermanentError as exc:  # the workspace's: the member's picks stay on until an admin mends it
            log.warning("personal picks for %s/%s held for a day: %s", team, user, exc)
            with db.connection() as conn:
                storage.settings.upsert_member_setting(conn, team, user, picks_next_at=now + PICKS_HELD)
        except Exception as exc:  # Slack out of reach, a timeout, or the database: this member's only, retried
            log.warning("personal picks for %s/%s failed, retrying within the hour: %r", team, user, exc)
            with db.connection() as conn:
                storage.settings.upsert_member_setting(conn, team, user, picks_next_at=now + PICKS_RETRY)
    return sent
