-- ingest_reject_lines: the start of its line for each rejected record without text, after
-- ingest_canonical: a format whose lines hold many records (OTLP spans: `records_share_lines` in
-- pipeline/workload/logs/formats.py) leaves a good line's text out of its records' rows, and the
-- few that canonical rejects get their line's first 300 characters here, as every other reject has.
-- tables: canonical (materialised), data_lines (view: file_id, source_line, line)
UPDATE canonical
SET raw = left(data_lines.line, 300)
FROM data_lines
WHERE
    canonical.reject_reason IS NOT NULL
    AND canonical.raw IS NULL
    AND data_lines.file_id = canonical.file_id
    AND data_lines.source_line = canonical.source_line
