-- steady_bins: the series the steady-state tests read (pipeline/analysis/statistics/steady_state.py). For
-- each candidate (and load level) the configured window by issue (send) time, from the first send
-- + warmup_s to the cool-down cut (the last end - cooldown_s), cut into $steady_bins equal spans of
-- send time; per span the requests sent, those that succeeded and their TTFT and TPOT medians
-- (the steadiness signals: queueing shows in TTFT, decode contention in TPOT), with the E2E p90
-- of the window's successful requests (the minimum length is 5 × it).
-- The analysis then keeps the window, trims a leading ramp off it, or finds no steady window; the
-- window it keeps is what sql/steady_requests.sql marks.
-- view: raw_timings
WITH production AS NOT MATERIALIZED (
    -- not held: the window bounds read four narrow columns of the file, the spans seven; holding
    -- every row first cost more than reading the file twice (as sql/steady_requests.sql's production)
    SELECT candidate, load_level, status, ttft_ms, tpot_ms, e2e_ms, t_sent_ns, t_end_ns
    FROM raw_timings
    WHERE labelled_item_id IS NULL AND t_sent_ns IS NOT NULL
),
configured AS (
    SELECT
        candidate,
        load_level,
        min(t_sent_ns) AS replay_start_ns,
        min(t_sent_ns) + CAST($warmup_s * 1e9 AS BIGINT) AS window_start_ns,
        max(t_end_ns) - CAST($cooldown_s * 1e9 AS BIGINT) AS window_end_ns
    FROM production
    GROUP BY candidate, load_level
),
inside AS NOT MATERIALIZED (
    -- not held either: the spans' medians and the window's E2E p90 each join it afresh, cheaper at
    -- 10 M rows than writing ~10 M joined rows and reading them back twice
    SELECT
        production.*,
        configured.window_start_ns,
        configured.window_end_ns,
        CAST(least(
            $steady_bins - 1,
            floor(
                (production.t_sent_ns - configured.window_start_ns) * $steady_bins
                / greatest(configured.window_end_ns - configured.window_start_ns, 1)
            )
        ) AS BIGINT) AS bin
    FROM production
    JOIN configured
        ON production.candidate = configured.candidate
       AND configured.load_level IS NOT DISTINCT FROM production.load_level
    WHERE production.t_sent_ns BETWEEN configured.window_start_ns AND configured.window_end_ns
),
window_e2e AS (
    SELECT candidate, load_level, quantile_cont(e2e_ms, 0.9) FILTER (WHERE status = 'ok') AS e2e_ms_p90
    FROM inside
    GROUP BY candidate, load_level
),
per_bin AS (
    SELECT
        candidate,
        load_level,
        bin,
        count(*) AS requests,
        count(*) FILTER (WHERE status = 'ok') AS requests_ok,
        median(ttft_ms) FILTER (WHERE status = 'ok') AS ttft_ms_p50,
        median(tpot_ms) FILTER (WHERE status = 'ok') AS tpot_ms_p50
    FROM inside
    GROUP BY candidate, load_level, bin
),
bins AS (
    SELECT configured.candidate, configured.load_level, r.bin
    FROM configured, range(CAST($steady_bins AS BIGINT)) AS r (bin)
)
SELECT
    bins.candidate,
    bins.load_level,
    bins.bin,
    configured.replay_start_ns,
    configured.window_start_ns,
    configured.window_end_ns,
    configured.window_start_ns
    + CAST((configured.window_end_ns - configured.window_start_ns) * bins.bin / $steady_bins AS BIGINT) AS bin_start_ns,
    coalesce(per_bin.requests, 0) AS requests,
    coalesce(per_bin.requests_ok, 0) AS requests_ok,
    per_bin.ttft_ms_p50,
    per_bin.tpot_ms_p50,
    window_e2e.e2e_ms_p90
FROM bins
JOIN configured
    ON bins.candidate = configured.candidate
   AND configured.load_level IS NOT DISTINCT FROM bins.load_level
LEFT JOIN per_bin
    ON bins.candidate = per_bin.candidate
   AND per_bin.load_level IS NOT DISTINCT FROM bins.load_level
   AND bins.bin = per_bin.bin
LEFT JOIN window_e2e
    ON bins.candidate = window_e2e.candidate
   AND window_e2e.load_level IS NOT DISTINCT FROM bins.load_level
ORDER BY bins.candidate, bins.load_level NULLS FIRST, bins.bin
