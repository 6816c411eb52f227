-- session_turns: every turn of every session of the canonical log, numbered in arrival order
-- (1-based), with the logged think time before it: the gap between the end of the session's
-- previous turn (its arrival + its logged latency, or its arrival alone when the log has no
-- latency) and this turn's arrival, at least 0. NULL for a session's first turn. Computed over
-- the whole log, so a sampled turn keeps its number and think time whatever else was sampled.
-- view: production_logs (canonical request log, with session_id)
WITH session_rows AS (
    SELECT session_id, source_file, source_line, epoch_us(arrival_at) AS arrival_us, logged_latency_ms
    FROM production_logs
    WHERE session_id IS NOT NULL
),
ordered AS (
    SELECT
        *,
        row_number() OVER turns AS session_turn,
        lag(arrival_us) OVER turns AS previous_arrival_us,
        lag(logged_latency_ms) OVER turns AS previous_latency_ms
    FROM session_rows
    WINDOW turns AS (PARTITION BY session_id ORDER BY arrival_us, source_file, source_line)
)
SELECT
    source_file,
    source_line,
    session_turn,
    CASE WHEN session_turn > 1 THEN
        greatest(0.0, (arrival_us - previous_arrival_us) / 1e6 - coalesce(previous_latency_ms, 0.0) / 1e3)
    END AS think_time_s
FROM ordered
