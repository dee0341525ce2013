"""Step 2 of Social-RAG, retrieval: one channel's context as of a moment (``context``: its shares, threads,
reactions and members), what each emoji means there (``emoji_readings``), the candidate papers from the sources
the channel uses (``candidates``) and each candidate's social signals h1..h9 (``signals``). Imports no other
step."""
