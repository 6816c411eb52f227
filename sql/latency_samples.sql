-- latency_samples: one row per TTFT, TPOT and E2E value of a successful request in the
-- steady-state window, with its prompt-length bucket and its histogram bin. The bin is
-- floor(sqrt(value) · $bin_scale): sqrt is correctly rounded and $bin_scale a power of two, so
-- the bin never decreases as the value grows and a rank can be looked up inside one bin.
-- staged: steady_requests
WITH steady AS (
    SELECT candidate, prompt_bucket, prompt_bucket_lower, ttft_ms, tpot_ms, e2e_ms
    FROM steady_requests
    WHERE in_steady_window AND status = 'ok'
),
long AS (
    SELECT candidate, prompt_bucket, prompt_bucket_lower, metric, value
    FROM steady UNPIVOT (value FOR metric IN (ttft_ms, tpot_ms, e2e_ms))
)
SELECT
    candidate,
    prompt_bucket,
    prompt_bucket_lower,
    metric,
    value,
    CAST(floor(sqrt(greatest(value, 0)) * $bin_scale) AS BIGINT) AS bin
FROM long
