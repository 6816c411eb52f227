-- bench_synthetic_langfuse: Langfuse observations as JSON lines (the public API's Observation
-- shape, no captured input/output) for the ingest benchmark: one SPAN in ten (not a request),
-- GENERATIONs with usageDetails, endTime and completionStartTime; a cut line every ~million rows.
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
FROM timed
ORDER BY i
