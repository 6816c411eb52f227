-- sweep_levels: one row per candidate and load level of a load sweep: throughput, goodput, SLA
-- attainment, error rate, TTFT/TPOT/E2E percentiles and cost per useful decision at that level.
-- Each level was analysed on its own (its own steady-state window) by the same queries as the
-- pack's headline figures (pipeline/analysis/sizing/sweep.py binds their outputs, tagged with the
-- level): nothing mixes two levels. A level meets the SLA when its SLA attainment reaches
-- $min_attainment and its error rate stays within $max_error_rate; it clearly misses it when
-- the attainment's interval lies wholly below the target or the error rate's wholly above it.
-- The SLO tier per user (sla.per_user; sql/per_user_tier.sql): the level's users — its
-- concurrency in a closed loop ($closed_loop), else its mean streams in flight (Little's law) —
-- the share of its streams meeting the tier with its Wilson interval, whether the level meets the
-- tier (that share reaches $per_user_min_share; NULL without a tier) and its cost per user-hour
-- (the window's cost per hour / users).
-- views: level_throughput, level_latency, level_cost, level_per_user (each with load_level,
-- load_level_label, production)
WITH latency_figures AS (
    -- a percentile's figure name is its metric and percentile (ttft_ms_p99)
    SELECT
        candidate,
        load_level,
        n,
        value,
        ci_low,
        ci_high,
        metric || '_' || percentile AS figure
    FROM level_latency
    WHERE scope = 'all'
),
latency_pivoted AS (
    PIVOT latency_figures
    ON figure IN ('ttft_ms_p50', 'ttft_ms_p95', 'ttft_ms_p99', 'tpot_ms_p50', 'tpot_ms_p99', 'e2e_ms_p50',
                  'e2e_ms_p95', 'e2e_ms_p99')
    USING max(n) AS n, max(value) AS value, max(ci_low) AS ci_low, max(ci_high) AS ci_high
    GROUP BY candidate, load_level
),
latency AS (
    SELECT
        candidate,
        load_level,
        ttft_ms_p50_n AS latency_n,
        -- each figure's value under the figure's own name (the regex's group)
        COLUMNS('(.*)_value') AS '\1',  -- noqa: RF05
        ttft_ms_p99_ci_low,
        ttft_ms_p99_ci_high,
        e2e_ms_p99_ci_low,
        e2e_ms_p99_ci_high
    FROM latency_pivoted
),
joined AS (
    SELECT
        t.candidate,
        t.load_level,
        t.load_level_label,
        t.production,
        t.requests_planned,
        t.requests_failed,
        t.requests_in_window,
        t.requests_good,
        t.window_s,
        t.requests_per_s,
        t.requests_per_s_ci_low,
        t.requests_per_s_ci_high,
        t.output_tokens_per_s,
        t.output_tokens_per_s_ci_low,
        t.output_tokens_per_s_ci_high,
        t.total_tokens_per_s,
        t.goodput_requests_per_s,
        t.goodput_requests_per_s_ci_low,
        t.goodput_requests_per_s_ci_high,
        t.sla_attainment,
        t.sla_attainment_ci_low,
        t.sla_attainment_ci_high,
        t.error_rate,
        t.error_rate_ci_low,
        t.error_rate_ci_high,
        t.peak_concurrency,
        t.schedule_lag_ms_p99,
        -- why the level's own window is not steady (pipeline/analysis/statistics/steady_state.py; NULL: steady,
        -- or not tested): a capacity read at this level carries it, and no verdict on it is decisive
        CASE WHEN NOT t.steady_window THEN t.steady_reason END AS no_steady_window,
        latency.* EXCLUDE (candidate, load_level),
        c.cost_usd,
        c.useful_decisions,
        c.cost_per_decision_usd,
        c.cost_per_decision_usd_ci_low,
        c.cost_per_decision_usd_ci_high,
        c.cost_per_million_output_tokens_usd,
        u.streams_meeting_tier,
        u.per_user_attainment,
        u.per_user_attainment_ci_low,
        u.per_user_attainment_ci_high,
        u.stream_output_tokens_per_s_p50,
        u.mean_in_flight,
        CASE WHEN $closed_loop THEN t.load_level ELSE u.mean_in_flight END AS users,
        c.cost_usd / nullif(c.window_hours, 0)
        / nullif(CASE WHEN $closed_loop THEN t.load_level ELSE u.mean_in_flight END, 0) AS cost_per_user_hour_usd
    FROM level_throughput AS t
    LEFT JOIN latency USING (candidate, load_level)
    LEFT JOIN level_cost AS c USING (candidate, load_level)
    LEFT JOIN level_per_user AS u USING (candidate, load_level)
)
SELECT
    *,
    coalesce(sla_attainment >= $min_attainment AND error_rate <= $max_error_rate, FALSE) AS meets_sla,
    coalesce(sla_attainment_ci_high < $min_attainment, FALSE)
        OR coalesce(error_rate_ci_low > $max_error_rate, FALSE) AS clearly_misses_sla,
    CASE
        WHEN CAST($per_user_min_share AS DOUBLE) IS NOT NULL
            THEN coalesce(per_user_attainment >= CAST($per_user_min_share AS DOUBLE), FALSE)
    END AS meets_per_user_tier
FROM joined
ORDER BY candidate, load_level
