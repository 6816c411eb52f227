-- client_ttft_replay: each successful production request's TTFT (and E2E) as the client measured it, at
-- its send time in seconds since its candidate's first send; the same requests the server's
-- TTFT histogram counted over the replay (the whole replay, not only the steady window).
-- view: raw_timings (production requests, the first run of a repeated replay)
WITH production AS (
    SELECT * FROM raw_timings
    WHERE labelled_item_id IS NULL AND t_sent_ns IS NOT NULL
)
SELECT
    candidate,
    (t_sent_ns - min(t_sent_ns) OVER (PARTITION BY candidate)) / 1e9 AS second,
    ttft_ms,
    e2e_ms
FROM production
WHERE status = 'ok' AND ttft_ms IS NOT NULL
ORDER BY candidate, second
