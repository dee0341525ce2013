"""The channel report: on the demo lab, under hostile text, on a generated channel of 10,000 shares, and
(where Debian's chromium is installed) as a browser renders it."""

from __future__ import annotations

import re
import shutil
import subprocess
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from bot.cli import main
from socialrag.db import Database
from socialrag.report.data import load_report_data
from socialrag.report.page import write_report
from socialrag.storage.reports import load_headline
from tests.labbase import CachedEmbedder, build_lab

T = "T0LAB"


def no_network(page: str) -> None:
    """Nothing the page would fetch: no script, no external style, image or font."""
    assert "<script" not in page.lower()
    assert not re.search(r"""(?:src|href)\s*=\s*["']?(?:https?:)?//""", page), "a link the browser would fetch"
    assert "@import" not in page and "url(http" not in page


def test_report_of_the_lab_channel(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    build_lab(db, tmp_path, CachedEmbedder())
    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    out = tmp_path / "report"
    assert main(["report", "nlp-lab", "--out", str(out)]) == 0
    page = (out / "index.html").read_text()
    no_network(page)
    assert page.count("<svg") == 6 and all((out / f"{n}.png").stat().st_size > 5_000 for n in ("activity", "topics"))
    with db.connection() as conn:
        names = [n for (n,) in conn.execute("SELECT display_name FROM members WHERE team_id = %s", (T,)).fetchall()]
    assert any(n in page for n in names)
    assert main(["report", "nlp-lab", "--out", str(out), "--anonymous"]) == 0
    anonymous = (out / "index.html").read_text()
    assert "member 1" in anonymous and not any(f">{n}<" in anonymous for n in names if len(n) > 2)
    assert (
        main(["report", "nlp-lab", "--out", str(tmp_path / "r2"), "--since", "2021-01-01", "--until", "2020-01-01"])
        == 2
    )
    assert (
        main(["report", "nlp-lab", "--out", str(tmp_path / "r3"), "--since", "2020-12-01", "--until", "2021-01-01"])
        == 0
    )


def generated_channel(db: Database, shares: int, seed: int = 3) -> None:
    """One channel with ``shares`` shared papers (with vectors, titles, venues), replies and reactions, written
    straight into the tables; titles and names carry hostile markup."""
    rng = np.random.default_rng(seed)
    start = datetime(2022, 1, 1, tzinfo=UTC)
    with db.connection() as conn:
        conn.execute("INSERT INTO teams (team_id) VALUES ('TGEN')")
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES ('TGEN', 'CGEN', 'big-lab')")
        conn.execute(
            "INSERT INTO members (team_id, user_id, display_name) SELECT 'TGEN', 'U' || g, "
            "CASE WHEN g = 1 THEN '<script>alert(1)</script> $x^2$' ELSE 'member name ' || g END "
            "FROM generate_series(1, 40) g"
        )
        conn.execute("INSERT INTO venues (name, normalized_name) VALUES ('ACL', 'acl'), ('<b>EMNLP</b>', 'emnlp')")
        conn.execute(
            """
            INSERT INTO papers (title, venue_id, year)
            SELECT CASE WHEN g %% 500 = 0 THEN '<img src=http://evil.example/x> $\\alpha$ <@U1> Paper ' || g
                        ELSE 'Paper ' || g || ' on ' || (ARRAY['parsing', 'translation', 'summarization',
                             'dialogue', 'retrieval'])[1 + g %% 5] END,
                   (SELECT id FROM venues ORDER BY id LIMIT 1 OFFSET g %% 2), 2022
              FROM generate_series(1, %(n)s) g
            """,
            {"n": shares},
        )
        ids = [r[0] for r in conn.execute("SELECT id FROM papers ORDER BY id").fetchall()]
        centers = rng.normal(size=(5, 384)).astype(np.float32)
        with (
            conn.cursor() as cur,
            cur.copy("COPY paper_embeddings (paper_id, model, content_hash, embedding) FROM STDIN") as copy,
        ):
            for i, pid in enumerate(ids):
                v = centers[i % 5] + 0.7 * rng.normal(size=384).astype(np.float32) / np.sqrt(384)
                v /= np.linalg.norm(v)
                copy.write_row((pid, "all-MiniLM-L6-v2", f"h{pid}", "[" + ",".join(f"{x:.4f}" for x in v) + "]"))
        conn.execute(
            """
            INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at)
            SELECT 'TGEN', 'CGEN', (%(t0)s + g * 3000)::text || '.000000', 'U' || (1 + g %% 40), 'a link',
                   to_timestamp(%(t0)s + g * 3000)
              FROM generate_series(1, %(n)s) g
            """,
            {"n": shares, "t0": int(start.timestamp())},
        )
        conn.execute(
            """
            INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url)
            SELECT m.id, p.id, 'TGEN', 'CGEN', 'https://x'
              FROM (SELECT id, row_number() OVER (ORDER BY id) AS k FROM messages WHERE channel_id = 'CGEN') m
              JOIN (SELECT id, row_number() OVER (ORDER BY id) AS k FROM papers) p ON p.k = m.k
            """
        )
        conn.execute(
            """
            INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, posted_at)
            SELECT 'TGEN', 'CGEN', ((split_part(ts, '.', 1))::bigint + 60)::text || '.000000', ts,
                   'U' || (1 + id % 37), 'a reply', posted_at + interval '1 minute'
              FROM messages WHERE channel_id = 'CGEN' AND id % 3 = 0
            """
        )
        conn.execute(
            """
            INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at)
            SELECT id, 'TGEN', 'CGEN', 'U' || (1 + (id * 7 + k) % 40),
                   (ARRAY['+1', 'heart', 'eyes', '-1', 'fire::skin-tone-2'])[1 + (id + k) % 5], posted_at
              FROM messages, generate_series(1, 2) k WHERE channel_id = 'CGEN' AND thread_ts IS NULL
            """
        )


def test_report_of_ten_thousand_shares(db: Database, tmp_path: Path) -> None:
    generated_channel(db, 10_000)
    started = time.perf_counter()
    with db.connection() as conn:
        data = load_report_data(conn, "TGEN", "CGEN", until=datetime(2023, 2, 1, tzinfo=UTC))
    report = write_report(data, tmp_path / "big", anonymous=False)
    seconds = time.perf_counter() - started
    assert len(data.member_shares) == 10_000 and len(data.reactions) == 20_000
    page = report.path.read_text()
    no_network(page)
    # markup in names and titles is dropped before anything is drawn or written: nothing runs, loads or notifies
    assert "<script" not in page and "evil.example" not in page and "<@U1>" not in page and "<img" not in page
    from socialrag.report.charts import People

    assert People(data, anonymous=False)("U1") == "alert(1) $x^2$"
    assert report.path.stat().st_size < 6_000_000
    print(f"report of 10,000 shares: {seconds:.1f} s, {report.path.stat().st_size // 1024} KB")
    assert seconds < 120, "bench/bench_report.py holds the 30 s target; this only catches a runaway"
    with db.connection() as conn:
        month = load_headline(conn, "TGEN", "CGEN", datetime(2022, 2, 10, tzinfo=UTC))
    t0, feb1, feb10 = (datetime(2022, m, d, tzinfo=UTC) for m, d in ((1, 1), (2, 1), (2, 10)))
    assert month.shared == sum(1 for g in range(1, 10_001) if feb1 <= t0 + timedelta(seconds=3000 * g) < feb10)
    assert month.posts == month.answered == 0


@pytest.mark.skipif(shutil.which("chromium") is None, reason="Debian's chromium is not installed")
def test_the_page_renders_in_headless_chromium(db: Database, tmp_path: Path) -> None:
    generated_channel(db, 600)
    with db.connection() as conn:
        data = load_report_data(conn, "TGEN", "CGEN", until=datetime(2022, 3, 1, tzinfo=UTC))
    report = write_report(data, tmp_path / "page")
    shot = tmp_path / "page.png"
    result = subprocess.run(
        [
            "chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--window-size=1200,2400",
            f"--screenshot={shot}", "--virtual-time-budget=3000", report.path.as_uri(),
        ],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-800:]
    assert shot.stat().st_size > 50_000, "the page draws its charts"
    dom = subprocess.run(
        ["chromium", "--headless=new", "--no-sandbox", "--disable-gpu", "--dump-dom", report.path.as_uri()],
        capture_output=True, text=True, timeout=120,
    ).stdout  # fmt: skip
    assert dom.count("<svg") == 6 and "What the group reads" in dom


def test_timedelta_of_period_is_bounded_by_activity(db: Database, tmp_path: Path) -> None:
    generated_channel(db, 50)
    with db.connection() as conn:
        data = load_report_data(conn, "TGEN", "CGEN")
    from socialrag.report.charts import period_end

    assert period_end(data) - max(s.at for s in data.shares) <= timedelta(days=1)
