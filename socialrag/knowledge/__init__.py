"""Step 1 of Social-RAG, the social knowledge base: paper links found in messages (``links``), emoji read as
feedback (``emoji``), what is kept of a channel (``intake``: shares, their threads and reactions; ``live``:
the same rule for each new message, edit, deletion and reaction), papers looked up in the outside sources
(``papers/``) and embedded (``embed``) by the index queue's worker (``queue_worker``, at a pace shared by every
process: ``shared_pace``), what members are told of it (``readiness``), what became of the papers shared
(``paper_watch``), what the followed authors and the members wrote since (``author_watch``), and papers'
open-access full text read and embedded by passage (``fulltext_worker``, from ``papers/fulltext_source``).

The Slack side and the CLI use the names below; the modules behind them are free to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialrag.packages import entry_points

if TYPE_CHECKING:
    from socialrag.knowledge.author_watch import check_authors
    from socialrag.knowledge.embed import Embedder, embed_papers, embed_pending
    from socialrag.knowledge.emoji import (
        CLICKS,
        READING_LIST_EMOJI,
        click_counts,
        display_reaction,
        is_click,
        is_emoji_name,
        normalize_emoji,
        parse_sentiment,
    )
    from socialrag.knowledge.fulltext import parse_fulltext, passages
    from socialrag.knowledge.fulltext.front import read_jats_front
    from socialrag.knowledge.fulltext_worker import FullTextConfig, FullTextWorker
    from socialrag.knowledge.intake import IndexStats, ThreadTracker, index_messages
    from socialrag.knowledge.links import find_paper_refs
    from socialrag.knowledge.live import (
        LatestCopies,
        digest_item_ts,
        load_click_counts,
        record_click,
        record_deletion,
        record_deletions,
        record_edit,
        record_message,
        record_own_digest,
        record_own_post,
        record_reaction,
        record_unshared_copies,
        unshared_copy,
    )
    from socialrag.knowledge.paper_watch import check_follow_ups
    from socialrag.knowledge.papers.arxiv import ARXIV_CATEGORIES, arxiv_categories_in, normalize_arxiv_category
    from socialrag.knowledge.papers.biorxiv import CATEGORIES, SERVERS, normalize_category
    from socialrag.knowledge.papers.fulltext_source import open_fulltext_reader
    from socialrag.knowledge.papers.local_catalog import import_catalog
    from socialrag.knowledge.papers.resolve import build_sources, open_sources, refresh_metadata
    from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
    from socialrag.knowledge.readiness import (
        Readiness,
        assess,
        describe_empty,
        describe_index,
        enough_to_post,
        focus_active,
    )
    from socialrag.knowledge.shared_pace import DatabasePace

__getattr__, __all__ = entry_points(__name__, __file__)
