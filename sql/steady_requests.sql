-- steady_requests: every raw timing marked with the steady-state window (warm-up and
-- cool-down excluded) and whether it met every SLA bound. Staged before the analysis queries.
-- view: raw_timings
WITH window_bounds AS (
    SELECT
        candidate,
        min(t_sent_ns) + CAST($warmup_s * 1e9 AS BIGINT) AS window_start_ns,
        max(t_end_ns) - CAST($cooldown_s * 1e9 AS BIGINT) AS window_end_ns
    FROM raw_timings
    WHERE t_sent_ns IS NOT NULL
    GROUP BY candidate
),
marked AS (
    SELECT
        raw_timings.*,
        window_bounds.window_start_ns,
        window_bounds.window_end_ns,
        coalesce(
            raw_timings.t_sent_ns >= window_bounds.window_start_ns
            AND raw_timings.t_end_ns <= window_bounds.window_end_ns,
            false
        ) AS in_steady_window
    FROM raw_timings
    LEFT JOIN window_bounds USING (candidate)
)
SELECT
    *,
    status = 'ok'
        AND (CAST($sla_ttft_ms AS DOUBLE) IS NULL OR ttft_ms <= CAST($sla_ttft_ms AS DOUBLE))
        AND (CAST($sla_tpot_ms AS DOUBLE) IS NULL OR coalesce(tpot_ms, 0) <= CAST($sla_tpot_ms AS DOUBLE))
        AND (CAST($sla_e2e_ms AS DOUBLE) IS NULL OR e2e_ms <= CAST($sla_e2e_ms AS DOUBLE))
        AS met_sla
FROM marked
