-- The workspaces `paperping purge` deleted, and when: a restore of a backup taken before the purge deletes the
-- workspace again in the restored copy, as it applies forget-me and deletions again. Only the id and the time.
CREATE TABLE purged_teams (
    team_id text PRIMARY KEY,
    purged_at timestamptz NOT NULL DEFAULT now()
);
