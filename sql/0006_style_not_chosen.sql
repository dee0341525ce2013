-- A channel that never chose an explanation style stores none (NULL). The recommender's one rule then
-- applies: `llm` when an LLM is configured, the template with the paper's summary otherwise.
-- Until now every new settings row took 'template+tldr' as a column default, so a stored 'template+tldr'
-- cannot be told apart from that default; it is read as "not chosen".
ALTER TABLE channel_settings ALTER COLUMN style DROP DEFAULT;
ALTER TABLE channel_settings ALTER COLUMN style DROP NOT NULL;
UPDATE channel_settings SET style = NULL WHERE style = 'template+tldr';
-- A slot's row is opened before its draft exists; its style is known once drafted.
ALTER TABLE recommendations ALTER COLUMN style DROP NOT NULL;
