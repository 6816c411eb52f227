-- production_sample: a contiguous time window [$start_us, $end_us) of the canonical log that
-- keeps its real inter-arrival process; the first $max_requests requests of it.
-- window_offset_s: seconds after the window's start (the replay's schedule);
-- log_offset_s: seconds after the log's first request ($first_us).
-- view: production_logs (canonical request log); params: $start_us, $end_us, $first_us, $max_requests
WITH in_window AS (
    SELECT
        *,
        (epoch_us(arrival_at) - $first_us) / 1e6 AS log_offset_s,
        (epoch_us(arrival_at) - $start_us) / 1e6 AS window_offset_s
    FROM production_logs
    WHERE epoch_us(arrival_at) >= $start_us
      AND epoch_us(arrival_at) < $end_us
)
SELECT *
FROM in_window
ORDER BY window_offset_s, source_file, source_line
LIMIT $max_requests
