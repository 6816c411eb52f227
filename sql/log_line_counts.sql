-- log_line_counts: how many lines each file yielded and the stored row (raw_lines.rowid, the
-- running line number over all files) of its first line. Reading the lines also filled DuckDB's
-- reject_errors with the lines the reader itself dropped (invalid UTF-8, over-long), which
-- log_lines numbers around.
-- table: raw_lines(line, file_id), stored from sql/raw_log_lines.sql in the files' order
SELECT file_id, count(*) AS lines_read, min(rowid) AS first_index
FROM raw_lines
GROUP BY file_id
