-- Recommending (Social-RAG steps 2 and 3): channel and member settings, what was recommended, LLM calls.

CREATE TABLE channel_settings (
    team_id            text NOT NULL,
    channel_id         text NOT NULL,
    style              text NOT NULL DEFAULT 'template+tldr'
                       CHECK (style IN ('tldr', 'template', 'template+tldr', 'llm')),
    sources            text[] NOT NULL DEFAULT '{catalog,semanticscholar,arxiv}',
    frequency          text NOT NULL DEFAULT 'every-other-day'
                       CHECK (frequency IN ('daily', 'every-other-day', 'weekly')),
    paused             boolean NOT NULL DEFAULT false,
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, channel_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

-- A member's own controls: @-mentions, and the links to their publication record (h1, h3, h7, h9).
CREATE TABLE member_settings (
    team_id            text NOT NULL,
    user_id            text NOT NULL,
    mentions_enabled   boolean NOT NULL DEFAULT true,
    s2_author_id       text,
    orcid              text,
    confirmed_names    text[] NOT NULL DEFAULT '{}',
    updated_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);

-- Every recommendation PaperPing made or will post; slot_key makes one post per channel and slot.
CREATE TABLE recommendations (
    id            bigserial PRIMARY KEY,
    team_id       text NOT NULL,
    channel_id    text NOT NULL,
    slot_key      text NOT NULL,
    paper_id      bigint REFERENCES papers ON DELETE SET NULL,
    status        text NOT NULL DEFAULT 'drafted' CHECK (status IN ('drafted', 'posting', 'posted', 'failed')),
    style         text NOT NULL,
    score         double precision,
    draft         jsonb NOT NULL DEFAULT '{}',
    message_ts    text,
    created_at    timestamptz NOT NULL DEFAULT now(),
    posted_at     timestamptz,
    UNIQUE (team_id, channel_id, slot_key),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX recommendations_channel_time ON recommendations (team_id, channel_id, created_at DESC);
CREATE INDEX recommendations_paper ON recommendations (paper_id);

-- Every LLM call: which prompt (name, version, hash) produced what, with cost and outcome.
CREATE TABLE llm_calls (
    id                 bigserial PRIMARY KEY,
    team_id            text,
    channel_id         text,
    prompt_name        text NOT NULL,
    prompt_version     integer NOT NULL,
    prompt_hash        text NOT NULL,
    model              text NOT NULL,
    prompt_tokens      integer,
    completion_tokens  integer,
    latency_ms         integer NOT NULL,
    outcome            text NOT NULL,
    error              text,
    output             text,
    created_at         timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX llm_calls_channel ON llm_calls (team_id, channel_id, created_at);

ALTER TABLE papers ADD COLUMN arxiv_categories text[];
