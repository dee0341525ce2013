"""Step 1 of Social-RAG, the social knowledge base: paper links found in messages (``links``), emoji read as
feedback (``emoji``), what is kept of a channel (``index``: shares, their threads and reactions; ``live``:
the same rule for each new message, edit, deletion and reaction), papers looked up in the outside sources
(``papers/``) and embedded (``embed``) by the index queue's worker (``indexer``, at a pace shared by every
process: ``pace``), and what members are told of it (``readiness``).

The Slack side and the CLI use the names below; the modules behind them are free to change.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from socialrag.packages import entry_points

if TYPE_CHECKING:
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
    from socialrag.knowledge.index import IndexStats, ThreadTracker, index_messages
    from socialrag.knowledge.indexer import Indexer, IndexerConfig
    from socialrag.knowledge.links import find_paper_refs
    from socialrag.knowledge.live import (
        digest_item_ts,
        load_click_counts,
        record_click,
        record_deletion,
        record_edit,
        record_message,
        record_own_digest,
        record_own_post,
        record_reaction,
    )
    from socialrag.knowledge.pace import DatabasePace
    from socialrag.knowledge.papers.catalog import import_catalog
    from socialrag.knowledge.papers.resolve import build_sources, open_sources, refresh_metadata
    from socialrag.knowledge.readiness import (
        Readiness,
        assess,
        describe_empty,
        describe_index,
        enough_to_post,
        focus_active,
    )

ENTRY_POINTS = {
    "Embedder": "embed",
    "embed_papers": "embed",
    "embed_pending": "embed",
    "CLICKS": "emoji",
    "READING_LIST_EMOJI": "emoji",
    "click_counts": "emoji",
    "display_reaction": "emoji",
    "is_click": "emoji",
    "is_emoji_name": "emoji",
    "normalize_emoji": "emoji",
    "parse_sentiment": "emoji",
    "IndexStats": "index",
    "ThreadTracker": "index",
    "index_messages": "index",
    "Indexer": "indexer",
    "IndexerConfig": "indexer",
    "find_paper_refs": "links",
    "record_click": "live",
    "record_deletion": "live",
    "record_edit": "live",
    "record_message": "live",
    "record_own_post": "live",
    "record_own_digest": "live",
    "digest_item_ts": "live",
    "load_click_counts": "live",
    "record_reaction": "live",
    "DatabasePace": "pace",
    "import_catalog": "papers.catalog",
    "build_sources": "papers.resolve",
    "open_sources": "papers.resolve",
    "refresh_metadata": "papers.resolve",
    "Readiness": "readiness",
    "assess": "readiness",
    "enough_to_post": "readiness",
    "describe_empty": "readiness",
    "describe_index": "readiness",
    "focus_active": "readiness",
}
__all__ = sorted(ENTRY_POINTS)
__getattr__ = entry_points(__name__, ENTRY_POINTS)
