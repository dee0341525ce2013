-- Each channel's ranker is fitted to its own history (socialrag/calibrate.py). Every fit is kept with its
-- date, so `status`, App Home and `/paperping why` can say what drives the channel and when that was learnt.
CREATE TABLE channel_rankers (
    id           bigserial PRIMARY KEY,
    team_id      text NOT NULL,
    channel_id   text NOT NULL,
    fitted_at    timestamptz NOT NULL DEFAULT now(),
    model        jsonb NOT NULL,            -- features, their scales and weights, the prior's share
    shares       integer NOT NULL,          -- past shares the fit learnt from
    pairs        integer NOT NULL,          -- (preferred, passed-over) pairs it saw
    FOREIGN KEY (team_id, channel_id) REFERENCES channels ON DELETE CASCADE
);
CREATE INDEX channel_rankers_latest ON channel_rankers (team_id, channel_id, fitted_at DESC);

-- A paper's popularity as it was known on a date, so that a replay (`--as-of`) never uses counts from after
-- the moment it replays. Every change of papers.popularity is recorded; catalogs may carry earlier readings.
CREATE TABLE paper_popularity (
    paper_id     bigint NOT NULL REFERENCES papers ON DELETE CASCADE,
    observed_at  timestamptz NOT NULL,
    value        double precision NOT NULL,
    PRIMARY KEY (paper_id, observed_at)
);

CREATE FUNCTION record_popularity() RETURNS trigger AS $$
BEGIN
    IF NEW.popularity IS NOT NULL AND (TG_OP = 'INSERT' OR NEW.popularity IS DISTINCT FROM OLD.popularity) THEN
        INSERT INTO paper_popularity (paper_id, observed_at, value) VALUES (NEW.id, now(), NEW.popularity)
        ON CONFLICT (paper_id, observed_at) DO UPDATE SET value = EXCLUDED.value;
    END IF;
    RETURN NEW;
END
$$ LANGUAGE plpgsql;

CREATE TRIGGER papers_popularity_history AFTER INSERT OR UPDATE OF popularity ON papers
    FOR EACH ROW EXECUTE FUNCTION record_popularity();

-- What is already known was known from when the paper was first stored.
INSERT INTO paper_popularity (paper_id, observed_at, value)
SELECT id, COALESCE(fetched_at, created_at), popularity FROM papers WHERE popularity IS NOT NULL;
