-- ingest_csv_fields: the mapped fields of CSV log lines (azure_csv, burstgpt_csv, csv).
-- One record per line; a quoted field may hold commas and doubled quotes but no line break.
-- views: log_lines(source_file, source_line, line),
--        csv_columns(source_file, header_line, header_width, <field>_pos: 1-based or NULL)
-- params: $arrival_kind ('timestamp' | 'number')
WITH data_lines AS (
    SELECT log_lines.source_file, log_lines.source_line, rtrim(log_lines.line, E'\r') AS line, csv_columns.* EXCLUDE (source_file)
    FROM log_lines
    JOIN csv_columns USING (source_file)
    WHERE log_lines.source_line > csv_columns.header_line
      AND log_lines.line IS NOT NULL
      AND trim(log_lines.line, E' \t\r') <> ''
),
split AS (
    SELECT
        *,
        CASE
            WHEN contains(line, '"') THEN list_transform(
                regexp_extract_all(line, '(?:^|,)("(?:[^"]|"")*"|[^,]*)', 1),
                lambda field: CASE WHEN field LIKE '"%"' THEN replace(field[2:-2], '""', '"') ELSE field END
            )
            ELSE string_split(line, ',')
        END AS fields
    FROM data_lines
),
mapped AS (
    SELECT
        source_file,
        source_line,
        line AS raw,
        CASE
            WHEN len(fields) <> header_width
                THEN format('expected {} fields as in the header, found {}', header_width, len(fields))
        END AS problem,
        coalesce(nullif(trim(fields[request_id_pos]), ''), parse_filename(source_file) || ':' || source_line) AS request_id,
        nullif(trim(fields[arrival_pos]), '') AS arrival_raw,
        $arrival_kind AS arrival_kind,
        nullif(trim(fields[prompt_tokens_pos]), '') AS prompt_raw,
        nullif(trim(fields[output_tokens_pos]), '') AS output_raw,
        nullif(trim(fields[tenant_pos]), '') AS tenant,
        nullif(trim(fields[route_pos]), '') AS route,
        nullif(trim(fields[latency_ms_pos]), '') AS latency_raw,
        nullif(trim(fields[messages_json_pos]), '') AS messages_json,
        CAST(NULL AS BOOLEAN) AS structured_output,
        CAST(NULL AS UBIGINT[]) AS prefix_hashes
    FROM split
)
SELECT * FROM mapped
