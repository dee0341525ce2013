"""Step 4 of Social-RAG, serving: a scheduled slot's life from claim to step-down (``slots``, with when the
next is due in ``schedule``), one channel's recommendation (``pipeline``), the process's ``Recommender``
(``service``), weekly digests (``digest``), papers on demand (``on_demand``), personal picks (``picks``),
replies with context on members' shares (``context_replies``), answers in threads (``thread_answers``),
follow-ups in a shared paper's thread (``thread_follow_ups``) and the conference planner (``conference``).
Each decides; the group space's side only sends what it is given."""
