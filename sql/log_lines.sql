-- log_lines: every physical line of the log files, with its 1-based number inside its file.
-- The lines are raw_log_lines' (sql/raw_log_lines.sql: one opaque VARCHAR each, blank lines kept).
-- The reader's global index restarts per file at log_files.first_index. This is the numbering
-- when the first pass found no rejected line; else log_lines_around_rejects applies.
-- params: $files, $max_line_size (the same as log_line_counts)
-- macro: raw_log_lines; table: log_files(file_id, source_file, first_index)
WITH read_index AS (
    SELECT raw_lines.line, log_files.file_id, raw_lines.global_index - log_files.first_index + 1 AS kept_index
    FROM raw_log_lines($files, $max_line_size) AS raw_lines
    JOIN log_files USING (source_file)
)
SELECT file_id, kept_index AS source_line, line
FROM read_index
