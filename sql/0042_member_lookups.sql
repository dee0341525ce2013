-- The hourly counts of `llm_usage` also count each member's papers put first in the index queue (`kind`
-- 'lookups': the papers a member's `focus`, `save`, `unsave` or `like` sends ahead of every channel's shares);
-- the LLM calls are kind 'llm'. Past the member's hourly cap their papers are queued as a channel's shares are.
ALTER TABLE llm_usage ADD COLUMN kind text NOT NULL DEFAULT 'llm';
ALTER TABLE llm_usage DROP CONSTRAINT llm_usage_pkey;
ALTER TABLE llm_usage ADD PRIMARY KEY (team_id, kind, channel_id, user_id, hour);
