"""The demo's Slack-like page is built from its template with every value escaped: a hostile title, name or
link label shows as text, and only PaperPing's own markup (bold, mentions, links it wrote) becomes HTML."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from bot.demo.slack_page import Segment, parse_mrkdwn
from socialrag.templates import templates


def test_mrkdwn_becomes_segments_with_slacks_escapes_undone() -> None:
    text = "*<https://a.example/p?x=1&amp;y=2|A &lt;b&gt; title>* for <@U1> &amp; friends"
    assert parse_mrkdwn(text, {"U1": "ana"}) == (
        Segment("link", "A <b> title", "https://a.example/p?x=1&y=2", bold=True),
        Segment("text", " for "),
        Segment("mention", "ana"),
        Segment("text", " & friends"),
    )


def test_the_page_escapes_whatever_the_texts_hold() -> None:
    hostile = "<script>alert(1)</script> &lt;img src=x onerror=alert(2)&gt;"
    blocks = [
        {"type": "section", "text": {"type": "mrkdwn", "text": f'*<https://e.example/"onmouseover=x|{hostile}>*'}},
        {"type": "context", "elements": [{"type": "mrkdwn", "text": f"by <@U1> {hostile}"}]},
        {"type": "actions", "elements": [{"text": {"text": "<b>Save</b>"}}]},
    ]
    from bot.demo.slack_page import Rendered, _block

    names = {"U1": "<i>mallory</i>"}
    page = (
        templates("bot.demo")
        .get_template("slack_page.html.j2")
        .render(
            channel="<lab>",
            messages=[Rendered("Mon", " · <x>", tuple(_block(b, names) for b in blocks))],
            footer="<b>demo</b>",
        )
    )
    assert "<script" not in page and "<img" not in page and "<i>" not in page and "<b>Save" not in page
    assert "&lt;script&gt;" in page and "@&lt;i&gt;mallory" in page and "# &lt;lab&gt;" in page
    assert "&lt;b&gt;demo&lt;/b&gt;" in page
    assert 'href="https://e.example/&#34;onmouseover=x"' in page, "a quote cannot leave the attribute"


def test_the_pages_are_written_as_the_utf_8_they_declare(tmp_path: Path) -> None:
    """Where Python's locale encoding is not UTF-8 (a Windows code page, an ASCII ``C`` locale), a page still
    holds the bytes its ``<meta charset="utf-8">`` promises: a title in any script, not a crash or mojibake."""
    title = "Straße — 東京 · Ελληνικά"
    writer = (
        "import sys; from datetime import datetime, UTC; from pathlib import Path\n"
        "from bot.demo.fulltext_scene import write_club_pieces\n"
        f"block = {{'type': 'section', 'text': {{'type': 'mrkdwn', 'text': {title!a}}}}}\n"
        "write_club_pieces(Path(sys.argv[1]), {'post': (datetime(2024, 1, 1, tzinfo=UTC), '', [block])}, {})\n"
    )
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "PYTHONUTF8": "0", "PYTHONCOERCECLOCALE": "0"}
    done = subprocess.run([sys.executable, "-c", writer, str(tmp_path)], env=env, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode(errors="replace")[-600:]
    page = (tmp_path / "pieces" / "post.html").read_bytes().decode("utf-8")
    assert title in page and '<meta charset="utf-8">' in page
