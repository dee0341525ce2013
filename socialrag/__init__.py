"""Social-RAG core of PaperPing, grouped by the workflow's steps:

- ``storage``: every SQL query, one module per family of tables;
- ``knowledge``: step 1, the social knowledge base (what is kept, paper metadata, embeddings, the index queue);
- ``recommender``: steps 2 and 3 (channel context, candidates, signals h1..h9, ranking, explanation, verification);
- ``report``: the channel report;
- ``cli``: the ``paperping`` subcommands that are not Slack.

Types (``models``, ``rows``), settings (``config``), errors and the database (``db``, ``migrate``) stay here.
Nothing in this package knows about Slack; adapters in ``bot`` turn Slack data into ``socialrag.models``.
"""

__version__ = "0.1.0"
