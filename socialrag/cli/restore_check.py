"""What a restore may run: every statement of a dump, checked against the dump PaperPing's own migrations make.

``pg_restore`` runs SQL that the file carries: each entry's definition, the ``COPY`` before a table's rows, a
sequence's ``setval``, the ``search_path`` its header sets and, with ``--verbose``, the versions it names. The
embedded server restores as a superuser, so a hand-made file could bring a function, a trigger, an event trigger,
another extension, a default or check that calls a function, or any statement in place of a ``COPY``.

``reference_archive`` dumps an empty home at the file's schema version, made by PaperPing's migrations on the
server that restores; ``check_dump`` then takes an entry only when its SQL is that reference's, word for word (a
sequence's value and the rows excepted), and so is whether it has data (data with no ``COPY`` before it is run as
statements). It refuses the whole restore, naming the entry, on anything else: an entry the reference lacks, one
whose SQL or data flag differs, one the reference has and the file lacks, an id that two entries share
(``pg_restore -L`` picks entries by id, so both would run). Entries that a restore never runs (privileges, the
database's own entry, the ``public`` schema itself) are left behind.

A home that embeds with a model other than the default also holds that model's vector indexes, which PaperPing
makes as it embeds (``ensure_vector_index`` in ``storage.embeddings``, ``ensure_passage_index`` in
``storage.fulltext``) rather than by a migration; the default model's come from the migrations. ``model_indexes``
reads, from each index of the file named as such an index, the model and dimension it claims; the reference home
gets those indexes, made by the same functions, and the word-for-word comparison decides as for any entry, so an
index with another definition under such a name is refused.
"""

from __future__ import annotations

import re
import subprocess
import tempfile
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import psycopg

from socialrag.errors import DatabaseError, InputError
from socialrag.migrate import apply_migrations, load_migrations
from socialrag.pgtools import Archive, TocEntry, read_archive, tool_dsn, with_dbname
from socialrag.storage import embeddings, fulltext, homes

# never run by a restore: privileges (--no-privileges), the database itself (no --create), the schema public
# that every database has; the extension's comment, which only its owner may set, stays behind too
NEVER_RUN = {"ACL", "DEFAULT ACL", "DATABASE", "DATABASE PROPERTIES"}
PUBLIC_SCHEMA = {("SCHEMA", "", "public"), ("COMMENT", "", "SCHEMA public")}
LEFT_BEHIND = {("COMMENT", "", "EXTENSION vector")}
SPECIAL = {"ENCODING", "STDSTRINGS", "SEARCHPATH"}  # read from the header before anything else
_ENCODING = re.compile(r"SET client_encoding = '([A-Za-z0-9_]+)';\n")
ENCODING = "UTF8"  # a home's: a file in another is restored with that client encoding, its text read as that
_SETVAL = re.compile(r"(SELECT pg_catalog\.setval\('[^']+', )-?\d+, (?:true|false)\);\n")  # the value, is_called
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
# the model and dimension a per-model vector index names, as pg_dump writes its definition
_DIMENSION = re.compile(r"\(\(embedding\)::public\.vector\((\d{1,5})\)\)")
_MODEL = re.compile(r" WHERE \(model = '((?:[^']|'')*)'::text\);\n\Z")
MOST_MODEL_INDEXES = 16  # two a model (papers, passages): a home that has embedded with eight models
# how PaperPing names a model's vector index, and the function that makes it as a home starts embedding
_MAKERS: tuple[tuple[Callable[[str], str], Callable[[psycopg.Connection, str, int], None]], ...] = (
    (embeddings.index_name, embeddings.ensure_vector_index),
    (fulltext.passage_index_name, fulltext.ensure_passage_index),
)


@dataclass(frozen=True)
class ModelIndex:
    """A vector index that a file holds under the name PaperPing gives ``model``'s index, and the dimension its
    definition names; whether the rest of it is PaperPing's is for ``check_dump`` to tell."""

    name: str
    model: str
    dimension: int


def shown(entry: TocEntry) -> str:
    """An entry's name for a message: no control character of a hand-made file reaches the terminal."""
    return _CONTROL.sub("?", entry.name)[:160]


def toc_of(path: Path) -> Archive:
    """The file's header and table of contents, read by PaperPing, in UTF8 (``check_encoding``); ``InputError``
    when they cannot be."""
    try:
        dump = read_archive(path)
    except ValueError as exc:
        raise InputError(f"{path} cannot be read as a backup ({exc})") from exc
    check_encoding(dump, path)
    return dump


def check_encoding(dump: Archive, path: Path) -> None:
    """``InputError`` for a file whose ``ENCODING`` entry (every one: pg_restore sets each it reads) is not UTF8."""
    for entry in dump.entries:
        said = _ENCODING.fullmatch(entry.defn) if entry.desc == "ENCODING" else None
        if entry.desc == "ENCODING" and (said is None or said.group(1) != ENCODING):
            named = f"the encoding {said.group(1)}" if said else "an encoding entry pg_dump never writes"
            raise InputError(
                f"nothing was restored: {path} was written in {named}, not {ENCODING}: pg_restore would read its "
                f"text as that. Take the backup again with `paperping backup`, which writes {ENCODING}, or with "
                f"pg_dump -Fc -E {ENCODING}"
            )


def check_file(path: Path, server: str, name: str, migration: int, tools: Path) -> list[int]:
    """``check_dump`` of the file at ``path`` against a reference home at its schema (``reference_archive``) that
    holds the vector indexes PaperPing would have made for the models the file's indexes name."""
    dump = toc_of(path)
    indexes = model_indexes(dump)
    if len(indexes) > MOST_MODEL_INDEXES:  # each one is built in the reference home: a file does not choose how many
        raise InputError(
            f"{path} names {len(indexes)} vector indexes of embedding models; a PaperPing home has at most "
            f"{MOST_MODEL_INDEXES}, so nothing was restored"
        )
    reference = reference_archive(server, name, migration, tools, indexes)
    return check_dump(dump, reference, path, migration)


def model_indexes(dump: Archive) -> list[ModelIndex]:
    """The indexes of ``dump`` named as PaperPing names a model's vector index, with the model and dimension their
    definitions give; any other entry, however named, is left to the comparison with the reference."""
    found = []
    for entry in dump.entries:
        dimension, model = _DIMENSION.search(entry.defn), _MODEL.search(entry.defn)
        if entry.desc != "INDEX" or entry.namespace != "public" or not dimension or not model:
            continue
        named = model.group(1).replace("''", "'")
        if any(naming(named) == entry.tag for naming, _ in _MAKERS):
            found.append(ModelIndex(entry.tag, named, int(dimension.group(1))))
    return found


def check_dump(dump: Archive, reference: Archive, path: Path, migration: int) -> list[int]:
    """The ids of the entries of ``dump`` a restore runs, once every entry is one ``reference`` has with the same
    SQL; anything else raises ``InputError`` naming the first entry that is not, before anything is restored."""
    refused = f"nothing was restored: {path} "
    check_encoding(dump, path)
    if any(_CONTROL.search(text) for text in dump.header):
        raise InputError(f"{refused}is not a PaperPing backup: its header carries control characters")
    expected = {e.key: e for e in reference.entries}
    seen: set[tuple[str, str, str]] = set()
    ids: set[int] = set()
    chosen: list[int] = []
    for entry in dump.entries:
        if entry.key in seen:
            raise InputError(f"{refused}holds {shown(entry)} twice")
        # pg_restore -L takes entries by id: a second entry under a taken one's id would run too, unchecked
        if entry.dump_id <= 0 or entry.dump_id in ids:
            raise InputError(f"{refused}gives {shown(entry)} the id {entry.dump_id}, which is not its own")
        seen.add(entry.key)
        ids.add(entry.dump_id)
        if entry.desc in NEVER_RUN or entry.key in PUBLIC_SCHEMA:
            continue
        if entry.desc == "ENCODING" and _ENCODING.fullmatch(entry.defn):
            continue
        mine = expected.get(entry.key)
        if mine is None:
            raise InputError(
                f"{refused}holds {shown(entry)}, which PaperPing's schema {migration:04d} never makes. A restore "
                "takes a home's own tables and code only; back up a database that holds only a PaperPing home"
            )
        if not _same(entry, mine):
            raise InputError(
                f"{refused}holds {shown(entry)} with SQL other than PaperPing's migrations make (changed by hand "
                "or by another program); restore a backup that `paperping backup` wrote"
            )
        if entry.desc not in SPECIAL and entry.key not in LEFT_BEHIND:
            chosen.append(entry.dump_id)
    lacking = [e for e in reference.entries if e.key not in seen and e.desc not in NEVER_RUN | {"COMMENT"}]
    if lacking:
        raise InputError(f"{refused}lacks {shown(lacking[0])}, which PaperPing's schema {migration:04d} has")
    return chosen


def _same(entry: TocEntry, mine: TocEntry) -> bool:
    """The same SQL in every field pg_restore runs; a sequence's value (its ``setval``) may differ."""
    defn, wanted = entry.defn, mine.defn
    if entry.desc == "SEQUENCE SET":
        found, ours = _SETVAL.fullmatch(defn), _SETVAL.fullmatch(wanted)
        if not found or not ours or found.groups() != ours.groups():
            return False
        defn = wanted
    # an entry with data but no COPY has its data run as statements (how large objects' comments are restored)
    fields = (defn, entry.drop, entry.copy, entry.tablespace, entry.tableam, entry.has_data)
    return fields == (wanted, mine.drop, mine.copy, mine.tablespace, mine.tableam, mine.has_data)


def reference_archive(
    server: str, name: str, migration: int, tools: Path, indexes: Sequence[ModelIndex] = ()
) -> Archive:
    """The dump of an empty home at schema ``migration``, made by PaperPing's migrations in a scratch database
    ``NAME_checking`` of ``server`` (a connection to another database there), dropped afterwards; with the vector
    indexes PaperPing makes for the models of ``indexes``."""
    with _scratch(server, f"{name}_checking") as scratch, tempfile.TemporaryDirectory(prefix="paperping-") as folder:
        sql = Path(folder) / "sql"
        sql.mkdir()
        for m in load_migrations():
            if m.version <= migration:
                (sql / f"{m.version:04d}_{m.name}.sql").write_text(m.sql, encoding="utf-8")
        with psycopg.connect(scratch, autocommit=True) as conn:
            apply_migrations(conn, sql)
            for index in indexes:
                _make_model_index(conn, index)
        dump = Path(folder) / "reference.dump"
        with tool_dsn(scratch) as dsn:
            done = subprocess.run(
                [str(tools / "pg_dump"), "-Fc", "-f", str(dump), "-d", dsn], capture_output=True, text=True, check=False
            )
        if done.returncode != 0:
            raise DatabaseError(f"pg_dump of the reference schema failed: {done.stderr.strip()[-300:]}")
        return read_archive(dump)


def _make_model_index(conn: psycopg.Connection, index: ModelIndex) -> None:
    """The index PaperPing makes for ``index.model``, when that is ``index.name``. One it cannot make (a dimension
    that HNSW refuses, a table that schema lacks) stays out of the reference, so the check refuses the file's."""
    for naming, make in _MAKERS:
        if naming(index.model) != index.name:
            continue
        try:
            make(conn, index.model, index.dimension)
        except psycopg.DatabaseError:
            if conn.closed:
                raise


@contextmanager
def _scratch(server: str, name: str) -> Iterator[str]:
    with psycopg.connect(server, autocommit=True) as conn:
        homes.drop_database(conn, name, force=True)  # what a stopped restore left
        try:
            homes.create_database(conn, name)
        except psycopg.errors.InsufficientPrivilege as exc:
            raise DatabaseError(f"this database user may not create a database to check the backup in ({exc})") from exc
    try:
        yield with_dbname(server, name)
    finally:
        with psycopg.connect(server, autocommit=True) as conn:
            homes.drop_database(conn, name, force=True)
