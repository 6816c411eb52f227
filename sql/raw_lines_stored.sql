-- raw_lines_stored: the stored lines numbered by their row (the `raw_lines` view after
-- stored_log_lines): rowid runs over all the files in the order given, as the lines were read.
-- A table scan runs on every thread, and so does every query that reads these lines.
-- table: stored_lines(line, file_id)
SELECT line, file_id, rowid AS line_index
FROM stored_lines
