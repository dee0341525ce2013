-- A paper whose source gives only its year as the year's first day (PubMed does) may have come out on any day of
-- that year: its available_on is the year's last day, as for a paper with a year and no date, so that a replay
-- through the commands (`recommend --as-of`) offers it when the project's replay does (issue 54). Serving offers a
-- paper from its publication_date, as before. The generated column is rebuilt with its index.
DROP INDEX IF EXISTS papers_available_on;
ALTER TABLE papers DROP COLUMN available_on;
ALTER TABLE papers ADD COLUMN available_on date GENERATED ALWAYS AS (
    CASE WHEN date_precision = 'month' AND publication_date IS NOT NULL
              THEN (publication_date + interval '1 month' - interval '1 day')::date
         WHEN date_precision = 'year' AND publication_date IS NOT NULL
              THEN make_date(extract(year FROM publication_date)::int, 12, 31)
         WHEN publication_date IS NOT NULL THEN publication_date
         WHEN year IS NOT NULL THEN make_date(year, 12, 31)
    END) STORED;
CREATE INDEX papers_available_on ON papers (available_on);
