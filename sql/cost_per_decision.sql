-- cost_per_decision: cost of the steady-state window per useful decision. A useful decision
-- succeeded, met every SLA bound and, where the task is scored, was correct: with a separate
-- accuracy replay the SLA-meeting decisions are weighted by the candidate's measured accuracy.
-- Hardware pricing: $/hour × replicas × window hours. Token pricing: every attempt is billed,
-- retries included: the prompt once per attempt (1 + retry_count), the output as received
-- (client counts where the server reported none: output_tokens_any).
-- Each load level (raw timings carry one: the replay's own) is costed on its own window; a load
-- sweep's cost per decision at the highest load still meeting the SLA is in sql/sweep_summary.sql.
-- staged: steady_requests; views: prices (candidate, usd_per_hour, replicas,
-- usd_per_million_input_tokens, usd_per_million_output_tokens), accuracy_by_candidate
-- (candidate, accuracy; no row when the task is not scored)
-- Floating-point sums are taken over sorted lists (list_sum(list_sort(list(x)))): DuckDB's
-- multithreaded sum adds in whatever order its threads meet the rows, so the last bits of a
-- plain sum(DOUBLE) could differ between two runs on the same rows (the same inputs, the same bytes).
WITH levels AS (
    SELECT
        candidate,
        load_level,
        any_value(window_start_ns) AS window_start_ns,
        any_value(window_end_ns) AS window_end_ns,
        count(*) FILTER (WHERE in_steady_window) AS requests_in_window,
        count(*) FILTER (WHERE in_steady_window AND met_sla) AS decisions_within_sla,
        CAST(coalesce(sum(retry_count) FILTER (WHERE in_steady_window), 0) AS BIGINT) AS retries,
        CAST(coalesce(
            sum(coalesce(prompt_tokens_any, 0) * (1 + retry_count)) FILTER (WHERE in_steady_window), 0
        ) AS BIGINT) AS input_tokens_billed,
        CAST(coalesce(
            sum(coalesce(output_tokens_any, 0)) FILTER (WHERE in_steady_window), 0
        ) AS BIGINT) AS output_tokens_billed,
        CAST(coalesce(
            sum(coalesce(output_tokens_any, 0)) FILTER (WHERE in_steady_window AND status = 'ok'), 0
        ) AS BIGINT) AS output_tokens_ok
    FROM steady_requests
    GROUP BY candidate, load_level
),
costed_levels AS (
    SELECT
        levels.*,
        greatest(window_end_ns - window_start_ns, 0) / 3.6e12 AS window_hours,
        CASE WHEN prices.usd_per_hour IS NOT NULL THEN 'hourly' ELSE 'tokens' END AS pricing,
        CASE
            WHEN prices.usd_per_hour IS NOT NULL
                THEN prices.usd_per_hour * prices.replicas * greatest(window_end_ns - window_start_ns, 0) / 3.6e12
            ELSE input_tokens_billed * coalesce(prices.usd_per_million_input_tokens, 0) / 1e6
                 + output_tokens_billed * coalesce(prices.usd_per_million_output_tokens, 0) / 1e6
        END AS cost_usd,
        accuracy_by_candidate.accuracy,
        decisions_within_sla * coalesce(accuracy_by_candidate.accuracy, 1.0) AS useful_decisions,
        decisions_within_sla / nullif(requests_in_window, 0) AS sla_attainment
    FROM levels
    JOIN prices USING (candidate)
    LEFT JOIN accuracy_by_candidate USING (candidate)
),
per_candidate AS (
    SELECT
        candidate,
        any_value(pricing) AS pricing,
        count(*) AS load_levels,
        list_sum(list_sort(list(window_hours))) AS window_hours,
        CAST(sum(requests_in_window) AS BIGINT) AS requests_in_window,
        CAST(sum(decisions_within_sla) AS BIGINT) AS decisions_within_sla,
        CAST(sum(retries) AS BIGINT) AS retries,
        CAST(sum(input_tokens_billed) AS BIGINT) AS input_tokens_billed,
        CAST(sum(output_tokens_billed) AS BIGINT) AS output_tokens_billed,
        CAST(sum(output_tokens_ok) AS BIGINT) AS output_tokens_ok,
        any_value(accuracy) AS accuracy,
        list_sum(list_sort(list(useful_decisions))) AS useful_decisions,
        list_sum(list_sort(list(cost_usd))) AS cost_usd
    FROM costed_levels
    GROUP BY candidate
)
SELECT
    per_candidate.*,
    cost_usd / nullif(useful_decisions, 0) AS cost_per_decision_usd,
    cost_usd / nullif(output_tokens_ok, 0) * 1e6 AS cost_per_million_output_tokens_usd
FROM per_candidate
ORDER BY cost_per_decision_usd NULLS LAST, candidate
