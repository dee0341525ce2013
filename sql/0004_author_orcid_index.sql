-- Members link their publication record by ORCID too; look authors up by it without a scan.
CREATE INDEX authors_orcid ON authors (orcid) WHERE orcid IS NOT NULL;
