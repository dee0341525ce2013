"""An OpenAI-compatible chat client with timeouts; every call is recorded (prompt, model, tokens, outcome)."""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass

import httpx2

from socialrag.deadline import DeadlineTransport
from socialrag.errors import PermanentError, SourceError
from socialrag.recommender.explain.prompts import Prompt

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class LLMCall:
    prompt_name: str
    prompt_version: int
    prompt_hash: str
    model: str
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_ms: int
    outcome: str
    error: str | None = None
    output: str | None = None


Recorder = Callable[[LLMCall], None]
# Passed explicitly: given None, the openai package reads OPENAI_BASE_URL itself, and an empty value there
# (as an unset variable in a compose file gives) would become its base URL.
OPENAI_DEFAULT_URL = "https://api.openai.com/v1"


Budget = Callable[[], str | None]  # None: the call may go; else why not, in a sentence for the member
# What a member reads of a call that failed: a server's error text can hold a masked key, a tenant or a gateway's
# name, so it goes to the log and to ``llm_calls.error`` only, never into a reply.
NO_ANSWER = "the language model did not answer"
NO_TIME = "there was no time left to write it"


class BudgetSpent(SourceError):
    """A cap on LLM calls is reached (a member's or a channel's per hour): the call was not made."""


class OutOfTime(BudgetSpent):
    """The answer's time is spent (``LLMClient.with_deadline``): the call was not made."""


LEAST_TIME = 3.0  # seconds a call needs at least; with less left before a deadline it is not made
# an answer of ``max_tokens`` (400) is a few kilobytes: one of a megabyte is a server ignoring it, and a failed call
MOST_ANSWER_BYTES = 1_000_000
# 4xx answers a server may answer otherwise a moment later (a request timeout, a lock, a rate limit); any other 4xx
# refuses the request itself (a bad key, a prompt it will not take), and the same request would be refused again
RETRIED_4XX = frozenset({408, 409, 429})
KEPT_OUTPUT = 4000  # characters of an answer ``llm_calls.output`` keeps (more than any message or answer may say)


def answer_text(response: object) -> str | None:
    """The text of a chat completion's first choice ("" when it has none or says nothing), or None when the
    answer is not shaped as one: the openai package does not check what a server sends."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list):
        return None
    if not choices:
        return ""
    message = getattr(choices[0], "message", None)
    if message is None:
        return None
    content = getattr(message, "content", None)
    if content is None:
        return ""
    return content.strip() if isinstance(content, str) else None


def declined(response: object) -> str | None:
    """Why the model declined to answer (a refusal, a content filter), or None: a chat completion may say so in
    its first choice's ``finish_reason`` or its message's ``refusal``, with or without text beside it."""
    choices = getattr(response, "choices", None)
    if not isinstance(choices, list) or not choices:
        return None
    refusal = getattr(getattr(choices[0], "message", None), "refusal", None)
    if isinstance(refusal, str) and refusal.strip():
        return f"the model refused: {refusal.strip()[:200]}"
    if getattr(choices[0], "finish_reason", None) == "content_filter":
        return "the model's answer was stopped by a content filter"
    return None


def refused_status(exc: Exception) -> bool:
    """Whether a failed call was the server refusing the request (a 4xx other than ``RETRIED_4XX``)."""
    status = getattr(exc, "status_code", None)
    return isinstance(status, int) and 400 <= status < 500 and status not in RETRIED_4XX


class LLMClient:
    """Chat completions against ``OPENAI_BASE_URL`` (any OpenAI-compatible server)."""

    def __init__(
        self,
        *,
        model: str,
        base_url: str | None,
        api_key: str | None,
        timeout: float = 30.0,
        recorder: Recorder | None = None,
    ) -> None:
        from openai import OpenAI

        self.model = model
        # each try has ``timeout`` in all (a trickling answer included), and there are two at most
        http = httpx2.Client(transport=DeadlineTransport(timeout, most_bytes=MOST_ANSWER_BYTES), timeout=timeout)
        self.client = OpenAI(
            base_url=base_url or OPENAI_DEFAULT_URL,
            api_key=api_key or "unused",
            timeout=timeout,
            max_retries=1,
            http_client=http,
        )
        self.recorder = recorder
        self.budget: Budget | None = None
        self.until: float | None = None  # time.monotonic() by which every call must be done

    def _copy(self) -> LLMClient:
        other = object.__new__(LLMClient)
        other.model, other.client, other.recorder = self.model, self.client, self.recorder
        other.budget, other.until = self.budget, self.until
        return other

    def with_recorder(self, recorder: Recorder) -> LLMClient:
        """The same client (one connection pool) recording its calls with ``recorder``."""
        other = self._copy()
        other.recorder = recorder
        return other

    def with_budget(self, budget: Budget) -> LLMClient:
        """The same client, asking ``budget`` before each call: a sentence from it (a cap reached) stops the call
        with ``BudgetSpent``, and nothing is sent."""
        other = self._copy()
        other.budget = budget
        return other

    def with_deadline(self, until: float) -> LLMClient:
        """The same client, each call given only the time left before ``until`` (``time.monotonic``), with no
        retry; with less than ``LEAST_TIME`` left, a call is not made (``OutOfTime``)."""
        other = self._copy()
        other.until = until
        return other

    def close(self) -> None:
        self.client.close()

    def complete(self, prompt: Prompt, text: str, *, max_tokens: int = 400) -> str:
        """The model's answer to a filled prompt; a failure or timeout raises ``SourceError``, a spent budget
        ``BudgetSpent`` (nothing sent), and a refusal ``PermanentError``: a 4xx other than ``RETRIED_4XX``, or
        the model declining, which the same request would meet again. A budgeted call is one request (no
        retry inside it), so that every request sent is one counted against the caps."""
        started = time.monotonic()
        left = self.until - started if self.until is not None else None
        if left is not None and left < LEAST_TIME:
            raise OutOfTime("llm", NO_TIME)
        spent = self.budget() if self.budget is not None else None
        if spent:
            raise BudgetSpent("llm", spent)
        if left is not None:
            client = self.client.with_options(timeout=left, max_retries=0)
        else:
            client = self.client if self.budget is None else self.client.with_options(max_retries=0)
        try:
            response = client.chat.completions.create(
                model=self.model,
                messages=[{"role": "user", "content": text}],
                temperature=0.2,
                max_tokens=max_tokens,
            )
        except Exception as exc:  # the openai package raises many kinds; all mean "no answer"
            refused = refused_status(exc)
            self._record(prompt, started, None, "refused" if refused else "error", str(exc)[:300])
            raise (PermanentError if refused else SourceError)("llm", f"{prompt.name}: {exc}") from exc
        why_not = declined(response)
        if why_not is not None:
            self._record(prompt, started, getattr(response, "usage", None), "refused", why_not)
            raise PermanentError("llm", f"{prompt.name}: {why_not}")
        answer = answer_text(response)
        if answer is None:  # a server that calls itself OpenAI-compatible and answers something else
            self._record(prompt, started, None, "error", "an answer of another shape than a chat completion")
            raise SourceError("llm", f"{prompt.name}: the server's answer is not a chat completion")
        self._record(prompt, started, getattr(response, "usage", None), "ok" if answer else "empty", None, answer)
        if not answer:
            raise SourceError("llm", f"{prompt.name}: empty answer")
        return answer

    def _record(
        self, prompt: Prompt, started: float, usage: object, outcome: str, error: str | None, output: str | None = None
    ) -> None:
        call = LLMCall(
            prompt.name,
            prompt.version,
            prompt.hash,
            self.model,
            getattr(usage, "prompt_tokens", None),
            getattr(usage, "completion_tokens", None),
            int((time.monotonic() - started) * 1000),
            outcome,
            error,
            output[:KEPT_OUTPUT] if output else output,
        )
        if self.recorder:
            try:
                self.recorder(call)
            except Exception:  # recording must never take a post down with it
                log.exception("could not record an LLM call")
