-- logged_concurrency: requests in flight in production, from the logged latencies.
-- Little's law: L = λ·W (arrival rate × mean latency); and the exact peak of in-flight
-- requests from a sweep over [arrival, arrival + latency) intervals (ends before starts on ties).
-- view: requests (canonical rows)
WITH spans AS (
    SELECT
        epoch_us(arrival_at) AS start_us,
        epoch_us(arrival_at) + CAST(round(logged_latency_ms * 1000) AS BIGINT) AS end_us,
        logged_latency_ms
    FROM requests
    WHERE logged_latency_ms IS NOT NULL
),
events AS (
    SELECT start_us AS t_us, 1 AS delta FROM spans
    UNION ALL
    SELECT end_us AS t_us, -1 AS delta FROM spans
),
running AS (
    SELECT sum(delta) OVER (ORDER BY t_us, delta ROWS UNBOUNDED PRECEDING) AS in_flight
    FROM events
),
arrivals AS (
    SELECT count(*) AS requests, (max(epoch_us(arrival_at)) - min(epoch_us(arrival_at))) / 1e6 AS span_s
    FROM requests
),
latency AS (
    SELECT count(*) AS with_latency, avg(logged_latency_ms) AS latency_mean_ms FROM spans
)
SELECT
    latency.with_latency AS requests_with_latency,
    latency.latency_mean_ms,
    (arrivals.requests - 1) / nullif(arrivals.span_s, 0) * latency.latency_mean_ms / 1000 AS concurrency_littles_law,
    (SELECT CAST(max(in_flight) AS BIGINT) FROM running) AS concurrency_peak_logged
FROM arrivals, latency
