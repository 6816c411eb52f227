-- bench_synthetic_bedrock_invocations: Bedrock model-invocation log records as JSON lines (the S3
-- delivery's ModelInvocationLog shape) for the ingest benchmark: Converse calls with a short
-- captured user message and the reply's metrics.latencyMs; a cut line every ~million rows.
-- macro: synthetic_requests (bench/sql/bench_synthetic_requests.sql); params: $rows, $seed (0..1)
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
FROM synthetic_requests($rows, $seed)
ORDER BY i
