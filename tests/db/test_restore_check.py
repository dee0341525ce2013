"""``restore_check.check_dump`` on tables of contents made by hand: a restore takes an entry only when its SQL is
the one PaperPing's migrations make, leaves privileges behind, and refuses the whole file, naming the entry, on
anything else (another extension, another sequence, a missing table's rows, a header with control characters);
``pgtools.read_archive`` refuses a file that is not a custom-format dump; what ``move-to`` prints hides the
password however the URL gives it. No database is used; the file lives here because the modules it tests import
the driver."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from socialrag.cli.restore_check import check_dump
from socialrag.errors import InputError
from socialrag.pgtools import Archive, TocEntry, read_archive

FILE = Path("home.dump")


def entry(dump_id: int, desc: str, namespace: str, tag: str, defn: str = "", copy: str = "") -> TocEntry:
    return TocEntry(dump_id, desc, namespace, tag, defn, "", copy, "", "heap" if desc == "TABLE" else "")


REFERENCE = Archive(
    ("paperping", "18.4", "18.4"),
    (
        entry(1, "ENCODING", "", "ENCODING", "SET client_encoding = 'UTF8';\n"),
        entry(2, "SEARCHPATH", "", "SEARCHPATH", "SELECT pg_catalog.set_config('search_path', '', false);\n"),
        entry(3, "EXTENSION", "", "vector", "CREATE EXTENSION IF NOT EXISTS vector WITH SCHEMA public;\n"),
        entry(4, "COMMENT", "", "EXTENSION vector", "COMMENT ON EXTENSION vector IS 'vector data type';\n"),
        entry(5, "TABLE", "public", "authors", "CREATE TABLE public.authors (id bigint NOT NULL);\n"),
        entry(6, "SEQUENCE", "public", "authors_id_seq", "CREATE SEQUENCE public.authors_id_seq;\n"),
        entry(7, "TABLE DATA", "public", "authors", copy="COPY public.authors (id) FROM stdin;\n"),
        entry(8, "SEQUENCE SET", "public", "authors_id_seq", "SELECT pg_catalog.setval('public.authors_id_seq', 1, false);\n"),
    ),
)  # fmt: skip


def dump(*entries: TocEntry, header: tuple[str, ...] = REFERENCE.header) -> Archive:
    return Archive(header, (*REFERENCE.entries, *entries))


def refusal(archive: Archive) -> str:
    with pytest.raises(InputError) as caught:
        check_dump(archive, REFERENCE, FILE, 33)
    assert "nothing was restored" in str(caught.value)
    return str(caught.value)


def test_paperpings_own_entries_are_taken_and_the_header_and_comment_left() -> None:
    assert check_dump(REFERENCE, REFERENCE, FILE, 33) == [3, 5, 6, 7, 8]


def test_a_sequence_keeps_its_value_but_not_another_statement() -> None:
    at_42 = replace(REFERENCE.entries[7], defn="SELECT pg_catalog.setval('public.authors_id_seq', 42, true);\n")
    assert check_dump(Archive(REFERENCE.header, (*REFERENCE.entries[:7], at_42)), REFERENCE, FILE, 33)
    for hostile in (
        "SELECT pg_catalog.setval('public.other_seq', 42, true);\n",
        "SELECT pg_catalog.setval('public.authors_id_seq', 42, true); CREATE ROLE x SUPERUSER;\n",
    ):
        swapped = replace(REFERENCE.entries[7], defn=hostile)
        assert "SEQUENCE SET public authors_id_seq with SQL other than" in refusal(
            Archive(REFERENCE.header, (*REFERENCE.entries[:7], swapped))
        )


@pytest.mark.parametrize(
    ("extra", "named"),
    [
        (entry(20, "EXTENSION", "", "pg_trgm", "CREATE EXTENSION pg_trgm;\n"), "EXTENSION - pg_trgm"),
        (entry(21, "EVENT TRIGGER", "", "planted", "CREATE EVENT TRIGGER planted ...;\n"), "EVENT TRIGGER - planted"),
        (entry(22, "FUNCTION", "public", "planted()", "CREATE FUNCTION public.planted() ...;\n"), "FUNCTION public"),
        (entry(23, "COMMENT", "public", "TABLE authors", "COMMENT ON TABLE public.authors IS 'x';\n"), "COMMENT"),
        (entry(24, "SCHEMA", "", "planted", "CREATE SCHEMA planted;\n"), "SCHEMA - planted"),
    ],
)
def test_anything_paperping_never_makes_refuses_the_whole_file(extra: TocEntry, named: str) -> None:
    message = refusal(dump(extra))
    assert named in message and "never makes" in message


def test_what_a_restore_never_runs_is_left_behind() -> None:
    """Privileges (restored with --no-privileges: never), the database's own entry (no --create) and the public
    schema every database has: a backup of a managed Postgres carries them."""
    extra = (
        entry(30, "ACL", "public", "TABLE authors", "GRANT SELECT ON TABLE public.authors TO anon;\n"),
        entry(31, "DEFAULT ACL", "public", "DEFAULT PRIVILEGES FOR TABLES", "ALTER DEFAULT PRIVILEGES ...;\n"),
        entry(32, "DATABASE", "", "paperping", "CREATE DATABASE paperping;\n"),
        entry(33, "SCHEMA", "", "public", "CREATE SCHEMA public;\n"),
    )
    assert check_dump(dump(*extra), REFERENCE, FILE, 33) == [3, 5, 6, 7, 8]


def test_a_changed_definition_a_missing_entry_or_a_repeated_one_is_refused() -> None:
    changed = replace(REFERENCE.entries[4], defn="CREATE TABLE public.authors (id bigint DEFAULT public.f());\n")
    assert "TABLE public authors with SQL other than" in refusal(
        Archive(REFERENCE.header, (*REFERENCE.entries[:4], changed, *REFERENCE.entries[5:]))
    )
    copy = replace(REFERENCE.entries[6], copy="CREATE ROLE x;\nCOPY public.authors (id) FROM stdin;\n")
    assert "TABLE DATA public authors" in refusal(
        Archive(REFERENCE.header, (*REFERENCE.entries[:6], copy, REFERENCE.entries[7]))
    )
    path = replace(REFERENCE.entries[1], defn="SET ROLE postgres; SELECT 1;\n")
    assert "SEARCHPATH" in refusal(Archive(REFERENCE.header, (REFERENCE.entries[0], path, *REFERENCE.entries[2:])))
    without_rows = Archive(REFERENCE.header, tuple(e for e in REFERENCE.entries if e.desc != "TABLE DATA"))
    assert "lacks TABLE DATA public authors" in refusal(without_rows)
    assert "twice" in refusal(dump(replace(REFERENCE.entries[4], dump_id=40)))


def test_a_header_or_name_with_control_characters_is_refused_and_never_printed() -> None:
    assert "control characters" in refusal(dump(header=("paperping", "18.4\nCREATE ROLE x;", "18.4")))
    message = refusal(dump(entry(50, "TABLE", "public", "x\n\x1b[2Jcleared", "CREATE TABLE ...;\n")))
    assert "\n" not in message and "\x1b" not in message


def test_a_file_that_is_not_a_custom_format_dump(tmp_path: Path) -> None:
    for content in (b"not a dump", b"PGDMP\x01\x0e\x00\x08\x08\x01", b"PGDMP\x01\x0f\x00\x04\x08\x03"):
        (tmp_path / "x.dump").write_bytes(content)
        with pytest.raises(ValueError):
            read_archive(tmp_path / "x.dump")


def test_an_entry_with_data_it_should_not_have_or_anothers_id_is_refused() -> None:
    """Data with no COPY before it is run as statements by pg_restore, and ``-L`` takes every entry of a listed id:
    an entry of PaperPing's own SQL that says it has data, or an entry left behind under a taken id, is refused."""
    with_data = replace(REFERENCE.entries[2], has_data=1)
    assert "EXTENSION - vector with SQL other than" in refusal(
        Archive(REFERENCE.header, (*REFERENCE.entries[:2], with_data, *REFERENCE.entries[3:]))
    )
    twin = entry(5, "COMMENT", "", "SCHEMA public", "CREATE ROLE planted SUPERUSER;\n")
    assert "the id 5" in refusal(dump(twin))
    assert "the id 0" in refusal(dump(entry(0, "ACL", "public", "TABLE authors")))


def _integer(value: int) -> bytes:
    """An integer as pg_dump writes it: a sign byte, then four bytes."""
    return b"\x00" + value.to_bytes(4, "little")


def _text(value: str) -> bytes:
    return _integer(len(value.encode())) + value.encode()


HEADER_1_14 = b"PGDMP\x01\x0e\x00\x04\x08\x01" + _integer(0) * 8  # archive 1.14: compression, the time


def test_an_integer_pg_restore_would_read_as_another_is_refused(tmp_path: Path) -> None:
    """pg_restore reads four bytes into a C int: 2**31 and up wrap to another number than Python's."""
    (tmp_path / "x.dump").write_bytes(HEADER_1_14 + b"\x00\x05\x00\x00\x80")  # the database's name: 2**31 + 5 long
    with pytest.raises(ValueError, match="out of range"):
        read_archive(tmp_path / "x.dump")


def _toc_file(path: Path, dump_id: int) -> Path:
    """The start of a custom-format file (archive 1.14) whose first entry has ``dump_id``."""
    names = _text("pp") + _text("16.4") + _text("16.4")  # the database, the server, pg_dump
    entry = _integer(dump_id) + _integer(0)  # its id and whether it has data: what is read first
    path.write_bytes(HEADER_1_14 + names + _integer(1) + entry)
    return path


def test_an_entry_id_no_home_gives_is_refused_before_pg_restore_reads_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """pg_restore sizes its tables by the largest id it reads: PaperPing reads the ids first."""
    with pytest.raises(ValueError, match="the id 2000000000, which no home's dump gives"):
        read_archive(_toc_file(tmp_path / "huge.dump", 2_000_000_000))
    from bot.cli import main

    assert main(["restore", str(tmp_path / "huge.dump")]) == 2
    assert "cannot be read as a backup" in capsys.readouterr().err


@pytest.mark.parametrize(
    "url",
    [
        "host=db.example dbname=pp user=paper password=s3cr3t",
        "host=db.example password = 's3cr3t with spaces' dbname=pp",
        "postgresql://paper@db.example/pp?sslmode=require&password=s3cr3t",
        "postgresql://paper:s3cr3t@db.example/pp",
    ],
)
def test_move_to_prints_the_url_without_its_password(url: str) -> None:
    """What ``paperping move-to`` prints may end in a terminal's log or a CI's: a password given as a keyword or a
    URL's parameter is hidden as one in the URL's user part is."""
    from socialrag.cli.backups import hide_password

    shown = hide_password(url)
    assert "s3cr3t" not in shown and "****" in shown and ("db.example" in shown), shown


def test_the_programs_give_up_on_a_server_that_never_answers() -> None:
    """pg_dump and pg_restore are given a connection timeout, unless the admin's URL sets its own."""
    from psycopg.conninfo import conninfo_to_dict

    from socialrag.pgtools import CONNECT_SECONDS, tool_dsn

    with tool_dsn("postgresql://paper:pw@db.example/pp") as dsn:
        assert conninfo_to_dict(dsn)["connect_timeout"] == str(CONNECT_SECONDS)
    with tool_dsn("postgresql://paper@db.example/pp?connect_timeout=3") as dsn:
        assert conninfo_to_dict(dsn)["connect_timeout"] == "3"
