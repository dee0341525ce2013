"""Import a Slack workspace export (zip) into the knowledge base.

The export is read file by file from the zip (memory does not grow with its size); a day file that cannot
be read (damaged in the zip, not JSON, nested too deeply, too large) is reported by name and the rest goes on;
importing the same export twice changes nothing.
"""

from __future__ import annotations

import json
import lzma
import zipfile
import zlib
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import IO, Any

import psycopg
from tqdm import tqdm

from bot.slack.payloads import channel_from_slack, may_share_paper, member_from_slack, message_from_slack
from socialrag import knowledge, storage
from socialrag.db import Database
from socialrag.errors import BadRecord, InputError
from socialrag.knowledge import IndexStats, ThreadTracker, index_messages
from socialrag.models import Channel, Member, Message
from socialrag.text import printable

BATCH = 2000
# A day file is one channel's day. Past these sizes a file is refused rather than read: parsing a JSON file
# takes several times its size in memory, and a small zip can inflate to gigabytes.
MAX_FILE_BYTES = 24 * 1024 * 1024
MAX_RATIO = 100  # inflated size / compressed size, for files over a megabyte
# What reading one file of a damaged export raises: a bad entry or checksum (BadZipFile), a broken compressed
# stream (zlib.error, lzma.LZMAError, OSError for bzip2), one cut short (EOFError), an encrypted entry or an unknown
# compression method (RuntimeError, NotImplementedError), JSON that is not valid text (ValueError) or is nested
# deeper than Python's parser goes (RecursionError). Each costs that one file, never the import.
_UNREADABLE = (
    ValueError,
    OSError,
    EOFError,
    zipfile.BadZipFile,
    zlib.error,
    lzma.LZMAError,
    RecursionError,
    NotImplementedError,
    RuntimeError,
)


@dataclass
class ChannelReport:
    channel_id: str
    name: str
    files: int = 0
    scanned: int = 0
    stats: IndexStats = field(default_factory=IndexStats)
    unshared: int = 0  # stored messages that went with a share the export shows edited to link no paper


@dataclass
class ImportReport:
    team_id: str
    channels: list[ChannelReport] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    newest_at: datetime | None = None  # the latest message read: the export was taken after it

    @property
    def scanned(self) -> int:
        return sum(c.scanned for c in self.channels)


class ExportReader:
    """The parts of an export zip, read lazily."""

    def __init__(self, path: Path) -> None:
        try:
            self.zip = zipfile.ZipFile(path)
        except (OSError, zipfile.BadZipFile) as exc:
            raise InputError(f"{path} is not a readable zip file ({exc}); pass the .zip Slack gave you") from exc
        names = self.zip.namelist()
        roots = [
            n[: -len("channels.json")]
            for n in names
            if n == "channels.json" or (n.endswith("/channels.json") and n.count("/") == 1)
        ]
        if not roots:
            raise InputError(f"{path} has no channels.json: it does not look like a Slack workspace export")
        self.prefix = min(roots, key=len)
        self.names = set(names)
        self.day_files: dict[str, list[str]] = {}
        for name in names:
            rel = name[len(self.prefix) :] if name.startswith(self.prefix) else None
            if rel and rel.count("/") == 1 and rel.endswith(".json"):
                folder, _ = rel.split("/", 1)
                self.day_files.setdefault(folder, []).append(name)
        for files in self.day_files.values():
            files.sort()

    def close(self) -> None:
        self.zip.close()

    def load(self, name: str) -> Any:
        """One JSON file of the zip, refused when it is too large or inflates too much to read safely."""
        info = self.zip.getinfo(name)
        if info.file_size > MAX_FILE_BYTES:
            raise ValueError(
                f"it is {info.file_size // 2**20} MB unpacked, over the {MAX_FILE_BYTES // 2**20} MB limit"
            )
        if info.file_size > 2**20 and info.file_size > MAX_RATIO * max(1, info.compress_size):
            raise ValueError(f"it inflates {info.file_size // max(1, info.compress_size)} times, which no export does")
        with self.zip.open(name) as fh:
            return _load(fh)

    def read_json(self, rel: str, problems: list[str]) -> Any:
        """A top-level file (``users.json``, ``channels.json``), or None (reported) when it cannot be read."""
        name = self.prefix + rel
        if name not in self.names:
            return None
        try:
            return self.load(name)
        except _UNREADABLE as exc:
            problems.append(f"{rel}: could not be read ({_reason(exc)})")
            return None

    def channels(self, problems: list[str]) -> list[dict[str, Any]]:
        found: list[dict[str, Any]] = []
        for rel in ("channels.json", "groups.json"):
            data = self.read_json(rel, problems)
            if isinstance(data, list):
                found.extend(c for c in data if isinstance(c, dict))
        if not found and problems:
            raise InputError(
                f"{problems[-1]}: without a readable channels.json PaperPing cannot tell the channels' ids; "
                "export the workspace again"
            )
        return found

    def iter_days(self, folder: str, problems: list[str]) -> Iterator[tuple[str, list[dict[str, Any]]]]:
        for name in self.day_files.get(folder, []):
            rel = name[len(self.prefix) :]
            try:
                data = self.load(name)
            except _UNREADABLE as exc:
                problems.append(f"{rel}: could not be read ({_reason(exc)}); skipped")
                yield rel, []
                continue
            if not isinstance(data, list):
                problems.append(f"{rel}: expected a list of messages, found {type(data).__name__}; skipped")
                yield rel, []
                continue
            yield rel, [m for m in data if isinstance(m, dict)]


def _load(fh: IO[bytes]) -> Any:
    # read at most the limit, whatever the zip's header claims about the size
    data = fh.read(MAX_FILE_BYTES + 1)
    if len(data) > MAX_FILE_BYTES:
        raise ValueError(f"it unpacks to more than {MAX_FILE_BYTES // 2**20} MB")
    return json.loads(data)


def _reason(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "its JSON is nested too deeply to read"
    if isinstance(exc, zlib.error | lzma.LZMAError):
        return f"its compressed data is damaged: {exc}"
    return str(exc)


def _team_id(users: Sequence[dict[str, Any]], override: str | None, problems: Sequence[str]) -> str:
    if override:
        return override
    counts = Counter(u.get("team_id") for u in users if isinstance(u.get("team_id"), str))
    if counts:
        return str(counts.most_common(1)[0][0])
    why = next((f"{p}, so PaperPing" for p in problems if p.startswith("users.json:")), "PaperPing")
    raise InputError(f"{why} cannot tell which workspace this export is from: pass --team-id T... (the workspace id)")


def _one_workspace_home(db: Database, team: str) -> None:
    """An export says itself which workspace it is from. In a home that holds another workspace, that is taken only
    from the operator (``--team-id``): a file of unknown origin cannot write into, or take shares out of, a
    workspace other than the one it was given for."""
    with db.connection() as conn:
        others = [t for t in storage.workspaces.load_team_ids(conn) if t != team]
    if others:
        held = ", ".join(printable(t) for t in others[:5]) + (" and more" if len(others) > 5 else "")
        raise InputError(
            f"this home holds another workspace ({held}), and the export says it is from {printable(team)}: say "
            f"which workspace it is from with --team-id"
        )


def _select_channels(
    raw: list[dict[str, Any]], team_id: str, wanted: Sequence[str] | None, problems: list[str]
) -> list[Channel]:
    first: dict[str, Channel] = {}
    direct: set[str] = set()
    for entry in raw:
        if (listed := channel_from_slack(entry, team_id)) is not None:
            first.setdefault(listed.channel_id, listed)  # a channel listed twice (channels.json, groups.json): once
            if _direct_message(entry, listed, problems):
                direct.add(listed.channel_id)
    channels = list(first.values())  # a DM's name still claims its folder (``_claimed_by_others``)
    chosen = [c for c in channels if c.channel_id not in direct]
    if wanted:
        keys = {w.lstrip("#") for w in wanted}
        chosen = [c for c in chosen if c.name in keys or c.channel_id in keys]
        unknown = keys - {c.name for c in chosen} - {c.channel_id for c in chosen}
        if unknown:
            known = printable(", ".join(sorted(c.name for c in channels if c.channel_id not in direct))) or "none"
            said = printable(", ".join(sorted(unknown)))
            raise InputError(f"no channel named {said} in this export; it has: {known}")
    return [c for c in chosen if not _claimed_by_others(c, channels, problems)]


def _direct_message(raw: dict[str, Any], channel: Channel, problems: list[str]) -> bool:
    """Whether a listed "channel" is a direct message (a ``D`` id, or Slack's marks of a DM or group DM): an export's
    ``dms.json`` and ``mpims.json`` are never read, and one moved into ``channels.json`` is not imported either, as
    nothing said in a DM is indexed live."""
    direct = raw.get("is_im") is True or raw.get("is_mpim") is True
    if direct or channel.channel_id.startswith("D") or channel.name.startswith("mpdm-"):
        problems.append(f"{channel.name}/: {channel.channel_id} is a direct message, not a channel; not imported")
        return True
    return False


def _claimed_by_others(channel: Channel, channels: list[Channel], problems: list[str]) -> bool:
    """Whether another channel of the export has this one's name, and so its folder of messages: Slack never gives
    two channels one name, and the folder cannot say whose its messages are (a private channel's must never be
    stored as a public one's), so it is imported into neither."""
    claims = sorted(c.channel_id for c in channels if c.name == channel.name)
    if len(claims) < 2:
        return False
    problems.append(
        f"{channel.name}/: channels {', '.join(claims)} all have this name, so its messages could be any of "
        f"theirs; not imported into {channel.channel_id}"
    )
    return True


def import_export(
    db: Database,
    path: Path,
    *,
    channels: Sequence[str] | None = None,
    team_id: str | None = None,
    domain: str | None = None,
    progress: bool = True,
) -> ImportReport:
    """Import the channels of an export zip (all, or those named) into the knowledge base."""
    reader = ExportReader(path)
    problems: list[str] = []
    try:
        users = reader.read_json("users.json", problems) or []
        users = [u for u in users if isinstance(u, dict)] if isinstance(users, list) else []
        team = _team_id(users, team_id, problems)
        if team_id is None:
            _one_workspace_home(db, team)
        selected = _select_channels(reader.channels(problems), team, channels, problems)
        members = {m.user_id: m for m in (member_from_slack(u, team) for u in users) if m is not None}
        report = ImportReport(team_id=team, problems=problems)
        with db.connection() as conn:
            storage.workspaces.upsert_team(conn, team, domain=domain)
            domain = domain or storage.workspaces.load_team_domain(conn, team)
        total = sum(len(reader.day_files.get(c.name, [])) for c in selected)
        with tqdm(total=total, unit="file", desc="import", disable=not progress, leave=False) as bar:
            for channel in selected:
                report.channels.append(_import_channel(db, reader, channel, members, domain, report, bar))
        return report
    finally:
        reader.close()


def _import_channel(
    db: Database,
    reader: ExportReader,
    channel: Channel,
    members: dict[str, Member],
    domain: str | None,
    report: ImportReport,
    bar: tqdm,
) -> ChannelReport:
    problems = report.problems
    out = ChannelReport(channel.channel_id, channel.name)
    seen_users: set[str] = set(channel.member_ids)
    with db.connection() as conn:
        storage.workspaces.upsert_channel(conn, channel)
        tracker = ThreadTracker(storage.messages.load_thread_roots(conn, channel.team_id, channel.channel_id))
    copies = knowledge.LatestCopies()  # the copies read and not yet written, one a message (``_write``)
    for rel, raw_messages in reader.iter_days(channel.name, problems):
        out.files += 1
        bar.update(1)
        raw_messages.sort(key=lambda m: str(m.get("ts", "")))
        for position, raw in enumerate(raw_messages, 1):
            out.scanned += 1
            thread_ts = raw.get("thread_ts")
            may_keep = may_share_paper(raw) or (isinstance(thread_ts, str) and thread_ts in tracker.roots)
            if not may_keep and not raw.get("edited"):  # an edited one may have lost the link of a stored share
                continue
            try:
                msg = message_from_slack(raw, channel.team_id, channel.channel_id, domain=domain)
            except BadRecord as exc:
                if may_keep:
                    problems.append(f"{rel}, message {position} (by time): {exc}; skipped")
                continue
            if msg is None or copies.older(msg):  # the export also has a newer copy of it, which stands
                continue
            if tracker.keep(msg):
                copies.hold(msg, kept=True)
            elif (copy := knowledge.unshared_copy(msg)) is not None and copies.hold(copy, kept=False):
                tracker.drop(msg.ts)  # a thread its older copy opened is not followed (nor kept: ``_write``)
        if len(copies) >= BATCH:
            _write(db, copies, tracker, out, report, seen_users)
    _write(db, copies, tracker, out, report, seen_users)
    with db.connection() as conn:
        storage.workspaces.upsert_members(conn, [members[u] for u in sorted(seen_users) if u in members])
        storage.workspaces.update_team_timezone(conn, channel.team_id)
    return out


def _write(
    db: Database,
    copies: knowledge.LatestCopies,
    tracker: ThreadTracker,
    out: ChannelReport,
    report: ImportReport,
    seen_users: set[str],
) -> None:
    """Write the copies held: first take out the stored shares the edited ones show with no link (``_unshare``),
    then store those kept, without the replies of a thread dropped since they were read."""
    kept, edited = copies.take()
    batch = [m for m in kept if tracker.follows(m)]
    seen_users.update(m.user_id for m in batch if m.user_id)
    seen_users.update(r.user_id for m in batch for r in m.reactions)
    out.unshared += _unshare(db, edited)
    out.stats.add(_flush(db, batch, report))


def _unshare(db: Database, edited: list[Message]) -> int:
    """The stored shares these copies, edited to link no paper, are newer than leave the base as an edit that took
    the link out takes them (the edit's event may never have come); before the batch they came with is written, so
    that its replies in their threads are not stored. Returns how many stored messages went."""
    if not edited:
        return 0
    with db.connection() as conn:
        return knowledge.record_unshared_copies(conn, edited)


def _flush(db: Database, batch: list[Message], report: ImportReport) -> IndexStats:
    """Write a batch; a message the database refuses is reported and skipped, the others are kept. A reaction
    stored with a time after the newest message read so far is newer than the export, and stays."""

    def refused(message: Message, exc: Exception) -> None:
        report.problems.append(f"message {message.ts}: the database refused it ({exc}); skipped")

    report.newest_at = max(
        [m.posted_at for m in batch] + ([report.newest_at] if report.newest_at else []), default=None
    )
    taken_after = report.newest_at

    def write(conn: psycopg.Connection, messages: Sequence[Message]) -> IndexStats:
        return index_messages(conn, messages, taken_after=taken_after)

    stats = IndexStats()
    for written in db.write_batch(batch, write, refused):
        stats.add(written)
    return stats
