-- itl_samples: every inter-chunk gap of the successful steady-state requests, binned like
-- latency_samples (floor(sqrt(value) · 32)). When the window holds more gaps than the analysis bound (itl_max_values),
-- only the requests sent in every $itl_sample_every-th slice of $itl_slice_s seconds of the
-- replay's monotonic clock contribute, each with all its gaps: a systematic sample spread over
-- the whole window, and whole slices let the Parquet reader skip the gap lists left out.
-- staged: steady_requests; view: raw_timings
WITH windows AS (
    SELECT DISTINCT candidate, load_level, window_start_ns, window_end_ns
    FROM steady_requests
),
buckets AS (
    SELECT DISTINCT prompt_bucket_lower, prompt_bucket_upper
    FROM steady_requests
),
sliced AS (
    -- predicates on raw_timings' own scalar columns only, so the Parquet scan applies them and
    -- skips the gap lists of the requests left out (a join condition would come too late)
    SELECT candidate, load_level, t_sent_ns, t_end_ns,
           coalesce(prompt_tokens, prompt_tokens_client, 0) AS prompt_tokens_any, itl_ms
    FROM raw_timings
    WHERE status = 'ok'
      AND t_sent_ns // CAST($itl_slice_s * 1e9 AS BIGINT) % $itl_sample_every = 0
),
chosen AS (
    SELECT sliced.candidate, sliced.prompt_tokens_any, sliced.itl_ms
    FROM sliced
    JOIN windows
        ON windows.candidate = sliced.candidate
       AND windows.load_level IS NOT DISTINCT FROM sliced.load_level
    WHERE sliced.t_sent_ns >= windows.window_start_ns
      AND sliced.t_end_ns <= windows.window_end_ns
),
bucketed AS (
    -- the bucket is found per request, before its gaps are unnested
    SELECT chosen.candidate, buckets.prompt_bucket_lower, buckets.prompt_bucket_upper, chosen.itl_ms
    FROM chosen
    JOIN buckets
        ON chosen.prompt_tokens_any >= buckets.prompt_bucket_lower
       AND (buckets.prompt_bucket_upper IS NULL OR chosen.prompt_tokens_any <= buckets.prompt_bucket_upper)
),
gaps AS (
    SELECT candidate, prompt_bucket_lower, prompt_bucket_upper, unnest(itl_ms) AS value
    FROM bucketed
)
SELECT
    candidate,
    prompt_bucket_lower,
    prompt_bucket_upper,
    'itl_ms' AS metric,
    value,
    CAST(floor(sqrt(greatest(value, 0)) * 32.0) AS BIGINT) AS bin
FROM gaps
