-- log_line_counts: first pass over the log files. How many lines each file yields and the
-- reader's global index of its first line; running it also fills DuckDB's reject_errors with
-- the lines the reader itself drops (invalid UTF-8, over-long), which log_lines numbers around.
-- params: $files (explicit list, expanded from the spec's glob), $max_line_size
-- macro: raw_log_lines (sql/raw_log_lines.sql)
SELECT source_file, count(*) AS lines_read, min(global_index) AS first_index
FROM raw_log_lines($files, $max_line_size)
GROUP BY source_file
