-- ingest_litellm_spend_logs_fields: LiteLLM proxy spend logs, one row of LiteLLM_SpendLogs as a
-- JSON object per line (the /spend/logs export, or the table itself through
-- sql/litellm_spend_logs_postgres.sql). Columns as schema.prisma names them:
--   {"request_id": "...", "call_type": "acompletion", "startTime": "2026-11-02T14:00:00.500",
--    "endTime": "...", "completionStartTime": "..." | null, "model": "...", "model_group": "...",
--    "prompt_tokens": 12, "completion_tokens": 40, "team_id": "...", "session_id": "...",
--    "messages": [...] | {} (only with store_prompts_in_spend_logs), "status": "success", ...}
-- startTime → endTime is the logged latency, startTime → completionStartTime the logged TTFT.
-- Rows of calls that generate no text (embeddings, images, audio, moderation, rerank) are not
-- requests: they are left out, neither rows nor rejects.
-- view: log_lines(file_id, source_line, line); macro: json_line_problem
-- params: $database_rows (TRUE when the lines are table rows: a reason then names the request_id)
WITH data_lines AS (
    SELECT file_id, source_line, line
    FROM log_lines
    WHERE line IS NOT NULL AND trim(line, E' \t\r') <> ''
),
documents AS (
    SELECT
        *,
        json_valid(line) AS is_json,
        CASE WHEN json_valid(line) THEN json_type(line) END AS document_type
    FROM data_lines
),
extracted AS (
    SELECT
        *,
        CASE WHEN document_type = 'OBJECT' THEN json_extract(line, [
            '$.request_id', '$.startTime', '$.endTime', '$.completionStartTime', '$.prompt_tokens',
            '$.completion_tokens', '$.team_id', '$.model_group', '$.model', '$.session_id', '$.messages',
            '$.call_type'
        ]) END AS f
    FROM documents
),
requests AS (
    SELECT
        *,
        CASE WHEN json_type(f[11]) = 'ARRAY' THEN json_extract(f[11], '$[*]') END AS messages
    FROM extracted
    WHERE f IS NULL
       OR coalesce(NOT regexp_matches(f[12] ->> '$', 'embedding|image|speech|transcription|moderation|rerank'), TRUE)
)
SELECT
    file_id,
    source_line,
    CASE WHEN $database_rows THEN 'request_id ' || (f[1] ->> '$') END AS record,
    line AS raw,
    json_line_problem(
        is_json,
        document_type = 'OBJECT',
        CASE
            WHEN json_type(f[2]) IS DISTINCT FROM 'VARCHAR' THEN 'field startTime: missing or not a string'
        END
    ) AS problem,
    f[1] ->> '$' AS request_id,
    f[2] ->> '$' AS arrival_raw,
    'timestamp' AS arrival_kind,
    f[3] ->> '$' AS completed_raw,
    f[4] ->> '$' AS first_token_raw,
    f[5] ->> '$' AS prompt_raw,
    f[6] ->> '$' AS output_raw,
    nullif(f[7] ->> '$', '') AS tenant,
    coalesce(nullif(f[8] ->> '$', ''), nullif(f[9] ->> '$', '')) AS route,
    CAST(NULL AS VARCHAR) AS latency_raw,
    CASE WHEN len(messages) > 0 THEN CAST(f[11] AS VARCHAR) END AS messages_json,
    CAST(NULL AS BOOLEAN) AS structured_output,
    CASE WHEN len(messages) > 0 THEN
        list_transform(range(1, len(messages) + 1), lambda k: hash(messages[1:k]))
    END AS prefix_hashes,
    nullif(f[10] ->> '$', '') AS session_id
FROM requests
