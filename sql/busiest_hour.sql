-- busiest_hour: the clock hour (UTC) with the most requests. Ties: the earliest hour.
-- view: production_logs
WITH hours AS (
    SELECT date_trunc('hour', arrival_at) AS hour_start, count(*) AS requests_in_hour
    FROM production_logs
    GROUP BY hour_start
)
SELECT epoch_us(hour_start) AS window_start_us, requests_in_hour
FROM hours
ORDER BY requests_in_hour DESC, hour_start ASC
LIMIT 1
