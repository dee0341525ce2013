"""The weekly replay through the command line, beside ``paperping eval``'s replay of the same weeks.

``python -m bench.cli_replay --home DIR [--kinds curator ...] [--window-days 365]`` takes the simulated channels
of ``bench.replay_eval`` (built under ``--home`` on the first run of either, reused after) and replays each week
as someone judging PaperPing from outside would: ``paperping refit CHANNEL --as-of T``, then ``paperping
recommend CHANNEL --json --as-of T --window-days N --top 50``, the real commands in this process against the
same database. The weeks are those of the project's replay (``rank/evaluate.py``, refitted every week), and so is
what counts as picked: what the channel shared in the week from T that was out by T. It prints, per kind, R@10,
R@50 and MRR (a first pick below the 50th counts as none, as a list of 50 shows it) of the replay's calibrated
ranking, of the same with variety (``recommend`` lists its first ten as a post would choose them), and of the
commands, then the commands less each replay step by step with its standard error. The commands differ from the
replay by ties (paper-id order against draws), by variety (the replay's posts are its own, the commands' those
the channel really had: none here) and by what each reads of a week's popularity.

It deletes the channels' stored fits first and leaves its own there: run it on a home of its own, never a lab's.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np

from bench.replay_eval import ACL, KINDS, MODEL, open_home
from bot.cli import main as paperping
from socialrag.recommender.rank.evaluate import CALIBRATED, CALIBRATED_DIVERSE, Step, replay
from socialrag.recommender.rank.history import ChannelHistory, build_history
from socialrag.recommender.rank.refit import read_together
from socialrag.storage.embeddings import load_embedded_ids

TOP = 50
TEAM = "T0LAB"


def figures(ranked: list[str], truth: set[str]) -> tuple[float, float, float]:
    """R@10, R@50 and the reciprocal rank of the first pick within ``TOP`` (0 past it) of one week."""
    hits = [p in truth for p in ranked[:TOP]]
    first = next((k + 1 for k, hit in enumerate(hits) if hit), None)
    return sum(hits[:10]) / len(truth), sum(hits) / len(truth), 1.0 / first if first else 0.0


@contextlib.contextmanager
def environment(uri: str, home: Path) -> Iterator[None]:
    """The commands' settings: this database, offline (the local catalog is the one source), a home of their own,
    and every other setting at its default, as the replay has it (the embedding cache excepted: it only saves time)."""
    kept = {k: v for k, v in os.environ.items() if k.startswith("PAPERPING_") or k == "DATABASE_URL"}
    for k in kept:
        os.environ.pop(k)
    os.environ.update({"DATABASE_URL": uri, "PAPERPING_OFFLINE": "1", "PAPERPING_HOME": str(home / "cli")})
    if "PAPERPING_EMBED_CACHE" in kept:
        os.environ["PAPERPING_EMBED_CACHE"] = kept["PAPERPING_EMBED_CACHE"]
    try:
        yield
    finally:
        for k in [k for k in os.environ if k.startswith("PAPERPING_") or k == "DATABASE_URL"]:
            os.environ.pop(k)
        os.environ.update(kept)


def command(*args: str) -> str:
    """One ``paperping`` command's standard output; a failing command stops the bench with what it said."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = paperping(list(args))
    if code != 0:
        raise SystemExit(f"paperping {' '.join(args)} failed ({code}): {err.getvalue().strip()}")
    return out.getvalue()


def through_the_commands(channel: str, t: float, window_days: int) -> list[str]:
    """The ranked papers (ACL ids) ``recommend`` lists for the channel as of ``t``, after ``refit`` as of ``t``."""
    when = datetime.fromtimestamp(t, UTC).isoformat()
    command("refit", channel, "--as-of", when)
    listed = json.loads(
        command("recommend", channel, "--json", "--as-of", when, "--window-days", str(window_days), "--top", str(TOP))
    )
    return [c["acl_id"] for c in listed["candidates"]]


def beside_the_replay(
    history: ChannelHistory, channel: str, window_days: int, acl_of: Callable[[int], str], warmup: int = 8
) -> dict[str, np.ndarray]:
    """Per weekly step of the replay of ``history`` (refitted every week), the figures of the replay's calibrated
    ranking, of the same with variety, and of the commands on ``channel`` (the same group in the database the
    commands use); ``acl_of`` names a paper of the history by its ACL id."""
    moments: list[float] = []

    def note(step: Step) -> dict[str, np.ndarray]:
        moments.append(step.t)
        return {}

    zeros = np.zeros(len(history.universe.ids), dtype=np.int64)  # no topic columns: they are not compared here
    report = replay(history, warmup=warmup, window_days=float(window_days), refit_every=1, topics=zeros, extra=note)
    out = {}
    for name, method in (("replay", CALIBRATED), ("replay, variety", CALIBRATED_DIVERSE)):
        r = report.results[method]
        cut = np.where(np.array(r.reciprocal) >= 1.0 / TOP, r.reciprocal, 0.0)
        out[name] = np.column_stack([r.recall10, r.recall50, cut])
    ids = history.universe.ids  # each step judged on what the replay judges it on
    served = [
        figures(through_the_commands(channel, t, window_days), {acl_of(int(ids[r])) for r in week})
        for t, week in zip(moments, report.judged, strict=True)
    ]
    out["command line"] = np.array(served, dtype=np.float64).reshape(-1, 3)
    return out


def print_beside(name: str, rows: dict[str, np.ndarray], window_days: int) -> None:
    """One group's figures, and the commands less each replay step by step with its standard error."""
    steps = len(rows["replay"])
    print(f"\n## {name}: {steps} weekly steps, pools of {window_days} days, top {TOP}")
    print(f"{'':<16}{'R@10':>7}{'R@50':>7}{'MRR':>7}")
    for label, values in rows.items():
        print(f"{label:<16}" + "".join(f"{v:7.3f}" for v in values.mean(axis=0)))
    for label in ("replay", "replay, variety"):
        diff = rows["command line"] - rows[label]
        noise = diff.std(axis=0, ddof=1) / np.sqrt(steps) if steps > 1 else np.full(3, np.nan)
        cells = "".join(f"{d:+7.3f} ± {e:.3f}" for d, e in zip(diff.mean(axis=0), noise, strict=True))
        print(f"command line less the {label}: {cells}")


def replay_kind(db: Any, channel: str, window_days: int) -> dict[str, np.ndarray]:
    """``beside_the_replay`` for one simulated channel, from no stored fit."""
    with db.connection() as conn:  # each run starts from no fit, as the replay does
        conn.execute("DELETE FROM channel_rankers WHERE team_id = %s AND channel_id = %s", (TEAM, channel))
        ctx, universe = read_together(
            conn, TEAM, channel, MODEL, datetime.now(UTC), pool=load_embedded_ids(conn, MODEL)
        )
        acl = dict(conn.execute("SELECT paper_id, value FROM paper_ids WHERE scheme = 'acl'").fetchall())
    assert universe is not None, f"{channel} shared nothing"
    return beside_the_replay(build_history(ctx, universe, 60.0), channel, window_days, acl.__getitem__)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--home", type=Path, required=True, help="the simulated channels' home (bench.replay_eval's)")
    parser.add_argument("--kinds", nargs="+", choices=[k for k in KINDS if k != "imported"], default=["curator"])
    parser.add_argument("--window-days", type=int, default=365, help="recommend --window-days, and the replay's pools")
    parser.add_argument("--months", type=int, default=22)
    parser.add_argument("--seed", type=int, default=5)
    args = parser.parse_args()
    db, server, _, channels = open_home(args.home, ACL, args.months, args.seed)
    try:
        with environment(db.conninfo, args.home):
            for kind in args.kinds:
                print_beside(kind, replay_kind(db, channels[kind][0], args.window_days), args.window_days)
    finally:
        server.cleanup()


if __name__ == "__main__":
    main()
