-- bench_synthetic_langfuse: Langfuse observations as JSON lines (the public API's Observation
-- shape, no captured input/output) for the ingest benchmark: one SPAN in ten (not a request),
-- GENERATIONs with usageDetails, endTime and completionStartTime; a cut line every ~million rows.
-- macro: synthetic_requests (bench/sql/bench_synthetic_requests.sql); params: $rows, $seed (0..1)
SELECT
    CASE WHEN i % 1000003 = 17 THEN '{"id": "obs-' || i || '", "type": ' ELSE
    '{"id": "obs-' || i || '", "traceId": "trace-' || (i // 3) || '", "type": "'
        || CASE WHEN i % 10 = 1 THEN 'SPAN' ELSE 'GENERATION' END
        || '", "name": "chat", "startTime": "' || strftime(started, '%Y-%m-%dT%H:%M:%S.%gZ')
        || '", "endTime": "' || strftime(started + to_milliseconds(CAST(300 + 0.05 * prompt + 20 * output AS BIGINT)), '%Y-%m-%dT%H:%M:%S.%gZ')
        || '", "completionStartTime": "' || strftime(started + to_milliseconds(CAST(150 + 0.05 * prompt AS BIGINT)), '%Y-%m-%dT%H:%M:%S.%gZ')
        || '", "model": "gpt-4o-mini", "modelParameters": {"temperature": 0}, "input": null, "output": null'
        || ', "usageDetails": {"input": ' || prompt || ', "output": ' || output || ', "total": ' || (prompt + output)
        || '}, "usage": {"input": ' || prompt || ', "output": ' || output || ', "total": ' || (prompt + output)
        || ', "unit": "TOKENS"}, "level": "DEFAULT", "statusMessage": null, "parentObservationId": null'
        || ', "environment": "production", "sessionId": '
        || CASE WHEN i % 10 = 0 THEN '"sess-' || (i // 1000) || '"' ELSE 'null' END || '}' END AS line
FROM synthetic_requests($rows, $seed)
ORDER BY i
