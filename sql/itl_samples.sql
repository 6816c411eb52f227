-- itl_samples: every inter-chunk gap of the successful steady-state requests, binned like
-- latency_samples. When the window holds more gaps than the analysis bound (itl_max_values),
-- only the requests sent in every $itl_sample_every-th slice of $itl_slice_s seconds of the
-- window contribute, each with all its gaps: a systematic sample spread over the whole window,
-- and whole slices let the Parquet reader skip the gap lists of the requests left out.
-- staged: steady_requests; view: raw_timings
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
      AND (raw_timings.t_sent_ns - windows.window_start_ns) // CAST($itl_slice_s * 1e9 AS BIGINT) % $itl_sample_every = 0
),
bucketed AS (
    -- the bucket is found per request, before its gaps are unnested
    SELECT chosen.candidate, buckets.prompt_bucket, buckets.prompt_bucket_lower, chosen.itl_ms
    FROM chosen
    JOIN buckets
        ON chosen.prompt_tokens_any >= buckets.prompt_bucket_lower
       AND (buckets.prompt_bucket_upper IS NULL OR chosen.prompt_tokens_any <= buckets.prompt_bucket_upper)
),
gaps AS (
    SELECT candidate, prompt_bucket, prompt_bucket_lower, unnest(itl_ms) AS value
    FROM bucketed
)
SELECT
    candidate,
    prompt_bucket,
    prompt_bucket_lower,
    'itl_ms' AS metric,
    value,
    CAST(floor(sqrt(greatest(value, 0)) * $bin_scale) AS BIGINT) AS bin
FROM gaps
