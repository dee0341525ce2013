"""The channel report under text crafted to survive PaperPing's markup cleaning (quotes, stray angle brackets,
``javascript:`` addresses, CSS): every such text reaches the page as text, in the HTML and in the charts' SVG,
and nothing of another channel or workspace is on it."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from html.parser import HTMLParser
from pathlib import Path

from socialrag.db import Database
from socialrag.report.data import load_report_data
from socialrag.report.page import write_report

BREAKOUT = '" onmouseover="alert(1)" x=\''
TITLE = f"javascript:alert(1) {BREAKOUT} ]]> --!> <img src=x onerror=alert(6) url(http://evil.example/t.css)"
VENUE = "@import 'http://evil.example/v.css'; </style"
AUTHOR = "x' onload='alert(2)"
MEMBER = "</text></svg><iframe src=javascript:alert(3)"
CHANNEL = 'lab"><b>'
T0 = datetime(2024, 3, 1, tzinfo=UTC)
# the SVG and HTML elements a report is made of: a tag outside these came from the data
ALLOWED = {
    "html", "head", "meta", "title", "style", "body", "h1", "h2", "div", "b", "figure", "figcaption", "a", "table",
    "tr", "th", "td", "svg", "metadata", "rdf:rdf", "cc:work", "dc:type", "dc:date", "dc:format", "dc:creator",
    "cc:agent", "dc:title", "defs", "g", "path", "use", "text", "clippath", "rect", "image", "pattern", "lineargradient",
    "stop", "polyline", "line", "circle", "ellipse",
}  # fmt: skip


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.attrs: list[tuple[str, str]] = []
        self.text: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.attrs += [(k, v or "") for k, v in attrs]

    def handle_data(self, data: str) -> None:
        self.text.append(data)


def _channel(db: Database, team: str, channel: str, name: str, words: str, member: str) -> None:
    """A channel where two members share a paper, reply and react; PaperPing posted the paper too."""
    with db.connection() as conn:
        conn.execute("INSERT INTO teams (team_id) VALUES (%s) ON CONFLICT DO NOTHING", (team,))
        conn.execute("INSERT INTO channels (team_id, channel_id, name) VALUES (%s, %s, %s)", (team, channel, name))
        for user in ("U1", "U2"):
            conn.execute(
                "INSERT INTO members (team_id, user_id, display_name) VALUES (%s, %s, %s) ON CONFLICT DO NOTHING",
                (team, user, f"{member} {user}"),
            )
        venue = conn.execute(
            "INSERT INTO venues (name, normalized_name) VALUES (%s, %s) RETURNING id", (f"{VENUE} {words}", words)
        ).fetchone()
        papers = []
        for i in range(4):
            row = conn.execute(
                "INSERT INTO papers (title, venue_id, year, url) VALUES (%s, %s, 2024, %s) RETURNING id",
                (f"{TITLE} {words} {i}", venue[0] if venue else None, "javascript:alert(document.domain)"),
            ).fetchone()
            assert row is not None
            papers.append(row[0])
            author = conn.execute(
                "INSERT INTO authors (name, normalized_name) VALUES (%s, %s) RETURNING id", (f"{AUTHOR} {words}", words)
            ).fetchone()
            assert author is not None
            conn.execute(
                "INSERT INTO paper_authors (paper_id, position, author_id) VALUES (%s, 0, %s)", (row[0], author[0])
            )
        for i, pid in enumerate(papers * 2):
            at = T0 + timedelta(hours=i)
            ts = f"{int(at.timestamp())}.000100"
            msg = conn.execute(
                "INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at) "
                "VALUES (%s, %s, %s, %s, 'a paper', %s) RETURNING id",
                (team, channel, ts, "U1" if i % 2 else "U2", at),
            ).fetchone()
            assert msg is not None
            conn.execute(
                "INSERT INTO message_papers (message_id, paper_id, team_id, channel_id, url) "
                "VALUES (%s, %s, %s, %s, 'javascript:alert(4)')",
                (msg[0], pid, team, channel),
            )
            conn.execute(
                "INSERT INTO messages (team_id, channel_id, ts, thread_ts, user_id, text, posted_at) "
                "VALUES (%s, %s, %s, %s, 'U1', 'a reply', %s)",
                (team, channel, f"{int(at.timestamp()) + 60}.000100", ts, at + timedelta(minutes=1)),
            )
            conn.execute(
                "INSERT INTO reactions (message_id, team_id, channel_id, user_id, emoji, reacted_at) "
                "VALUES (%s, %s, %s, 'U2', %s, %s)",
                (msg[0], team, channel, f'fire" onclick="alert(5){words}', at),
            )
        conn.execute(
            "INSERT INTO recommendations (team_id, channel_id, slot_key, paper_id, status, style, message_ts, "
            "posted_at) VALUES (%s, %s, 'slot-1', %s, 'posted', 'template', '1.000000', %s)",
            (team, channel, papers[0], T0 + timedelta(days=1)),
        )


def test_hostile_text_stays_text_and_other_channels_stay_out(db: Database, tmp_path: Path) -> None:
    _channel(db, "THOST", "CHOST", CHANNEL, "ourwords", MEMBER)
    _channel(db, "THOST", "COTHER", "other-lab", "siblingsecret", "Sibling")
    _channel(db, "TELSE", "CHOST", "elsewhere", "workspacesecret", "Stranger")
    with db.connection() as conn:
        data = load_report_data(conn, "THOST", "CHOST", until=T0 + timedelta(days=30))
    page = write_report(data, tmp_path / "r").path.read_text(encoding="utf-8")
    parsed = Tags()
    parsed.feed(page)
    assert parsed.tags <= ALLOWED, parsed.tags - ALLOWED
    assert not [k for k, _ in parsed.attrs if k.startswith("on") or k in {"src", "srcdoc", "formaction"}]
    links = [v for k, v in parsed.attrs if k in {"href", "xlink:href"}]
    assert all(v.startswith(("#", "data:image/png;base64,")) or v.endswith(".png") for v in links), links
    text = "".join(parsed.text)
    # the crafted texts arrive whole, as text (clipped where long), in the tables and in the charts
    assert (
        BREAKOUT in text
        and "]]> --!> <img src=x onerror=alert(6)" in text
        and "' </style ourwords" in text
        and "x' onload='" in text
    )
    assert "<iframe src=javascript:alert(" in text  # a member's name, in the people chart
    assert "@import" not in page.split("</style>")[0] and page.count("<style") == 1 + page.count("<svg")
    assert "siblingsecret" not in page and "workspacesecret" not in page
    assert "Sibling" not in page and "Stranger" not in page and "other-lab" not in page
