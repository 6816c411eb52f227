-- ingest_langfuse_fields: Langfuse observations, one JSON object per line as the observations
-- table's JSONL export and the public API (GET /api/public/observations) write them:
--   {"id": "...", "traceId": "...", "type": "GENERATION", "startTime": "2026-11-02T14:00:00.500Z",
--    "endTime": "...", "completionStartTime": "..." | null, "model": "...",
--    "input": [{"role": "user", "content": "..."}] | {"messages": [...]}, "output": {...},
--    "usageDetails": {"input": 12, "output": 40, ...}, "usage": {"input": 12, "output": 40},
--    "sessionId": "..." (from the trace, where the export joins it), ...}
-- Only GENERATION observations are model calls: spans and events are left out, neither rows nor
-- rejects. Tokens are usageDetails' input/output, else usage's (input/output, or the older
-- promptTokens/completionTokens). startTime → endTime is the logged latency, startTime →
-- completionStartTime the logged TTFT. The session id is the observation's sessionId, else its
-- trace's (trace.sessionId). The model is the route.
-- view: log_lines(file_id, source_line, line); macro: json_line_problem
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
            '$.id', '$.type', '$.startTime', '$.endTime', '$.completionStartTime', '$.model',
            '$.usageDetails.input', '$.usage.input', '$.usage.promptTokens',
            '$.usageDetails.output', '$.usage.output', '$.usage.completionTokens',
            '$.input', '$.input.messages', '$.sessionId', '$.trace.sessionId'
        ]) END AS f
    FROM documents
),
generations AS (
    SELECT
        *,
        CASE
            WHEN json_type(f[13]) = 'ARRAY' THEN f[13]
            WHEN json_type(f[14]) = 'ARRAY' THEN f[14]
        END AS chat
    FROM extracted
    WHERE f IS NULL OR coalesce(f[2] ->> '$' = 'GENERATION', TRUE)
),
typed AS (
    SELECT
        *,
        json_extract(chat, '$[*]') AS messages,
        list_filter([f[7], f[8], f[9]], lambda v: json_type(v) NOT IN ('NULL'))[1] AS prompt_value,
        list_filter([f[10], f[11], f[12]], lambda v: json_type(v) NOT IN ('NULL'))[1] AS output_value,
        list_filter([f[15], f[16]], lambda v: json_type(v) NOT IN ('NULL'))[1] AS session_value
    FROM generations
)
SELECT
    file_id,
    source_line,
    CAST(NULL AS VARCHAR) AS record,
    line AS raw,
    json_line_problem(
        is_json,
        document_type = 'OBJECT',
        CASE
            WHEN json_type(f[3]) IS DISTINCT FROM 'VARCHAR' THEN 'field startTime: missing or not a string'
            WHEN messages IS NOT NULL AND NOT list_bool_and(list_transform(
                messages, lambda m: json_type(m) = 'OBJECT' AND json_exists(m, '$.role')
            )) THEN 'field input: a list that is not of {role, content} messages'
        END
    ) AS problem,
    f[1] ->> '$' AS request_id,
    f[3] ->> '$' AS arrival_raw,
    'timestamp' AS arrival_kind,
    f[4] ->> '$' AS completed_raw,
    f[5] ->> '$' AS first_token_raw,
    prompt_value ->> '$' AS prompt_raw,
    output_value ->> '$' AS output_raw,
    CAST(NULL AS VARCHAR) AS tenant,
    f[6] ->> '$' AS route,
    CAST(NULL AS VARCHAR) AS latency_raw,
    CASE WHEN len(messages) > 0 THEN CAST(chat AS VARCHAR) END AS messages_json,
    CAST(NULL AS BOOLEAN) AS structured_output,
    CASE WHEN len(messages) > 0 THEN
        list_transform(range(1, len(messages) + 1), lambda k: hash(messages[1:k]))
    END AS prefix_hashes,
    nullif(session_value ->> '$', '') AS session_id
FROM typed
