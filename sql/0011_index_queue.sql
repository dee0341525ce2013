-- `paperping run` indexes what it stores by itself: papers wait in a queue in Postgres until they are looked
-- up and embedded. Any process claims rows with FOR UPDATE SKIP LOCKED and a lease, so a restart loses
-- nothing and no paper is worked on by two processes at once.
CREATE TABLE index_queue (
    paper_id     bigint PRIMARY KEY REFERENCES papers ON DELETE CASCADE,
    -- 0: asked for now (a focus link), 1: shared in a channel, 2: a refresh, 3: the catalog
    priority     smallint NOT NULL DEFAULT 1,
    enqueued_at  timestamptz NOT NULL DEFAULT now(),
    not_before   timestamptz NOT NULL DEFAULT now(),
    attempts     integer NOT NULL DEFAULT 0,
    leased_by    text,
    lease_until  timestamptz,
    last_error   text,
    -- set after too many failed lookups: the paper stays shared, with the text its messages gave it
    given_up_at  timestamptz
);
CREATE INDEX index_queue_ready ON index_queue (priority, not_before) WHERE given_up_at IS NULL;

-- The pace of each outside service, shared by every process: the earliest moment the next request may go.
CREATE TABLE source_pace (
    source   text PRIMARY KEY,
    next_at  timestamptz NOT NULL DEFAULT now()
);

-- Where a channel's candidates come from, as its members set it (`/paperping sources`), the papers its focus
-- links to, and why its last slot posted nothing.
ALTER TABLE channel_settings
    ADD COLUMN arxiv_categories  text[] NOT NULL DEFAULT '{}',
    ADD COLUMN focus_paper_ids   bigint[] NOT NULL DEFAULT '{}',
    ADD COLUMN empty_reason      text,
    ADD COLUMN empty_slots       integer NOT NULL DEFAULT 0,
    ADD COLUMN empty_at          timestamptz,
    ADD COLUMN activated_at      timestamptz;
