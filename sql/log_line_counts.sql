-- log_line_counts: first pass over the log files. How many lines each file yields and the
-- reader's global index of its first line; running it also fills DuckDB's reject_errors with
-- the lines the reader itself drops (invalid UTF-8, over-long), which log_lines numbers around.
-- params: $files (explicit list, expanded from the spec's glob), $max_line_size
WITH raw_lines AS (
    SELECT filename AS source_file, ordinality AS global_index
    FROM read_csv(
        $files,
        columns = {'line': 'VARCHAR'}, header = false, auto_detect = false,
        delim = E'\x01\x02\x03\x04', quote = '', escape = '', comment = '', strict_mode = false,
        store_rejects = true, filename = true, max_line_size = $max_line_size
    ) WITH ORDINALITY
)
SELECT source_file, count(*) AS lines_read, min(global_index) AS first_index
FROM raw_lines
GROUP BY source_file
