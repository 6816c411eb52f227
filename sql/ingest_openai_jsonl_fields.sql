-- ingest_openai_jsonl_fields: OpenAI-style request-log JSONL, one JSON object per line:
--   {"id": "...", "timestamp": "2026-11-02T14:00:00.378Z" | epoch seconds, "tenant": "...",
--    "route": "...", "request": {"messages": [...], "response_format": {...}, "tools": [...]},
--    "response": {"usage": {"prompt_tokens": N, "completion_tokens": M}}, "latency_ms": 1234.5,
--    "session_id": "..."}
-- id, tenant, route, latency_ms, the request fields (request.tools, tool_choice, response_format,
-- temperature, ...: request_fields_from in sql/ingest_macros.sql) and the session id are optional. The
-- session id is the first of session_id, conversation_id, metadata.session_id,
-- metadata.conversation_id, request.metadata.session_id, request.metadata.conversation_id
-- that the record has (a string or an integer); its turns are the session's rows in arrival order.
-- Prefix blocks are the message boundaries: block k hashes the first k messages.
-- views: data_lines (sql/ingest_data_lines.sql); macros: sql/ingest_macros.sql
WITH documents AS (
    SELECT
        *,
        CASE WHEN json_valid(line) THEN json_type(line) END AS document_type
    FROM data_lines
),
extracted AS (
    SELECT
        *,
        CASE WHEN document_type = 'OBJECT' THEN json_extract(line, [
            '$.id', '$.timestamp', '$.response.usage', '$.response.usage.prompt_tokens',
            '$.response.usage.completion_tokens', '$.request.messages', '$.tenant', '$.route',
            '$.latency_ms', '$.session_id', '$.conversation_id', '$.metadata.session_id', '$.metadata.conversation_id',
            '$.request.metadata.session_id', '$.request.metadata.conversation_id',
            -- 16 to 35: the request fields, in request_fields_from's order
            '$.request.tools', '$.request.tool_choice', '$.request.parallel_tool_calls', '$.request.functions',
            '$.request.function_call', '$.request.response_format', '$.request.temperature', '$.request.top_p',
            '$.request.seed', '$.request.stop', '$.request.n', '$.request.presence_penalty',
            '$.request.frequency_penalty', '$.request.logprobs', '$.request.top_logprobs',
            '$.request.max_tokens', '$.request.max_completion_tokens', '$.request.reasoning_effort',
            '$.request.chat_template_kwargs',
            '$.request.thinking'
        ]) END AS f
    FROM documents
),
typed AS (
    SELECT
        *,
        json_type(f[2]) AS timestamp_type,
        json_type(f[6]) AS messages_type,
        CASE WHEN json_type(f[6]) = 'ARRAY' THEN json_extract(f[6], '$[*]') END AS messages,
        json_type(f[9]) AS latency_type,
        f[16:35] AS request_values,
        -- the first of the six that is present and not JSON null
        list_filter(f[10:15], lambda v: json_type(v) <> 'NULL')[1] AS session_value
    FROM extracted
),
checked AS (
    SELECT
        *,
        messages IS NULL OR list_bool_and(list_transform(
            messages, lambda m: json_type(m) = 'OBJECT' AND json_exists(m, '$.role')
        )) AS messages_ok
    FROM typed
),
problems AS (
    SELECT
        *,
        json_line_problem(
            line,
            document_type = 'OBJECT',
            CASE
                WHEN timestamp_type IS NULL OR timestamp_type NOT IN ('VARCHAR', 'BIGINT', 'UBIGINT', 'DOUBLE')
                    THEN 'field timestamp: missing or not a string/number'
                WHEN (json_type(f[3]) IS DISTINCT FROM 'OBJECT') THEN 'field response.usage: missing'
                WHEN messages_type IS NOT NULL AND messages_type NOT IN ('ARRAY', 'NULL') OR NOT messages_ok
                    THEN 'field request.messages: not a list of {role, content} objects'
                WHEN latency_type IS NOT NULL AND latency_type NOT IN ('BIGINT', 'UBIGINT', 'DOUBLE', 'NULL')
                    THEN 'field latency_ms: not a number'
                WHEN json_type(session_value) NOT IN ('VARCHAR', 'BIGINT', 'UBIGINT', 'NULL')
                    THEN 'field session_id (or conversation_id): not a string or an integer'
            END
        ) AS problem
    FROM checked
)
SELECT
    file_id,
    source_line,
    line AS raw,
    problem,
    f[1] ->> '$' AS request_id,
    f[2] ->> '$' AS arrival_raw,
    CASE WHEN timestamp_type = 'VARCHAR' THEN 'timestamp' ELSE 'number' END AS arrival_kind,
    json_count_text(f[4]) AS prompt_raw,
    json_count_text(f[5]) AS output_raw,
    f[7] ->> '$' AS tenant,
    f[8] ->> '$' AS route,
    f[9] ->> '$' AS latency_raw,
    CASE WHEN len(messages) > 0 THEN CAST(f[6] AS VARCHAR) END AS messages_json,
    CASE WHEN document_type = 'OBJECT' THEN
        coalesce(f[21] ->> '$.type' IN ('json_object', 'json_schema'), FALSE)  -- response_format
        OR coalesce(json_array_length(f[16]) > 0, FALSE)  -- tools
        OR coalesce(json_array_length(f[19]) > 0, FALSE)  -- functions
    END AS structured_output,
    request_fields_from(request_values) AS request_fields,
    message_prefix_hashes(messages) AS prefix_hashes,
    CASE WHEN json_type(session_value) IN ('VARCHAR', 'BIGINT', 'UBIGINT') THEN nullif(session_value ->> '$', '') END
        AS session_id
FROM problems
