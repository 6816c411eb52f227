-- steady_requests: one row per raw timing (its scalar columns only) marked with the
-- steady-state window of its candidate (and load level, when a sweep wrote one), its
-- prompt-length bucket and whether it met each SLA bound. Staged before the analysis queries.
-- The window is a span of send times, from the first send + warmup_s to the cool-down cut (the
-- last end - cooldown_s), tested for a steady state and trimmed where a leading ramp fails the
-- tests (the bound table steady_state): a request is in it when it was *sent* inside it, however
-- long it then took. Requiring it to end inside too would drop the slowest requests sent near
-- the cut and bias tail latency down.
-- Each request in the window also gets its send-time batch (0 … $interval_batches − 1: equal spans
-- of the window) for the batch-means intervals (pipeline/analysis/statistics/dependence.py).
-- Production requests only: a labelled item mixed into the load (labelled_item_id set) is load
-- the endpoint served, but is scored in accuracy_results, not counted in these figures.
-- view: steady_state (bound: the detected windows); raw_timings (load_level, retry_count,
-- labelled_item_id, cached_tokens and the stream kind columns — ttfo_ms, reasoning_tokens,
-- tool_call_valid, … — added as NULL when missing)
WITH production AS NOT MATERIALIZED (
    -- not held: every column of 10 M rows materialised first costs more than reading it as it goes
    SELECT * FROM raw_timings
    WHERE labelled_item_id IS NULL
),
window_bounds AS (
    -- the window the steady-state tests kept (pipeline/analysis/statistics/steady_state.py over
    -- sql/steady_bins.sql): the configured one, one with a leading ramp trimmed, or — with no
    -- steady window — the configured one again, its figures then flagged
    SELECT candidate, load_level, replay_start_ns, window_start_ns, window_end_ns
    FROM steady_state
),
timings AS (
    -- only what the analyses read: at 10 M rows every column staged costs about a second
    SELECT
        candidate, load_level, status, error_type,
        coalesce(retry_count, 0) AS retry_count,
        ttft_ms, tpot_ms, e2e_ms, schedule_lag_ms, ttft_from_schedule_ms, e2e_from_schedule_ms, ttfo_ms,
        coalesce(prompt_tokens, prompt_tokens_client) AS prompt_tokens_any,
        coalesce(output_tokens, output_tokens_client) AS output_tokens_any,
        cached_tokens,
        reasoning_tokens, tool_call_valid, structured_output_valid,
        -- the bill check (sql/bill_check.sql): the server's usage beside the client's own counts
        CASE WHEN usage_reported THEN prompt_tokens END AS prompt_tokens_billed,
        CASE WHEN usage_reported THEN output_tokens END AS output_tokens_billed,
        -- counted: the messages' count plus the offered tools' definitions (NULL: none offered)
        prompt_tokens_client + coalesce(tool_definition_tokens, 0) AS prompt_tokens_counted,
        output_tokens_client,
        t_sent_ns, t_end_ns
    FROM production
),
bucketed AS (
    SELECT
        timings.*,
        -- how many bucket edges the prompt reaches: 0 = below the first edge
        len(list_filter(CAST($bucket_edges AS BIGINT[]), lambda edge: edge <= coalesce(prompt_tokens_any, 0)))
            AS bucket_index
    FROM timings
),
marked AS (
    SELECT
        bucketed.*,
        window_bounds.replay_start_ns,
        window_bounds.window_start_ns,
        window_bounds.window_end_ns,
        coalesce(
            bucketed.t_sent_ns >= window_bounds.window_start_ns
            AND bucketed.t_sent_ns <= window_bounds.window_end_ns,
            FALSE
        ) AS in_steady_window,
        CASE WHEN bucket_index = 0 THEN 0 ELSE CAST($bucket_edges AS BIGINT[])[bucket_index] END AS prompt_bucket_lower,
        CASE WHEN bucket_index < len(CAST($bucket_edges AS BIGINT[]))
             THEN CAST($bucket_edges AS BIGINT[])[bucket_index + 1] - 1 END AS prompt_bucket_upper
    FROM bucketed
    LEFT JOIN window_bounds
        ON bucketed.candidate = window_bounds.candidate
       AND window_bounds.load_level IS NOT DISTINCT FROM bucketed.load_level
),
sla AS (
    -- the bucket's label ('256-1023', '4096+') is made where tables are output, not per row
    SELECT
        marked.*,
        CASE WHEN in_steady_window THEN CAST(least(
            $interval_batches - 1,
            floor((t_sent_ns - window_start_ns) * $interval_batches / greatest(window_end_ns - window_start_ns, 1))
        ) AS BIGINT) END AS batch,
        status = 'ok' AND (CAST($sla_ttft_ms AS DOUBLE) IS NULL OR ttft_ms <= CAST($sla_ttft_ms AS DOUBLE)) AS met_ttft,
        status = 'ok'
        AND (CAST($sla_tpot_ms AS DOUBLE) IS NULL OR coalesce(tpot_ms, 0) <= CAST($sla_tpot_ms AS DOUBLE)) AS met_tpot,
        status = 'ok' AND (CAST($sla_e2e_ms AS DOUBLE) IS NULL OR e2e_ms <= CAST($sla_e2e_ms AS DOUBLE)) AS met_e2e
    FROM marked
)
SELECT
    * EXCLUDE (bucket_index),
    coalesce(met_ttft AND met_tpot AND met_e2e, FALSE) AS met_sla
FROM sla
