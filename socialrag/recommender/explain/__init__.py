"""Step 3 of Social-RAG, the explanation: the fixed, neutral wording of each signal and who is @-mentioned
(``wording``), the summary (``summary``), the prompt chain of ``prompts/`` (``prompts``, ``llm``,
``generate``) and the check that every social fact in a message comes from a stored row (``verify``).
Imports ``retrieve`` only."""
