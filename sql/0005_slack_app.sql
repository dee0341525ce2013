-- The Slack app (Social-RAG step 4): schedules, event de-duplication, installations.

ALTER TABLE channel_settings
    ADD COLUMN timezone          text,
    ADD COLUMN post_start_hour   integer NOT NULL DEFAULT 9 CHECK (post_start_hour BETWEEN 0 AND 23),
    ADD COLUMN post_end_hour     integer NOT NULL DEFAULT 17 CHECK (post_end_hour BETWEEN 1 AND 24),
    ADD COLUMN weekdays_only     boolean NOT NULL DEFAULT true,
    ADD COLUMN active            boolean NOT NULL DEFAULT true,
    ADD COLUMN next_post_at      timestamptz,
    ADD COLUMN last_post_at      timestamptz,
    ADD COLUMN step_down_reason  text,
    ADD COLUMN stepped_down_at   timestamptz,
    ADD COLUMN focus_text        text,
    ADD COLUMN focus_expires_at  timestamptz;
CREATE INDEX channel_settings_due ON channel_settings (next_post_at) WHERE NOT paused AND active;

-- Slack retries events it thinks were missed; each event id takes effect once.
CREATE TABLE processed_events (
    event_id     text PRIMARY KEY,
    team_id      text,
    received_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX processed_events_time ON processed_events (received_at);

-- OAuth installations, one per workspace (removed on uninstall).
CREATE TABLE installations (
    team_id        text PRIMARY KEY,
    team_name      text,
    bot_token      text NOT NULL,
    bot_user_id    text,
    bot_id         text,
    installer_id   text,
    scopes         text,
    installed_at   timestamptz NOT NULL DEFAULT now()
);
CREATE TABLE oauth_states (
    state       text PRIMARY KEY,
    expires_at  timestamptz NOT NULL
);

ALTER TABLE teams ADD COLUMN timezone text;
ALTER TABLE teams ADD COLUMN bot_user_id text;

-- slot_at: the slot being served (the key of its recommendation row); next_post_at: when to look again.
ALTER TABLE channel_settings ADD COLUMN slot_at timestamptz;
-- When a member last wrote in the channel (a time only, nothing of the message), for the quiet period.
ALTER TABLE channel_settings ADD COLUMN last_activity_at timestamptz;
