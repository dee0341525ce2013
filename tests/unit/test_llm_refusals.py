"""A request the LLM server refuses (a 4xx other than 408, 409 and 429, or a model declining to answer) is not
sent again, and counts once against a member's and a channel's hourly caps; one that fails otherwise is tried
once more while the answer's time lasts, and each request sent counts. Pure apart from the local stand-in."""

from __future__ import annotations

import time
from datetime import UTC, datetime

import pytest

from socialrag.errors import PermanentError, SourceError
from socialrag.recommender.explain.llm import NO_ANSWER, LLMClient
from socialrag.recommender.explain.memory_answer import ItemText, write_answer
from socialrag.recommender.explain.prompts import load_prompt
from tests.support.openai_standin import OpenAIStandIn

BAD_REQUEST = b'{"error": {"message": "this prompt is not allowed", "type": "invalid_request_error"}}'
ITEM = ItemText("Tables as text", "ana", datetime(2024, 1, 5, tzinfo=UTC), "1 reply", None, ())


class Counter:
    """A budget that lets every call go and counts them, as the hourly caps count."""

    def __init__(self) -> None:
        self.taken = 0

    def __call__(self) -> str | None:
        self.taken += 1
        return None


def ask(standin: OpenAIStandIn) -> tuple[tuple[str | None, str | None], int]:
    """A member's written answer from the server at ``standin``, as ``ask`` makes it: budgeted, with a deadline."""
    counter = Counter()
    llm = LLMClient(model="m", base_url=standin.base_url, api_key="k", timeout=5.0)
    try:
        answered = write_answer(
            llm.with_budget(counter).with_deadline(time.monotonic() + 20), "What did we read on tables?", [ITEM], []
        )
    finally:
        llm.close()
    return answered, counter.taken


@pytest.mark.parametrize(
    ("status", "body", "finish_reason", "refusal"),
    [
        (400, BAD_REQUEST, "stop", None),
        (403, BAD_REQUEST, "stop", None),
        (422, BAD_REQUEST, "stop", None),
        (200, None, "content_filter", None),
        (200, None, "stop", "I can't help with that."),
    ],
)
def test_a_refused_request_is_sent_once_and_counted_once(
    status: int, body: bytes | None, finish_reason: str, refusal: str | None
) -> None:
    standin = OpenAIStandIn(lambda prompt: "" if finish_reason != "stop" or refusal else "The group read [1].")
    standin.status, standin.body, standin.finish_reason, standin.refusal = status, body, finish_reason, refusal
    try:
        answered, taken = ask(standin)
    finally:
        standin.stop()
    assert answered == (None, NO_ANSWER)
    assert len(standin.prompts) == 1, "a refusal is not asked again"
    assert taken == 1


@pytest.mark.parametrize("status", [429, 500, 503])
def test_a_failure_the_server_may_not_repeat_is_tried_once_more_and_each_try_counts(status: int) -> None:
    standin = OpenAIStandIn(lambda prompt: "unused")
    standin.status = status
    try:
        answered, taken = ask(standin)
    finally:
        standin.stop()
    assert answered == (None, NO_ANSWER)
    assert len(standin.prompts) == 2 and taken == 2, "two requests, two counted"


def test_a_budgeted_call_is_one_request_and_an_unbudgeted_one_has_one_retry() -> None:
    """The client's own retry (posts, which no member's cap counts) never runs under a budget: there every
    request sent is one counted."""
    standin = OpenAIStandIn(lambda prompt: "unused")
    standin.status = 503
    prompt = load_prompt("ask")
    counter = Counter()
    llm = LLMClient(model="m", base_url=standin.base_url, api_key="k", timeout=5.0)
    try:
        with pytest.raises(SourceError) as failed:
            llm.with_budget(counter).complete(prompt, "one")
        assert not isinstance(failed.value, PermanentError)
        assert len(standin.prompts) == 1 and counter.taken == 1
        with pytest.raises(SourceError):
            llm.complete(prompt, "two")
        assert len(standin.prompts) == 3, "a post's call has one retry"
        standin.status = 400
        with pytest.raises(PermanentError):
            llm.complete(prompt, "three")
        assert len(standin.prompts) == 4, "a refusal has none"
    finally:
        llm.close()
        standin.stop()
