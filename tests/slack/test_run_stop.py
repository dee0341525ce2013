"""`paperping run` stopping: a SIGTERM (what `docker stop` and `docker compose up` send before a SIGKILL 10 s
later) ends the process within that grace even while a job waits on a slow answer; the job's claim lapses and
another process, or the next start, takes the work over."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from socialrag import storage
from socialrag.db import Database
from socialrag.models import Channel
from tests.support.harness import SECRET, T, lab_state
from tests.support.slack_standin import SlackStandIn

ROOT = Path(__file__).resolve().parents[2]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wait(check: object, seconds: float, what: str) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return
        time.sleep(0.2)
    raise AssertionError(f"waited {seconds:.0f}s for {what}")


def _healthy(port: int) -> bool:
    try:
        return httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).text == "ok"
    except httpx.HTTPError:
        return False


def start_http_run(db: Database, tmp_path: Path, standin: SlackStandIn) -> tuple[subprocess.Popen[str], int]:
    """``paperping run --http`` started as a lab starts it (offline, home ``tmp_path``), answered by ``standin``;
    the process and its port."""
    port = _free_port()
    env = {
        **os.environ,
        "DATABASE_URL": db.conninfo,
        "SLACK_BOT_TOKEN": "xoxb-test",
        "SLACK_SIGNING_SECRET": SECRET,
        "SLACK_API_URL": standin.url,
        "PAPERPING_OFFLINE": "1",
        "PAPERPING_HOME": str(tmp_path),
    }
    proc = subprocess.Popen(
        [sys.executable, "-m", "bot.cli", "run", "--http", "--port", str(port)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return proc, port


@pytest.mark.slow
def test_sigterm_ends_the_process_within_dockers_grace_while_a_job_waits_on_slack(db: Database, tmp_path: Path) -> None:
    with db.connection() as conn:  # a channel whose member list was never read: the hourly sweep reads it at once
        storage.workspaces.upsert_team(conn, T, name="lab")
        storage.workspaces.upsert_channel(conn, Channel(T, "C1", "papers"))
        storage.settings.upsert_channel_setting(conn, T, "C1", active=True)
    standin = SlackStandIn(lab_state())
    standin.hold = lambda call: call.method == "conversations.members"  # Slack answers it after a minute
    standin.hold_seconds = 60.0
    standin.start()
    proc, port = start_http_run(db, tmp_path, standin)
    try:
        _wait(lambda: _healthy(port), 90, "paperping run to serve /healthz")
        _wait(lambda: standin.calls_to("conversations.members"), 30, "the member sweep to ask Slack")
        sent = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        try:
            out, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
        took = time.monotonic() - sent
    finally:
        standin.stop()
        if proc.poll() is None:
            proc.kill()
    assert took < 10, f"stopped {took:.1f}s after SIGTERM: Docker would have killed it at 10 s\n{err[-3000:]}"
    assert proc.returncode == 0, err[-3000:]
    assert "PaperPing stopped" in out
    assert "members" in err and "left to" in err, "the log says which work was cut short and that it resumes"
