-- client_calibration: how well the client keeps the plan's schedule against a zero-delay echo
-- endpoint (the floor of schedule lag and of TTFT that no real endpoint can beat).
-- view: calibration_timings (raw timings of the calibration replay)
WITH sent AS (
    SELECT * FROM calibration_timings
    WHERE t_sent_ns IS NOT NULL
)
SELECT
    count(*) AS requests,
    count(*) FILTER (WHERE status <> 'ok') AS errors,
    quantile_disc(schedule_lag_ms, 0.50) AS schedule_lag_ms_p50,
    quantile_disc(schedule_lag_ms, 0.99) AS schedule_lag_ms_p99,
    max(schedule_lag_ms) AS schedule_lag_ms_max,
    quantile_disc(ttft_ms, 0.50) AS overhead_ttft_ms_p50,
    quantile_disc(ttft_ms, 0.99) AS overhead_ttft_ms_p99,
    (max(t_sent_ns) - min(t_sent_ns)) / 1e9 AS span_s
FROM sent
