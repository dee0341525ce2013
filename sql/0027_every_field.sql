-- Every field, not only computer science: what a paper is about in its sources' own words (bioRxiv's and
-- medRxiv's categories, OpenAlex's topic), what a channel named for its new sources, the topics members muted
-- or boosted, and the first day's five ratings.

ALTER TABLE papers ADD COLUMN subjects text[];  -- "biorxiv:cell_biology", "openalex:T10102"; NULL: none known

-- `/paperping sources biorxiv cell_biology` and the like: {"biorxiv": [...], "medrxiv": [...], "pubmed": "query"}
ALTER TABLE channel_settings ADD COLUMN source_terms jsonb NOT NULL DEFAULT '{}';
-- whether members chose the sources (then each runs as named) or the defaults apply (then OpenAlex and PubMed run
-- only for a channel whose shares are mostly not on arXiv, as arXiv runs only for one that shares arXiv papers)
ALTER TABLE channel_settings ADD COLUMN sources_chosen boolean NOT NULL DEFAULT false;
ALTER TABLE channel_settings ALTER COLUMN sources
    SET DEFAULT '{catalog,semanticscholar,arxiv,openalex,biorxiv,medrxiv,pubmed}';
UPDATE channel_settings SET sources = '{catalog,semanticscholar,arxiv,openalex,biorxiv,medrxiv,pubmed}'
 WHERE sources = '{catalog,semanticscholar,arxiv}';

-- A topic of the channel's profile that members muted or boosted: its name as shown and its direction in the
-- embedding space (the mean of its papers, or of the words a member gave), so that it outlives the clustering.
CREATE TABLE topic_steering (
    team_id     text NOT NULL,
    channel_id  text NOT NULL,
    label       text NOT NULL,
    action      text NOT NULL CHECK (action IN ('mute', 'boost')),
    model       text NOT NULL,
    direction   real[] NOT NULL,
    radius      real NOT NULL,            -- how close a paper must be to fall in the topic
    user_id     text,                     -- who asked (NULL once they are forgotten)
    set_at      timestamptz NOT NULL,
    PRIMARY KEY (team_id, channel_id, label),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);

-- The first day: five candidates offered once to rate (a channel with little history, or after
-- `/paperping start-over`). The post is kept as a digest is; its ratings are clicks on its items.
CREATE TABLE onboarding (
    team_id      text NOT NULL,
    channel_id   text NOT NULL,
    asked_at     timestamptz NOT NULL,
    reason       text NOT NULL,            -- 'little history' or 'start-over'
    paper_ids    bigint[] NOT NULL DEFAULT '{}',  -- the five offered (empty: due at the next slot)
    used_at      timestamptz,              -- when a post first said it used the ratings
    PRIMARY KEY (team_id, channel_id),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
