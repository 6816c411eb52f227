-- latency_histogram: how many samples fall in each bin, per candidate, metric and scope (every
-- prompt-length bucket, and 'all' for the whole window; scope_order is the bucket's lower edge,
-- -1 for 'all'). Ranks are located in it before any value is sorted.
-- staged: itl_samples; view: latency_samples
WITH samples AS (
    SELECT candidate, prompt_bucket_lower, prompt_bucket_upper, metric, bin FROM latency_samples
    UNION ALL
    SELECT candidate, prompt_bucket_lower, prompt_bucket_upper, metric, bin FROM itl_samples
),
by_bucket AS (
    SELECT
        candidate,
        metric,
        prompt_bucket_lower,
        prompt_bucket_upper,
        bin,
        count(*) AS values_in_bin
    FROM samples
    GROUP BY candidate, metric, prompt_bucket_lower, prompt_bucket_upper, bin
)
SELECT
    candidate,
    metric,
    CASE WHEN prompt_bucket_upper IS NULL THEN prompt_bucket_lower || '+'
         ELSE prompt_bucket_lower || '-' || prompt_bucket_upper END AS scope,
    prompt_bucket_lower AS scope_order,
    bin,
    values_in_bin
FROM by_bucket
UNION ALL
SELECT candidate, metric, 'all' AS scope, -1 AS scope_order, bin, sum(values_in_bin) AS values_in_bin
FROM by_bucket
GROUP BY candidate, metric, bin
