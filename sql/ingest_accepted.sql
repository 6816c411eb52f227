-- ingest_accepted: the canonical request log, in file and line order (queries order by arrival).
-- table: canonical (ingest_canonical, materialised); params: $run_id
WITH accepted AS (
    SELECT * EXCLUDE (reject_reason, raw)
    FROM canonical
    WHERE reject_reason IS NULL
)
SELECT *, $run_id AS run_id
FROM accepted

