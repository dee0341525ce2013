-- Papers that cite a stored paper, by the identifiers Semantic Scholar gave (the reverse of paper_references).
-- Kept for the papers channels shared: new work citing what a group engaged with is a good candidate.
CREATE TABLE paper_citations (
    cited_paper_id  bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    citing_scheme   text NOT NULL,
    citing_value    text NOT NULL,
    citing_title    text,
    citing_year     integer,
    contexts        text[],
    PRIMARY KEY (cited_paper_id, citing_scheme, citing_value)
);
CREATE INDEX paper_citations_citing ON paper_citations (citing_scheme, citing_value);

ALTER TABLE papers ADD COLUMN citations_fetched_at timestamptz;
