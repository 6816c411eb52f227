-- ingest_csv_fields: the mapped fields of CSV log lines (azure_csv, burstgpt_csv, csv).
-- One record per line; a quoted field may hold commas and doubled quotes but no line break.
-- Unquoted lines (nearly all) are cut at each comma with string_split; only lines with a quote
-- go through the regular expression. A position past the line's last field reads NULL (the
-- field's value is NULL when empty, either way).
-- views: log_lines(file_id, source_line, line),
--        csv_columns(file_id, header_line, header_width, <field>_pos: 1-based or NULL)
-- params: $arrival_kind ('timestamp' | 'number')
WITH data_lines AS (
    SELECT
        log_lines.file_id,
        log_lines.source_line,
        rtrim(log_lines.line, E'\r') AS line,
        contains(log_lines.line, '"') AS quoted,
        csv_columns.* EXCLUDE (file_id)
    FROM log_lines
    JOIN csv_columns USING (file_id)
    WHERE log_lines.source_line > csv_columns.header_line
      AND log_lines.line IS NOT NULL
      AND regexp_matches(log_lines.line, '[^ \t\r]')  -- not blank (trim(line, chars) cost 3 µs a line)
),
split_lines AS (
    SELECT
        *,
        CASE
            WHEN quoted THEN list_transform(
                regexp_extract_all(line, '(?:^|,)("(?:[^"]|"")*"|[^,]*)', 1),
                lambda field: CASE WHEN field LIKE '"%"' THEN replace(field[2:-2], '""', '"') ELSE field END
            )
            ELSE string_split(line, ',')
        END AS fields
    FROM data_lines
),
mapped AS (
    SELECT
        file_id,
        source_line,
        line AS raw,
        len(fields) AS field_count,
        header_width,
        fields[request_id_pos] AS request_id_text,
        fields[arrival_pos] AS arrival_text,
        fields[prompt_tokens_pos] AS prompt_text,
        fields[output_tokens_pos] AS output_text,
        fields[tenant_pos] AS tenant_text,
        fields[route_pos] AS route_text,
        fields[latency_ms_pos] AS latency_text,
        fields[messages_json_pos] AS messages_text,
        fields[session_id_pos] AS session_text,
        fields[completed_at_pos] AS completed_text,
        fields[first_token_at_pos] AS first_token_text
    FROM split_lines
)
SELECT
    file_id,
    source_line,
    raw,
    CASE
        WHEN field_count <> header_width
            THEN format('expected {} fields as in the header, found {}', header_width, field_count)
    END AS problem,
    nullif(trim(request_id_text), '') AS request_id,
    nullif(trim(arrival_text), '') AS arrival_raw,
    $arrival_kind AS arrival_kind,
    nullif(trim(prompt_text), '') AS prompt_raw,
    nullif(trim(output_text), '') AS output_raw,
    nullif(trim(tenant_text), '') AS tenant,
    nullif(trim(route_text), '') AS route,
    nullif(trim(latency_text), '') AS latency_raw,
    nullif(trim(completed_text), '') AS completed_raw,
    nullif(trim(first_token_text), '') AS first_token_raw,
    nullif(trim(messages_text), '') AS messages_json,
    nullif(trim(session_text), '') AS session_id
FROM mapped
