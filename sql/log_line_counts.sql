-- log_line_counts: how many lines each file yielded and the running line number (line_index) of
-- its first line. Reading the lines also fills DuckDB's reject_errors with the lines the reader
-- itself drops (invalid UTF-8, over-long), which log_lines numbers around.
-- view: raw_lines(line, file_id, line_index) (sql/raw_lines_streamed.sql or sql/raw_lines_stored.sql)
SELECT file_id, count(*) AS lines_read, min(line_index) AS first_index
FROM raw_lines
GROUP BY file_id
