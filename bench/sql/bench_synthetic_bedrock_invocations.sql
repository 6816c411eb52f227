-- bench_synthetic_bedrock_invocations: Bedrock model-invocation log records as JSON lines (the S3
-- delivery's ModelInvocationLog shape) for the ingest benchmark: Converse calls with a short
-- captured user message and the reply's metrics.latencyMs; a cut line every ~million rows.
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
        TIMESTAMP '2026-11-02 14:00:00' + to_microseconds(CAST(1000 * sum(gap_ms) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS BIGINT)) AS started
    FROM shaped
)
SELECT
    CASE WHEN i % 1000003 = 17 THEN '{"schemaType": "ModelInvocationLog", "timestamp": ' ELSE
    '{"schemaType": "ModelInvocationLog", "schemaVersion": "1.0", "timestamp": "'
        || strftime(started, '%Y-%m-%dT%H:%M:%S.%gZ')
        || '", "accountId": "123456789012", "identity": {"arn": "arn:aws:sts::123456789012:assumed-role/app-' || (i % 7)
        || '/i-0abc"}, "region": "us-east-1", "requestId": "req-' || i
        || '", "operation": "Converse", "modelId": "anthropic.claude-3-haiku-20240307-v1:0"'
        || ', "input": {"inputContentType": "application/json", "inputBodyJson": {"messages": [{"role": "user"'
        || ', "content": [{"text": "ticket ' || i || '"}]}], "inferenceConfig": {"maxTokens": 1024}}'
        || ', "inputTokenCount": ' || prompt || '}, "output": {"outputContentType": "application/json"'
        || ', "outputBodyJson": {"stopReason": "end_turn", "metrics": {"latencyMs": '
        || CAST(300 + 0.05 * prompt + 20 * output AS BIGINT) || '}, "usage": {"inputTokens": ' || prompt
        || ', "outputTokens": ' || output || '}}, "outputTokenCount": ' || output || '}}' END AS line
FROM timed
ORDER BY i
