-- arm_window: an arm's steady window, per candidate, from its own raw timings (one arm's rows).
-- A closed loop at $concurrency sends its first wave all at once (an empty server filled in one
-- instant: queue positions 0 … concurrency − 1, not the steady queue every later request meets),
-- and after its last send the requests in flight only fall (the drain). Every later send happens
-- at an end (the worker's previous request), so the window is a span of whole cycles: from the
-- first end (the (concurrency + 1)-th send, and not before the first successful end: a request
-- that failed at once, a 429, frees its worker before anything was served, a dead start that would
-- bias every rate down). Its length is Little's law at the claimed concurrency: the window requests'
-- summed latency over the concurrency, the time they occupy the $concurrency workers of a closed
-- loop that holds exactly that many in flight, so that their count over its length is the served
-- rate (concurrency over mean latency), however the server's replies clump; a window ending at the
-- last send would cut the last cycle short and, over a few cycles, overstate the rate many times.
-- (Never shorter than the span of the sends it holds.)
-- An open loop ($closed_loop false: the arrival-process step) sends at its own offsets, so its
-- window ends at its last send; it starts by the same rule, so that no step's change is an artefact
-- of a different warm-up.
-- warmup_s and cooldown_s are what sql/steady_requests.sql takes: NULL when the arm sent no more than
-- $concurrency requests (no steady window: the arm has no figures).
-- view: raw_timings (one arm's rows)
WITH sends AS (
    SELECT
        candidate,
        t_sent_ns,
        t_end_ns,
        status,
        row_number() OVER (PARTITION BY candidate ORDER BY t_sent_ns, request_id) AS send_rank
    FROM raw_timings
    WHERE t_sent_ns IS NOT NULL AND labelled_item_id IS NULL
),
bounds AS (
    SELECT
        candidate,
        count(*) AS requests_sent,
        min(t_sent_ns) AS first_sent_ns,
        min(t_sent_ns) FILTER (WHERE send_rank = CAST($concurrency AS BIGINT) + 1) AS wave_end_ns,
        min(t_end_ns) FILTER (WHERE status = 'ok') AS first_ok_end_ns,
        max(t_sent_ns) AS last_sent_ns,
        max(t_end_ns) AS last_end_ns
    FROM sends
    GROUP BY candidate
),
steady AS (
    -- the first send at or after both; NULL when none is (too few requests: no window)
    SELECT
        bounds.*,
        (
            SELECT min(sends.t_sent_ns)
            FROM sends
            WHERE sends.candidate = bounds.candidate
              AND bounds.wave_end_ns IS NOT NULL  -- greatest() skips a NULL: no first wave passed, no window
              AND sends.t_sent_ns >= greatest(bounds.wave_end_ns, bounds.first_ok_end_ns)
        ) AS steady_start_ns
    FROM bounds
),
window_end AS (
    SELECT
        steady.*,
        CASE
            WHEN CAST($closed_loop AS BOOLEAN)
                THEN greatest(
                    steady.last_sent_ns,
                    steady.steady_start_ns + CAST((
                        SELECT sum(sends.t_end_ns - sends.t_sent_ns)
                        FROM sends
                        WHERE sends.candidate = steady.candidate AND sends.t_sent_ns >= steady.steady_start_ns
                    ) / CAST($concurrency AS DOUBLE) AS BIGINT)
                )
            ELSE steady.last_sent_ns
        END AS window_end_ns
    FROM steady
)
SELECT
    candidate,
    requests_sent,
    (steady_start_ns - first_sent_ns) / 1e9 AS warmup_s,
    CASE WHEN steady_start_ns IS NOT NULL THEN (last_end_ns - window_end_ns) / 1e9 END AS cooldown_s
FROM window_end
ORDER BY candidate
