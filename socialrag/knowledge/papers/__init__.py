"""Paper metadata sources (Semantic Scholar, arXiv, Crossref, the local catalog) behind one interface."""
