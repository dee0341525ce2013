"""The embedded Postgres's folders: nobody but its owner (and its group) may write there."""

from __future__ import annotations

import stat
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from socialrag.db import restrict_permissions


def test_the_socket_and_data_folders_are_not_world_writable(pg_server_uri: str) -> None:
    socket_dir = Path(parse_qs(urlsplit(pg_server_uri).query)["host"][0])
    for path in (socket_dir, socket_dir.parent):
        assert not path.stat().st_mode & stat.S_IWOTH, path


def test_restrict_permissions_closes_world_write(tmp_path: Path) -> None:
    folder = tmp_path / "sock"
    folder.mkdir()
    folder.chmod(0o777)
    restrict_permissions(folder, None, tmp_path / "missing")
    assert stat.S_IMODE(folder.stat().st_mode) == 0o775
