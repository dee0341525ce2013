-- How far a paper's publication date is known: to the day, the month or only the year. publication_date holds
-- the first day of what is known (the 1st of the month; NULL with only the year), and available_on the last
-- day it may have come out, so that a window or a replay never offers a paper before it surely existed.
ALTER TABLE papers ADD COLUMN date_precision text CHECK (date_precision IN ('day', 'month', 'year'));
UPDATE papers SET date_precision = 'day' WHERE publication_date IS NOT NULL;
UPDATE papers SET date_precision = 'year' WHERE publication_date IS NULL AND year IS NOT NULL;
ALTER TABLE papers ADD COLUMN available_on date GENERATED ALWAYS AS (
    CASE WHEN date_precision = 'month' AND publication_date IS NOT NULL
              THEN (publication_date + interval '1 month' - interval '1 day')::date
         WHEN publication_date IS NOT NULL THEN publication_date
         WHEN year IS NOT NULL THEN make_date(year, 12, 31)
    END) STORED;
CREATE INDEX papers_available_on ON papers (available_on);
