-- A post deleted in Slack is marked, not forgotten: its paper stays (so that it is not posted again), what it said
-- does not, and `why`, App Home and status leave it out.
ALTER TABLE recommendations ADD COLUMN deleted_at timestamptz;

-- A post's stored reasons no longer quote a member's reply: an earlier reception keeps the reply's row
-- (`first_reply_id`) and `why` quotes it only while it is kept. The quotes stored before are taken out.
CREATE FUNCTION pg_temp.without_quotes(j jsonb) RETURNS jsonb LANGUAGE plpgsql IMMUTABLE AS $$
BEGIN
    IF jsonb_typeof(j) = 'object' THEN
        RETURN (SELECT COALESCE(jsonb_object_agg(key, pg_temp.without_quotes(value)), '{}'::jsonb)
                  FROM jsonb_each(j) WHERE key <> 'first_reply');
    ELSIF jsonb_typeof(j) = 'array' THEN
        RETURN (SELECT COALESCE(jsonb_agg(pg_temp.without_quotes(value) ORDER BY n), '[]'::jsonb)
                  FROM jsonb_array_elements(j) WITH ORDINALITY AS e(value, n));
    END IF;
    RETURN j;
END $$;
UPDATE recommendations SET draft = pg_temp.without_quotes(draft) WHERE draft::text LIKE '%"first_reply"%';
DROP FUNCTION pg_temp.without_quotes(jsonb);

-- What the model wrote is kept a while (to see what it wrote), then cleared: the age sweep finds it by this.
CREATE INDEX llm_calls_output_age ON llm_calls (created_at) WHERE output IS NOT NULL;
