-- bench_synthetic_otel_genai: OTLP JSON trace requests (the Collector file exporter's lines) for
-- the ingest benchmark: $rows chat spans, four to a line under one resource and scope, each with
-- the GenAI attributes a client instrumentation sets (no captured messages); every line also
-- holds one HTTP span that is no request; a cut line every ~million lines. Built line by line
-- (a GROUP BY of ten million span texts did not fit in memory): lines arrive Poisson-like at
-- ~700/s, their four spans 0.1 ms apart (~2,800 requests/s), lengths log-normal from hashes.
-- params: $rows, $seed (0..1)
WITH seeded AS (
    SELECT setseed($seed) AS ignored
),
line_draws AS (
    SELECT i AS line_number, random() AS u_gap
    FROM range(CAST(ceil($rows / 4) AS BIGINT)) AS t(i), seeded
),
timed AS (
    SELECT
        line_number,
        1762092000000000000
        + CAST(1e6 * sum(-ln(1 - u_gap) / 0.7) OVER (ORDER BY line_number ROWS UNBOUNDED PRECEDING) AS HUGEINT)
            AS line_ns
    FROM line_draws
),
spans AS (
    SELECT
        line_number,
        list_transform(range(4), lambda k: {
            'i': line_number * 4 + k,
            'start_ns': line_ns + k * 100000,
            'u1': ((hash(line_number * 4 + k) % 999983) + 1) / 999984.0,
            'u2': ((hash(line_number * 4 + k + 1000000000000) % 999979) + 1) / 999980.0
        }) AS draws
    FROM timed
),
shaped AS (
    SELECT
        line_number,
        list_transform(draws, lambda d: {
            'i': d.i,
            'start_ns': d.start_ns,
            'prompt': greatest(1, CAST(exp(ln(2000) + 0.9 * sqrt(-2 * ln(d.u1)) * cos(6.283185 * d.u2)) AS BIGINT)),
            'output': greatest(1, CAST(exp(ln(200) + 0.7 * sqrt(-2 * ln(d.u2)) * cos(6.283185 * d.u1)) AS BIGINT))
        }) AS draws
    FROM spans
)
SELECT
    CASE WHEN line_number % 1000003 = 17 THEN '{"resourceSpans": [' ELSE
    '{"resourceSpans": [{"resource": {"attributes": [{"key": "service.name", "value": {"stringValue": "app-'
        || (line_number % 7) || '"}}]}, "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2"}'
        || ', "spans": [{"traceId": "' || md5(CAST(line_number AS VARCHAR)) || '", "spanId": "'
        || printf('%016x', 1000000000000 + line_number) || '", "name": "POST /chat", "kind": 2, "attributes": []}, '
        || array_to_string(list_transform(draws, lambda s:
            '{"traceId": "' || md5(CAST(line_number AS VARCHAR)) || '", "spanId": "' || printf('%016x', s.i)
            || '", "parentSpanId": "' || printf('%016x', 1000000000000 + line_number)
            || '", "name": "chat gpt-4o-mini", "kind": 3, "startTimeUnixNano": "' || s.start_ns
            || '", "endTimeUnixNano": "' || (s.start_ns + CAST(1e6 * (300 + 0.05 * s.prompt + 20 * s.output) AS HUGEINT))
            || '", "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": "chat"}}'
            || ', {"key": "gen_ai.provider.name", "value": {"stringValue": "openai"}}'
            || ', {"key": "gen_ai.request.model", "value": {"stringValue": "gpt-4o-mini"}}'
            || ', {"key": "gen_ai.request.max_tokens", "value": {"intValue": "1024"}}'
            || ', {"key": "gen_ai.response.model", "value": {"stringValue": "gpt-4o-mini-2024-07-18"}}'
            || ', {"key": "gen_ai.usage.input_tokens", "value": {"intValue": "' || s.prompt || '"}}'
            || ', {"key": "gen_ai.usage.output_tokens", "value": {"intValue": "' || s.output || '"}}'
            || CASE WHEN s.i % 10 = 0
                THEN ', {"key": "gen_ai.conversation.id", "value": {"stringValue": "conv-' || (s.i // 1000) || '"}}'
                ELSE '' END
            || '], "status": {}}'), ', ')
        || ']}]}]}' END AS line
FROM shaped
ORDER BY line_number
