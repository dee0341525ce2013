-- A paper's open-access full text (issue 56), public data like the paper's title and abstract: what was read, from
-- where, under which licence, and its passages (a paragraph, or a part of a long one) with their section. Rows go
-- with their paper (a purge or forget-me that drops a paper drops them); which channel may read a passage out is
-- decided by the channel's own papers, as for the rest of a paper's data.
CREATE TABLE paper_fulltexts (
    paper_id    bigint PRIMARY KEY REFERENCES papers ON DELETE CASCADE,
    status      text NOT NULL,   -- read, none (no open full text found), unreadable (found, could not be read)
    kind        text,            -- jats, html or pdf, when read
    source_url  text,
    licence     text,
    note        text,            -- what was left out, or why there is none, in words
    read_at     timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE paper_passages (
    paper_id  bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    n         integer NOT NULL,  -- its place in the paper, from 0
    section   text NOT NULL,     -- the heading it stands under, as the paper writes it ("" before the first)
    text      text NOT NULL,
    search    tsvector GENERATED ALWAYS AS (to_tsvector('english', text)) STORED,
    PRIMARY KEY (paper_id, n)
);
CREATE INDEX paper_passages_search ON paper_passages USING gin (search);
