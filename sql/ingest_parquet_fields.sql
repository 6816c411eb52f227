-- ingest_parquet_fields: Parquet request logs with a column mapping; `source_line` is the
-- 1-based row number inside its file.
-- view: parquet_rows(source_file, source_line, <field>_text: the mapped column as text);
-- table: log_files(file_id, source_file); shaped by sql/ingest_log_fields.sql
-- params: $arrival_kind ('timestamp' | 'number')
WITH mapped AS (
    SELECT
        log_files.file_id,
        source_line,
        concat_ws(', ', 'arrival=' || arrival_text, 'prompt_tokens=' || prompt_tokens_text,
                  'output_tokens=' || output_tokens_text) AS raw,
        request_id_text AS request_id,
        arrival_text AS arrival_raw,
        $arrival_kind AS arrival_kind,
        prompt_tokens_text AS prompt_raw,
        output_tokens_text AS output_raw,
        tenant_text AS tenant,
        route_text AS route,
        latency_ms_text AS latency_raw,
        completed_at_text AS completed_raw,
        first_token_at_text AS first_token_raw,
        messages_json_text AS messages_json,
        nullif(trim(session_id_text), '') AS session_id
    FROM parquet_rows
    JOIN log_files USING (source_file)
)
SELECT * FROM mapped
