"""Link parsing stays cheap on messages built to be expensive: every live message and edit is parsed as it
arrives, and Slack lets one message run to 40 KB.

Speed itself is not measured here (a unit test on a shared machine is no stopwatch): the cost test checks only
that four times the text costs nowhere near sixteen times the work, which a pattern that rescans the rest of
the message from every candidate start cannot meet."""

from __future__ import annotations

import re
import time

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from socialrag.knowledge.journal_links import _DOI_IN_PATH, _PATH_DOI, _search_tail
from socialrag.knowledge.links import MAX_URL_CHARS, find_paper_refs, parse_paper_url

# (start, repeated unit, end): each made a 40 KB message that cost seconds to parse when the patterns rescanned
HOSTILE = {
    "a DOI path on a journal host ending in %3F": ("https://www.frontiersin.org", "/10.1234/a", "%3F"),
    "a /doi/ path on any host ending in %3F": ("https://example.com", "/doi/10.1234/a", "%3F"),
    "Slack links that never close": ("", "<http://x", ""),
    "Slack links whose labels never close": ("", "<http://x|label", ""),
    "one closed Slack link after another": ("", "<http://x>", ""),
    "a DOI in text followed by closing brackets": ("doi:10.1234/a", ")", ""),
}


def _best_seconds(text: str, runs: int = 3) -> float:
    best = float("inf")
    for _ in range(runs):
        started = time.perf_counter()
        find_paper_refs(text)
        best = min(best, time.perf_counter() - started)
    return best


@pytest.mark.parametrize("case", HOSTILE)
def test_four_times_the_hostile_text_costs_about_four_times_the_work(case: str) -> None:
    head, unit, tail = HOSTILE[case]
    repeats = 10_000 // len(unit)
    small = _best_seconds(head + unit * repeats + tail)
    large = _best_seconds(head + unit * 4 * repeats + tail)  # about 40 KB, Slack's longest message
    # Linear work makes the ratio about 4 and quadratic work about 16; the 50 ms floor keeps timer noise on
    # inputs parsed in a millisecond or two from deciding anything (the quadratic forms took seconds here).
    assert large < 10 * small + 0.05, f"{case}: {small:.4f} s for 10 KB but {large:.4f} s for 40 KB"


def test_an_unclosed_slack_link_does_not_swallow_the_next_one() -> None:
    (ref,) = find_paper_refs("<http://x<https://arxiv.org/abs/2401.01234|the paper>")
    assert (ref.key, ref.label) == ("arxiv:2401.01234", "the paper")


def test_a_url_longer_than_the_bound_is_not_read_but_the_links_beside_it_are() -> None:
    too_long = "https://doi.org/10.1234/" + "a" * MAX_URL_CHARS
    assert parse_paper_url(too_long) is None
    text = f"{too_long} <{too_long}|long> and https://arxiv.org/abs/2401.01234"
    assert [r.key for r in find_paper_refs(text)] == ["arxiv:2401.01234"]


def test_a_long_real_link_within_the_bound_is_still_read() -> None:
    url = "https://doi.org/10.1234/" + "a" * (MAX_URL_CHARS - 40)
    assert len(url) <= MAX_URL_CHARS
    ref = parse_paper_url(url)
    assert ref is not None and ref.key == "doi:10.1234/" + "a" * (MAX_URL_CHARS - 40)


@pytest.mark.parametrize(
    ("url", "key"),
    [
        ("https://www.frontiersin.org/x%3F/articles/10.3389/fnins.2020.00001/full", "doi:10.3389/fnins.2020.00001"),
        ("https://example.com/a%23b/doi/abs/10.1002/anie.201915678", "doi:10.1002/anie.201915678"),
        ("https://www.frontiersin.org/articles/10.3389/fnins.2020.00001%3F", None),
    ],
)
def test_a_doi_after_an_escaped_question_mark_or_hash_in_the_path(url: str, key: str | None) -> None:
    ref = parse_paper_url(url)
    assert (ref.key if ref else None) == key


paths = st.lists(
    st.sampled_from(["/", "10.", "1234", "/10.1234/", "a", "?", "#", "/full", ".pdf", "/doi/"]), max_size=12
)


@settings(derandomize=True, max_examples=300)
@given(paths.map("".join))
def test_searching_after_the_last_question_mark_finds_what_searching_everywhere_finds(path: str) -> None:
    for pattern in (_DOI_IN_PATH, _PATH_DOI):
        assert _span(_search_tail(pattern, path)) == _span(pattern.search(path))


def _span(m: re.Match[str] | None) -> tuple[int, int, str] | None:
    return (*m.span(), m.group(1)) if m else None
