-- itl_histogram: every inter-chunk gap of every successful request, counted per candidate, load
-- level, steady-state flag, prompt-length bucket, send-time batch and whole microsecond: `gap_us` is the gap
-- rounded to the nearest µs, `gaps` how many gaps have it. Rounding never reorders two gaps, so
-- the k-th smallest gap_us is the k-th smallest gap rounded: every ITL percentile and its
-- order-statistic interval read off the cumulative counts is exact to 1 µs, and the analysis
-- never decodes the 10^9 gap lists again. Written beside raw_timings when the replay builds it
-- (from the table still in memory); `loadproof verify` re-builds it from the raw timings.
-- staged: steady_windows (window_id: one small integer per candidate and load level, so the
-- gaps are grouped by integers only); view: raw_timings (load_level, labelled_item_id added as
-- NULL when missing)
WITH windows AS (
    SELECT * FROM steady_windows
),
requests AS (
    -- predicates and columns of raw_timings itself, so the Parquet scan reads only these
    SELECT
        candidate, load_level, t_sent_ns,
        coalesce(prompt_tokens, prompt_tokens_client, 0) AS prompt_tokens_any,
        itl_ms
    FROM raw_timings
    WHERE status = 'ok' AND len(itl_ms) > 0 AND labelled_item_id IS NULL  -- production requests only
),
located AS (
    -- the flag (sent inside the window) and the send-time batch (as steady_requests finds them;
    -- the batch feeds the batch-means intervals, pipeline/analysis/statistics/dependence.py) per request
    SELECT
        requests.itl_ms,
        requests.prompt_tokens_any,
        windows.window_id,
        coalesce(
            requests.t_sent_ns >= windows.window_start_ns AND requests.t_sent_ns <= windows.window_end_ns, FALSE
        ) AS in_window,
        CAST(least(
            $interval_batches - 1,
            greatest(
                floor((requests.t_sent_ns - windows.window_start_ns) * $interval_batches
                    / greatest(windows.window_end_ns - windows.window_start_ns, 1)),
                0
            )
        ) AS BIGINT) AS batch_if_inside
    FROM requests
    JOIN windows
        ON requests.candidate = windows.candidate
       AND windows.load_level IS NOT DISTINCT FROM requests.load_level
),
marked AS (
    -- found per request, before the unnest; group_id packs window, flag, batch and bucket into
    -- one integer
    SELECT
        ((window_id * 2 + CAST(in_window AS INTEGER)) * 128 + CASE WHEN in_window THEN batch_if_inside ELSE 0 END)
        * 1000000
        + len(list_filter(CAST($bucket_edges AS BIGINT[]), lambda edge: edge <= prompt_tokens_any))
        AS group_id,
        itl_ms
    FROM located
),
gaps AS (
    SELECT group_id, CAST(round(unnest(itl_ms) * 1000.0) AS BIGINT) AS gap_us
    FROM marked
),
counted AS (
    SELECT group_id, gap_us, count(*) AS gaps
    FROM gaps
    GROUP BY group_id, gap_us
),
unpacked AS (
    SELECT
        windows.candidate,
        windows.load_level,
        (counted.group_id // 128000000) % 2 = 1 AS in_steady_window,
        (counted.group_id // 1000000) % 128 AS batch,
        counted.group_id % 1000000 AS bucket_index,
        counted.gap_us,
        counted.gaps
    FROM counted
    JOIN windows ON windows.window_id = counted.group_id // 256000000
)
SELECT
    candidate,
    load_level,
    in_steady_window,
    CASE WHEN bucket_index = 0 THEN 0 ELSE CAST($bucket_edges AS BIGINT[])[bucket_index] END AS prompt_bucket_lower,
    CASE WHEN bucket_index < len(CAST($bucket_edges AS BIGINT[]))
         THEN CAST($bucket_edges AS BIGINT[])[bucket_index + 1] - 1 END AS prompt_bucket_upper,
    CASE WHEN in_steady_window THEN CAST(batch AS BIGINT) END AS batch,
    gap_us,
    CAST(gaps AS BIGINT) AS gaps
FROM unpacked
ORDER BY candidate, load_level NULLS FIRST, in_steady_window, prompt_bucket_lower, batch, gap_us
