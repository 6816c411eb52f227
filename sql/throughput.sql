-- throughput: output tokens/s, total tokens/s, requests/s and goodput per candidate over the
-- steady-state window, with a batch-means confidence interval over its whole 1-second buckets.
-- The numerator is what the requests *sent* in the window produced (however long they took),
-- the denominator the window's seconds: an arrival-side rate, which in a steady state equals
-- the served rate (what arrives is served), and the same requests as every other figure. The
-- buckets attribute each request to its send second, so the interval is centred on the rate.
-- Also SLA attainment (errors count as misses); mean concurrency (busy seconds of the window's
-- requests / window seconds: Little's law; peak_concurrency is appended from
-- sql/concurrency_events.sql); error rate over every planned request.
-- staged: steady_requests, throughput_buckets
WITH windows AS (
    SELECT DISTINCT candidate, load_level, window_start_ns, window_end_ns
    FROM steady_requests
    WHERE window_start_ns IS NOT NULL
),
window_lengths AS (
    SELECT candidate, sum(greatest(window_end_ns - window_start_ns, 0)) / 1e9 AS window_s
    FROM windows
    GROUP BY candidate
),
totals AS (
    SELECT
        candidate,
        count(*) AS requests_planned,
        count(*) FILTER (WHERE status <> 'ok') AS requests_failed,
        count(*) FILTER (WHERE in_steady_window) AS requests_in_window,
        count(*) FILTER (WHERE in_steady_window AND status = 'ok') AS requests_ok,
        count(*) FILTER (WHERE in_steady_window AND met_sla) AS requests_good,
        count(*) FILTER (WHERE in_steady_window AND met_ttft) AS requests_met_ttft,
        count(*) FILTER (WHERE in_steady_window AND met_tpot) AS requests_met_tpot,
        count(*) FILTER (WHERE in_steady_window AND met_e2e) AS requests_met_e2e,
        CAST(coalesce(
            sum(coalesce(output_tokens_any, 0)) FILTER (WHERE in_steady_window AND status = 'ok'), 0
        ) AS BIGINT) AS output_tokens,
        CAST(coalesce(
            sum(coalesce(output_tokens_any, 0) + coalesce(prompt_tokens_any, 0))
                FILTER (WHERE in_steady_window AND status = 'ok'),
            0
        ) AS BIGINT) AS total_tokens,
        coalesce(sum(t_end_ns - t_sent_ns) FILTER (WHERE in_steady_window), 0) / 1e9 AS busy_s,
        quantile_disc(schedule_lag_ms, 0.99) AS schedule_lag_ms_p99
    FROM steady_requests
    GROUP BY candidate
),
spread AS (
    SELECT
        candidate,
        count(*) AS buckets,
        stddev_samp(output_tokens) AS output_tokens_sd,
        stddev_samp(total_tokens) AS total_tokens_sd,
        stddev_samp(requests_ok) AS requests_sd,
        stddev_samp(requests_good) AS goodput_sd
    FROM throughput_buckets
    WHERE steady
    GROUP BY candidate
),
rates AS (
    SELECT
        totals.*,
        window_lengths.window_s,
        spread.buckets,
        CASE WHEN window_s > 0 THEN output_tokens / window_s END AS output_tokens_per_s,
        CASE WHEN window_s > 0 THEN total_tokens / window_s END AS total_tokens_per_s,
        CASE WHEN window_s > 0 THEN requests_ok / window_s END AS requests_per_s,
        CASE WHEN window_s > 0 THEN requests_good / window_s END AS goodput_requests_per_s,
        CASE WHEN window_s > 0 THEN busy_s / window_s END AS mean_concurrency,
        -- batch means: a rate's standard error is the bucket sd / sqrt(buckets); NULL below 2 buckets
        $z / sqrt(nullif(spread.buckets, 0)) AS half_width_factor,
        spread.output_tokens_sd,
        spread.total_tokens_sd,
        spread.requests_sd,
        spread.goodput_sd
    FROM totals
    JOIN window_lengths USING (candidate)
    LEFT JOIN spread USING (candidate)
)
SELECT
    candidate,
    window_s,
    buckets,
    requests_planned,
    requests_failed,
    requests_in_window,
    requests_ok,
    requests_good,
    requests_met_ttft,
    requests_met_tpot,
    requests_met_e2e,
    output_tokens,
    total_tokens,
    output_tokens_per_s,
    output_tokens_per_s - half_width_factor * output_tokens_sd AS output_tokens_per_s_ci_low,
    output_tokens_per_s + half_width_factor * output_tokens_sd AS output_tokens_per_s_ci_high,
    total_tokens_per_s,
    total_tokens_per_s - half_width_factor * total_tokens_sd AS total_tokens_per_s_ci_low,
    total_tokens_per_s + half_width_factor * total_tokens_sd AS total_tokens_per_s_ci_high,
    requests_per_s,
    requests_per_s - half_width_factor * requests_sd AS requests_per_s_ci_low,
    requests_per_s + half_width_factor * requests_sd AS requests_per_s_ci_high,
    goodput_requests_per_s,
    goodput_requests_per_s - half_width_factor * goodput_sd AS goodput_requests_per_s_ci_low,
    goodput_requests_per_s + half_width_factor * goodput_sd AS goodput_requests_per_s_ci_high,
    requests_good / nullif(requests_in_window, 0) AS sla_attainment,
    requests_failed / nullif(requests_planned, 0) AS error_rate,
    mean_concurrency,
    schedule_lag_ms_p99
FROM rates
ORDER BY candidate
