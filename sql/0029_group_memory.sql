-- The group's memory (`/paperping ask`, mentions, the AI app panel): full-text search over the papers' titles
-- (weighted first) and abstracts, and over the channels' messages (a share's own words, its replies).
ALTER TABLE papers ADD COLUMN search tsvector GENERATED ALWAYS AS (
    setweight(to_tsvector('english', coalesce(title, '')), 'A') ||
    setweight(to_tsvector('english', coalesce(abstract, '')), 'B')
) STORED;
CREATE INDEX papers_search ON papers USING gin (search);
CREATE INDEX messages_search ON messages USING gin (to_tsvector('english', text));

-- The channel a member had in view beside an assistant thread of Slack's AI app panel. The thread lives in the
-- member's DM with PaperPing (channel_id); team_id is the workspace the context channel belongs to.
CREATE TABLE assistant_threads (
    channel_id          text NOT NULL,
    thread_ts           text NOT NULL,
    team_id             text NOT NULL,
    context_channel_id  text,
    updated_at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (channel_id, thread_ts)
);
CREATE INDEX assistant_threads_team ON assistant_threads (team_id);
