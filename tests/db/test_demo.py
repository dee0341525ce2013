"""`paperping demo` end to end in a temporary home, offline."""

from __future__ import annotations

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from bot.cli import main

pytestmark = pytest.mark.slow


def test_demo_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    out = tmp_path / "out"
    assert main(["demo", "--home", str(tmp_path / "home"), "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    assert printed.count("── Recommendation ") == 3
    assert "The loop:" in printed
    profile = printed.split("What PaperPing believes the lab reads", 1)[1].split("\n\n", 1)[0]
    assert "summarization" in profile and "bias, gender" in profile and "question" in profile, profile
    # the week's eight picks serve the whole group, not only its loudest topic
    covered = re.search(r"Coverage of the week: (\d+) of the channel's (\d+) topics .* of the 8 picks", printed)
    assert covered and int(covered[1]) >= 3 and int(covered[2]) >= 3, printed[-3000:]
    # the group's reactions move the next ranking: a paper close to the liked post rises, and the demo names it
    loop = printed.split("── The loop", 1)[1].split("\n── ", 1)[0]
    risen = re.findall(r"\+(\d\.\d+)  .+  \[#(\d+) → #(\d+)\]", loop)
    assert risen and all(float(d) > 0 and int(new) < int(old) for d, old, new in risen), loop
    assert printed.count("Signals behind it:") == 3 and printed.count("Passed over (highest score first):") == 3
    assert printed.count("  Picked at score ") == 3
    assert "{@" not in printed and "<@" not in printed, "mentions are shown as names"
    assert re.search(r"h[1-9]: .*\| from https://nlp-lab-demo\.slack\.com/archives/C0DEMO/p\d+", printed)
    posts = json.loads((out / "blocks.json").read_text())
    assert len(posts) == 3
    titles = set()
    for post in posts:
        kinds = [b["type"] for b in post["blocks"]]
        assert kinds[:3] == ["section", "context", "section"], "headline, authors and venue, explanation"
        head, explanation = post["blocks"][0]["text"]["text"], post["blocks"][2]["text"]["text"]
        assert re.fullmatch(r"\*<https://aclanthology\.org/[^|>]+\|[^>*]+>\*", head), "the title is the headline"
        assert 0 < len(explanation) <= 500
        assert explanation.count("*") <= 6, "at most three bold phrases"
        titles.add(head)
    assert len(titles) == 3, "three different papers"
    page = (out / "index.html").read_text()
    assert page.startswith("<!doctype html>") and page.count('class="msg"') == 6 and "nlp-reading" in page
    # the lab's report, with the loop: the reactions on the first post
    report = (out / "report" / "index.html").read_text()
    assert report.count("<svg") == 6 and ":+1: ×2, :fire: ×1, saved ×1; 1 reply" in report
    # each post carries the buttons; the first one's Save click put its paper on the lab's reading list
    assert printed.count("[ Relevant ] [ Not for us ] [ Save") == 3 + 5, "three posts and a digest of five"
    # a member's share gets a context reply: its gist, and the earlier thread it relates to, linked
    reply = printed.split("── Context on a share")[1].split("\n── ")[0]
    assert "↳ Gist: " in reply and "↳ Earlier thread: " in reply and "archives/C0DEMO/p" in reply
    # the weekly digest: five papers, no two hung on the same earlier thread
    digest = printed.split("── A weekly digest")[1].split("· The lab's reading list")[0]
    assert digest.count("[ Relevant ] [ Not for us ] [ Save ]") == 5
    threads = re.findall(r"↳ Earlier thread: .*\((https://[^)]+)\)", digest)
    assert len(threads) == len(set(threads))
    first_title = re.sub(r"\*<[^|]+\|([^>]+)>\*", r"\1", posts[0]["blocks"][0]["text"]["text"])
    assert "The lab's reading list (`/paperping list`, newest first; @" in printed
    top = printed.split("The lab's top list (`/paperping top month`")[1].split("\n\n")[0]
    assert re.search(r"\n    1\. .+ — .*\d+ reactions?.* · @", top), "the top list, with what each paper drew and who"
    assert first_title in top.split("\n")[1], "the first post drew the most: three reactions, a reply and a save"
    # a member asks what the lab read about a topic: the channel's papers on it, with who shared them and when
    asked = printed.split("── A member asks, mentioning @PaperPing")[1].split("\n\n")[0]
    assert "*What #nlp-reading read about gender bias*:" in asked and "Gender Bias" in asked
    # a time and no topic: the week before the digest's Monday, PaperPing's three posts and farid's share
    week = asked.split("And “What did we read last week?”:")[1]
    assert "*What #nlp-reading read last week (11 Jan to 17 Jan)*" in week and week.count("— posted by PaperPing") == 3
    assert re.search(r"\n  1\. .+ — shared by \w+ on \d\d \w{3} 20\d\d", asked), asked
    assert "What #nlp-reading read about gender bias" in page, "the answer is on the demo's page too"
    # one page per thing a member sees, from which the documentation's pictures are made
    from bot.demo.pictures import PICTURES, make_pictures

    pieces = out / "pieces"
    assert {p.stem for p in pieces.glob("*.html")} == set(PICTURES) - {"report"}
    assert "What I believe this channel reads" in (pieces / "profile.html").read_text()
    assert "Your settings" in (pieces / "home.html").read_text() and "<@" not in (pieces / "home.html").read_text()
    # the journal club whose papers PaperPing read in full: a post naming the section that meets nadia's reply, and
    # an answer in its thread quoting the passage that holds it, with its section
    club_post, club_answer = (pieces / "fulltext-post.html").read_text(), (pieces / "fulltext-answer.html").read_text()
    assert "bio-journal-club" in club_post and "Materials and Methods › Laboratory tests" in club_post
    assert "which nadia raised on 3 Mar" in club_post and "<@" not in club_post and "@nadia" not in club_post
    assert "From <b>Discussion</b>" in club_answer
    assert "125 animals were bled at approximately 45-day intervals" in club_answer
    assert "open-access papers (PLOS, CC BY)" in club_answer and "ACL Anthology" not in club_answer
    if shutil.which("chromium") or os.environ.get("PAPERPING_REQUIRE_CHROMIUM"):
        made = make_pictures(out, out / "pictures")
        assert [p.stem for p in made] == list(PICTURES) and all(p.stat().st_size > 5_000 for p in made)
    follow_up = printed.split("· A follow-up (`/paperping follow-ups`")[1].split("\n\n")[0]
    assert "in the thread of " in follow_up and "↳ A new paper builds on this one" in follow_up
    assert re.search(rf"\n    {re.escape(first_title)} — saved by .*@ines", printed), "the first post's paper, saved"
    assert [b["type"] for b in posts[0]["blocks"]][-1] == "actions" and "Save · 1" in json.dumps(
        posts[0]["blocks"], ensure_ascii=False
    )
    assert page.count('class="button"') == 9 + 15, "three posts and a digest of five"
    assert "the weekly digest" in page and "in the thread of @farid" in page and "Gist: " in page
    assert sorted(p.name for p in (out / "report").glob("*.png")) == [
        "activity.png",
        "emoji.png",
        "paperping.png",
        "papers.png",
        "people.png",
        "topics.png",
    ]
    assert "learning the channel's ranking from its history: Ranking:" in printed
    # a second run on the same home (warm) tells the same story
    assert main(["demo", "--home", str(tmp_path / "home"), "--out", str(out)]) == 0
    again = capsys.readouterr().out
    assert again.count("── Recommendation ") == 3 and again.count("── #bio-journal-club") == 1
    assert json.loads((out / "blocks.json").read_text()) == posts


def test_the_demo_without_a_home_leaves_no_database_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without ``--home`` the demo works in a temporary home and, as its last line says, keeps none of it: its
    database (180 MB) goes with the process's end, and the posts, pictures and report stay in ``--out``."""
    import tempfile

    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temporary))
    out = tmp_path / "out"
    assert main(["demo", "--out", str(out)]) == 0
    printed = capsys.readouterr().out
    home = Path(re.search(r"PaperPing demo · home (\S+)", printed).group(1))  # type: ignore[union-attr]
    assert home.parent == temporary and not home.exists()
    assert "Keep the data with --home DIR" in printed
    assert (out / "blocks.json").exists() and (out / "index.html").exists() and (out / "report").is_dir()
