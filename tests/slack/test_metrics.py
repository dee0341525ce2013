"""``/metrics`` on the HTTP front: Prometheus text that counts signed events, a token that is asked for, labels
that never carry what members wrote, one database read per interval however many scrape, and the last figures
served when the database is slow; ``paperping status --json`` carries the same figures."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from bot.slack.http_front import HttpFront
from bot.slack.metrics import Metrics, MetricsPage
from socialrag.cli.gauges import FiguresCache, load_figures
from socialrag.db import Database
from tests.support.harness import Harness, lab_state, message_event
from tests.support.slack_standin import SlackStandIn


def _metrics_url(harness: Harness) -> str:
    return harness.url.replace("/slack/events", "/metrics")


def scrape(url: str, **headers: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a scrape, by name and labels (parsed by prometheus_client's own parser)."""
    answer = httpx.get(url, headers=headers, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-type"].startswith("text/plain; version=")
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for family in text_string_to_metric_families(answer.text)
        for s in family.samples
    }


def sample(samples: dict[Any, float], name: str, **labels: str) -> float:
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def test_a_scrape_is_prometheus_text_and_counts_signed_events(harness: Harness) -> None:
    assert harness.ctx.metrics.cache is not None
    harness.ctx.metrics.cache.seconds = 0  # read the database at every scrape here
    before = scrape(_metrics_url(harness))
    assert sample(before, "paperping_figures_age_seconds") < 60
    harness.event(message_event("1700000000.000100", "<https://arxiv.org/abs/2401.10000>"))
    harness.event(message_event("1700000001.000100", "<https://arxiv.org/abs/2401.10001>"))
    harness.event(message_event("1700000001.000100", "<https://arxiv.org/abs/2401.10001>"), event_id="Ev00002")
    time.sleep(0.2)
    after = scrape(_metrics_url(harness))
    handled = ("paperping_slack_requests_total", {"kind": "message", "outcome": "handled"})
    duplicate = ("paperping_slack_requests_total", {"kind": "message", "outcome": "duplicate"})
    assert sample(after, handled[0], **handled[1]) - sample(before, handled[0], **handled[1]) == 2
    assert sample(after, duplicate[0], **duplicate[1]) - sample(before, duplicate[0], **duplicate[1]) == 1
    events = sample(after, "paperping_events_handled_last_hour", team="T0LAB")
    assert events - sample(before, "paperping_events_handled_last_hour", team="T0LAB") == 2
    assert sample(after, "paperping_index_queue", state="waiting") >= 2  # offline: the two papers wait
    assert sample(after, "paperping_index_queue_oldest_ready_seconds") >= 0
    refused = sample(after, "paperping_requests_refused_total", reason="signature")
    assert harness.signed(json.dumps({"type": "event_callback"}), "application/json", "wrong").status_code == 401
    assert sample(scrape(_metrics_url(harness)), "paperping_requests_refused_total", reason="signature") == refused + 1


@pytest.fixture
def token_harness(db: Database, tmp_path: Path) -> Iterator[Harness]:
    standin = SlackStandIn(lab_state()).start()
    h = Harness(db, standin, tmp_path, metrics_token="s3cret-scrape")
    yield h
    h.stop()
    standin.stop()


def test_with_a_token_set_a_scrape_without_it_gets_401(token_harness: Harness) -> None:
    url = _metrics_url(token_harness)
    assert httpx.get(url).status_code == 401
    assert httpx.get(url, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert scrape(url, Authorization="Bearer s3cret-scrape")
    assert httpx.post(url, headers={"Authorization": "Bearer s3cret-scrape"}).status_code == 405


def test_without_a_token_a_relayed_request_is_refused(harness: Harness) -> None:
    """Unset, the page answers direct requests from loopback only: one relayed by a proxy or tunnel on this
    machine (from the internet, say) is refused, and the answer says what to set."""
    url = _metrics_url(harness)
    for header in ("X-Forwarded-For", "X-Real-IP", "Forwarded", "Via"):
        refused = httpx.get(url, headers={header: "203.0.113.9"})
        assert refused.status_code == 403 and "PAPERPING_METRICS_TOKEN" in refused.text, header
    assert httpx.get(url).status_code == 200


def _answer(page: MetricsPage, remote: str, **headers: str) -> tuple[str, bytes]:
    """``page``'s status and body for a GET from ``remote`` (as waitress fills the environ)."""
    environ: dict[str, Any] = {"REQUEST_METHOD": "GET", "PATH_INFO": "/metrics", "REMOTE_ADDR": remote}
    environ.update({"HTTP_" + k.upper().replace("-", "_"): v for k, v in headers.items()})
    status: list[str] = []
    body = b"".join(page(environ, lambda s, h, e=None: status.append(s)))  # type: ignore[arg-type]
    return status[0], body


@pytest.mark.parametrize("remote", ["10.0.0.7", "172.18.0.5", "192.168.1.20", "fd00::5", "100.64.0.9", "8.8.8.8"])
def test_without_a_token_another_host_is_refused_even_on_a_private_network(remote: str) -> None:
    """A shared LAN, a cloud VPC or a Docker network: every host there has a private address, so without a token
    only this machine's loopback is answered. The refusal names the setting and is counted."""
    metrics = Metrics()
    status, body = _answer(metrics.page(None), remote)
    assert status.startswith("403") and b"PAPERPING_METRICS_TOKEN" in body and b"bearer" in body
    assert metrics.refused.labels("metrics_address")._value.get() == 1


@pytest.mark.parametrize("remote", ["127.0.0.1", "127.0.0.53", "::1", "::ffff:127.0.0.1"])
def test_without_a_token_loopback_is_answered(remote: str) -> None:
    assert _answer(Metrics().page(None), remote)[0].startswith("200")


def test_with_a_token_any_host_that_sends_it_is_answered() -> None:
    page = Metrics().page("s3cret-scrape")
    assert _answer(page, "172.18.0.5", Authorization="Bearer s3cret-scrape")[0].startswith("200")
    assert _answer(page, "127.0.0.1")[0].startswith("401")  # with a token set, loopback sends it too
    status, body = _answer(page, "172.18.0.5", Authorization="Bearer s3cret-scrapf")
    assert status.startswith("401") and b"PAPERPING_METRICS_TOKEN" in body


def test_the_token_is_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bearer token goes through ``hmac.compare_digest``, never ``==``."""
    import hmac

    seen: list[tuple[bytes, bytes]] = []
    real = hmac.compare_digest

    def spy(a: bytes, b: bytes) -> bool:
        seen.append((a, b))
        return real(a, b)

    monkeypatch.setattr(hmac, "compare_digest", spy)
    assert _answer(Metrics().page("tok"), "10.0.0.1", Authorization="Bearer nope")[0].startswith("401")
    assert seen == [(b"Bearer nope", b"Bearer tok")]


LABEL = re.compile(r'(\w+)="([^"]*)"')


def test_no_label_value_comes_from_what_members_wrote(harness: Harness) -> None:
    """A hostile message (its text, its channel's name, an odd event type) leaves only ids and words of the code
    in the labels."""
    harness.standin.state.channels["C1"]["name"] = 'secret-plans"} evil{x="1'
    hostile = 'Graham\'s secret-plans"} injected{team="x"} 1\n# HELP <https://arxiv.org/abs/2401.10002>'
    harness.event(message_event("1700000002.000100", hostile, user="U1"))
    harness.event({"type": 'message"} injected{a="b', "channel": "C1", "user": "U1", "text": hostile, "ts": "1.2"})
    assert harness.ctx.metrics.cache is not None
    harness.ctx.metrics.cache.seconds = 0
    text = httpx.get(_metrics_url(harness)).text
    assert "secret" not in text and "Graham" not in text and "injected" not in text and "2401" not in text
    allowed = re.compile(r"[A-Z0-9]{1,24}|[a-z][a-z0-9_-]{0,39}|\d+(\.\d+)?")
    values = {v for line in text.splitlines() if not line.startswith("#") for _, v in LABEL.findall(line)}
    assert values and all(allowed.fullmatch(v) for v in values), values
    assert {"U1", "C1", "nlp-lab"}.isdisjoint(values)  # no member, no channel
    assert list(text_string_to_metric_families(text))


def test_many_scrapes_at_once_read_the_database_once_per_interval(db: Database) -> None:
    loads = []

    def load() -> dict[str, Any]:
        loads.append(time.monotonic())
        time.sleep(0.2)  # a query set that takes a while: every scrape arrives while it runs
        return load_figures(db)

    metrics = Metrics(cache=FiguresCache(load, seconds=60))
    front = HttpFront(None, "127.0.0.1", 0, metrics=metrics.page(None)).start()
    url = f"http://127.0.0.1:{front.port}/metrics"
    codes: list[int] = []

    def one() -> None:
        codes.append(httpx.get(url, timeout=10).status_code)

    try:
        for _ in range(3):
            threads = [threading.Thread(target=one) for _ in range(40)]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
        assert len(loads) == 1, "one query set per interval, however many scrape"
        assert codes.count(200) >= 40 and set(codes) <= {200, 503}  # past two at once: 503, never a wait
        assert httpx.post(url).status_code == 405
        assert httpx.get(f"http://127.0.0.1:{front.port}/slack/events").status_code == 404
    finally:
        front.stop()


def test_a_slow_database_serves_the_last_figures_with_their_age(db: Database) -> None:
    slow = threading.Event()
    release = threading.Event()

    def load() -> dict[str, Any]:
        if slow.is_set():
            release.wait(10)
        return load_figures(db)

    cache = FiguresCache(load, seconds=0, wait=0.3)
    first, age = cache.figures()
    assert first is not None and age < 5
    slow.set()
    started = time.monotonic()
    again, age = cache.figures()
    assert time.monotonic() - started < 1.0, "a scrape waits a bounded time"
    assert again is first and age >= 0.3
    release.set()


def test_status_json_carries_the_figures(db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    import io
    from contextlib import redirect_stdout

    from bot.cli import main

    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    out = io.StringIO()
    with redirect_stdout(out):
        assert main(["status", "--json"]) == 0
    figures = json.loads(out.getvalue())["metrics"]
    assert set(figures) >= {"events_handled_last_hour", "posts", "channels", "index_queue", "sources", "llm_today"}
    assert figures["index_queue"].keys() == {"waiting", "ready", "working", "given_up"}


def test_slacks_certificate_check_is_counted_only_when_signed(harness: Harness) -> None:
    """Slack signs its ``ssl_check`` like any request. An unsigned one is anybody's: it is refused and counted as
    refused, never as a Slack request; a signed one is counted under ``ssl_check`` alone, whatever ``type`` it
    carries (a label taken from it would grow the page by one series per request)."""
    before = scrape(_metrics_url(harness))
    for n in range(3):
        form = {"ssl_check": "1", "type": f"planted{n}", "token": "x"}
        assert httpx.post(harness.url, data=form, timeout=10).status_code == 401
    signed = harness.signed("ssl_check=1&type=planted9&token=x", "application/x-www-form-urlencoded")
    assert signed.status_code == 200
    after = scrape(_metrics_url(harness))

    def more(name: str, **labels: str) -> float:
        return sample(after, name, **labels) - sample(before, name, **labels)

    assert not [key for key in after if any("planted" in v for _, v in key[1])]
    assert more("paperping_slack_requests_total", kind="ssl_check", outcome="handled") == 1
    assert more("paperping_requests_refused_total", reason="signature") == 3
