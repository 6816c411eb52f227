-- log_lines: every physical line of the log files, with its 1-based number inside its file.
-- The lines are raw_lines' (sql/raw_log_lines.sql: one opaque VARCHAR each, blank lines kept,
-- stored in the files' order); the table's rowid restarts per file at log_files.first_index.
-- A table scan runs on every thread, so every query that reads these lines does too.
-- This is the numbering when the reader rejected no line; else log_lines_around_rejects applies.
-- tables: raw_lines(line, file_id), log_files(file_id, source_file, first_index)
WITH read_index AS (
    SELECT raw_lines.line, raw_lines.file_id, raw_lines.rowid - log_files.first_index + 1 AS kept_index
    FROM raw_lines
    JOIN log_files USING (file_id)
)
SELECT file_id, kept_index AS source_line, line
FROM read_index
