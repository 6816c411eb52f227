-- ingest_counts: accepted and rejected lines of one ingest.
-- tables: canonical, line_rejects
WITH parsed AS (
    SELECT
        count(*) FILTER (WHERE reject_reason IS NULL) AS accepted,
        count(*) FILTER (WHERE reject_reason IS NOT NULL) AS rejected_parsing
    FROM canonical
),
dropped AS (
    SELECT count(*) AS rejected_reading FROM line_rejects
)
SELECT accepted, rejected_parsing + rejected_reading AS rejected
FROM parsed, dropped
