-- ingest_quarantine: every rejected line with its file, line number and reason: the lines the
-- reader dropped (line_rejects) and the lines that did not parse (canonical).
-- Without $echo_values (privacy.text hash or drop) no line's text is kept: `raw` is NULL, the
-- reasons ingest_canonical writes name the field but not its value, and a reader reject keeps
-- DuckDB's error type without its message (which quotes the line).
-- tables: canonical, line_rejects, log_files; params: $run_id, $echo_values
WITH rejected AS (
    SELECT log_files.source_file, canonical.source_line, canonical.reject_reason AS reason, canonical.raw
    FROM canonical
    JOIN log_files USING (file_id)
    WHERE canonical.reject_reason IS NOT NULL
    UNION ALL
    SELECT
        source_file,
        source_line,
        CASE WHEN $echo_values THEN reason ELSE split_part(reason, ':', 1) END AS reason,
        raw
    FROM line_rejects
)
SELECT
    source_file,
    source_line,
    reason,
    CASE WHEN $echo_values THEN raw END AS raw,
    $run_id AS run_id
FROM rejected
ORDER BY source_file, source_line
