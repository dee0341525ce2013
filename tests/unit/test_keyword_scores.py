"""The group's memory ranks papers by the question's words as BM25 does (``keyword_scores``): a paper holding
more of the question's distinctive words comes first, common words included; one word of a title does not beat
an abstract holding them all."""

from __future__ import annotations

from socialrag.recommender.retrieve.keywords import TermCounts, keyword_scores

QUESTION = ("evalu", "method", "calcul", "introduc", "dataset")


def channel(target_words: dict[str, tuple[int, int]]) -> TermCounts:
    """700 papers; five titled "Evaluation ..." (one title word each); the sought paper's abstract as given;
    "method" and "dataset" in a third of all abstracts."""
    counts: dict[int, dict[str, tuple[int, int]]] = {pid: {"evalu": (1, 0)} for pid in range(1, 6)}
    for pid in range(10, 240):
        counts[pid] = {"method": (0, 1), "dataset": (0, 2)}
    counts[999] = target_words
    lengths = dict.fromkeys(counts, 80)
    return TermCounts(counts, lengths, 80.0, {}, 700)


def test_a_paper_whose_abstract_holds_all_the_words_beats_papers_with_one_title_word() -> None:
    scores = keyword_scores(channel({w: (0, 1) for w in QUESTION}))
    best = max(scores, key=lambda pid: scores[pid])
    assert best == 999, sorted(scores.items(), key=lambda x: -x[1])[:6]


def test_more_of_a_word_counts_less_and_less_and_rare_words_count_more() -> None:
    once = keyword_scores(channel({"calcul": (0, 1)}))[999]
    often = keyword_scores(channel({"calcul": (0, 10)}))[999]
    assert once < often < 3 * once, "a word said ten times is not ten times the evidence"
    common = keyword_scores(channel({"method": (0, 1)}))[999]
    assert common < once, "a word a third of the channel's papers hold says less"


def test_an_author_venue_or_year_named_counts_as_a_title_word() -> None:
    """A word naming an author, the venue or the year counts as a word of the paper: a paper of EMNLP 2018 is found
    by "EMNLP 2018" as one whose abstract says it twice is, and before one matching a single author's name."""
    found = TermCounts(
        {6: {"2018": (0, 2), "emnlp": (0, 2)}}, {6: 80}, 80.0, {7: {"neubig"}}, 700, {8: {"emnlp", "2018"}}
    )
    scores = keyword_scores(found)
    assert scores[6] >= scores[8] > scores[7] > 0
    assert keyword_scores(TermCounts({}, {}, 0.0, {}, 0)) == {}


def test_words_are_compared_as_written_a_plurals_s_aside() -> None:
    from socialrag.recommender.retrieve.keywords import word_forms

    assert word_forms("Tables, Datasets and an Analysis of BIAS in Ünïcode") == [
        "table", "dataset", "and", "an", "analysis", "of", "bias", "in", "unicode",
    ]  # fmt: skip


def test_a_word_is_as_common_as_the_records_that_say_it_anywhere() -> None:
    """ "2018" in one abstract is not rare when every paper of 2018 says it by its year: one paper of EMNLP 2018
    is never behind a paper of EMNLP 2019 whose abstract cites a work of 2018 (a word counts once per paper,
    wherever the paper's record says it, as BM25 over the whole record counts it; counted from abstracts alone,
    "2018" was rare and the citing paper won by far)."""
    year_2018 = {pid: {"2018"} for pid in range(100, 300)}
    found = TermCounts(
        {5: {"2018": (0, 1)}},  # EMNLP 2019, citing "(2018)"
        {5: 80},
        80.0,
        {},
        700,
        {**year_2018, 5: {"emnlp"}, 6: {"emnlp", "2018"}},  # paper 6: EMNLP 2018
    )
    scores = keyword_scores(found)
    assert scores[6] >= scores[5], scores


def test_a_name_said_twice_by_an_authors_name_and_names_folded_as_typed() -> None:
    """ "Yang Yang" holds the name twice; "Vulić", "Grießhaber" and "Müller" are found as typed plainly; "news" is
    not "new"."""
    from socialrag.recommender.retrieve.keywords import fold_words, word_forms

    once = TermCounts({}, {}, 80.0, {1: {"yang"}, 2: {"yang"}}, 700, {}, {1: {"yang": 2}, 2: {"yang": 1}})
    scores = keyword_scores(once)
    assert scores[1] > scores[2]
    assert word_forms("Ivan Vulić, Daniel Grießhaber, Thomas Müller") == [
        "ivan", "vulic", "daniel", "griesshaber", "thoma", "muller",
    ]  # fmt: skip
    assert fold_words("Søren Łukasz") == "soren lukasz"
    assert word_forms("Multi-News: a news dataset") == ["multi", "news", "a", "news", "dataset"]
