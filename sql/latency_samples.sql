-- latency_samples (a view over the staged requests, read twice and never held): one row per
-- TTFT, TPOT and E2E value of a successful request in the steady-state window, with its
-- prompt-length bucket and its histogram bin. The bin is floor(sqrt(value) · 32): sqrt is
-- correctly rounded and 32 a power of two, so the bin never decreases as the value grows and a
-- rank can be looked up inside one bin (itl_samples bins the same way).
-- staged: steady_requests
WITH steady AS (
    SELECT candidate, prompt_bucket_lower, prompt_bucket_upper, ttft_ms, tpot_ms, e2e_ms
    FROM steady_requests
    WHERE in_steady_window AND status = 'ok'
),
long AS (
    SELECT candidate, prompt_bucket_lower, prompt_bucket_upper, metric, value
    FROM steady UNPIVOT (value FOR metric IN (ttft_ms, tpot_ms, e2e_ms))
)
SELECT
    candidate,
    prompt_bucket_lower,
    prompt_bucket_upper,
    metric,
    value,
    CAST(floor(sqrt(greatest(value, 0)) * 32.0) AS BIGINT) AS bin
FROM long
