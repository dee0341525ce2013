-- PaperPing reads papers' open-access full text by itself (issue 56): where OpenAlex says a paper's open-access PDF
-- is, when a paper with no readable full text is tried again, the passages' vectors on each embedding model, which
-- process is reading a paper now, and the off switches of a channel and of a workspace.
ALTER TABLE papers
    ADD COLUMN oa_pdf_url  text,   -- OpenAlex's best open-access location (its PDF), https only
    ADD COLUMN oa_licence  text;   -- the licence OpenAlex gives for that location ("cc-by"), when it gives one

-- none/unreadable: read again from then (NULL: 30 days after read_at); a host that did not answer sets it sooner
ALTER TABLE paper_fulltexts ADD COLUMN retry_at timestamptz;

-- One vector a passage and embedding model, public like the passage; gone with it (a paper read again, a purge or
-- forget-me that drops the paper).
CREATE TABLE paper_passage_vectors (
    paper_id     bigint NOT NULL,
    n            integer NOT NULL,
    model        text NOT NULL,
    embedding    vector NOT NULL,
    embedded_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (paper_id, n, model),
    FOREIGN KEY (paper_id, n) REFERENCES paper_passages ON DELETE CASCADE
);
-- The default model's index; socialrag.storage.fulltext makes the same kind for another model on first use.
CREATE INDEX paper_passage_vectors_hnsw_all_minilm_l6_v2 ON paper_passage_vectors
    USING hnsw ((embedding::vector(384)) vector_cosine_ops)
    WHERE model = 'all-MiniLM-L6-v2';

-- A paper some process of `paperping run` is reading now; a killed process's claim runs out with its lease.
CREATE TABLE fulltext_claims (
    paper_id       bigint PRIMARY KEY REFERENCES papers ON DELETE CASCADE,
    worker_id      text NOT NULL,
    claimed_until  timestamptz NOT NULL
);

-- `/paperping fulltext on|off` (a channel) and `/paperping fulltext off workspace` (an admin, the whole workspace).
ALTER TABLE channel_settings ADD COLUMN fulltext boolean NOT NULL DEFAULT true;
ALTER TABLE teams ADD COLUMN fulltext boolean NOT NULL DEFAULT true;
