-- A topic muted or boosted by words keeps the member's words too: a paper whose title carries them all is on
-- that topic even where its vector falls outside the cluster's radius ("profile mute CRISPR screens").
ALTER TABLE topic_steering ADD COLUMN words text[] NOT NULL DEFAULT '{}';
