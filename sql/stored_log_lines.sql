-- stored_log_lines: the log's lines read on every thread, stored by ingest as the table
-- stored_lines in the files' order (when the format's fields query costs more per line than
-- storing the line: OTLP's nested parse).
-- params: $files (explicit list, expanded from the spec's glob), $max_line_size
-- macro: raw_log_lines_in_parallel (sql/raw_log_lines.sql)
SELECT line, file_id
FROM raw_log_lines_in_parallel($files, $max_line_size)
