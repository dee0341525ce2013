-- A paper no source knows is embedded from the words of the messages that shared it. Those words belong to
-- the channel they were written in, so each channel gets a vector of its own, made from its messages only,
-- and only that channel's ranking reads it. paper_embeddings keeps the vectors of public metadata (title and
-- abstract) alone.
CREATE TABLE channel_text_embeddings (
    team_id       text NOT NULL,
    channel_id    text NOT NULL,
    paper_id      bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    model         text NOT NULL,
    content_hash  text NOT NULL,
    embedding     vector NOT NULL,
    embedded_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (team_id, channel_id, paper_id, model),
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX channel_text_embeddings_paper ON channel_text_embeddings (paper_id);

-- The vectors made so far from message text mixed every channel's words: they go, and the index sweep makes
-- each channel's own.
DELETE FROM paper_embeddings e USING papers p WHERE e.paper_id = p.id AND p.title IS NULL;
