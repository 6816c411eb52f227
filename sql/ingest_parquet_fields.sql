-- ingest_parquet_fields: Parquet request logs with a column mapping; `source_line` is the
-- 1-based row number inside its file.
-- view: parquet_rows(source_file, source_line, <field>_text: the mapped column as text)
-- params: $arrival_kind ('timestamp' | 'number')
WITH mapped AS (
    SELECT
        source_file,
        source_line,
        concat_ws(', ', 'arrival=' || arrival_text, 'prompt_tokens=' || prompt_tokens_text,
                  'output_tokens=' || output_tokens_text) AS raw,
        CAST(NULL AS VARCHAR) AS problem,
        coalesce(request_id_text, parse_filename(source_file) || ':' || source_line) AS request_id,
        arrival_text AS arrival_raw,
        $arrival_kind AS arrival_kind,
        prompt_tokens_text AS prompt_raw,
        output_tokens_text AS output_raw,
        tenant_text AS tenant,
        route_text AS route,
        latency_ms_text AS latency_raw,
        messages_json_text AS messages_json,
        CAST(NULL AS BOOLEAN) AS structured_output,
        CAST(NULL AS UBIGINT[]) AS prefix_hashes
    FROM parquet_rows
)
SELECT * FROM mapped
