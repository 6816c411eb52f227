-- ingest_quarantine: every rejected line with its file, line number and reason: the lines the
-- reader dropped (line_rejects) and the lines that did not parse (canonical).
-- tables: canonical, line_rejects, log_files; params: $run_id
WITH rejected AS (
    SELECT log_files.source_file, canonical.source_line, canonical.reject_reason AS reason, canonical.raw
    FROM canonical
    JOIN log_files USING (file_id)
    WHERE canonical.reject_reason IS NOT NULL
    UNION ALL
    SELECT source_file, source_line, reason, raw
    FROM line_rejects
)
SELECT *, $run_id AS run_id
FROM rejected
ORDER BY source_file, source_line
