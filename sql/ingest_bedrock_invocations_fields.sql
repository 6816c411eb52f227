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
-- the route. Prefix blocks are the message boundaries, as for openai_jsonl. The request fields
-- under OpenAI's names: Converse's inferenceConfig (temperature, topP → top_p, stopSequences →
-- stop, maxTokens → max_tokens), toolConfig (tools, toolChoice → tool_choice) and
-- additionalModelRequestFields.thinking; an Anthropic Messages body's temperature, top_p,
-- stop_sequences, max_tokens, tools, tool_choice and thinking.
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
            json_extract(f[8], [
                '$.messages', '$.system', '$.prompt', '$.inputText',
                -- 5 to 11: Converse's request fields; 12 to 18: the Anthropic Messages body's (InvokeModel)
                '$.inferenceConfig.temperature', '$.inferenceConfig.topP', '$.inferenceConfig.stopSequences',
                '$.inferenceConfig.maxTokens', '$.toolConfig.tools', '$.toolConfig.toolChoice',
                '$.additionalModelRequestFields.thinking', '$.temperature', '$.top_p', '$.stop_sequences',
                '$.max_tokens', '$.tools', '$.tool_choice', '$.thinking'
            ])
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
requests AS (
    -- tools and the tool choice under OpenAI's names: a Converse toolSpec {name, description,
    -- inputSchema.json} or an Anthropic tool {name, description, input_schema} is a function;
    -- Converse {auto: {}} | {any: {}} | {tool: {name}}, Anthropic {type: auto | any | none | tool, name}
    -- are auto | required | none | that function
    SELECT
        *,
        CASE WHEN json_type(coalesce(body[9], body[16])) = 'ARRAY' THEN to_json(list_transform(
            json_extract(coalesce(body[9], body[16]), '$[*]'),
            lambda t: {
                'type': 'function',
                'function': {
                    'name': coalesce(t ->> '$.toolSpec.name', t ->> '$.name'),
                    'description': coalesce(t ->> '$.toolSpec.description', t ->> '$.description'),
                    'parameters': coalesce(t -> '$.toolSpec.inputSchema.json', t -> '$.input_schema')
                }
            }
        )) END AS tools,
        CASE
            WHEN json_exists(coalesce(body[10], body[17]), '$.auto') OR body[17] ->> '$.type' = 'auto'
                THEN to_json('auto')
            WHEN json_exists(coalesce(body[10], body[17]), '$.any') OR body[17] ->> '$.type' = 'any'
                THEN to_json('required')
            WHEN body[17] ->> '$.type' = 'none' THEN to_json('none')
            WHEN coalesce(body[10] ->> '$.tool.name', body[17] ->> '$.name') IS NOT NULL THEN to_json({
                'type': 'function', 'function': { 'name': coalesce(body[10] ->> '$.tool.name', body[17] ->> '$.name') }
            })
        END AS tool_choice
    FROM turns
),
conversations AS (
    SELECT
        *,
        CASE
            WHEN len(chat) > 0 THEN
                CASE WHEN system_text IS NOT NULL THEN [{ 'role': 'system', 'content': system_text }] ELSE [] END
                || chat
            WHEN prompt_text IS NOT NULL THEN [{ 'role': 'user', 'content': prompt_text }]
        END AS messages,
        [
            tools, tool_choice, NULL, NULL, NULL, NULL, coalesce(body[5], body[12]), coalesce(body[6], body[13]), NULL,
            coalesce(body[7], body[14]), NULL, NULL, NULL, NULL, NULL, coalesce(body[8], body[15]), NULL, NULL, NULL,
            coalesce(body[11], body[18])
        ] AS request_values
    FROM requests
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
    request_fields_from(request_values) AS request_fields,
    message_prefix_hashes(messages) AS prefix_hashes
FROM conversations
