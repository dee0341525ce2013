"""Social-RAG core of PaperPing: the social knowledge base, signals, ranking and generation.

Nothing in this package knows about Slack; adapters in ``bot`` turn Slack data into ``socialrag.models``.
"""

__version__ = "0.1.0"
