-- throughput: output tokens/s, total tokens/s, requests/s and goodput (requests/s and output
-- tokens/s of the requests that met every SLA bound) per candidate over the
-- steady-state window, with a batch-means confidence interval over $interval_batches equal spans
-- of send time (Student's t: requests sent close together are not independent, batches far
-- apart nearly are; pipeline/analysis/statistics/dependence.py).
-- The numerator is what the requests *sent* in the window produced (however long they took),
-- the denominator the window's seconds: an arrival-side rate, which in a steady state equals
-- the served rate (what arrives is served), and the same requests as every other figure. The
-- batches attribute each request to its send time, so the interval is centred on the rate.
-- Also SLA attainment (errors count as misses); mean concurrency (busy seconds of the window's
-- requests / window seconds: Little's law; peak_concurrency is appended from
-- sql/concurrency_events.sql); error rate over every planned request.
-- staged: steady_requests
-- ratio_standard_error(batch_value, batch_base, ratio_estimate, base_total): the ratio estimator's
-- batch-means standard error, sqrt(B/(B − 1) · Σ (y_b − r · x_b)²) / Σ x, an aggregate over the
-- batches (a macro parameter replaces every identifier of its name in the body). noqa CP05: the
-- linter parses a macro's untyped parameter names as data types.
-- Floating-point sums are taken over sorted lists (list_sum(list_sort(list(x)))): DuckDB's
-- multithreaded sum adds in whatever order its threads meet the rows, so the last bits of a
-- plain sum(DOUBLE) could differ between two runs on the same rows (the same inputs, the same bytes).
CREATE OR REPLACE TEMP MACRO ratio_standard_error(batch_value, batch_base, ratio_estimate, base_total) AS  -- noqa: CP05
sqrt(count(*) / nullif(count(*) - 1, 0) * list_sum(list_sort(list((batch_value - ratio_estimate * batch_base) ^ 2))))
/ nullif(base_total, 0);

WITH outcomes AS MATERIALIZED (
    -- the requests counted once per candidate, window, send-time batch and outcome (a few hundred
    -- rows): the windows, the totals and the batch totals read these instead of every request
    SELECT
        candidate,
        load_level,
        window_start_ns,
        window_end_ns,
        batch,
        in_steady_window,
        status = 'ok' AS succeeded,
        status <> 'ok' AS failed,
        met_sla,
        met_ttft,
        met_tpot,
        met_e2e,
        count(*) AS requests,
        sum(coalesce(output_tokens_any, 0)) AS output_tokens,
        sum(coalesce(output_tokens_any, 0) + coalesce(prompt_tokens_any, 0)) AS total_tokens,
        sum(t_end_ns - t_sent_ns) AS busy_ns
    FROM steady_requests
    GROUP BY ALL
),
windows AS (
    SELECT DISTINCT candidate, load_level, window_start_ns, window_end_ns
    FROM outcomes
    WHERE window_start_ns IS NOT NULL
),
window_lengths AS (
    SELECT candidate, sum(greatest(window_end_ns - window_start_ns, 0)) / 1e9 AS window_s
    FROM windows
    GROUP BY candidate
),
lags AS (
    SELECT candidate, quantile_disc(schedule_lag_ms, 0.99) AS schedule_lag_ms_p99
    FROM steady_requests
    GROUP BY candidate
),
counted AS (
    SELECT
        candidate,
        CAST(sum(requests) AS BIGINT) AS requests_planned,
        CAST(coalesce(sum(requests) FILTER (WHERE failed), 0) AS BIGINT) AS requests_failed,
        CAST(coalesce(sum(requests) FILTER (WHERE in_steady_window), 0) AS BIGINT) AS requests_in_window,
        CAST(coalesce(sum(requests) FILTER (WHERE in_steady_window AND succeeded), 0) AS BIGINT) AS requests_ok,
        CAST(coalesce(sum(requests) FILTER (WHERE in_steady_window AND met_sla), 0) AS BIGINT) AS requests_good,
        CAST(coalesce(sum(requests) FILTER (WHERE in_steady_window AND met_ttft), 0) AS BIGINT) AS requests_met_ttft,
        CAST(coalesce(sum(requests) FILTER (WHERE in_steady_window AND met_tpot), 0) AS BIGINT) AS requests_met_tpot,
        CAST(coalesce(sum(requests) FILTER (WHERE in_steady_window AND met_e2e), 0) AS BIGINT) AS requests_met_e2e,
        CAST(coalesce(sum(output_tokens) FILTER (WHERE in_steady_window AND succeeded), 0) AS BIGINT) AS output_tokens,
        CAST(coalesce(sum(total_tokens) FILTER (WHERE in_steady_window AND succeeded), 0) AS BIGINT) AS total_tokens,
        CAST(coalesce(sum(output_tokens) FILTER (WHERE in_steady_window AND met_sla), 0) AS BIGINT)
            AS good_output_tokens,
        coalesce(sum(busy_ns) FILTER (WHERE in_steady_window), 0) / 1e9 AS busy_s
    FROM outcomes
    GROUP BY candidate
),
totals AS (
    SELECT counted.*, lags.schedule_lag_ms_p99
    FROM counted
    JOIN lags USING (candidate)
),
window_batches AS (
    -- every send-time batch of the window
    SELECT window_lengths.candidate, window_lengths.window_s, r.batch
    FROM window_lengths, range(CAST($interval_batches AS BIGINT)) AS r (batch)
),
batch_totals AS (
    -- per batch: its requests, those meeting every SLA bound, and what each rate counts, under the
    -- rate's name (requests_per_s counts the requests that succeeded, goodput_… those meeting every bound)
    SELECT
        candidate,
        batch,
        sum(requests) AS requests_in_window,
        sum(requests) FILTER (WHERE met_sla) AS requests_good,
        sum(output_tokens) FILTER (WHERE succeeded) AS output_tokens_per_s,
        sum(total_tokens) FILTER (WHERE succeeded) AS total_tokens_per_s,
        sum(requests) FILTER (WHERE succeeded) AS requests_per_s,
        sum(requests) FILTER (WHERE met_sla) AS goodput_requests_per_s,
        sum(output_tokens) FILTER (WHERE met_sla) AS goodput_output_tokens_per_s
    FROM outcomes
    WHERE in_steady_window
    GROUP BY candidate, batch
),
every_batch AS (
    -- every batch of the window, an empty one too (it held no request: 0 of each)
    SELECT
        window_batches.candidate,
        window_batches.window_s,
        coalesce(COLUMNS(batch_totals.* EXCLUDE (candidate, batch)), 0)
    FROM window_batches
    LEFT JOIN batch_totals USING (candidate, batch)
),
batch_amounts AS (
    -- one row per batch and rate: the rate is the amount per second of the batch's span (the
    -- window / $interval_batches)
    UNPIVOT every_batch ON COLUMNS('_per_s$') INTO NAME rate VALUE amount
),
rate_intervals AS (
    -- the window's rate (every batch's amount / the window's seconds) and the half-width of its
    -- batch-means interval: a rate's standard error is the sd of the batches' rates / sqrt(batches),
    -- Student's t on batches − 1 degrees of freedom; NULL below 2 batches
    SELECT
        candidate,
        rate,
        CASE WHEN any_value(window_s) > 0 THEN sum(amount) / any_value(window_s) END AS value,
        CAST($t_batches AS DOUBLE) / sqrt(count(*))
        * list_stddev_samp(list_sort(list(amount * $interval_batches / nullif(window_s, 0)))) AS half_width
    FROM batch_amounts
    GROUP BY candidate, rate
),
rate_columns AS (
    -- a rate is never below 0: a few batches that disagree widely would put the t-interval's low
    -- end there (a short closed-loop arm), and the end is clamped as the attainment's is. Clamped
    -- with CASE, not greatest(): DuckDB's greatest() skips a NULL, so a rate that could not be
    -- formed (a 0 s window) would get a low end of 0 (reply_mix and bill_check clamp the same way)
    PIVOT (
        SELECT
            candidate,
            rate,
            value,
            CASE WHEN value - half_width < 0 THEN 0.0 ELSE value - half_width END AS ci_low,
            value + half_width AS ci_high
        FROM rate_intervals
    )
    ON rate IN ('output_tokens_per_s', 'total_tokens_per_s', 'requests_per_s', 'goodput_requests_per_s',
                'goodput_output_tokens_per_s')
    USING any_value(value) AS value, any_value(ci_low) AS ci_low, any_value(ci_high) AS ci_high
    GROUP BY candidate
),
attainment AS (
    SELECT candidate, count(*) AS buckets, sum(requests_good) / nullif(sum(requests_in_window), 0) AS attainment
    FROM every_batch
    GROUP BY candidate
),
attainment_spread AS (
    -- SLA attainment as a ratio over the batches: the ratio estimator's standard error,
    -- sqrt(B/(B − 1) · Σ (good_b − p · n_b)²) / Σ n_b
    SELECT
        every_batch.candidate,
        ratio_standard_error(
            every_batch.requests_good,
            every_batch.requests_in_window,
            attainment.attainment,
            sum(every_batch.requests_in_window)
        ) AS attainment_se
    FROM every_batch
    JOIN attainment USING (candidate)
    GROUP BY every_batch.candidate
),
rates AS (
    SELECT
        totals.*,
        window_lengths.window_s,
        attainment.buckets,
        CASE WHEN window_s > 0 THEN busy_s / window_s END AS mean_concurrency,
        totals.requests_good / nullif(totals.requests_in_window, 0) AS sla_attainment,
        CAST($t_batches AS DOUBLE) * attainment_spread.attainment_se AS attainment_half_width
    FROM totals
    JOIN window_lengths USING (candidate)
    LEFT JOIN attainment USING (candidate)
    LEFT JOIN attainment_spread USING (candidate)
)
SELECT
    rates.candidate,
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
    -- each rate, then its interval (output_tokens_per_s, output_tokens_per_s_ci_low, …_ci_high)
    COLUMNS('(.*_per_s)_value|(.*_per_s_ci_low)|(.*_per_s_ci_high)') AS '\1\2\3',  -- noqa: RF05
    sla_attainment,
    -- the batch-means interval of the attainment (pipeline/analysis/statistics/intervals.py keeps the wider
    -- of it and the Wilson interval), clamped to [0, 1]; NULL where it cannot be formed
    CASE
        WHEN sla_attainment - attainment_half_width < 0 THEN 0.0 ELSE sla_attainment - attainment_half_width
    END AS sla_attainment_batch_ci_low,
    CASE
        WHEN sla_attainment + attainment_half_width > 1 THEN 1.0 ELSE sla_attainment + attainment_half_width
    END AS sla_attainment_batch_ci_high,
    requests_failed / nullif(requests_planned, 0) AS error_rate,
    mean_concurrency,
    schedule_lag_ms_p99
FROM rates
LEFT JOIN rate_columns USING (candidate)
ORDER BY rates.candidate
