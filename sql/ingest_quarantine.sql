-- ingest_quarantine: every rejected line with its file, line number and reason: the lines the
-- reader dropped (line_rejects) and the lines that did not parse (canonical).
-- tables: canonical, line_rejects; params: $run_id
WITH rejected AS (
    SELECT source_file, source_line, reject_reason AS reason, raw
    FROM canonical
    WHERE reject_reason IS NOT NULL
    UNION ALL
    SELECT source_file, source_line, reason, raw
    FROM line_rejects
)
SELECT *, $run_id AS run_id
FROM rejected
ORDER BY source_file, source_line
