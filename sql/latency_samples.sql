-- latency_samples (a view over the staged requests, never held): one row per
-- TTFT, TTFO, TPOT and E2E value of a successful request in the steady-state window (TTFT and E2E
-- also from the planned send time; NULL, so no row, in packs written before them), with its
-- prompt-length bucket, its send-time batch and its histogram bin. The bin is
-- floor(sqrt(value) · 512): sqrt is correctly rounded and 512 a power of two, so the bin never
-- decreases as the value grows and a rank can be looked up inside one bin. 512 (0.4 % of the
-- value wide at 1 ms, 0.04 % at 100 ms) keeps the histogram small and the bins that hold a
-- wanted rank short to sort even for a narrow distribution (TPOT of 10 M requests: ~1 M values
-- to sort, against 8 M at 32). latency_batch_bins and latency_bin_values bin each metric's
-- column of steady_requests the same way, without these unpivoted rows; a pack's older copies of
-- the latency queries read this view.
-- staged: steady_requests
WITH steady AS (
    SELECT candidate, prompt_bucket_lower, prompt_bucket_upper, batch, ttft_ms, tpot_ms, e2e_ms,
           ttft_from_schedule_ms, e2e_from_schedule_ms, ttfo_ms
    FROM steady_requests
    WHERE in_steady_window AND status = 'ok'
),
long AS (
    SELECT candidate, prompt_bucket_lower, prompt_bucket_upper, batch, metric, value
    FROM steady UNPIVOT (
        value FOR metric IN (ttft_ms, tpot_ms, e2e_ms, ttft_from_schedule_ms, e2e_from_schedule_ms, ttfo_ms)
    )
)
SELECT
    candidate,
    prompt_bucket_lower,
    prompt_bucket_upper,
    batch,
    metric,
    value,
    CAST(floor(sqrt(greatest(value, 0)) * 512.0) AS BIGINT) AS bin
FROM long
