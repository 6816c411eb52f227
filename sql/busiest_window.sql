-- busiest_window: the start of the $window_us-long window [t, t + W) holding the most requests.
-- The busiest window can always start at an arrival, so each arrival time is a candidate; a
-- RANGE frame over the integer microsecond times counts [t, t + W − 1 µs] = [t, t + W) in one
-- sort, O(n log n) (the skeleton's self-join was O(n²)). Ties: the earliest window.
-- view: production_logs; params: $window_us
WITH arrivals AS (
    SELECT epoch_us(arrival_at) AS arrival_us FROM production_logs
),
window_counts AS (
    SELECT
        arrival_us AS window_start_us,
        count(*) OVER (ORDER BY arrival_us RANGE BETWEEN CURRENT ROW AND $window_us - 1 FOLLOWING) AS requests_in_window
    FROM arrivals
)
SELECT window_start_us, requests_in_window
FROM window_counts
ORDER BY requests_in_window DESC, window_start_us
LIMIT 1
