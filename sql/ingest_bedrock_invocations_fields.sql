-- ingest_bedrock_invocations_fields: Amazon Bedrock model-invocation log records, one JSON object
-- per line as Bedrock writes them to S3 (…/AWSLogs/<account>/BedrockModelInvocationLogs/…json.gz):
--   {"schemaType": "ModelInvocationLog", "schemaVersion": "1.0", "timestamp": "2026-11-02T14:00:00Z",
--    "accountId": "...", "identity": {"arn": "..."}, "region": "...", "requestId": "...",
--    "operation": "Converse" | "InvokeModel" | ..., "modelId": "...",
--    "input": {"inputContentType": "application/json", "inputBodyJson": {...}, "inputTokenCount": 35},
--    "output": {"outputContentType": "...", "outputBodyJson": {...}, "outputTokenCount": 446}}
-- The request body's messages (Converse: content blocks {"text"}; Anthropic's Messages API: a
-- string or {"type": "text", "text"} blocks; a system prompt either way; a bare "prompt" or
-- "inputText") become [{role, content}] with the text joined. The Converse reply's
-- metrics.latencyMs is the logged latency. The caller's identity ARN is the tenant, the model id
-- the route. Prefix blocks are the message boundaries, as for openai_jsonl.
-- views: data_lines (sql/ingest_data_lines.sql); macros: sql/ingest_macros.sql
WITH extracted AS (
    -- one parse per line for the record (every field as text, the body as its JSON text), one more
    -- for the request body
    SELECT
        *,
        json_object_text(line, [
            '$.requestId', '$.timestamp', '$.modelId', '$.identity.arn', '$.input.inputTokenCount',
            '$.output.outputTokenCount', '$.output.outputBodyJson.metrics.latencyMs', '$.input.inputBodyJson'
        ]) AS f
    FROM data_lines
),
bodies AS (
    SELECT
        *,
        CASE WHEN starts_with(f[8], '{') THEN
            json_extract(f[8], ['$.messages', '$.system', '$.prompt', '$.inputText'])
        END AS body
    FROM extracted
),
turns AS (
    SELECT
        *,
        list_transform(
            CASE WHEN json_type(body[1]) = 'ARRAY' THEN json_extract(body[1], '$[*]') ELSE [] END,
            lambda m: {
                'role': m ->> '$.role',
                'content': CASE
                    WHEN json_type(m, '$.content') = 'VARCHAR' THEN m ->> '$.content'
                    ELSE array_to_string(json_extract_string(m, '$.content[*].text'), '')
                END
            }
        ) AS chat,
        CASE
            WHEN json_type(body[2]) = 'VARCHAR' THEN body[2] ->> '$'
            WHEN json_type(body[2]) = 'ARRAY' THEN array_to_string(json_extract_string(body[2], '$[*].text'), '')
        END AS system_text,
        coalesce(body[3] ->> '$', body[4] ->> '$') AS prompt_text
    FROM bodies
),
conversations AS (
    SELECT
        *,
        CASE
            WHEN len(chat) > 0 THEN
                CASE WHEN system_text IS NOT NULL THEN [{ 'role': 'system', 'content': system_text }] ELSE [] END
                || chat
            WHEN prompt_text IS NOT NULL THEN [{ 'role': 'user', 'content': prompt_text }]
        END AS messages
    FROM turns
)
SELECT
    file_id,
    source_line,
    left(line, 300) AS raw,
    json_line_problem(line, f IS NOT NULL, CASE WHEN f[3] IS NULL THEN 'field modelId: missing' END) AS problem,
    f[1] AS request_id,
    f[2] AS arrival_raw,
    'timestamp' AS arrival_kind,
    f[5] AS prompt_raw,
    f[6] AS output_raw,
    f[4] AS tenant,
    f[3] AS route,
    f[7] AS latency_raw,
    CASE WHEN len(messages) > 0 THEN CAST(to_json(messages) AS VARCHAR) END AS messages_json,
    message_prefix_hashes(messages) AS prefix_hashes
FROM conversations
