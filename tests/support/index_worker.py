"""One indexing process for the test of several processes sharing the queue.

``python -m tests.support.index_worker DATABASE_URL S2_URL BATCH [START_DIR WORKERS]`` runs the indexer of ``paperping run`` (real model,
sources pointed at the stand-in, pace shared through Postgres) until the queue is empty, then prints how many
papers it claimed. With ``START_DIR`` and ``WORKERS``, it takes work only once that many workers have loaded.
"""

from __future__ import annotations

import sys
from pathlib import Path

from socialrag.config import Settings
from socialrag.db import Database
from socialrag.knowledge.embed import Embedder
from socialrag.knowledge.papers.resolve import open_sources
from socialrag.knowledge.queue_worker import Indexer, IndexerConfig
from socialrag.knowledge.shared_pace import DatabasePace
from tests.support.barrier import meet
from tests.support.scholar_standin import source_urls


def main() -> None:
    url, scholar, batch = sys.argv[1], sys.argv[2], int(sys.argv[3])
    settings = Settings(
        home=Path("/nonexistent"),
        database_url=url,
        **source_urls(scholar),  # type: ignore[arg-type]
    )
    db = Database(url)
    embedder = Embedder()
    embedder.encode(["load the model before taking work"])
    indexer = Indexer(db, embedder, open_sources(settings, DatabasePace(db)), IndexerConfig(batch=batch))
    indexer.sweep()  # the sweep of the first run, so the run below only takes work
    if len(sys.argv) > 5:
        meet(Path(sys.argv[4]), int(sys.argv[5]))
    claimed = 0
    while True:
        done = indexer.run()
        claimed += done.claimed
        if not done.claimed:
            break
    indexer.close()
    print(f"claimed {claimed}", flush=True)


if __name__ == "__main__":
    main()
