"""The group's memory on the ACL lab of ``tests/support/labbase.py``, with the real embedding model and Postgres:
a question finds the channel's papers by their words and by their meaning, a discussion question brings the
thread's replies, "who knows" names members from what they did (never a member who turned mentions off),
"what did I miss" lists what happened since the member last engaged, and a written answer that names a paper
not retrieved is refused."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from socialrag.db import Database
from socialrag.recommender import MemoryAnswer, ask_memory
from socialrag.recommender.retrieve.memory import question_kind, topic_words
from tests.support.labbase import SHARED, CachedEmbedder, build_lab

T, C = "T0LAB", "C1"
NOW = datetime(2021, 3, 1, tzinfo=UTC)
PERIOD_NOW = datetime(2021, 1, 18, 9, 0, tzinfo=UTC)


@pytest.fixture
def lab(db: Database, tmp_path: Path) -> dict[str, Any]:
    return build_lab(db, tmp_path, CachedEmbedder())


def ask(db: Database, question: str, asker: str = "U2", llm: Any = None) -> MemoryAnswer:
    embedder = CachedEmbedder()

    def encode(text: str) -> np.ndarray:
        return np.asarray(embedder.encode([text])[0])

    with db.connection() as conn:
        return ask_memory(conn, "all-MiniLM-L6-v2", encode, T, [C], asker, question, llm, NOW)


def titles(answer: MemoryAnswer) -> list[str]:
    return [i.title for i in answer.items]


def test_the_kinds_of_question() -> None:
    assert question_kind("What have we read about retrieval-augmented generation?") == "papers"
    assert question_kind("Did anyone share the DPO paper?") == "papers"
    assert question_kind("Where did we discuss evaluation of summarization, and what did people think?") == "discussion"
    assert question_kind("Who here knows about speech translation?") == "who"
    assert question_kind("What did I miss in #nlp-reading this month?") == "missed"
    assert topic_words("What have we read about retrieval-augmented generation?") == [
        "retrieval",
        "augmented",
        "generation",
    ]


def test_a_paper_is_found_by_its_words_and_by_its_meaning(db: Database, lab: dict[str, Any]) -> None:
    by_words = ask(db, "Did anyone share the TaBERT paper?")
    assert titles(by_words)[0].startswith("TaBERT"), titles(by_words)
    first = by_words.items[0]
    assert first.shared_by == "U2" and first.shared_by_name == "ben" and first.ids.get("acl") == SHARED["tabert"]
    assert first.shared_at.date().isoformat() == "2020-12-01" and first.reactions == 1
    # in other words than the title's: backdoors planted in pretrained weights
    by_meaning = ask(db, "What have we read about planting backdoors in pre-trained language models?")
    assert "Weight Poisoning" in titles(by_meaning)[0], titles(by_meaning)
    assert by_meaning.items[0].replies == 2 and by_meaning.items[0].permalink


def test_a_discussion_question_brings_the_threads_replies(db: Database, lab: dict[str, Any]) -> None:
    answer = ask(db, "Where did we discuss the RIPPLe regulariser, and what did people think?")
    assert answer.kind == "discussion"
    first = answer.items[0]
    assert "Weight Poisoning" in first.title
    assert any("RIPPLe regulariser is a neat trick" in g for g in first.gist) and first.gist[0].startswith("chen:")


def test_who_knows_names_members_from_what_they_did_never_one_with_mentions_off(
    db: Database, lab: dict[str, Any]
) -> None:
    answer = ask(db, "Who here knows about poisoning attacks on pretrained models?")
    names = [p.name for p in answer.people]
    assert names and names[0] == "ben", names  # shared it and the thread followed
    assert "dee" not in names, "U4 turned mentions off: never named"


def test_what_did_i_miss_lists_what_happened_since_the_member_last_engaged(db: Database, lab: dict[str, Any]) -> None:
    answer = ask(db, "What did I miss?", asker="U4")  # U4 last shared on 10 Dec 2020
    assert answer.kind == "missed" and answer.since is not None and answer.since.date().isoformat() == "2020-12-10"
    assert answer.items and all(i.shared_at.date().isoformat() >= "2020-12-10" for i in answer.items)
    # "what did I miss about X" keeps to X: the same time, only the papers on the topic
    every = {i.paper_id for i in answer.items}
    assert len(every) > 1
    wanted = answer.items[-1]
    about = ask(db, f"What did I miss about {wanted.title}?", asker="U4")
    assert about.kind == "missed" and about.words and about.since == answer.since
    got = [i.paper_id for i in about.items]
    assert got and got[0] == wanted.paper_id and set(got) <= every and len(got) < len(every), about.items


def test_a_paper_is_found_by_its_authors_and_venue(db: Database, lab: dict[str, Any]) -> None:
    answer = ask(db, "Did anyone share something by Neubig?")
    assert answer.items and all("Neubig" in " ".join(a.name for a in _authors(db, i.paper_id)) for i in answer.items)


def _authors(db: Database, paper_id: int) -> list[Any]:
    from socialrag.storage.context_rows import load_paper_infos

    with db.connection() as conn:
        return list(load_paper_infos(conn, [paper_id])[paper_id].authors)


def test_paperping_ask_on_the_command_line_prints_json(
    db: Database,
    lab: dict[str, Any],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    from bot.cli import main

    monkeypatch.setenv("DATABASE_URL", db.conninfo)
    monkeypatch.setenv("PAPERPING_OFFLINE", "1")
    monkeypatch.setenv("PAPERPING_HOME", str(tmp_path / "home"))
    assert main(["ask", "nlp-lab", "Did anyone share the TaBERT paper?", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["answer"] is None and out["kind"] == "papers"
    first = out["papers"][0]
    assert first["acl_id"] == SHARED["tabert"] and first["shared_by"] == "ben" and first["title"].startswith("TaBERT")
    assert first["permalink"].startswith("https://lab.slack.com/archives/C1/p") and first["shared_at"].startswith(
        "2020-12-01"
    )
    assert set(first) >= {"title", "doi", "arxiv_id", "acl_id", "url", "shared_by", "shared_at", "permalink"}
    # a C1 control (U+009B starts an escape sequence, as ESC [ does) or a right-to-left override in what is
    # printed reaches the terminal as JSON's \uXXXX, and the JSON still reads back the same
    crafted = "Did anyone share the TaBERT paper? \x9b2J\x9b31m \u202eevil \x85"
    assert main(["ask", "nlp-lab", crafted, "--json"]) == 0
    printed = capsys.readouterr().out
    assert not any(0x80 <= ord(ch) <= 0x9F or ch in "\u202e\x1b" for ch in printed), ascii(printed)
    assert "\\u009b2J" in printed and "\\u202eevil" in printed
    assert json.loads(printed)["question"] == " ".join(crafted.split())


def test_a_question_that_names_a_time_answers_from_that_time(db: Database, lab: dict[str, Any]) -> None:
    """ "What did we read in December?" named no topic and found nothing: it lists December's shares now. A topic
    and a time keep the topic's papers of that time; the time's words are not searched for."""
    from bot.views.memory_text import render_answer

    december = ask(db, "What did we read in December?")
    assert december.kind == "papers" and december.period == "in Dec 2020" and december.words == ()
    assert december.items and {i.shared_at.month for i in december.items} == {12}, titles(december)
    assert any(i.title.startswith("TaBERT") for i in december.items)
    text = render_answer(december, {C: "nlp-lab"})
    assert text.startswith("*What #nlp-lab read in Dec 2020*, the most discussed first:"), text
    # last month, from 1 March 2021: February, and only its one share
    february = ask(db, "what did we read last month?")
    assert february.period == "last month (Feb 2021)" and [i.shared_at.month for i in february.items] == [2]
    # a topic and a time: the poisoning paper was shared in November, not in December
    assert titles(ask(db, "What did we read about poisoning in December?")) == []
    assert "Weight Poisoning" in titles(ask(db, "What did we read about poisoning in November?"))[0]
    discussed = ask(db, "What did we discuss in November?")
    assert discussed.kind == "discussion" and "Weight Poisoning" in discussed.items[0].title and discussed.items[0].gist
    nothing = ask(db, "what did we read in 2019?")
    assert nothing.items == () and render_answer(nothing, {C: "nlp-lab"}) == "No paper was shared in #nlp-lab in 2019."


def test_who_shared_the_most_names_members_by_what_they_did_never_one_with_mentions_off(
    db: Database, lab: dict[str, Any]
) -> None:
    from bot.views.memory_text import render_answer

    everyone = ask(db, "Who shared the most papers?")
    assert everyone.kind == "who" and everyone.items == ()  # the people are the answer
    ben = next(p for p in everyone.people if p.name == "ben")
    assert (ben.shared, ben.replied) == (3, 0), ben  # weight poisoning, TaBERT, and February's paper
    assert "dee" not in [p.name for p in everyone.people], "U4 turned mentions off: never named"
    december = ask(db, "Who was most active in December?")
    assert december.period == "in Dec 2020"
    by_name = {p.name: p for p in december.people}
    assert by_name["ben"].shared == 1 and by_name["chen"].shared == 2, by_name  # only what they did in December
    text = render_answer(december, {C: "nlp-lab"})
    assert "*Who in #nlp-lab has engaged most with its papers in Dec 2020*" in text and "<@" not in text
    assert "• chen: shared 2 papers" in text, text


def test_a_time_is_counted_in_the_channels_timezone_else_the_workspaces(db: Database, lab: dict[str, Any]) -> None:
    """TaBERT was shared at 10:00 UTC on 1 December 2020: 23:00 on 30 November in Pago Pago (UTC-11)."""
    from socialrag import storage

    assert any(i.title.startswith("TaBERT") for i in ask(db, "What did we read in December?").items)
    with db.connection() as conn:
        conn.execute("UPDATE teams SET timezone = 'Pacific/Pago_Pago' WHERE team_id = %s", (T,))
        assert storage.workspaces.load_channel_timezone(conn, T, C) == "Pacific/Pago_Pago"
    assert not any(i.title.startswith("TaBERT") for i in ask(db, "What did we read in December?").items)
    assert any(i.title.startswith("TaBERT") for i in ask(db, "What did we read in November?").items)
    with db.connection() as conn:  # the channel's own (set with `hours`) comes before the workspace's
        storage.settings.upsert_channel_setting(conn, T, C, timezone="UTC")
        assert storage.workspaces.load_channel_timezone(conn, T, C) == "UTC"
    assert any(i.title.startswith("TaBERT") for i in ask(db, "What did we read in December?").items)


def test_the_words_of_a_time_are_not_searched_as_a_topic() -> None:
    from socialrag.recommender.retrieve.periods import split_period

    period, rest = split_period("What did we read about summarization in December?", PERIOD_NOW)
    assert period is not None and topic_words(rest) == ["summarization"]
    assert topic_words(split_period("What did we read yesterday?", PERIOD_NOW)[1]) == []
    # asking who, not about a topic; "active learning" stays one
    assert topic_words("Who was most active last month?") == []
    assert topic_words("Who knows about active learning?") == ["active", "learning"]


def test_an_answer_never_names_or_quotes_a_member_who_left_or_turned_mentions_off(
    db: Database, lab: dict[str, Any]
) -> None:
    """ "Who knows" leaves such members out, and so does every other part of an answer: the paper list says "a
    member" for their shares, their replies are not quoted, and the written answer's prompt never holds their name.
    U4 (dee) turned mentions off; U3 (chen), who replied in the weight-poisoning thread, has left the channel."""
    from socialrag import storage
    from tests.support.openai_standin import OpenAIStandIn

    with db.connection() as conn:
        storage.workspaces.remove_channel_member(conn, T, C, "U3")
    model = OpenAIStandIn(lambda prompt: "The group read [1].")
    try:
        from socialrag.recommender.explain.llm import LLMClient

        llm = LLMClient(model="m", base_url=model.base_url, api_key="key")
        december = ask(db, "What did we read in December 2020?", llm=llm)
        sharers = {i.shared_by: i.shared_by_name for i in december.items}
        assert sharers.get("U4", "absent") is None and sharers.get("U2") == "ben", sharers
        discussed = ask(db, "Where did we discuss the RIPPLe regulariser, and what did people think?", llm=llm)
        gist = [line for item in discussed.items for line in item.gist]
        assert gist and not any(line.startswith("chen") or "neat trick" in line for line in gist), gist
        prompts = "\n".join(model.prompts)
        assert model.prompts and "dee" not in prompts and "chen" not in prompts and "neat trick" not in prompts
        assert "shared by a member" in prompts, "dee's share is a member's, not PaperPing's"
    finally:
        model.stop()


def test_who_knows_across_channels_ranks_every_channels_members_together(
    db: Database, lab: dict[str, Any], tmp_path: Path
) -> None:
    """Asked of several channels (the panel with no channel in view), "who knows" ranks their members together:
    the member who shared most on the topic, in a later channel, comes first, ahead of an earlier channel's
    members who only reacted once."""
    from bot.slack.workspace_export import import_export
    from socialrag.recommender import ask_memory
    from tests.support.exports import msg, user
    from tests.support.exports import write_export as export_of
    from tests.support.labbase import t

    weight, others = SHARED["weight"], lab["others"]
    readers = [f"U{k}" for k in range(5, 11)]

    def channel(sharer: str, replier: str, day: str, reactions: list[str]) -> list[dict[str, Any]]:
        """A share of the topic's paper with a reply in its thread, reacted to; and a share of another paper."""
        root = f"{t(day):.6f}"
        return [
            msg(t(day), sharer, f"<https://aclanthology.org/{weight}/|poisoning pretrained weights>", thread_ts=root,
                reply_count=1, reactions=[{"name": "+1", "users": reactions, "count": len(reactions)}] if reactions else []),
            msg(t(day, 11), replier, "the poisoning attack on pretrained weights survives fine-tuning", thread_ts=root),
            msg(t(day, 12), sharer, f"<https://aclanthology.org/{others[0]}/> more on pretrained weights"),
        ]  # fmt: skip

    # the first channel: six members who each did one thing on the topic; the later one: one member who did it all
    crowd = channel("U5", "U6", "2020-11-05", readers[2:])
    expert = channel("U11", "U11", "2020-11-06", [])
    users = [user(u, f"reader{u[1:]}") for u in readers] + [user("U11", "zed")]
    path = export_of(
        tmp_path / "more.zip",
        {"crowd": ("C7", readers, crowd), "experts": ("C8", ["U11", *readers[:1]], expert)},
        users,
    )
    import_export(db, path, domain="lab", progress=False)
    embedder = CachedEmbedder()
    with db.connection() as conn:
        answer = ask_memory(
            conn,
            "all-MiniLM-L6-v2",
            lambda text: np.asarray(embedder.encode([text])[0]),
            T,
            ["C7", "C8"],
            "U5",
            "Who knows about poisoning pretrained weights?",
            None,
            NOW,
        )
    names = [p.name for p in answer.people]
    assert names and names[0] == "zed", names
    assert len(names) <= 5


def test_a_question_with_no_latin_words_is_still_searched_by_its_meaning(db: Database, lab: dict[str, Any]) -> None:
    """A question in a script the keyword search cannot read (Chinese, emoji) is searched by its meaning, from the
    question as the member wrote it: never skipped."""
    embedder = CachedEmbedder()
    asked: list[str] = []

    def encode(text: str) -> np.ndarray:
        asked.append(text)
        return np.asarray(embedder.encode([text])[0])

    for question in ("我们读过关于表格预训练的论文吗？", "📊🤖?"):
        with db.connection() as conn:
            answer = ask_memory(conn, "all-MiniLM-L6-v2", encode, T, [C], "U2", question, None, NOW)
        assert asked[-1] == question and answer.words == ()
    # a question of asking words only names no topic: nothing is searched, rather than whatever is close to "read"
    with db.connection() as conn:
        nothing = ask_memory(conn, "all-MiniLM-L6-v2", encode, T, [C], "U2", "What have we read?", None, NOW)
    assert asked[-1] != "What have we read?" and not nothing.items


def test_forget_me_takes_the_members_name_out_of_paperpings_posts_and_written_answers(
    db: Database, lab: dict[str, Any]
) -> None:
    """A post of PaperPing's that @-mentioned or named the member no longer does after `forget-me`: thread search
    does not find them by their name. Another member's name, and a word that merely holds the name ("chenille"),
    stay. The written answers the model gave in the workspace, which may quote the member, are cleared."""
    from socialrag import storage
    from socialrag.storage.history_search import load_thread_matches

    with db.connection() as conn:
        conn.execute("UPDATE teams SET bot_user_id = 'UBOT' WHERE team_id = %s", (T,))
        conn.execute(
            """
            INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at)
            VALUES (%s, %s, '1700003000.000100', 'UBOT', 'A paper for <@U3> and chen, and for ben: chenille', now())
            """,
            (T, C),
        )
        conn.execute(
            """
            INSERT INTO llm_calls (team_id, channel_id, prompt_name, prompt_version, prompt_hash, model, latency_ms,
                                   outcome, output)
            VALUES (%s, %s, 'ask', 1, 'h', 'm', 1, 'ok', 'Chen shared [1]; ben replied.')
            """,
            (T, C),
        )
        assert load_thread_matches(conn, T, C, "chen", 10)
        storage.privacy.forget_member(conn, T, "U3")
        post = conn.execute("SELECT text FROM messages WHERE ts = '1700003000.000100'").fetchone()[0]
        answer = conn.execute("SELECT output FROM llm_calls WHERE prompt_name = 'ask'").fetchone()[0]
        assert "U3" not in post and "chen," not in post and "ben" in post and "chenille" in post, post
        assert answer is None, answer
        assert not [r for r in load_thread_matches(conn, T, C, "chen", 10) if r[0] == "1700003000.000100"]


def test_an_answer_reads_channels_and_asks_the_llm_only_while_its_time_lasts(db: Database, lab: dict[str, Any]) -> None:
    """Finding 9: an answer over many channels has a time budget. With its time already spent, the first channel
    is still searched, the others are said as left out, and the LLM is not asked (a note says why)."""
    import time

    from bot.views.memory_text import render_answer
    from socialrag.recommender import ask_memory
    from socialrag.recommender.explain.llm import LLMClient

    calls: list[str] = []

    class Recording(LLMClient):
        def __init__(self) -> None:  # the budget logic only: no server
            self.model, self.client, self.recorder, self.budget, self.until = "m", None, None, None, None

    llm = Recording().with_deadline(time.monotonic() + 1.0)  # less than LEAST_TIME left
    embedder = CachedEmbedder()
    with db.connection() as conn:
        answer = ask_memory(
            conn, "all-MiniLM-L6-v2", lambda t: np.asarray(embedder.encode([t])[0]), T, [C, "C404", "C405"], "U2",
            "what have we read about attention explanations?", llm, NOW, until=time.monotonic(),
        )  # fmt: skip
    assert answer.channels == (C,) and answer.unsearched == 2
    assert answer.items and answer.text is None and answer.note == "there was no time left to write it"
    assert not calls
    text = render_answer(answer, {C: "nlp-lab"})
    assert "_No written answer: there was no time left to write it._" in text
    assert text.endswith(
        "_I searched 1 of your 3 channels in the time an answer has; ask beside one of the others to search it._"
    )


def test_over_several_channels_a_time_is_counted_in_the_askers_own_timezone(db: Database, lab: dict[str, Any]) -> None:
    """Finding 11: asked over several channels (the Messages tab with none in view), "December" is the asker's
    December, whatever the first channel's timezone; asked of one channel, it stays that channel's."""
    from socialrag import storage
    from socialrag.recommender import ask_memory

    embedder = CachedEmbedder()

    def december(channels: list[str]) -> bool:
        with db.connection() as conn:
            answer = ask_memory(
                conn, "all-MiniLM-L6-v2", lambda t: np.asarray(embedder.encode([t])[0]), T, channels, "U2",
                "What did we read in December?", None, NOW,
            )  # fmt: skip
        return any(i.title.startswith("TaBERT") for i in answer.items)

    with db.connection() as conn:
        storage.settings.upsert_channel_setting(conn, T, C, timezone="UTC")
        conn.execute("UPDATE members SET timezone = 'Pacific/Pago_Pago' WHERE team_id = %s AND user_id = 'U2'", (T,))
        assert storage.workspaces.load_member_timezone(conn, T, "U2") == "Pacific/Pago_Pago"
        assert storage.workspaces.load_member_timezone(conn, T, "U404") == "Europe/Berlin", "unknown: the workspace's"
    assert december([C]), "one channel: its own timezone (UTC), where TaBERT's share is in December"
    assert not december([C, "C2EMPTY"]), "several: the asker's, where it was still 30 November"


def test_an_answer_as_of_a_date_counts_no_later_thread_words_or_saves(db: Database, lab: dict[str, Any]) -> None:
    """Finding 12: `paperping ask --as-of` replays the channel as it was: a reply posted after that date does not
    make its thread match, and a save made after it is not counted."""
    from socialrag import storage
    from socialrag.recommender import ask_memory
    from tests.support.labbase import t

    root = f"{t('2020-11-02'):.6f}"
    embedder = CachedEmbedder()
    with db.connection() as conn:
        conn.execute(
            """
            INSERT INTO messages (team_id, channel_id, ts, user_id, text, posted_at, thread_ts)
            VALUES (%s, %s, %s, 'U4', 'reminds me of the zebrafish study', '2021-02-15T10:00:00Z', %s)
            """,
            (T, C, f"{t('2021-02-15'):.6f}", root),
        )
        weight = conn.execute("SELECT paper_id FROM paper_ids WHERE value = %s", (SHARED["weight"],)).fetchone()[0]
        storage.reading_list.save_paper(conn, T, C, weight, "U4", datetime(2021, 2, 20, tzinfo=UTC))

    def found(question: str, at: datetime) -> dict[str, int]:
        with db.connection() as conn:
            answer = ask_memory(
                conn, "all-MiniLM-L6-v2", lambda x: np.asarray(embedder.encode([x])[0]), T, [C], "U2", question,
                None, at,
            )  # fmt: skip
        return {i.title: i.saves for i in answer.items}

    before, after = datetime(2021, 2, 10, tzinfo=UTC), NOW
    assert not any(title.startswith("Weight") for title in found("what have we read about zebrafish?", before))
    assert any(title.startswith("Weight") for title in found("what have we read about zebrafish?", after))
    saves = found("what have we read about weight poisoning?", before)
    assert [n for title, n in saves.items() if title.startswith("Weight")] == [0]
    saves = found("what have we read about weight poisoning?", after)
    assert [n for title, n in saves.items() if title.startswith("Weight")] == [1]


def test_a_name_inside_a_link_is_found_and_a_stop_word_is_not(db: Database, lab: dict[str, Any]) -> None:
    """A name Postgres' parser keeps inside a longer token (a repository's address) is still a word of the paper;
    a stop word the index leaves out ("same") is not matched by its letters either."""
    from socialrag import storage

    with db.connection() as conn:
        weight = conn.execute("SELECT paper_id FROM paper_ids WHERE value = %s", (SHARED["weight"],)).fetchone()[0]
        conn.execute(
            "UPDATE papers SET abstract = abstract || ' Code: https://github.com/lab/Zorbnik-kit and the same data.' "
            "WHERE id = %s",
            (weight,),
        )
        held, _, _ = storage.history_search.load_keyword_candidates(conn, [weight], ["zorbnik", "same"])
    assert held == {weight: {"zorbnik"}}
    assert titles(ask(db, "which papers use Zorbnik?"))[0].startswith("Weight Poisoning")
