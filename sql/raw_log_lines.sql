-- raw_log_lines(files, line_bytes) and raw_log_lines_in_parallel(files, line_bytes): the readers of
-- a log's raw lines, DuckDB table macros (ingest defines them on the connection; their callers,
-- raw_lines_streamed and stored_log_lines, pass $files and $max_line_size). The two read alike:
-- keep their read_csv options the same.
-- Each physical line is read as one opaque VARCHAR (no delimiter, quote or escape applies), so a
-- blank line keeps its place. The delimiter is a 4-byte control sequence: a one-byte \x01 cut any
-- line holding that byte at it, silently (found by tests/unit/test_fuzz_logs.py). A bare carriage
-- return counts as a line break, as in DuckDB's reader. store_rejects fills DuckDB's reject_errors
-- with the lines the reader itself drops (invalid UTF-8, longer than line_bytes).
-- file_id: the file's place in the list given (DuckDB's file_index).
-- raw_log_lines numbers the lines as it reads them (line_index: the running line number over all
-- the files, in the order given); numbering makes the reader a serial source, and with it every
-- query that reads the lines. raw_log_lines_in_parallel reads on every thread without a number:
-- stored as a table (DuckDB keeps the files' order: preserve_insertion_order, on by default), the
-- table's rowid is the same running number (raw_lines_stored).
-- buffer_size: two of the longest lines; the reader's default (16 × max_line_size = 1 GiB) ran out of
-- a 2 GB memory limit on any log file of a few GB (a 10-million-row LiteLLM export is ~7 GB).
-- The second parameter is not called max_line_size: a macro parameter replaces every identifier
-- of its name in the body, read_csv's option name included. (noqa CP05: sqlfluff parses a
-- macro's untyped parameter names as data types.)
CREATE OR REPLACE TEMP MACRO raw_log_lines(files, line_bytes) AS TABLE  -- noqa: CP05
SELECT line, file_index AS file_id, ordinality AS line_index
FROM read_csv(
    files,
    columns = { 'line': 'VARCHAR' }, header = FALSE, auto_detect = FALSE,
    delim = E'\x01\x02\x03\x04', quote = '', escape = '', comment = '', strict_mode = FALSE,
    store_rejects = TRUE, max_line_size = line_bytes, buffer_size = 2 * line_bytes
) WITH ORDINALITY;

CREATE OR REPLACE TEMP MACRO raw_log_lines_in_parallel(files, line_bytes) AS TABLE  -- noqa: CP05
SELECT line, file_index AS file_id
FROM read_csv(
    files,
    columns = { 'line': 'VARCHAR' }, header = FALSE, auto_detect = FALSE,
    delim = E'\x01\x02\x03\x04', quote = '', escape = '', comment = '', strict_mode = FALSE,
    store_rejects = TRUE, max_line_size = line_bytes, buffer_size = 2 * line_bytes
)
