-- instrument_error: each candidate's instrument error (DESIGN.md, "Instrument error"), the p99 in ms
-- of how late the client's own stamps can be, and which measure set it (the largest of those the
-- run has; a tie goes to the more direct one):
--   wire: the calibration against the wire (a tcpdump capture), where the run recorded one;
--   loop receipt lag: the replay's probe of its event loop (pipeline/replay/pacing/loop_lag.py), from the
--     replay summary, over the whole replay (the worst shard's when sharded);
--   send lag: the schedule lag of the requests sent in the judged (steady) window, the same loop
--     waking a task due at a known instant, so its lateness is the lag a receipt waits too.
--     Counted only in an uncapped open loop ($send_lag_counts): a capped one's lag also holds the
--     wait for a free slot, and a closed loop's planned send is the instant it was sent.
-- staged: steady_requests; view: replay_lag (candidate, loop_lag_p99_ms, wire_lag_p99_ms: bound by
-- pipeline/analysis/judge/instrument_error.py from the replay summary)
WITH send_lags AS (
    SELECT
        candidate,
        quantile_disc(schedule_lag_ms, 0.99) AS send_lag_ms_p99
    FROM steady_requests
    WHERE
        in_steady_window
        AND schedule_lag_ms IS NOT NULL
        AND CAST($send_lag_counts AS BOOLEAN)
    GROUP BY candidate
),

measures AS (
    SELECT
        candidate,
        1 AS directness,
        'wire' AS source,
        wire_lag_p99_ms AS error_ms
    FROM replay_lag
    UNION ALL
    SELECT
        candidate,
        2 AS directness,
        'loop receipt lag' AS source,
        loop_lag_p99_ms AS error_ms
    FROM replay_lag
    UNION ALL
    SELECT
        candidate,
        3 AS directness,
        'send lag' AS source,
        send_lag_ms_p99 AS error_ms
    FROM send_lags
)

SELECT
    candidate,
    error_ms AS instrument_error_ms,
    source AS instrument_error_source
FROM measures
WHERE error_ms IS NOT NULL
QUALIFY row_number() OVER (PARTITION BY candidate ORDER BY error_ms DESC, directness ASC) = 1
ORDER BY candidate
