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
    WHERE regexp_matches(line, '[^ \t\r]')  -- not blank (trim(line, chars) cost 3 µs a line)
),
extracted AS (
    -- one parse per line: every field as text (a JSON value that is no string keeps its JSON text);
    -- only a line that fails it is parsed again, to tell broken JSON from a value that is no object
    SELECT
        *,
        CASE WHEN regexp_matches(line, '^ *\{') THEN try(json_extract_string(line, [
            '$.id', '$.type', '$.startTime', '$.endTime', '$.completionStartTime', '$.model',
            '$.usageDetails.input', '$.usage.input', '$.usage.promptTokens',
            '$.usageDetails.output', '$.usage.output', '$.usage.completionTokens',
            '$.input', '$.input.messages', '$.sessionId', '$.trace.sessionId'
        ])) END AS f
    FROM data_lines
),
generations AS (
    SELECT
        *,
        CASE WHEN f IS NOT NULL THEN TRUE ELSE json_valid(line) END AS is_json,
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
        CASE WHEN chat IS NOT NULL THEN json_extract(chat, '$[*]') END AS messages
    FROM generations
)
SELECT
    file_id,
    source_line,
    CAST(NULL AS VARCHAR) AS record,
    left(line, 300) AS raw,
    json_line_problem(
        is_json,
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
    CAST(NULL AS VARCHAR) AS tenant,
    f[6] AS route,
    CAST(NULL AS VARCHAR) AS latency_raw,
    CASE WHEN len(messages) > 0 THEN chat END AS messages_json,
    CAST(NULL AS BOOLEAN) AS structured_output,
    CASE WHEN len(messages) > 0 THEN
        list_transform(range(1, len(messages) + 1), lambda k: hash(messages[1:k]))
    END AS prefix_hashes,
    nullif(coalesce(f[15], f[16]), '') AS session_id
FROM typed
