-- log_lines: every physical line of the log files, with its 1-based number inside its file.
-- Each line is read as one opaque VARCHAR (no delimiter, quote or escape applies), so a blank
-- line keeps its place (the delimiter is a 4-byte control sequence: a one-byte \x01 cut any line
-- holding that byte at it, silently; found by tests/test_fuzz_logs.py); a bare carriage return counts as a line break, as in DuckDB's reader.
-- The reader's global index restarts per file at log_files.first_index. This is the numbering
-- when the first pass found no rejected line; else log_lines_around_rejects applies.
-- params: $files, $max_line_size (the same as log_line_counts)
-- table: log_files(file_id, source_file, first_index)
WITH raw_lines AS (
    SELECT line, filename AS source_file, ordinality AS global_index
    FROM read_csv(
        $files,
        columns = {'line': 'VARCHAR'}, header = false, auto_detect = false,
        delim = E'\x01\x02\x03\x04', quote = '', escape = '', comment = '', strict_mode = false,
        store_rejects = true, filename = true, max_line_size = $max_line_size
    ) WITH ORDINALITY
),
read_index AS (
    SELECT raw_lines.line, log_files.file_id, raw_lines.global_index - log_files.first_index + 1 AS kept_index
    FROM raw_lines JOIN log_files USING (source_file)
)
SELECT file_id, kept_index AS source_line, line
FROM read_index
