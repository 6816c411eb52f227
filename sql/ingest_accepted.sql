-- ingest_accepted: the canonical request log in arrival order (ties: file, then line), so the
-- same log always writes the same file and time-window reads can skip row groups.
-- table: canonical (ingest_canonical, materialised); params: $run_id
WITH accepted AS (
    SELECT * EXCLUDE (reject_reason, raw)
    FROM canonical
    WHERE reject_reason IS NULL
)
SELECT *, $run_id AS run_id
FROM accepted
ORDER BY arrival_at, source_file, source_line
