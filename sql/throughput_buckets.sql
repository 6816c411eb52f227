-- throughput_buckets: each candidate's replay in 1-second buckets from its first send: the
-- requests sent in each second, how they ended (succeeded, met every SLA bound, failed) and the
-- tokens of the successful ones, each request in its send second (as the steady-state window
-- counts it, so throughput's batch means hold the same requests as its numerator); `steady`
-- marks the buckets wholly inside the steady-state window.
-- staged: steady_requests
WITH spans AS (
    SELECT
        candidate,
        min(replay_start_ns) AS start_ns,
        max(t_end_ns) AS end_ns,
        min(window_start_ns) AS window_start_ns,
        max(window_end_ns) AS window_end_ns
    FROM steady_requests
    WHERE t_sent_ns IS NOT NULL
    GROUP BY candidate
),
buckets AS (
    SELECT spans.candidate, r.bucket, spans.start_ns, spans.window_start_ns, spans.window_end_ns
    FROM spans, range(CAST(greatest(ceil((spans.end_ns - spans.start_ns) / 1e9), 1) AS BIGINT)) AS r (bucket)
),
counted AS (
    -- one pass: every sent request counts in its send second; those that also ended, by outcome
    SELECT
        s.candidate,
        (s.t_sent_ns - spans.start_ns) // 1000000000 AS bucket,
        count(*) AS requests_sent,
        count(*) FILTER (WHERE s.t_end_ns IS NOT NULL AND s.status = 'ok') AS requests_ok,
        count(*) FILTER (WHERE s.t_end_ns IS NOT NULL AND s.met_sla) AS requests_good,
        count(*) FILTER (WHERE s.t_end_ns IS NOT NULL AND s.status <> 'ok') AS requests_failed,
        CAST(coalesce(
            sum(coalesce(s.output_tokens_any, 0)) FILTER (WHERE s.t_end_ns IS NOT NULL AND s.status = 'ok'), 0
        ) AS BIGINT) AS output_tokens,
        CAST(coalesce(
            sum(coalesce(s.output_tokens_any, 0) + coalesce(s.prompt_tokens_any, 0))
                FILTER (WHERE s.t_end_ns IS NOT NULL AND s.status = 'ok'),
            0
        ) AS BIGINT) AS total_tokens
    FROM steady_requests AS s
    JOIN spans USING (candidate)
    WHERE s.t_sent_ns IS NOT NULL
    GROUP BY ALL
)
SELECT
    buckets.candidate,
    buckets.bucket AS second,
    buckets.start_ns + buckets.bucket * 1000000000 >= buckets.window_start_ns
        AND buckets.start_ns + (buckets.bucket + 1) * 1000000000 <= buckets.window_end_ns AS steady,
    coalesce(counted.requests_sent, 0) AS requests_sent,
    coalesce(counted.requests_ok, 0) AS requests_ok,
    coalesce(counted.requests_good, 0) AS requests_good,
    coalesce(counted.requests_failed, 0) AS requests_failed,
    coalesce(counted.output_tokens, 0) AS output_tokens,
    coalesce(counted.total_tokens, 0) AS total_tokens
FROM buckets
LEFT JOIN counted USING (candidate, bucket)
ORDER BY buckets.candidate, second
