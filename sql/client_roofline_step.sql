-- client_roofline_step: one constant-rate step of the client roofline (pipeline/replay/client_validity/roofline.py)
-- against a zero-delay echo endpoint: did the client keep the step's schedule, and what send and
-- SSE-event rates did it achieve (as the journal shows them, not as asked for).
-- view: roofline_timings (raw timings of the step's replay; unsent requests are rows with an error)
SELECT
    count(*) AS requests,
    count(*) FILTER (WHERE status <> 'ok') AS errors,
    quantile_disc(schedule_lag_ms, 0.99) FILTER (WHERE status = 'ok') AS schedule_lag_ms_p99,
    (count(*) FILTER (WHERE status = 'ok') - 1)
    / nullif((max(t_sent_ns) FILTER (WHERE status = 'ok') - min(t_sent_ns) FILTER (WHERE status = 'ok')) / 1e9, 0)
        AS sends_per_s,
    sum(content_chunks) FILTER (WHERE status = 'ok')
    / nullif((max(t_end_ns) FILTER (WHERE status = 'ok') - min(t_sent_ns) FILTER (WHERE status = 'ok')) / 1e9, 0)
        AS events_per_s
FROM roofline_timings
