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
-- views: data_lines (sql/ingest_data_lines.sql); macros: sql/ingest_macros.sql
WITH extracted AS (
    SELECT
        *,
        json_object_text(line, [
            '$.id', '$.type', '$.startTime', '$.endTime', '$.completionStartTime', '$.model',
            '$.usageDetails.input', '$.usage.input', '$.usage.promptTokens',
            '$.usageDetails.output', '$.usage.output', '$.usage.completionTokens',
            '$.input', '$.input.messages', '$.sessionId', '$.trace.sessionId', '$.modelParameters',
            '$.input.tools', '$.input.tool_choice'
        ]) AS f
    FROM data_lines
),
generations AS (
    SELECT
        *,
        CASE
            WHEN starts_with(f[13], '[') THEN f[13]
            WHEN starts_with(f[14], '[') THEN f[14]
        END AS chat
    FROM extracted
    -- f named once: the filter is pushed below the extraction, so each mention of f parses the line again
    WHERE coalesce(f[2], 'GENERATION') = 'GENERATION'  -- no type (or no object: rejected below) stays
),
typed AS (
    SELECT
        *,
        CASE WHEN chat IS NOT NULL THEN json_extract(chat, '$[*]') END AS messages,
        -- modelParameters as the SDKs log them (OpenAI names); tools offered ride in the input
        CASE WHEN f[17] IS NOT NULL OR f[18] IS NOT NULL OR f[19] IS NOT NULL THEN json_merge_patch(
            coalesce(CASE WHEN starts_with(f[17], '{') THEN f[17] END, '{}'),
            json_object(
                'tools', try_cast(f[18] AS JSON), 'tool_choice', coalesce(try_cast(f[19] AS JSON), to_json(f[19]))
            )
        ) END AS request_body
    FROM generations
),
requested AS (
    SELECT *, request_values_of(request_body) AS request_values
    FROM typed
)
SELECT
    file_id,
    source_line,
    left(line, 300) AS raw,
    json_line_problem(
        line,
        f IS NOT NULL,
        CASE
            WHEN messages IS NOT NULL AND NOT list_bool_and(list_transform(
                messages, lambda m: json_type(m) = 'OBJECT' AND json_exists(m, '$.role')
            )) THEN 'field input: a list that is not of {role, content} messages'
        END
    ) AS problem,
    f[1] AS request_id,
    f[3] AS arrival_raw,
    'timestamp' AS arrival_kind,
    f[4] AS completed_raw,
    f[5] AS first_token_raw,
    coalesce(f[7], f[8], f[9]) AS prompt_raw,
    coalesce(f[10], f[11], f[12]) AS output_raw,
    f[6] AS route,
    CASE WHEN len(messages) > 0 THEN chat END AS messages_json,
    request_fields_from(request_values) AS request_fields,
    message_prefix_hashes(messages) AS prefix_hashes,
    nullif(coalesce(f[15], f[16]), '') AS session_id
FROM requested
