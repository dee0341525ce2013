-- `/paperping forget-me` is durable: the member is listed per workspace, and live events, `import-export` and
-- `backfill` store nothing of theirs again until they lift it (`/paperping remember-me`).
CREATE TABLE forgotten_members (
    team_id       text NOT NULL,
    user_id       text NOT NULL,
    forgotten_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);
