-- bench_synthetic_otel_genai: OTLP JSON trace requests (the Collector file exporter's lines) for
-- the ingest benchmark: $rows chat spans, four to a line under one resource and scope, each with
-- the GenAI attributes a client instrumentation sets (no captured messages); every line also
-- holds one HTTP span that is no request; a cut line every ~million lines.
-- params: $rows, $seed (0..1)
WITH seeded AS (
    SELECT setseed($seed) AS ignored
),
draws AS (
    SELECT i, random() AS u_gap, random() AS u_prompt, random() AS u_output
    FROM range($rows) AS t(i), seeded
),
shaped AS (
    SELECT
        i,
        -ln(1 - u_gap) / 2.8 AS gap_ms,
        greatest(1, CAST(exp(ln(2000) + 0.9 * sqrt(-2 * ln(u_prompt)) * cos(6.283185 * u_output)) AS BIGINT)) AS prompt,
        greatest(1, CAST(exp(ln(200) + 0.7 * sqrt(-2 * ln(u_output)) * cos(6.283185 * u_prompt)) AS BIGINT)) AS output
    FROM draws
),
timed AS (
    SELECT
        *,
        1762092000000000000 + CAST(1e6 * sum(gap_ms) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS HUGEINT) AS start_ns
    FROM shaped
),
spans AS (
    SELECT
        i // 4 AS line_number,
        i,
        '{"traceId": "' || md5(CAST(i // 4 AS VARCHAR)) || '", "spanId": "' || printf('%016x', i)
        || '", "parentSpanId": "' || printf('%016x', 1000000000000 + i // 4)
        || '", "name": "chat gpt-4o-mini", "kind": 3, "startTimeUnixNano": "' || start_ns
        || '", "endTimeUnixNano": "' || (start_ns + CAST(1e6 * (300 + 0.05 * prompt + 20 * output) AS HUGEINT))
        || '", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}'
        || ', {"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}}'
        || ', {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o-mini"}}'
        || ', {"key": "gen_ai.request.max_tokens", "value": {"intValue": "1024"}}'
        || ', {"key": "gen_ai.response.model", "value": {"stringValue": "gpt-4o-mini-2024-07-18"}}'
        || ', {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "' || prompt || '"}}'
        || ', {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "' || output || '"}}'
        || CASE WHEN i % 10 = 0 THEN ', {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-' || (i // 1000) || '"}}' ELSE '' END
        || '], "status": {}}' AS span
    FROM timed
)
SELECT
    CASE WHEN line_number % 1000003 = 17 THEN '{"resourceSpans": [' ELSE
    '{"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "app-'
        || (line_number % 7) || '"}}]}, "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2"}'
        || ', "spans": [{"traceId": "' || md5(CAST(line_number AS VARCHAR)) || '", "spanId": "'
        || printf('%016x', 1000000000000 + line_number) || '", "name": "POST /chat", "kind": 2, "attributes": []}, '
        || string_agg(span, ', ' ORDER BY i) || ']}]}]}' END AS line
FROM spans
GROUP BY line_number
ORDER BY line_number
