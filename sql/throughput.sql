-- throughput: output tokens/s, total tokens/s, requests/s and goodput per candidate over the
-- steady-state window (requests that completed inside it), with a batch-means confidence
-- interval over 1-second buckets; error rate over every planned request.
-- staged: steady_requests
WITH per_candidate AS (
    SELECT
        candidate,
        any_value(window_start_ns) AS window_start_ns,
        any_value(window_end_ns) AS window_end_ns,
        count(*) AS requests_planned,
        count(*) FILTER (WHERE status <> 'ok') AS requests_failed,
        count(*) FILTER (WHERE in_steady_window) AS requests_in_window,
        quantile_disc(schedule_lag_ms, 0.99) AS schedule_lag_ms_p99
    FROM steady_requests
    GROUP BY candidate
),
windowed AS (
    SELECT *, (window_end_ns - window_start_ns) / 1e9 AS window_s
    FROM per_candidate
),
buckets AS (
    SELECT windowed.candidate, bucket
    FROM windowed, range(CAST(greatest(floor(windowed.window_s), 0) AS BIGINT)) AS r(bucket)
),
bucket_sums AS (
    SELECT
        buckets.candidate,
        buckets.bucket,
        CAST(coalesce(sum(s.output_tokens) FILTER (WHERE s.status = 'ok'), 0) AS BIGINT) AS output_tokens,
        CAST(coalesce(sum(s.output_tokens + s.prompt_tokens) FILTER (WHERE s.status = 'ok'), 0) AS BIGINT) AS total_tokens,
        count(s.request_id) FILTER (WHERE s.status = 'ok') AS requests_ok,
        count(s.request_id) FILTER (WHERE s.met_sla) AS requests_good
    FROM buckets
    LEFT JOIN steady_requests AS s
        ON s.candidate = buckets.candidate
       AND s.in_steady_window
       AND (s.t_end_ns - s.window_start_ns) // 1000000000 = buckets.bucket
    GROUP BY buckets.candidate, buckets.bucket
),
totals AS (
    SELECT
        candidate,
        CAST(coalesce(sum(output_tokens) FILTER (WHERE in_steady_window AND status = 'ok'), 0) AS BIGINT) AS output_tokens,
        CAST(coalesce(sum(output_tokens + prompt_tokens) FILTER (WHERE in_steady_window AND status = 'ok'), 0) AS BIGINT) AS total_tokens,
        count(*) FILTER (WHERE in_steady_window AND status = 'ok') AS requests_ok,
        count(*) FILTER (WHERE in_steady_window AND met_sla) AS requests_good
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
    FROM bucket_sums
    GROUP BY candidate
),
rates AS (
    SELECT
        windowed.*,
        totals.output_tokens,
        totals.total_tokens,
        totals.requests_ok,
        totals.requests_good,
        spread.buckets,
        CASE WHEN windowed.window_s > 0 THEN totals.output_tokens / windowed.window_s END AS output_tokens_per_s,
        CASE WHEN windowed.window_s > 0 THEN totals.total_tokens / windowed.window_s END AS total_tokens_per_s,
        CASE WHEN windowed.window_s > 0 THEN totals.requests_ok / windowed.window_s END AS requests_per_s,
        CASE WHEN windowed.window_s > 0 THEN totals.requests_good / windowed.window_s END AS goodput_requests_per_s,
        $z / sqrt(nullif(spread.buckets, 0)) AS half_width_factor,
        spread.output_tokens_sd,
        spread.total_tokens_sd,
        spread.requests_sd,
        spread.goodput_sd
    FROM windowed
    JOIN totals USING (candidate)
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
    requests_failed / nullif(requests_planned, 0) AS error_rate,
    schedule_lag_ms_p99
FROM rates
ORDER BY candidate
