"""One ``paperping run`` process: the Slack app (Socket Mode or HTTP) and this process's share of the scheduled posts.

Several processes can run against one Postgres; each ticks with APScheduler and claims due channels with
``FOR UPDATE SKIP LOCKED``. SIGTERM stops taking new work, gives the work under way ``STOP_SECONDS`` to finish,
and exits, within the 10 s Docker waits before a SIGKILL: work still running then is cut short, and its claim (a
slot's lease, an indexing batch's, a paper's) lapses and another process, or the next start, takes it over.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

from apscheduler.schedulers.background import BackgroundScheduler
from slack_sdk import WebClient

from bot.app import build_app
from bot.app_context import AppContext
from bot.delivery.author_posts import news_poster
from bot.delivery.follow_up_posts import thread_replier
from bot.delivery.picks_dm import send_due_picks
from bot.delivery.report_upload import post_due_reports
from bot.delivery.slot_posts import ClientFor, SlackOutlet
from bot.delivery.thread_replies import reply_to_shares
from bot.slack.http_front import HttpFront
from bot.slack.installation_store import check_token_keys, token_cipher, token_for
from bot.slack.members import refresh_stale_lists
from bot.slack.pacer import SlackPacer
from socialrag.config import Settings
from socialrag.db import Database
from socialrag.errors import ConfigError
from socialrag.knowledge import (
    DatabasePace,
    FullTextWorker,
    Indexer,
    check_authors,
    check_follow_ups,
    open_fulltext_reader,
    open_sources,
)
from socialrag.reading.zotero import push_due
from socialrag.recommender import Recommender, SlotWorker, announce_member_papers, send_follow_ups

log = logging.getLogger(__name__)


def build_worker(settings: Settings, db: Database, recommender: Recommender, pacer: SlackPacer) -> SlotWorker:
    """This process's share of the posting: the core's slot worker, posting through Slack, with the chores of
    its tick (relearn the channels' rankings, post the monthly reports, send saved papers to Zotero, send the
    weekly personal picks)."""
    outlet = SlackOutlet(client_for(settings, db), pacer)
    return SlotWorker(
        db,
        outlet,
        recommender,
        chores=(
            recommender.refit_due,
            lambda now: post_due_reports(db, pacer, outlet.client_for, now),
            lambda now: push_due(db, settings, now),
            lambda now: send_due_picks(db, recommender, pacer, outlet.client_for, now),
        ),
        wait_for_index=True,
        embed_model=settings.embed_model,
    )


def client_for(settings: Settings, db: Database) -> ClientFor:
    """Each workspace's Web API client."""

    def client(team_id: str) -> WebClient:
        # no retry handlers: slack_sdk would resend chat.postMessage after a dropped connection, and the first
        # may have arrived; the worker looks the slot up in the channel's history before posting again
        return WebClient(token=token_for(settings, db, team_id), base_url=settings.slack_api_url, retry_handlers=[])

    return client


INDEX_SECONDS = 5.0  # how often a process looks for papers to index (a new share is indexed within seconds)
MEMBERS_HOURS = 1.0  # how often member lists older than a day are read again (``bot.slack.members``)
CITATIONS_HOURS = 1.0  # how often it fills citing sentences and citing papers (slow: a request a paper)
FOLLOW_UP_MINUTES = 5.0  # how often it looks for shared papers due a check, and for follow-ups to send
# the follow-ups job asks its sources for at most this long a run (each request has its own deadline too); what
# is left waits for the next run, so one slow source never keeps the job running into the next
JOB_SECONDS = 240.0
FULLTEXT_MINUTES = 3.0  # how often a process reads the full text of a few papers its channels have
READ_AHEAD_SECONDS = 30.0  # a post waits at most this long for its paper's full text


# after SIGTERM, how long the work under way may finish: Docker kills the process 10 s after the signal, and an
# embedded Postgres must still be stopped cleanly in what is left
STOP_SECONDS = 7.0


class RunningJobs:
    """The scheduler's jobs running now, by name, so that a stop can wait for them (a while)."""

    def __init__(self) -> None:
        self._running: Counter[str] = Counter()
        self._changed = threading.Condition()

    def wrap(self, name: str, job: Callable[[], object]) -> Callable[[], object]:
        """``job``, counted as running while it runs."""

        def run() -> object:
            with self._changed:
                self._running[name] += 1
            try:
                return job()
            finally:
                with self._changed:
                    self._running[name] -= 1
                    self._running += Counter()  # drops the names at zero
                    self._changed.notify_all()

        return run

    def wait(self, seconds: float) -> list[str]:
        """Wait at most ``seconds`` for the running jobs to end; the names of those still running."""
        with self._changed:
            self._changed.wait_for(lambda: not self._running, timeout=max(0.0, seconds))
            return sorted(self._running)


def build_fulltext_worker(settings: Settings, db: Database, recommender: Recommender) -> FullTextWorker:
    """This process's share of the full-text reading, embedding with the recommender's model, each host's pace
    shared through Postgres; it reads nothing when full text is off (``PAPERPING_FULLTEXT=0``, or offline)."""
    return FullTextWorker(db, recommender.embedder, open_fulltext_reader(settings, DatabasePace(db)))


def build_read_ahead(settings: Settings, db: Database, recommender: Recommender) -> FullTextWorker:
    """The full-text reading a post waits for (``Recommender.read_now``): its paper, at most ``READ_AHEAD_SECONDS``,
    beside the job's own reader (the two never read one paper at once: each claims it first)."""
    reader = open_fulltext_reader(settings, DatabasePace(db))
    if reader is not None:
        reader.paper_seconds = READ_AHEAD_SECONDS
    return FullTextWorker(db, recommender.embedder, reader)


def member_sweep(db: Database, ctx: AppContext, clients: ClientFor) -> Callable[[], int]:
    """The hourly job: the history reads of joined channels left unfinished (Slack's error, a timeout) taken up
    again, then the member lists older than a day read again (``refresh_stale_lists``)."""

    def sweep() -> int:
        ctx.channels.resume_backfills(clients)
        return refresh_stale_lists(db, ctx.pacer.call, clients, datetime.now(UTC))

    return sweep


def build_indexer(settings: Settings, db: Database, recommender: Recommender) -> Indexer:
    """This process's share of the indexing, with the recommender's model and a pace shared through Postgres."""
    return Indexer(db, recommender.embedder, open_sources(settings, DatabasePace(db)))


def start_scheduler(
    worker: SlotWorker,
    seconds: float,
    indexer: Indexer | None = None,
    replies: Callable[[], int] | None = None,
    members: Callable[[], int] | None = None,
    follow_ups: Callable[[], int] | None = None,
    follow_up_minutes: float = FOLLOW_UP_MINUTES,
    fulltext: FullTextWorker | None = None,
    running: RunningJobs | None = None,
) -> BackgroundScheduler:
    """The tick that posts, the indexing jobs (the queue every few seconds, citations hourly), the context
    replies on members' shares (every few seconds), the hourly sweep of channel member lists, the follow-ups
    (every few minutes) and the full-text reading (every few minutes, when it is on). ``running`` counts the
    jobs under way, for a stop to wait on."""
    scheduler = BackgroundScheduler(timezone=UTC)
    now, jobs = datetime.now(UTC), running or RunningJobs()
    # a job that fell due while the process stood still (a laptop asleep, a paused container) runs once when it
    # wakes, however late: not skipped to its next interval (APScheduler's default after 1 s late), and not once
    # for each run it missed
    every = {"max_instances": 1, "coalesce": True, "misfire_grace_time": None, "next_run_time": now}

    def add(job: Callable[[], object], name: str, **interval: float) -> None:
        scheduler.add_job(jobs.wrap(name, job), "interval", id=name, name=name, **interval, **every)

    add(worker.tick, "tick", seconds=seconds)
    if indexer is not None:
        add(indexer.run, "index", seconds=INDEX_SECONDS)
        add(indexer.fill_citations, "citations", hours=CITATIONS_HOURS)
    if replies is not None:
        add(replies, "replies", seconds=INDEX_SECONDS)
    if members is not None:
        add(members, "members", hours=MEMBERS_HOURS)
    if follow_ups is not None:
        add(follow_ups, "follow-ups", minutes=follow_up_minutes)
    if fulltext is not None and fulltext.reader is not None:
        add(fulltext.run, "fulltext", minutes=FULLTEXT_MINUTES)
    scheduler.start()
    return scheduler


def stop_work(scheduler: BackgroundScheduler, running: RunningJobs, slow: Callable[[], int], until: float) -> bool:
    """Start no job again, and wait until ``until`` (``time.monotonic``) for the jobs and the members' slow
    requests under way; False (and said in the log) when some are still running then."""
    if scheduler.running:
        scheduler.shutdown(wait=False)
    left = running.wait(until - time.monotonic())
    while slow() and time.monotonic() < until:
        time.sleep(0.1)
    if slow():
        left.append(f"{slow()} member requests")
    if left:
        log.warning(
            "stopping with work under way (%s): it is left to its claims, which lapse, and another process or the "
            "next start takes it over",
            ", ".join(left),
        )
    return not left


def leave_now(db: Database) -> None:
    """End the process at once, ahead of the threads still at work: Python would wait for them at exit, past
    Docker's grace. The embedded Postgres this process started, if any, is stopped cleanly first."""
    try:
        db.stop()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)


def metrics_port(settings: Settings) -> int:
    """``PAPERPING_METRICS_PORT`` as a port number; a wrong one says what to write."""
    raw = settings.metrics_port or ""
    if not raw.isdigit() or not 0 < int(raw) < 65536:
        raise ConfigError(f"PAPERPING_METRICS_PORT must be a port number (1-65535), got {raw!r}")
    return int(raw)


def cmd_run(args: argparse.Namespace, settings: Settings, db: Database) -> int:
    if not args.http and not settings.slack_app_token:
        raise ConfigError(
            "Socket Mode (what `paperping run` starts without --http) needs SLACK_APP_TOKEN: an app-level token "
            "(xapp-...) with the connections:write scope, from your Slack app's Basic Information page. To receive "
            "Slack's requests over HTTP instead, run `paperping run --http` with SLACK_SIGNING_SECRET set."
        )
    socket_mode = not args.http
    own_port = metrics_port(settings) if socket_mode and settings.metrics_port else None  # checked before starting
    if settings.slack_client_id and settings.slack_client_secret:
        check_token_keys(db, token_cipher(settings))  # a wrong key stops here, not at every channel's post
    ctx = AppContext(settings, db)
    app = build_app(settings, db, ctx, socket_mode=socket_mode)
    recommender = Recommender(settings, db)
    ctx.recommender = recommender
    worker = build_worker(settings, db, recommender, ctx.pacer)
    indexer = build_indexer(settings, db, recommender)
    fulltext = build_fulltext_worker(settings, db, recommender)
    ahead = build_read_ahead(settings, db, recommender)
    recommender.read_now = ahead.read_now if ahead.reader is not None else None
    clients = client_for(settings, db)
    ctx.channels.resume_backfills(clients)
    model, scoring, window = recommender.embedder.model_name, recommender.scoring(), settings.signal_window_days

    def replies() -> int:
        return reply_to_shares(db, model, ctx.pacer, clients, window_days=window, scoring=scoring)

    def follow_ups() -> int:
        """Follow-ups in shared papers' threads, then the new papers of followed authors and members."""
        now, every = datetime.now(UTC), timedelta(minutes=settings.followups_every_minutes)
        until = time.monotonic() + JOB_SECONDS
        check_follow_ups(db, indexer.sources, now, every, until=until)
        sent = send_follow_ups(db, thread_replier(ctx.pacer, clients), now)
        authors_every = timedelta(minutes=settings.authors_every_minutes)
        check_authors(db, indexer.sources, now, authors_every, indexer.embed, until=until + JOB_SECONDS / 2)
        return sent + announce_member_papers(db, news_poster(ctx.pacer, clients), now)

    # a shared paper is asked about at most once per PAPERPING_FOLLOWUPS_EVERY_MINUTES; the job looks that often
    # (and at least every few minutes, for follow-ups to send)
    minutes = min(FOLLOW_UP_MINUTES, settings.followups_every_minutes, settings.authors_every_minutes)
    running = RunningJobs()
    scheduler = start_scheduler(
        worker,
        settings.tick_seconds,
        indexer,
        replies,
        member_sweep(db, ctx, clients),
        follow_ups,
        minutes,
        fulltext=fulltext,
        running=running,
    )
    ctx.wake.scheduler = lambda: scheduler.modify_job("tick", next_run_time=datetime.now(UTC))
    ctx.wake.indexer = lambda: scheduler.modify_job("index", next_run_time=datetime.now(UTC))
    stop = threading.Event()
    server: HttpFront | None = None
    page = ctx.metrics.page(settings.metrics_token)
    # the database for /readyz and for each request's wait on a connection; the page; one address's connections
    front = partial(HttpFront, db=db, metrics=page, peer_connections=settings.http_peer_connections)

    def shutdown(signum: int, frame: Any) -> None:
        log.warning("signal %s: finishing the current work and stopping", signum)
        stop.set()
        worker.stopping.set()  # the tick stops between channels
        indexer.stopping.set()  # and the indexing between batches
        fulltext.stopping.set()  # and the full-text reading between papers

    signal.signal(signal.SIGTERM, shutdown)
    signal.signal(signal.SIGINT, shutdown)
    until: float | None = None  # when the work under way must have finished, once a stop began
    try:
        if socket_mode:
            from slack_bolt.adapter.socket_mode import SocketModeHandler

            handler = SocketModeHandler(
                app, settings.slack_app_token, web_client=WebClient(base_url=settings.slack_api_url)
            )
            handler.connect()
            if own_port is not None:  # no HTTP front in Socket Mode: /metrics on a port of its own
                server = front(None, "0.0.0.0", own_port).start()
            print("PaperPing is running (Socket Mode)", flush=True)
            stop.wait()
            until = time.monotonic() + STOP_SECONDS
            scheduler.shutdown(wait=False)
            handler.close()
            if server is not None:
                server.stop()
        else:
            server = front(app, "0.0.0.0", args.port, signing_secret=settings.slack_signing_secret).start()
            print(f"PaperPing is running on http://0.0.0.0:{args.port}/slack/events", flush=True)
            stop.wait()
            until = time.monotonic() + STOP_SECONDS
            scheduler.shutdown(wait=False)  # no job starts again while the front closes
            server.stop()
    finally:
        finished = stop_work(scheduler, running, ctx.slow.pending, until or time.monotonic() + STOP_SECONDS)
        if finished:  # nothing uses them any more
            indexer.close()
            fulltext.close()
            ahead.close()
            recommender.close()
    print("PaperPing stopped", flush=True)
    if not finished:
        leave_now(db)
    return 0
