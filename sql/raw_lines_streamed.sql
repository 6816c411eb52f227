-- raw_lines_streamed: the log's lines numbered as they are read, on one thread (the `raw_lines`
-- view when the format's fields query is cheap per line: nothing is stored, the file is read twice,
-- once to count its lines and once to ingest them).
-- params: $files (explicit list, expanded from the spec's glob), $max_line_size
-- macro: raw_log_lines (sql/raw_log_lines.sql)
SELECT line, file_id, line_index
FROM raw_log_lines($files, $max_line_size)
