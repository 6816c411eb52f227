-- log_lines: every physical line of the log files, with its 1-based number inside its file.
-- The lines are raw_lines' (sql/raw_log_lines.sql: one opaque VARCHAR each, blank lines kept);
-- the running line number restarts per file at log_files.first_index. This is the numbering
-- when the reader rejected no line; else log_lines_around_rejects applies.
-- view: raw_lines(line, file_id, line_index); table: log_files(file_id, source_file, first_index)
WITH read_index AS (
    SELECT raw_lines.line, raw_lines.file_id, raw_lines.line_index - log_files.first_index + 1 AS kept_index
    FROM raw_lines
    JOIN log_files USING (file_id)
)
SELECT file_id, kept_index AS source_line, line
FROM read_index
