"""Steps 2 to 4 of Social-RAG, the recommender, one package a step, each importing only those before it:

- ``retrieve`` (step 2): one channel's context, what its emoji mean there, candidate papers and their social
  signals h1..h9;
- ``rank``: the channel's learnt ranking (engagement weights, features, fits judged by the guard, the window,
  replays of its history);
- ``explain`` (step 3): the explanation, by the prompt chain (``prompts/``) or the fixed wording, verified
  before it leaves;
- ``serve`` (step 4): a slot's life from claim to step-down (``slots``), one channel's pipeline, the
  ``Recommender`` every caller asks, digests, papers on demand, personal picks, answers in threads and answers
  about what the channel read and discussed (``ask``).

The Slack side and the CLI use the names below; the modules behind them are free to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialrag.packages import entry_points

if TYPE_CHECKING:
    from socialrag.recommender.explain.generate import LANGUAGES, paper_url
    from socialrag.recommender.explain.llm import NO_ANSWER, NO_TIME
    from socialrag.recommender.explain.styles import describe_style, resolve_style
    from socialrag.recommender.explain.wording import MEMBER_TOKEN, describe_fact, render_plain
    from socialrag.recommender.rank.calibrate import RankerModel
    from socialrag.recommender.rank.calibrate import describe as describe_ranker
    from socialrag.recommender.rank.coverage import Coverage
    from socialrag.recommender.rank.engagement import ScoringConfig
    from socialrag.recommender.rank.refit import load_fit, refit_channel
    from socialrag.recommender.retrieve.context import load_emoji_readings
    from socialrag.recommender.retrieve.memory import topic_words
    from socialrag.recommender.serve.author_news import OwnPaperNote, SendNews, announce_member_papers
    from socialrag.recommender.serve.channel_profile import ChannelProfile
    from socialrag.recommender.serve.conference import (
        SHOWN,
        ConferencePlan,
        PlannedPaper,
        VenueNotFound,
        render_csv,
        render_markdown,
    )
    from socialrag.recommender.serve.context_replies import SendReply, note_share, reply_to_shares
    from socialrag.recommender.serve.fulltext_answers import TEXT_SILENT
    from socialrag.recommender.serve.picks import PICKS_EVERY, Picks, PicksRefused, send_due_picks, send_picks
    from socialrag.recommender.serve.pipeline import Recommendation
    from socialrag.recommender.serve.questions import MemoryAnswer, MemoryItem, Person, ask_memory
    from socialrag.recommender.serve.schedule import (
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
    from socialrag.recommender.serve.service import Recommender
    from socialrag.recommender.serve.slots import Chore, Outlet, Posted, SlotChooser, SlotWorker
    from socialrag.recommender.serve.thread_answers import (
        LIMIT_REACHED,
        Answer,
        ShareContext,
        ThreadQuestion,
        answer_question,
        read_question,
        share_context,
        thread_paper,
        write_thread_answer,
    )
    from socialrag.recommender.serve.thread_follow_ups import FollowUpNote, SendFollowUp, send_follow_ups

__getattr__, __all__ = entry_points(__name__, __file__)
