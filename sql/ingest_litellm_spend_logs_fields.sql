-- ingest_litellm_spend_logs_fields: LiteLLM proxy spend logs, one row of LiteLLM_SpendLogs as a
-- JSON object per line (the /spend/logs export, or the table itself through
-- sql/litellm_spend_logs_postgres.sql). Columns as schema.prisma names them:
--   {"request_id": "...", "call_type": "acompletion", "startTime": "2026-11-02T14:00:00.500",
--    "endTime": "...", "completionStartTime": "..." | null, "model": "...", "model_group": "...",
--    "prompt_tokens": 12, "completion_tokens": 40, "team_id": "...", "session_id": "...",
--    "messages": [...] | {} (only with store_prompts_in_spend_logs), "status": "success",
--    "proxy_server_request": {the request body: tools, temperature, ...} (store_prompts_in_spend_logs), ...}
-- The request fields (tools, response_format, temperature, ...) are proxy_server_request's.
-- startTime → endTime is the logged latency, startTime → completionStartTime the logged TTFT.
-- Rows of calls that generate no text (embeddings, images, audio, moderation, rerank) are not
-- requests: they are left out, neither rows nor rejects.
-- views: data_lines (sql/ingest_data_lines.sql); macros: sql/ingest_macros.sql
-- params: $database_rows (TRUE when the lines are table rows: a reason then names the request_id)
WITH extracted AS (
    SELECT
        *,
        json_object_text(line, [
            '$.request_id', '$.startTime', '$.endTime', '$.completionStartTime', '$.prompt_tokens',
            '$.completion_tokens', '$.team_id', '$.model_group', '$.model', '$.session_id', '$.messages',
            '$.call_type', '$.proxy_server_request'
        ]) AS f
    FROM data_lines
),
requests AS (
    SELECT
        *,
        CASE WHEN starts_with(f[11], '[') THEN json_extract(f[11], '$[*]') END AS messages,
        request_values_of(f[13]) AS request_values
    FROM extracted
    -- f named once: the filter is pushed below the extraction, so each mention of f parses the line again
    WHERE NOT regexp_matches(coalesce(f[12], ''), 'embedding|image|speech|transcription|moderation|rerank')
)
SELECT
    file_id,
    source_line,
    CASE WHEN $database_rows THEN 'request_id ' || f[1] END AS record,
    left(line, 300) AS raw,
    json_line_problem(line, f IS NOT NULL, NULL) AS problem,
    f[1] AS request_id,
    f[2] AS arrival_raw,
    'timestamp' AS arrival_kind,
    f[3] AS completed_raw,
    f[4] AS first_token_raw,
    f[5] AS prompt_raw,
    f[6] AS output_raw,
    nullif(f[7], '') AS tenant,
    coalesce(nullif(f[8], ''), nullif(f[9], '')) AS route,
    CASE WHEN len(messages) > 0 THEN f[11] END AS messages_json,
    request_fields_from(request_values) AS request_fields,
    message_prefix_hashes(messages) AS prefix_hashes,
    nullif(f[10], '') AS session_id
FROM requests
