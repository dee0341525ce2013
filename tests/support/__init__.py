"""What the tests share: stand-ins of the outside services (Slack, Semantic Scholar and arXiv, an
OpenAI-compatible server), the lab data they are built from, and the harnesses that run PaperPing against them."""
