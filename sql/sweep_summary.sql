-- sweep_summary: per candidate, the highest load level still meeting the SLA and what it buys.
-- The highest SLA-meeting load is the highest level below the first level that misses the SLA
-- (every lower level met it too: a capacity is claimed only where all lighter loads hold), with
-- its goodput and its cost per useful decision (cost_per_decision_at_max_sla_load_usd), and the
-- headroom: that level over the production level (the spec's own load), and the capacity at the
-- SLA: that level's requests/s and output tokens/s with their intervals (and why that level's
-- window is not steady, where it is not). Below the production
-- load (a candidate that cannot carry it) the highest level met is a fraction of it. The lowest
-- level run is there too, with what its requests met: where even it missed the SLA (a single
-- request at a time breaks it), its figures say by how much.
-- Users at the SLO tier per user (sla.per_user), by the same rule: the highest level meeting the
-- tier below the first level that misses it, its users, the share of its streams meeting it and
-- its cost per user-hour, and the users and cost per user-hour of that first level missed (the
-- other end of the bracket; pipeline/analysis/sizing/users_at_tier.py). NULL without a tier.
-- view: sweep_levels (sql/sweep_levels.sql)
WITH first_miss AS (
    SELECT
        candidate,
        count(*) AS load_levels,
        min(load_level) FILTER (WHERE NOT meets_sla) AS first_missing_load_level,
        any_value(load_level) FILTER (WHERE production) AS production_load_level,
        min(load_level) FILTER (WHERE NOT meets_per_user_tier) AS first_tier_missing_load_level
    FROM sweep_levels
    GROUP BY candidate
),
meeting_tier AS (
    SELECT sweep_levels.*
    FROM sweep_levels
    JOIN first_miss USING (candidate)
    WHERE
        meets_per_user_tier
        AND (first_tier_missing_load_level IS NULL OR load_level < first_tier_missing_load_level)
),
highest_tier AS (
    SELECT candidate, arg_max(meeting_tier, load_level) AS level
    FROM meeting_tier
    GROUP BY candidate
),
meeting AS (
    SELECT sweep_levels.*
    FROM sweep_levels
    JOIN first_miss USING (candidate)
    WHERE meets_sla AND (first_missing_load_level IS NULL OR load_level < first_missing_load_level)
),
highest AS (
    SELECT candidate, arg_max(meeting, load_level) AS level
    FROM meeting
    GROUP BY candidate
),
lowest AS (
    SELECT candidate, arg_min(sweep_levels, load_level) AS level
    FROM sweep_levels
    GROUP BY candidate
)
SELECT
    first_miss.candidate,
    first_miss.load_levels,
    first_miss.production_load_level,
    highest.level.load_level AS max_sla_load_level,
    highest.level.load_level_label AS max_sla_load_level_label,
    highest.level.load_level / nullif(first_miss.production_load_level, 0) AS headroom_factor,
    highest.level.requests_per_s AS requests_per_s_at_max_sla_load,
    highest.level.requests_per_s_ci_low AS requests_per_s_at_max_sla_load_ci_low,
    highest.level.requests_per_s_ci_high AS requests_per_s_at_max_sla_load_ci_high,
    highest.level.output_tokens_per_s AS output_tokens_per_s_at_max_sla_load,
    highest.level.output_tokens_per_s_ci_low AS output_tokens_per_s_at_max_sla_load_ci_low,
    highest.level.output_tokens_per_s_ci_high AS output_tokens_per_s_at_max_sla_load_ci_high,
    highest.level.goodput_requests_per_s AS goodput_requests_per_s_at_max_sla_load,
    highest.level.sla_attainment AS sla_attainment_at_max_sla_load,
    highest.level.ttft_ms_p99 AS ttft_ms_p99_at_max_sla_load,
    highest.level.requests_in_window AS requests_in_window_at_max_sla_load,
    highest.level.cost_per_decision_usd AS cost_per_decision_at_max_sla_load_usd,
    highest.level.cost_per_decision_usd_ci_low AS cost_per_decision_at_max_sla_load_usd_ci_low,
    highest.level.cost_per_decision_usd_ci_high AS cost_per_decision_at_max_sla_load_usd_ci_high,
    highest.level.no_steady_window AS no_steady_window_at_max_sla_load,
    first_miss.first_missing_load_level,
    missing.load_level_label AS first_missing_load_level_label,
    lowest.level.load_level AS min_load_level,
    lowest.level.load_level_label AS min_load_level_label,
    lowest.level.requests_in_window AS requests_in_window_at_min_load,
    lowest.level.peak_concurrency AS peak_concurrency_at_min_load,
    lowest.level.ttft_ms_p50 AS ttft_ms_p50_at_min_load,
    lowest.level.e2e_ms_p50 AS e2e_ms_p50_at_min_load,
    lowest.level.sla_attainment AS sla_attainment_at_min_load,
    lowest.level.meets_sla AS meets_sla_at_min_load,
    highest_tier.level.load_level AS max_tier_load_level,
    highest_tier.level.load_level_label AS max_tier_load_level_label,
    highest_tier.level.users AS users_at_max_tier_load,
    highest_tier.level.per_user_attainment AS per_user_attainment_at_max_tier_load,
    highest_tier.level.requests_in_window AS streams_at_max_tier_load,
    highest_tier.level.cost_per_user_hour_usd AS cost_per_user_hour_at_max_tier_load_usd,
    first_miss.first_tier_missing_load_level,
    tier_missing.load_level_label AS first_tier_missing_load_level_label,
    tier_missing.users AS users_at_first_tier_miss,
    tier_missing.cost_per_user_hour_usd AS cost_per_user_hour_at_first_tier_miss_usd
FROM first_miss
LEFT JOIN highest USING (candidate)
LEFT JOIN lowest USING (candidate)
LEFT JOIN highest_tier USING (candidate)
LEFT JOIN sweep_levels AS missing
    ON first_miss.candidate = missing.candidate AND first_miss.first_missing_load_level = missing.load_level
LEFT JOIN sweep_levels AS tier_missing
    ON
        first_miss.candidate = tier_missing.candidate
        AND first_miss.first_tier_missing_load_level = tier_missing.load_level
ORDER BY first_miss.candidate
