-- log_lines_around_rejects: every physical line of the log files, with its 1-based number inside its file.
-- The lines are raw_lines' (sql/raw_log_lines.sql: one opaque VARCHAR each, blank lines kept);
-- the running line number restarts per file at log_files.first_index; lines the reader rejected
-- (table line_rejects, filled as the lines were first read) are skipped over in the numbering.
-- Used instead of log_lines when the reader rejected lines (an ASOF join: slower).
-- view: raw_lines(line, file_id, line_index); tables: log_files(file_id, source_file, first_index),
-- line_rejects(source_file, source_line, reason, raw)
WITH read_index AS (
    SELECT
        raw_lines.line, log_files.source_file, raw_lines.file_id,
        raw_lines.line_index - log_files.first_index + 1 AS kept_index
    FROM raw_lines
    JOIN log_files USING (file_id)
),
rejects_before AS (
    -- the i-th rejected line of a file (line r_i) comes after r_i - i kept lines
    SELECT source_file, kept_before, max(rejected_so_far) AS rejected_so_far
    FROM (
        SELECT
            source_file,
            source_line - row_number() OVER (PARTITION BY source_file ORDER BY source_line) AS kept_before,
            row_number() OVER (PARTITION BY source_file ORDER BY source_line) AS rejected_so_far
        FROM line_rejects
    ) AS numbered_rejects
    GROUP BY source_file, kept_before
)
SELECT
    read_index.file_id,
    read_index.kept_index + coalesce(rejects_before.rejected_so_far, 0) AS source_line,
    read_index.line
FROM read_index
ASOF LEFT JOIN rejects_before
    ON read_index.source_file = rejects_before.source_file
   AND read_index.kept_index > rejects_before.kept_before
