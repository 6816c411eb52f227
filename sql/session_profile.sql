-- session_profile: the multi-turn sessions of a request set (rows sharing a session_id, turns in
-- arrival order): how many, how many turns, and the think time between a turn's end (its
-- arrival + logged latency; its arrival alone when the log has no latency) and the next turn.
-- All NULL or 0 when the log carries no session ids.
-- view: requests (canonical rows)
WITH turns AS (
    SELECT
        session_id,
        epoch_us(arrival_at) AS arrival_us,
        lag(epoch_us(arrival_at)) OVER by_session AS previous_arrival_us,
        lag(logged_latency_ms) OVER by_session AS previous_latency_ms
    FROM requests
    WHERE session_id IS NOT NULL
    WINDOW by_session AS (PARTITION BY session_id ORDER BY epoch_us(arrival_at), source_file, source_line)
),
per_session AS (
    SELECT session_id, count(*) AS turns
    FROM turns
    GROUP BY session_id
),
think AS (
    SELECT
        greatest(0.0, (arrival_us - previous_arrival_us) / 1e6 - coalesce(previous_latency_ms, 0) / 1e3) AS think_time_s
    FROM turns
    WHERE previous_arrival_us IS NOT NULL
),
session_summary AS (
    SELECT
        count(*) AS sessions,
        count(*) FILTER (WHERE turns > 1) AS multi_turn_sessions,
        coalesce(sum(turns), 0) AS requests_in_sessions,
        quantile_cont(turns, 0.5) AS turns_per_session_p50,
        quantile_cont(turns, 0.9) AS turns_per_session_p90,
        max(turns) AS turns_per_session_max
    FROM per_session
),
think_summary AS (
    SELECT
        quantile_cont(think_time_s, 0.5) AS think_time_s_p50,
        quantile_cont(think_time_s, 0.9) AS think_time_s_p90
    FROM think
)
SELECT
    s.sessions,
    s.multi_turn_sessions,
    s.requests_in_sessions / nullif((SELECT count(*) FROM requests), 0)::DOUBLE AS share_requests_in_sessions,
    s.turns_per_session_p50 AS session_turns_p50,
    s.turns_per_session_p90 AS session_turns_p90,
    s.turns_per_session_max AS session_turns_max,
    t.think_time_s_p50 AS session_think_time_s_p50,
    t.think_time_s_p90 AS session_think_time_s_p90
FROM session_summary AS s, think_summary AS t
