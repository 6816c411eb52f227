-- line_rejects: the lines DuckDB's reader dropped in the first pass, as quarantine rows.
-- tables: reject_errors, reject_scans (DuckDB's own, filled by store_rejects)
WITH reader_rejects AS (
    SELECT
        reject_scans.file_path AS source_file,
        CAST(reject_errors.line AS BIGINT) AS source_line,
        CAST(reject_errors.error_type AS VARCHAR) || ': ' || reject_errors.error_message AS reason,
        reject_errors.csv_line AS raw
    FROM reject_errors
    JOIN reject_scans USING (scan_id, file_id)
)
SELECT DISTINCT ON (source_file, source_line) source_file, source_line, reason, left(raw, 300) AS raw
FROM reader_rejects
ORDER BY source_file, source_line
