-- production_sample: a contiguous time window of the canonical log that keeps its real
-- inter-arrival process. $start_offset_s NULL picks the busiest window of $window_s seconds.
-- view: production_logs (canonical request log)
WITH arrivals AS (
    SELECT
        *,
        (epoch_us(arrival_at) - min(epoch_us(arrival_at)) OVER ()) / 1e6 AS log_offset_s
    FROM production_logs
),
window_counts AS (
    SELECT
        starts.log_offset_s AS window_start_s,
        count(*) AS requests_in_window
    FROM arrivals AS starts
    JOIN arrivals AS others
        ON others.log_offset_s >= starts.log_offset_s
       AND others.log_offset_s < starts.log_offset_s + $window_s
    GROUP BY starts.log_offset_s
),
chosen_window AS (
    SELECT coalesce(
        $start_offset_s,
        (SELECT window_start_s FROM window_counts
         ORDER BY requests_in_window DESC, window_start_s LIMIT 1)
    ) AS window_start_s
),
in_window AS (
    SELECT
        arrivals.*,
        arrivals.log_offset_s - chosen_window.window_start_s AS window_offset_s
    FROM arrivals, chosen_window
    WHERE arrivals.log_offset_s >= chosen_window.window_start_s
      AND arrivals.log_offset_s < chosen_window.window_start_s + $window_s
)
SELECT *
FROM in_window
ORDER BY window_offset_s, source_line
LIMIT $max_requests
