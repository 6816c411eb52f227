-- ingest_data_lines: the lines of a JSON-lines log that hold anything (a blank line is neither a
-- row nor a reject), the `data_lines` view every JSON-lines format's *_fields query reads.
-- view: log_lines(file_id, source_line, line)
SELECT file_id, source_line, line
FROM log_lines
WHERE regexp_matches(line, '[^ \t\r]')  -- not blank (trim(line, chars) cost 3 µs a line)
