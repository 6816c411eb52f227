-- itl_samples (a view: never materialised, there can be ~100 gaps per request): every
-- inter-chunk gap of the successful steady-state requests, binned like latency_samples. When
-- the window holds more gaps than the analysis bound, only the requests with
-- hash(request_id) % itl_sample_every = 0 contribute (every gap of each of them).
-- staged: steady_requests; views: raw_timings, settings (itl_sample_every, bin_scale)
WITH windows AS (
    SELECT DISTINCT candidate, load_level, window_start_ns, window_end_ns
    FROM steady_requests
),
buckets AS (
    SELECT DISTINCT prompt_bucket, prompt_bucket_lower, prompt_bucket_upper
    FROM steady_requests
),
chosen AS (
    SELECT
        raw_timings.candidate,
        coalesce(raw_timings.prompt_tokens, raw_timings.prompt_tokens_client, 0) AS prompt_tokens_any,
        raw_timings.itl_ms
    FROM raw_timings
    JOIN windows
        ON windows.candidate = raw_timings.candidate
       AND windows.load_level IS NOT DISTINCT FROM raw_timings.load_level
    WHERE raw_timings.status = 'ok'
      AND raw_timings.t_sent_ns >= windows.window_start_ns
      AND raw_timings.t_end_ns <= windows.window_end_ns
      AND hash(raw_timings.request_id) % (SELECT itl_sample_every FROM settings) = 0
),
gaps AS (
    SELECT candidate, prompt_tokens_any, unnest(itl_ms) AS value
    FROM chosen
)
SELECT
    gaps.candidate,
    buckets.prompt_bucket,
    buckets.prompt_bucket_lower,
    'itl_ms' AS metric,
    gaps.value,
    CAST(floor(sqrt(greatest(gaps.value, 0)) * (SELECT bin_scale FROM settings)) AS BIGINT) AS bin
FROM gaps
JOIN buckets
    ON gaps.prompt_tokens_any >= buckets.prompt_bucket_lower
   AND (buckets.prompt_bucket_upper IS NULL OR gaps.prompt_tokens_any <= buckets.prompt_bucket_upper)
