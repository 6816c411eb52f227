-- log_span: first and last arrival of the canonical log (microseconds since the epoch) and its size.
-- view: production_logs
WITH span AS (
    SELECT min(epoch_us(arrival_at)) AS first_us, max(epoch_us(arrival_at)) AS last_us, count(*) AS requests
    FROM production_logs
)
SELECT first_us, last_us, requests FROM span
