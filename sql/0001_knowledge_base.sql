-- PaperPing's social knowledge base (Social-RAG step 1).
-- Everything learned from a channel carries team_id and channel_id. Paper metadata is public and shared.

CREATE EXTENSION IF NOT EXISTS vector;

CREATE TABLE teams (
    team_id     text PRIMARY KEY,
    name        text,
    domain      text,
    created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE channels (
    team_id     text NOT NULL REFERENCES teams ON DELETE CASCADE,
    channel_id  text NOT NULL,
    name        text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, channel_id)
);

-- Profiles of the people who are members of a stored channel or appear in stored rows.
CREATE TABLE members (
    team_id       text NOT NULL REFERENCES teams ON DELETE CASCADE,
    user_id       text NOT NULL,
    display_name  text NOT NULL,
    real_name     text,
    is_bot        boolean NOT NULL DEFAULT false,
    deleted       boolean NOT NULL DEFAULT false,
    timezone      text,
    updated_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, user_id)
);

CREATE TABLE channel_members (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    user_id     text NOT NULL,
    PRIMARY KEY (team_id, channel_id, user_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

-- Messages that share a paper link, and the replies in their threads.
CREATE TABLE messages (
    id           bigserial PRIMARY KEY,
    team_id      text NOT NULL,
    channel_id   text NOT NULL,
    ts           text NOT NULL,
    thread_ts    text,
    user_id      text,
    text         text NOT NULL,
    subtype      text,
    permalink    text,
    posted_at    timestamptz NOT NULL,
    edited_at    timestamptz,
    reply_count  integer NOT NULL DEFAULT 0,
    is_reply     boolean GENERATED ALWAYS AS (thread_ts IS NOT NULL AND thread_ts <> ts) STORED,
    UNIQUE (team_id, channel_id, ts),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX messages_thread ON messages (team_id, channel_id, thread_ts) WHERE thread_ts IS NOT NULL;
CREATE INDEX messages_channel_time ON messages (team_id, channel_id, posted_at);
CREATE INDEX messages_user ON messages (team_id, user_id);

CREATE TABLE reactions (
    message_id  bigint NOT NULL REFERENCES messages ON DELETE CASCADE,
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    user_id     text NOT NULL,
    emoji       text NOT NULL,
    -- When Slack does not say (exports), the time of the message reacted to.
    reacted_at  timestamptz NOT NULL,
    PRIMARY KEY (message_id, user_id, emoji)
);
CREATE INDEX reactions_channel ON reactions (team_id, channel_id);
CREATE INDEX reactions_user ON reactions (team_id, user_id);

-- A channel's own reading of an emoji; the default table lives in socialrag/emoji.py.
CREATE TABLE emoji_sentiments (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    emoji       text NOT NULL,
    sentiment   text NOT NULL CHECK (sentiment IN ('positive', 'negative', 'neutral')),
    updated_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, channel_id, emoji),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

CREATE TABLE venues (
    id               bigserial PRIMARY KEY,
    name             text NOT NULL,
    normalized_name  text NOT NULL UNIQUE
);

CREATE TABLE papers (
    id                bigserial PRIMARY KEY,
    title             text,
    abstract          text,
    tldr              text,
    venue_id          bigint REFERENCES venues,
    year              integer,
    publication_date  date,
    url               text,
    popularity        double precision,
    citation_count    integer,
    in_catalog        boolean NOT NULL DEFAULT false,
    metadata_source   text,
    fetched_at        timestamptz,
    fetch_attempts    integer NOT NULL DEFAULT 0,
    next_fetch_at     timestamptz,
    created_at        timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX papers_to_fetch ON papers (next_fetch_at) WHERE fetched_at IS NULL;
CREATE INDEX papers_publication_date ON papers (publication_date);

-- Every identity a paper is known by (arxiv, doi, acl, s2, corpus, openreview, pmid, ...).
CREATE TABLE paper_ids (
    scheme    text NOT NULL,
    value     text NOT NULL,
    paper_id  bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    PRIMARY KEY (scheme, value)
);
CREATE INDEX paper_ids_paper ON paper_ids (paper_id);

-- Which message shares which paper, with the link as shown (its label is often the title).
CREATE TABLE message_papers (
    message_id  bigint NOT NULL REFERENCES messages ON DELETE CASCADE,
    paper_id    bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    url         text NOT NULL,
    label       text,
    PRIMARY KEY (message_id, paper_id)
);
CREATE INDEX message_papers_channel ON message_papers (team_id, channel_id, paper_id);
CREATE INDEX message_papers_paper ON message_papers (paper_id);

CREATE TABLE authors (
    id               bigserial PRIMARY KEY,
    name             text NOT NULL,
    normalized_name  text NOT NULL,
    s2_author_id     text UNIQUE,
    orcid            text
);
CREATE INDEX authors_normalized_name ON authors (normalized_name);

CREATE TABLE paper_authors (
    paper_id      bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    position      integer NOT NULL,
    author_id     bigint NOT NULL REFERENCES authors ON DELETE CASCADE,
    affiliations  text[] NOT NULL DEFAULT '{}',
    PRIMARY KEY (paper_id, position)
);
CREATE INDEX paper_authors_author ON paper_authors (author_id);

-- What a paper cites, by the identifiers the source gave; join through paper_ids to find stored papers.
CREATE TABLE paper_references (
    citing_paper_id  bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    cited_scheme     text NOT NULL,
    cited_value      text NOT NULL,
    contexts         text[],
    PRIMARY KEY (citing_paper_id, cited_scheme, cited_value)
);
CREATE INDEX paper_references_cited ON paper_references (cited_scheme, cited_value);

-- One vector per paper and model; content_hash says which text it was computed from.
CREATE TABLE paper_embeddings (
    paper_id      bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    model         text NOT NULL,
    content_hash  text NOT NULL,
    embedding     vector NOT NULL,
    embedded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (paper_id, model)
);
CREATE INDEX paper_embeddings_hash ON paper_embeddings (model, content_hash);
-- The default model's index; socialrag.store creates the same kind of index for another model on first use.
CREATE INDEX paper_embeddings_hnsw_all_minilm_l6_v2 ON paper_embeddings
    USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE model = 'all-MiniLM-L6-v2';

-- Where a history import (Web API backfill) stands, so a killed process resumes.
CREATE TABLE import_checkpoints (
    team_id       text NOT NULL,
    channel_id    text NOT NULL,
    source        text NOT NULL,
    cursor        text,
    state         jsonb NOT NULL DEFAULT '{}',
    started_at    timestamptz NOT NULL DEFAULT now(),
    updated_at    timestamptz NOT NULL DEFAULT now(),
    completed_at  timestamptz,
    PRIMARY KEY (team_id, channel_id, source)
);
