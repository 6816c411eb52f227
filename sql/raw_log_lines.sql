-- raw_log_lines: the one reader of the raw log lines; ingest stores what it reads as the table
-- raw_lines, which log_line_counts, log_lines and log_lines_around_rejects read.
-- Each physical line is read as one opaque VARCHAR (no delimiter, quote or escape applies), so a
-- blank line keeps its place. The delimiter is a 4-byte control sequence: a one-byte \x01 cut any
-- line holding that byte at it, silently (found by tests/unit/test_fuzz_logs.py). A bare carriage
-- return counts as a line break, as in DuckDB's reader. store_rejects fills DuckDB's reject_errors
-- with the lines the reader itself drops (invalid UTF-8, longer than $max_line_size).
-- file_id: the file's place in $files (DuckDB's file_index).
-- No line number here: numbering the lines as they are read (WITH ORDINALITY, row_number() OVER ())
-- makes the reader a serial source, and with it every query that reads the numbered lines (an
-- OTLP log's from_json ran on one core). Read without one, the reader runs on every thread and
-- DuckDB still stores the lines in the files' order (preserve_insertion_order, on by default), so
-- the stored table's rowid is the running line number over all the files, in the order given.
-- buffer_size: two of the longest lines; the reader's default (16 × max_line_size = 1 GiB) ran out of
-- a 2 GB memory limit on any log file of a few GB (a 10-million-row LiteLLM export is ~7 GB).
-- params: $files (explicit list, expanded from the spec's glob), $max_line_size
SELECT line, file_index AS file_id
FROM read_csv(
    $files,
    columns = { 'line': 'VARCHAR' }, header = FALSE, auto_detect = FALSE,
    delim = E'\x01\x02\x03\x04', quote = '', escape = '', comment = '', strict_mode = FALSE,
    store_rejects = TRUE, max_line_size = $max_line_size, buffer_size = 2 * $max_line_size
)
