"""Steps 2 and 3 of Social-RAG, the recommender: one channel's context (``context``) -> candidate papers
(``candidates``) -> their social signals h1..h9 (``signals``) -> scores and the few signals worth saying
(``rank``, learnt per channel by ``calibrate``, ``history`` and ``refit``) -> the explanation (``explain``,
``summary``, ``generate`` with ``llm`` and ``prompts``) checked before it leaves (``verify``). ``pipeline``
runs the steps for one channel; ``service`` is the one object per process every caller asks; ``evaluate``
replays a channel's history; ``schedule`` says when the next post is due.

The Slack side and the CLI use the names below; the modules behind them are free to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialrag.packages import entry_points

if TYPE_CHECKING:
    from socialrag.recommender.calibrate import RankerModel
    from socialrag.recommender.calibrate import describe as describe_ranker
    from socialrag.recommender.candidates import normalize_arxiv_category
    from socialrag.recommender.context import load_emoji_readings
    from socialrag.recommender.explain import MEMBER_TOKEN, describe_fact, render_plain
    from socialrag.recommender.generate import LANGUAGES, paper_url
    from socialrag.recommender.pipeline import Recommendation
    from socialrag.recommender.rank import ScoringConfig
    from socialrag.recommender.refit import load_fit, refit_channel
    from socialrag.recommender.schedule import (
        DIGEST,
        DIGEST_DEFAULT,
        DIGEST_SIZES,
        FREQUENCIES,
        SILENT_TO_STEP_DOWN,
        Reception,
        describe_pace,
        empty_retry_wait,
        index_wait,
        next_slot,
        quiet_until,
        read_reception,
        should_step_down,
        silent_streak,
        step_down,
    )
    from socialrag.recommender.service import Recommender, describe_style, resolve_style
    from socialrag.recommender.threads import LIMIT_REACHED, Answer, ShareContext, answer_question, share_context

ENTRY_POINTS = {
    "RankerModel": "calibrate",
    "describe_ranker": "calibrate:describe",
    "normalize_arxiv_category": "candidates",
    "load_emoji_readings": "context",
    "MEMBER_TOKEN": "explain",
    "describe_fact": "explain",
    "render_plain": "explain",
    "Recommendation": "pipeline",
    "ScoringConfig": "rank",
    "load_fit": "refit",
    "refit_channel": "refit",
    "FREQUENCIES": "schedule",
    "DIGEST": "schedule",
    "DIGEST_DEFAULT": "schedule",
    "DIGEST_SIZES": "schedule",
    "empty_retry_wait": "schedule",
    "index_wait": "schedule",
    "next_slot": "schedule",
    "quiet_until": "schedule",
    "should_step_down": "schedule",
    "paper_url": "generate",
    "LANGUAGES": "generate",
    "read_reception": "schedule",
    "silent_streak": "schedule",
    "Reception": "schedule",
    "SILENT_TO_STEP_DOWN": "schedule",
    "step_down": "schedule",
    "describe_pace": "schedule",
    "Recommender": "service",
    "describe_style": "service",
    "resolve_style": "service",
    "Answer": "threads",
    "LIMIT_REACHED": "threads",
    "ShareContext": "threads",
    "answer_question": "threads",
    "share_context": "threads",
}
__all__ = sorted(ENTRY_POINTS)
__getattr__ = entry_points(__name__, ENTRY_POINTS)
