-- latency_histogram: how many samples fall in each bin, per candidate, metric and scope (every
-- prompt-length bucket, and 'all' for the whole window). Ranks are located in it before any
-- value is sorted.
-- staged: latency_samples, itl_samples
WITH samples AS (
    SELECT candidate, prompt_bucket, prompt_bucket_lower, metric, bin FROM latency_samples
    UNION ALL
    SELECT candidate, prompt_bucket, prompt_bucket_lower, metric, bin FROM itl_samples
),
by_bucket AS (
    SELECT
        candidate,
        metric,
        prompt_bucket AS scope,
        prompt_bucket_lower AS scope_order,
        bin,
        count(*) AS values_in_bin
    FROM samples
    GROUP BY candidate, metric, prompt_bucket, prompt_bucket_lower, bin
)
SELECT * FROM by_bucket
UNION ALL
SELECT candidate, metric, 'all' AS scope, -1 AS scope_order, bin, sum(values_in_bin) AS values_in_bin
FROM by_bucket
GROUP BY candidate, metric, bin
