"""The operator's command line given what an operator mistypes: a replay date in the future, a number out of reason,
the wrong workspace to purge; and stored text shown in a terminal. Each is refused with a sentence, before any work,
and nothing stored changes."""

from __future__ import annotations

import os
import resource
import signal
import stat
import subprocess
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import pytest

from bot.cli import main
from socialrag import storage
from socialrag.db import Database
from tests.support.read_papers import open_channel, share_paper


@pytest.fixture
def env(db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Database:
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    with db.connection() as conn:
        share_paper(conn, ("T1", "C1"), "1.0", datetime(2024, 1, 1, tzinfo=UTC), "10.1/a", "A paper", "Its abstract.")
        open_channel(conn, ("T1", "C1"), "lab")
    return db


def test_a_replay_date_in_the_future_is_refused_and_no_fit_is_stored(
    env: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """`refit --as-of 2999-01-01` (a mistyped year) would store a fit dated then: the channel's ranking until that
    date, never refitted by the scheduler, since its latest fit would always look new."""
    for command in (
        ["refit", "lab", "--as-of", "2999-01-01"],
        ["recommend", "lab", "--as-of", "2999-01-01"],
        ["ask", "lab", "what did we read", "--as-of", "2999-01-01"],
    ):
        assert main(command) == 2, command
        assert "--as-of replays the past: 2999-01-01 is later than now" in capsys.readouterr().err
    with env.connection() as conn:
        assert conn.execute("SELECT count(*) FROM channel_rankers").fetchone() == (0,)
    assert main(["refit", "lab", "--as-of", "2024-06-01"]) == 0  # a past date is a backtest, as before
    assert "stored with that date" in capsys.readouterr().out


@pytest.mark.parametrize("warmup", ["-3", "0", "100001"])
def test_eval_refuses_a_warmup_out_of_reason(env: Database, capsys: pytest.CaptureFixture[str], warmup: str) -> None:
    assert main(["eval", "lab", "--warmup", warmup]) == 2
    assert "--warmup takes a number of shared papers from 1 to 100,000" in capsys.readouterr().err


def test_eval_on_a_channel_with_one_share_says_there_is_nothing_to_replay(
    env: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["eval", "lab", "--warmup", "1"]) == 0
    assert "#lab: nothing to replay yet" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("url", "said"),
    [
        ("postgresql://paperping:sec ret@localhost/paperping", "cannot be read as a Postgres address"),
        ("postgresql://paperping:p@ss/word@localhost/paperping", "more than one @"),
        ("not an address", "cannot be read as a Postgres address"),
        ("postgresql://paperping:ss/word@localhost/paperping", "port is not a number"),
        ("postgresql://paperping:word@/paperping?host=/nonexistent-pp", "cannot connect to the database"),
    ],
)
def test_a_database_url_it_cannot_use_is_said_without_its_password(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str], url: str, said: str
) -> None:
    """A password with a space or an @ not percent-encoded, or a server not there: one sentence, not a traceback,
    and the password is not in it (what libpq says of an address it cannot read quotes that part)."""
    monkeypatch.setenv("DATABASE_URL", url)
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    assert main(["migrate"]) == 2
    err = capsys.readouterr().err
    assert said in err and err.startswith("paperping: ")
    assert "sec ret" not in err and "ss/word" not in err and "'ss'" not in err


def test_purge_says_what_it_takes_and_a_workspace_not_stored_is_said_so(
    env: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """The admin sees the workspace's channels and counts before adding --yes; a mistyped id deletes nothing and
    says which ids are stored, rather than 'deleted 0 channels'."""
    assert main(["purge", "--team", "T1"]) == 2
    err = capsys.readouterr().err
    assert "workspace T1: 1 channels (#lab), 1 messages and replies, 3 members" in err and "add --yes" in err
    assert main(["purge", "--team", "T7", "--yes"]) == 2
    assert "no workspace T7 is stored, so nothing was deleted; stored: T1" in capsys.readouterr().err
    with env.connection() as conn:
        assert conn.execute("SELECT count(*) FROM messages WHERE team_id = 'T1'").fetchone() == (1,)
    assert main(["purge", "--team", "T1", "--yes"]) == 0
    assert "workspace T1: deleted 1 channels, 1 messages" in capsys.readouterr().out


def test_a_home_whose_path_has_a_space_is_refused_before_anything_is_made(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The embedded server is started with its folder unquoted in its options: in "My Lab/paperping" it made a
    half home and failed with pg_ctl's command line. Now one sentence says what to set, and nothing is made."""
    home = tmp_path / "My Lab ü" / "paperping"
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.setenv("PAPERPING_HOME", str(home))
    assert main(["migrate"]) == 2
    assert "path has a space" in capsys.readouterr().err
    assert not (home / "pgdata").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["recommend", "lab", "--as-of", "0001-01-01"],
        ["refit", "lab", "--as-of", "0001-01-01T00:00+05:00"],
        ["ask", "lab", "what did we read", "--as-of", "1900-01-01"],
        ["report", "lab", "--since", "0001-01-01"],
        ["report", "lab", "--since", "9999-12-31"],
    ],
)
def test_a_time_out_of_every_history_is_refused_in_a_sentence(
    env: Database, capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str]
) -> None:
    """Year 1 or 9999 (a mistyped year) ended in an OverflowError or matplotlib's ValueError, as a traceback."""
    assert main([*argv, *(["--out", str(tmp_path / "r")] if argv[0] == "report" else [])]) == 2
    assert "takes a time from 1970 to 2099" in capsys.readouterr().err


def test_a_file_that_cannot_be_written_is_said_in_a_sentence(
    env: Database, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """`export --out` into a folder not there, or onto a folder, `backup` onto a folder, and `report --out` onto a
    file ended in a traceback; the backup after the whole dump was taken."""
    (tmp_path / "dir").mkdir()
    assert main(["export", "lab", "--out", str(tmp_path / "nope" / "lab.bib")]) == 2
    assert "could not write" in capsys.readouterr().err
    assert main(["export", "lab", "--out", str(tmp_path / "dir")]) == 2
    assert "could not write" in capsys.readouterr().err
    assert main(["backup", str(tmp_path / "dir")]) == 2
    assert "is a folder: give the backup a file name" in capsys.readouterr().err
    (tmp_path / "file").write_text("not a folder")
    assert main(["backup", str(tmp_path / "file" / "b.dump")]) == 2
    assert "could not write the backup" in capsys.readouterr().err
    assert main(["report", "lab", "--out", str(tmp_path / "file")]) == 2
    assert "could not write the report into" in capsys.readouterr().err
    assert list((tmp_path / "dir").iterdir()) == []


HOSTILE = "\x1b]52;c;cm0gLXJmIH4=\x07\x1b[2J"  # OSC 52 writes the operator's clipboard, CSI 2J clears the screen


def _escaped(said: str) -> None:
    assert "\x1b" not in said and "\x07" not in said, said
    assert "\\x1b]52;c;" in said, said  # shown, escaped


def test_what_an_admin_typed_or_a_workspace_stored_reaches_the_terminal_shown_never_obeyed(
    env: Database, capsys: pytest.CaptureFixture[str]
) -> None:
    """`zotero-group --team`, a workspace id stored from an export, a channel's name and a channel named on the
    command line can carry a terminal's escape sequences: each command prints them escaped (before, `zotero-group`,
    `status` and the sentence of a refused command printed them as they were)."""
    assert main(["zotero-group", "4242", "--team", f"T1{HOSTILE}"]) == 2
    _escaped(capsys.readouterr().err)
    with env.connection() as conn:
        storage.workspaces.upsert_team(conn, f"T9{HOSTILE}", "Another lab")
    assert main(["zotero-group", "4242", "--team", f"T9{HOSTILE}"]) == 0
    _escaped(capsys.readouterr().out)
    assert main(["zotero-group", "4242", "--team", "T1"]) == 0
    said = capsys.readouterr().out
    _escaped(said)
    assert said.startswith("Zotero group 4242 now belongs to workspace T1 (it was T9\\x1b]52;")
    for command in (["export", f"lab{HOSTILE}"], ["status", "--channel", f"lab{HOSTILE}"]):
        assert main(command) == 2, command
        _escaped(capsys.readouterr().err)
    with env.connection() as conn:  # as an export's channels.json may have it
        conn.execute("UPDATE channels SET name = name || %(h)s", {"h": HOSTILE})
    assert main(["status"]) == 0
    _escaped(capsys.readouterr().out)


def _limited(limit: int) -> Callable[[], None]:
    """What a process runs first to fail any write past ``limit`` bytes of a file (EFBIG), as a full disk would."""

    def limit_writes() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails rather than kills
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))

    return limit_writes


def _run_limited(argv: list[str], limit: int) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "bot.cli", *argv],
        env=os.environ, preexec_fn=_limited(limit), capture_output=True, text=True, timeout=180, check=False,
    )  # fmt: skip


def test_an_export_that_fails_mid_write_keeps_the_last_export_whole(
    env: Database, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The disk fills while `export --out` writes over last week's file (here: a file size limit, which fails a
    write past it as a full disk does). Before, the file was cut short; now the last export stays whole, and no
    half file is left beside it."""
    with env.connection() as conn:
        for i in range(8):
            pid = share_paper(conn, ("T1", "C1"), f"{2 + i}.0", datetime(2024, 1, 2, tzinfo=UTC), f"10.1/p{i}",
                              f"A long enough title for paper number {i}", None)  # fmt: skip
            storage.reading_list.save_paper(conn, "T1", "C1", pid, "U1", datetime(2024, 2, 1, tzinfo=UTC))
        open_channel(conn, ("T1", "C1"), "lab")
    out = tmp_path / "lab.bib"
    last = "% last week's export\n" * 15  # 315 bytes, the limit below is 400, the new export is longer
    out.write_text(last)
    done = _run_limited(["export", "lab", "--out", str(out)], 400)
    assert done.returncode == 2, done.stderr
    assert "could not write" in done.stderr
    assert out.read_text() == last
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".lab.bib")] == []
    assert main(["export", "lab", "--out", str(out)]) == 0  # with room, the new export takes its place
    assert out.read_text().count("@") == 8 and out.stat().st_size > 400
    assert "8 saved papers written" in capsys.readouterr().err


def test_a_report_that_fails_mid_write_keeps_the_last_report_whole(env: Database, tmp_path: Path) -> None:
    """`report --out` over last month's folder as the disk fills: its pictures and page stay as they were (before,
    the first picture written was cut short)."""
    out = tmp_path / "report"
    assert main(["report", "lab", "--out", str(out)]) == 0
    last = {p.name: p.read_bytes() for p in out.iterdir()}
    assert "index.html" in last and "activity.png" in last and len(last["activity.png"]) > 2000
    done = _run_limited(["report", "lab", "--out", str(out)], 2000)
    assert done.returncode == 2, done.stderr
    assert "could not write the report into" in done.stderr
    assert {p.name: p.read_bytes() for p in out.iterdir()} == last


def test_an_export_to_a_pipe_is_written_to_it(env: Database) -> None:
    """`export --out /dev/stdout` (a pipe here) has no file to keep: it is written to as before."""
    with env.connection() as conn:
        pid = share_paper(conn, ("T1", "C1"), "2.0", datetime(2024, 1, 2, tzinfo=UTC), "10.1/p", "A paper", None)
        storage.reading_list.save_paper(conn, "T1", "C1", pid, "U1", datetime(2024, 2, 1, tzinfo=UTC))
        open_channel(conn, ("T1", "C1"), "lab")
    done = subprocess.run(
        [sys.executable, "-m", "bot.cli", "export", "lab", "--out", "/dev/stdout"],
        env=os.environ, capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("@") and "A paper" in done.stdout, done.stdout


def test_an_export_over_a_private_file_is_never_readable_by_others_while_written(
    env: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Last week's export was made private (mode 600). The new one was written whole into a file beside it made
    with the umask's mode (here 644), and only then given the old file's mode: meanwhile any local user could open
    it and read the list. Now the file beside it is made with the old file's mode from the start."""
    with env.connection() as conn:
        pid = share_paper(conn, ("T1", "C1"), "2.0", datetime(2024, 1, 2, tzinfo=UTC), "10.1/p", "A paper", None)
        storage.reading_list.save_paper(conn, "T1", "C1", pid, "U1", datetime(2024, 2, 1, tzinfo=UTC))
        open_channel(conn, ("T1", "C1"), "lab")
    out = tmp_path / "lab.bib"
    out.write_text("% last week's export\n")
    out.chmod(0o600)
    modes: list[int] = []
    real_fsync = os.fsync

    def fsync_noting_mode(fd: int) -> None:  # the file's mode once its content is written, before it is in place
        modes.append(stat.S_IMODE(os.fstat(fd).st_mode))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_noting_mode)
    old_umask = os.umask(0o022)
    try:
        assert main(["export", "lab", "--out", str(out)]) == 0
    finally:
        os.umask(old_umask)
    assert modes and all(m & 0o077 == 0 for m in modes), [oct(m) for m in modes]
    assert stat.S_IMODE(out.stat().st_mode) == 0o600 and "A paper" in out.read_text()
