-- per_user_tier: per candidate and load level, how many steady-window streams met the SLO tier
-- per user (sla.per_user) and how many users the level held. A stream meets the tier when it
-- succeeded, its TTFT is at most $per_user_ttft_ms_max and its output speed, output tokens /
-- (E2E − TTFT), is at least $per_user_output_tokens_per_s_min; a stream whose whole reply came
-- with its first token (E2E ≤ TTFT: nothing streamed after it) is judged on its TTFT alone. No
-- tier in the spec (NULL bounds): streams_meeting_tier is NULL.
-- Users: mean_in_flight is Little's law over the window, L = λ·W = (streams sent in the window /
-- its seconds) × their mean E2E (send to end, a failed one's too); a closed loop's users are its
-- concurrency (pipeline/analysis/sizing/users_at_tier.py picks which, sql/sweep_levels.sql applies it).
-- staged: steady_requests
-- Float sums and means are taken over sorted lists (list_sum(list_sort(list(x)))): the same rows
-- in any order give the same bits (the same inputs, the same bytes; sql/throughput.sql says why).
WITH streams AS (
    SELECT
        candidate,
        load_level,
        status,
        ttft_ms,
        window_start_ns,
        window_end_ns,
        coalesce(e2e_ms, (t_end_ns - t_sent_ns) / 1e6) AS e2e_ms,
        CASE
            WHEN e2e_ms > ttft_ms THEN coalesce(output_tokens_any, 0) / ((e2e_ms - ttft_ms) / 1e3)
        END AS stream_output_tokens_per_s
    FROM steady_requests
    WHERE in_steady_window
),
judged AS (
    SELECT
        *,
        status = 'ok'
        AND coalesce(ttft_ms <= CAST($per_user_ttft_ms_max AS DOUBLE), FALSE)
        AND (
            stream_output_tokens_per_s IS NULL
            OR stream_output_tokens_per_s >= CAST($per_user_output_tokens_per_s_min AS DOUBLE)
        ) AS meets_tier
    FROM streams
)
SELECT
    candidate,
    load_level,
    CAST(count(*) AS BIGINT) AS streams,
    CASE
        WHEN CAST($per_user_ttft_ms_max AS DOUBLE) IS NOT NULL
            THEN CAST(count(*) FILTER (WHERE meets_tier) AS BIGINT)
    END AS streams_meeting_tier,
    quantile_cont(stream_output_tokens_per_s, 0.5) FILTER (WHERE status = 'ok') AS stream_output_tokens_per_s_p50,
    greatest(any_value(window_end_ns) - any_value(window_start_ns), 0) / 1e9 AS users_window_s,
    list_sum(list_sort(list(e2e_ms))) / 1e3
    / nullif(greatest(any_value(window_end_ns) - any_value(window_start_ns), 0) / 1e9, 0)
        AS mean_in_flight
FROM judged
GROUP BY candidate, load_level
ORDER BY candidate, load_level
