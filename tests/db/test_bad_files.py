"""Bad files lose nothing good: each bad record is reported (file, position, reason) and skipped or cleaned,
the good records around it are kept, and a file that would take too much memory is refused."""

from __future__ import annotations

import gzip
import json
import struct
import tracemalloc
import zipfile
from pathlib import Path

import pytest

from bot.slack.workspace_export import import_export
from socialrag.db import Database
from socialrag.errors import InputError
from socialrag.knowledge.papers.local_catalog import import_catalog, iter_catalog
from tests.support.exports import msg, user, write_export
from tests.support.harness import count

ARXIV = "<https://arxiv.org/abs/1706.03762|Attention>"
T0 = 1_700_000_000


def test_bad_messages_are_reported_and_the_good_ones_around_them_kept(db: Database, tmp_path: Path) -> None:
    messages = [
        msg(T0 + 1, "U1", f"good one {ARXIV}"),
        msg(T0 + 2, "U1", "<https://arxiv.org/abs/2005.14165|GPT-3>", reply_count="many"),
        msg(T0 + 4, ["U1", "U2"], "<https://arxiv.org/abs/1910.10683|T5>"),  # type: ignore[arg-type]
        msg(T0 + 5, "U2", "nul\x00 inside <https://arxiv.org/abs/2001.08361|scaling>"),
        msg(
            T0 + 6,
            "U2",
            "<https://arxiv.org/abs/1409.0473|attention rnn>",
            reactions=[{"name": "+1", "users": "U1U3", "count": 2}, {"name": "eyes", "users": ["U3"], "count": 1}],
        ),
        msg(T0 + 7, "U1", f"good two {ARXIV}"),
    ]
    # a timestamp no day file could be named after, beside a good share of the next day
    odd_day = [
        {**msg(T0 + 3, "U1", "<https://arxiv.org/abs/1810.04805|BERT>"), "ts": "1e30"},
        msg(T0 + 86400, "U2", f"next day {ARXIV}"),
    ]
    export = write_export(
        tmp_path / "e.zip",
        {"lab": ("C1", ["U1", "U2"], messages)},
        [user("U1", "a"), user("U2", "b")],
        raw_files={"lab/2023-11-15.json": json.dumps(odd_day).encode()},
    )
    report = import_export(db, export, progress=False)
    assert count(db, "SELECT count(*) FROM messages") == 5, "the good ones, the cleaned one, the one with bad reactions"
    assert count(db, "SELECT count(*) FROM messages WHERE text LIKE '%%\\x00%%'") == 0
    assert (
        count(db, "SELECT count(*) FROM messages WHERE text = 'nul inside <https://arxiv.org/abs/2001.08361|scaling>'")
        == 1
    )
    assert count(db, "SELECT count(*) FROM reactions") == 1, "users given as a string are not read letter by letter"
    text = "\n".join(report.problems)
    assert "reply_count 'many' is not a count" in text and "'1e30' is not a Slack timestamp" in text
    assert "user" in text and "is not a member id" in text
    assert all(
        p.startswith(("lab/2023-11-14.json, message ", "lab/2023-11-15.json, message 2 ")) for p in report.problems
    )
    assert len(report.problems) == 3, report.problems


def test_unreadable_users_or_channels_files(db: Database, tmp_path: Path) -> None:
    good = [msg(T0 + 1, "U1", f"good {ARXIV}")]
    export = write_export(tmp_path / "u.zip", {"lab": ("C1", ["U1"], good)}, [user("U1", "a")])
    broken_users = tmp_path / "bad-users.zip"
    with zipfile.ZipFile(export) as src, zipfile.ZipFile(broken_users, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, b"{not json" if item.filename == "users.json" else src.read(item))
    with pytest.raises(InputError, match="--team-id"):
        import_export(db, broken_users, progress=False)
    report = import_export(db, broken_users, team_id="T0LAB", progress=False)
    assert report.problems == [
        "users.json: could not be read (Expecting property name enclosed in double quotes: line 1 column 2 (char 1))"
    ]
    assert count(db, "SELECT count(*) FROM messages") == 1
    broken_channels = tmp_path / "bad-channels.zip"
    with zipfile.ZipFile(export) as src, zipfile.ZipFile(broken_channels, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, b"[{" if item.filename == "channels.json" else src.read(item))
    with pytest.raises(InputError, match=r"without a readable channels\.json"):
        import_export(db, broken_channels, progress=False)


def _damage_entry(export: Path, name: str) -> None:
    """Overwrite one zip entry's compressed bytes in place: ``0xff`` starts a deflate block of the reserved type,
    which no deflate stream holds, so inflating it fails at once."""
    with zipfile.ZipFile(export) as zf:
        info = zf.getinfo(name)
    with export.open("r+b") as fh:
        fh.seek(info.header_offset + 26)
        name_len, extra_len = struct.unpack("<HH", fh.read(4))
        fh.seek(info.header_offset + 30 + name_len + extra_len)
        fh.write(b"\xff" * info.compress_size)


def test_a_damaged_day_file_is_reported_by_name_and_the_other_days_imported(db: Database, tmp_path: Path) -> None:
    days = [msg(T0 + 1, "U1", f"first day {ARXIV}"), msg(T0 + 86400, "U1", f"second day {ARXIV}")]
    days.append(msg(T0 + 2 * 86400, "U1", f"third day {ARXIV}"))
    export = write_export(tmp_path / "d.zip", {"lab": ("C1", ["U1"], days)}, [user("U1", "a")])
    _damage_entry(export, "lab/2023-11-15.json")
    report = import_export(db, export, progress=False)
    assert report.problems == [
        "lab/2023-11-15.json: could not be read (its compressed data is damaged: Error -3 while decompressing data: "
        "invalid block type); skipped"
    ]
    assert count(db, "SELECT count(*) FROM messages") == 2
    assert count(db, "SELECT count(*) FROM messages WHERE text LIKE 'second day%%'") == 0


def test_a_users_file_nested_too_deeply_is_reported_in_a_sentence(db: Database, tmp_path: Path) -> None:
    good = [msg(T0 + 1, "U1", f"good {ARXIV}")]
    export = write_export(tmp_path / "e.zip", {"lab": ("C1", ["U1"], good)}, [])
    deep = tmp_path / "n.zip"
    with zipfile.ZipFile(export) as src, zipfile.ZipFile(deep, "w") as dst:
        for item in src.infolist():
            dst.writestr(item, b"[" * 100_000 if item.filename == "users.json" else src.read(item))
    with pytest.raises(InputError, match=r"^users\.json: .*nested too deeply.*pass --team-id"):
        import_export(db, deep, progress=False)
    report = import_export(db, deep, team_id="T0LAB", progress=False)
    assert report.problems == ["users.json: could not be read (its JSON is nested too deeply to read)"]
    assert count(db, "SELECT count(*) FROM messages") == 1


def _damaged_catalog(path: Path, how: str) -> int:
    """A gzip catalog of 2,000 good lines, damaged as told; returns how many lines it holds."""
    lines = b"".join(
        json.dumps({"acl_id": f"2020.x-{i}", "title": f"Paper {i} " + "w" * (i % 97)}).encode() + b"\n"
        for i in range(2000)
    )
    packed = gzip.compress(lines)
    if how == "cut short":
        path.write_bytes(packed[: len(packed) // 2])
    else:  # a second gzip member whose deflate data is not deflate
        path.write_bytes(packed + gzip.compress(b"x" * 1000)[:10] + b"\xff" * 64)
    return 2000


@pytest.mark.parametrize("how", ["cut short", "corrupt"])
def test_a_damaged_gzip_catalog_keeps_the_lines_before_the_damage(db: Database, tmp_path: Path, how: str) -> None:
    path = tmp_path / "catalog.jsonl.gz"
    total = _damaged_catalog(path, how)
    report = import_catalog(db, path)
    assert 0 < report.papers <= total
    if how == "corrupt":
        assert report.papers == total
    assert count(db, "SELECT count(*) FROM papers") == report.papers
    (problem,) = report.problems
    assert problem.startswith(
        f"catalog.jsonl.gz: reading stopped at line {report.papers + 1}, where the file is damaged ("
    )
    assert problem.endswith("the lines before it were read, the rest could not be")


def test_a_day_file_that_inflates_is_refused_and_the_rest_imported(db: Database, tmp_path: Path) -> None:
    good = [msg(T0 + 1, "U1", f"good {ARXIV}")]
    bomb = b"[" + b" " * (200 * 2**20) + b"]"  # 200 MB of spaces: a few hundred KB zipped
    export = write_export(
        tmp_path / "b.zip", {"lab": ("C1", ["U1"], good)}, [user("U1", "a")], raw_files={"lab/2023-11-15.json": bomb}
    )
    assert export.stat().st_size < 2 * 2**20
    report = import_export(db, export, progress=False)
    assert count(db, "SELECT count(*) FROM messages") == 1
    assert len(report.problems) == 1 and report.problems[0].startswith(
        "lab/2023-11-15.json: could not be read (it is 200 MB"
    )


def test_a_day_file_under_the_size_limit_that_inflates_a_thousandfold_is_refused(db: Database, tmp_path: Path) -> None:
    """The zip's header says so before anything is unpacked: 20 MB of spaces, under the 24 MB limit, from 20 KB."""
    good = [msg(T0 + 1, "U1", f"good {ARXIV}")]
    bomb = b"[" + b" " * (20 * 2**20) + b"]"
    export = write_export(
        tmp_path / "r.zip", {"lab": ("C1", ["U1"], good)}, [user("U1", "a")], raw_files={"lab/2023-11-15.json": bomb}
    )
    report = import_export(db, export, progress=False)
    assert count(db, "SELECT count(*) FROM messages") == 1
    (problem,) = report.problems
    assert (
        problem.startswith("lab/2023-11-15.json: could not be read (it inflates ") and "which no export does" in problem
    )


def test_bad_catalog_lines_are_reported_and_the_rest_imported(db: Database, tmp_path: Path) -> None:
    def line(i: int, **extra: object) -> bytes:
        return json.dumps({"acl_id": f"2020.x-{i}", "title": f"Paper {i}", "abstract": "text", **extra}).encode()

    path = tmp_path / "catalog.jsonl.gz"
    with gzip.open(path, "wb") as fh:
        fh.write(
            b"\n".join(
                [
                    line(1),
                    line(2, year=10**12),
                    b'{"acl_id": "2020.x-3", "title": "caf\xe9 not utf-8"}',
                    line(4, title="nul\x00 title"),
                    b"[1, 2]",
                    line(6, popularity=1e300),
                    line(7),
                    b"[" * 200_000,  # deeper than Python's JSON parser goes
                ]
            )
            + b"\n"
        )
    report = import_catalog(db, path)
    assert report.papers == 3
    text = "\n".join(report.problems)
    assert "line 2: year 1000000000000 is not a publication year" in text
    assert "line 3:" in text and "utf-8" in text and "line 5: is not a JSON object" in text
    assert "line 6: popularity" in text
    assert "line 8: its JSON is nested too deeply to read; skipped" in text
    assert count(db, "SELECT count(*) FROM papers WHERE title = 'nul title'") == 1


def _overlong_catalog(path: Path) -> None:
    """Good lines around three too long to read: a title of 3 MB, an object followed by 2 MB of spaces and then
    junk (its first megabyte alone reads as JSON), and 64 MB of one line (a few hundred KB gzipped)."""
    good = [json.dumps({"acl_id": f"2020.x-{i}", "title": f"Paper {i}"}).encode() + b"\n" for i in range(6)]
    pieces: list[bytes] = [good[0], b'{"acl_id": "2020.x-long", "title": "' + b"t" * 3 * 2**20 + b'"}\n', good[2]]
    pieces += [b'{"acl_id": "2020.x-spaced"}' + b" " * 2 * 2**20 + b"junk\n", good[4], b"x" * 64 * 2**20 + b"\n"]
    pieces.append(good[5].rstrip(b"\n"))  # the last line, with no newline
    opener = gzip.open if path.suffix == ".gz" else open
    with opener(path, "wb") as fh:
        for piece in pieces:
            fh.write(piece)


@pytest.mark.parametrize("name", ["catalog.jsonl", "catalog.jsonl.gz"])
def test_an_overlong_catalog_line_is_skipped_unread_and_the_lines_after_it_imported(
    db: Database, tmp_path: Path, name: str
) -> None:
    path = tmp_path / name
    _overlong_catalog(path)
    tracemalloc.start()
    try:
        problems: list[str] = []
        read = sum(1 for _ in iter_catalog(path, problems))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert read == 4 and peak < 8 * 2**20, f"{peak / 2**20:.1f} MB held to read lines of up to 64 MB"
    report = import_catalog(db, path)
    assert report.papers == 4
    assert report.problems == [f"{name} line {n}: longer than 1 MB, which no paper needs; skipped" for n in (2, 4, 6)]
    assert count(db, "SELECT count(*) FROM paper_ids WHERE value IN ('2020.x-long', '2020.x-spaced')") == 0
    assert count(db, "SELECT count(*) FROM paper_ids WHERE value = '2020.x-5'") == 1
