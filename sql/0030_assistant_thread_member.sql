-- The member whose AI-panel thread each assistant_threads row is, so that `forget-me` deletes it with the rest
-- of what PaperPing holds of them (rows kept before this migration have none; a workspace purge still takes them).
ALTER TABLE assistant_threads ADD COLUMN user_id text;
CREATE INDEX assistant_threads_member ON assistant_threads (team_id, user_id);
