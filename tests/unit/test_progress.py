"""Progress on long work: a log line every few seconds with the rate and the time left when not in a terminal."""

from __future__ import annotations

import io

from socialrag.progress import Progress


def test_log_lines_say_rate_and_time_left() -> None:
    now = [0.0]
    lines: list[str] = []
    with Progress(
        1000, "embedding", "paper", every=5, stream=io.StringIO(), clock=lambda: now[0], emit=lines.append
    ) as p:
        for _ in range(10):
            now[0] += 1.0
            p.update(28)
    assert lines[0] == "embedding: 140 of 1,000 papers (28.0/s, about 31 s left)"
    assert len(lines) == 3  # at 5 s, at 10 s, and the closing line
    assert lines[-1] == "done: embedding: 280 of 1,000 papers (28.0/s)"


def test_unknown_total_and_quick_work_stay_quiet() -> None:
    lines: list[str] = []
    with Progress(None, "metadata lookups", "paper", stream=io.StringIO(), emit=lines.append) as p:
        p.update(500)
    assert lines == []  # done in under the interval: nothing to say
    now = [0.0]
    slow = Progress(
        None, "metadata lookups", "paper", every=5, stream=io.StringIO(), clock=lambda: now[0], emit=lines.append
    )
    now[0] = 6.0
    slow.update(500)
    assert lines == ["metadata lookups: 500 papers (83.3/s)"]
