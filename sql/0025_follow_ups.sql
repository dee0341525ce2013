-- Follow-ups in the original thread: what became of the papers a channel shared (a preprint published, a new
-- arXiv version, a new paper that builds on the group's threads), said as a reply where the paper was shared.

ALTER TABLE channel_settings ADD COLUMN follow_ups boolean NOT NULL DEFAULT true;

-- What PaperPing last saw of a shared paper when it asked its sources about it (public metadata only).
CREATE TABLE paper_watch (
    paper_id    bigint PRIMARY KEY REFERENCES papers ON DELETE CASCADE,
    checked_at  timestamptz NOT NULL,
    venue       text,                           -- the venue seen (NULL: a preprint, as far as anyone says)
    version     integer,                        -- the arXiv version seen
    citing      text[] NOT NULL DEFAULT '{}'    -- the citing papers seen (scheme:value), so only new ones count
);

-- A follow-up noticed for one channel's thread, at most once per (channel, paper, kind, key).
CREATE TABLE follow_ups (
    id          bigserial PRIMARY KEY,
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    paper_id    bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    kind        text NOT NULL CHECK (kind IN ('published', 'version', 'builds_on')),
    key         text NOT NULL,                  -- the venue, the version, the citing paper
    detail      jsonb NOT NULL,                 -- what the reply says: public metadata, no member
    noticed_at  timestamptz NOT NULL,
    status      text NOT NULL DEFAULT 'waiting' CHECK (status IN ('waiting', 'sending', 'posted', 'dropped')),
    thread_ts   text,
    reply_ts    text,
    posted_at   timestamptz,
    reason      text,                           -- why it was dropped
    UNIQUE (team_id, channel_id, paper_id, kind, key),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX follow_ups_waiting ON follow_ups (status, noticed_at) WHERE status = 'waiting';
