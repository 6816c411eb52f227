-- latency_histogram: how many samples fall in each bin, per candidate, metric and scope (every
-- prompt-length bucket, and 'all' for the whole window; scope_order is the bucket's lower edge,
-- -1 for 'all'). Ranks are located in it before any value is sorted. TTFT, TPOT and E2E bin as
-- latency_samples does (floor(sqrt(value) · 512)); for ITL the bin is the gap in whole
-- microseconds, read from itl_histogram's steady-state counts, so every value in an ITL bin is
-- the same and no ITL value is ever sorted.
-- staged: itl_histogram (or bound to data/itl_histogram.parquet), latency_batch_bins (the values
-- counted per send-time batch and bin, summed here over the batches)
WITH request_bins AS (
    -- the upper edge follows from the lower one: grouped by fewer keys, the bins go faster
    SELECT candidate, prompt_bucket_lower, any_value(prompt_bucket_upper) AS prompt_bucket_upper, metric, bin,
           sum(values_in_bin) AS values_in_bin
    FROM latency_batch_bins
    GROUP BY candidate, prompt_bucket_lower, metric, bin
),
gap_bins AS (
    SELECT
        candidate, prompt_bucket_lower, prompt_bucket_upper,
        'itl_ms' AS metric, gap_us AS bin, sum(gaps) AS values_in_bin
    FROM itl_histogram
    WHERE in_steady_window
    GROUP BY candidate, prompt_bucket_lower, prompt_bucket_upper, gap_us
),
by_bucket AS (
    SELECT * FROM request_bins
    UNION ALL
    SELECT * FROM gap_bins
),
scoped AS (
    SELECT
        candidate,
        metric,
        CASE WHEN prompt_bucket_upper IS NULL THEN prompt_bucket_lower || '+'
             ELSE prompt_bucket_lower || '-' || prompt_bucket_upper END AS scope,
        prompt_bucket_lower AS scope_order,
        bin,
        CAST(values_in_bin AS BIGINT) AS values_in_bin
    FROM by_bucket
    UNION ALL
    SELECT
        candidate, metric, 'all' AS scope, -1 AS scope_order, bin, CAST(sum(values_in_bin) AS BIGINT) AS values_in_bin
    FROM by_bucket
    GROUP BY candidate, metric, bin
)
SELECT
    candidate,
    metric,
    scope,
    scope_order,
    bin,
    values_in_bin,
    CAST(
        sum(values_in_bin) OVER (PARTITION BY candidate, metric, scope ORDER BY bin) - values_in_bin AS BIGINT
    ) AS before_bin
FROM scoped
