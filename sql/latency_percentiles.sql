-- latency_percentiles: TTFT, TPOT, ITL and E2E percentiles per candidate over the steady-state
-- window, successful requests only. Point estimate: nearest rank. Confidence interval:
-- distribution-free, the order statistics whose ranks bracket n·q at level $z (normal
-- approximation to the binomial); NULL where the run is too short to bound it.
-- staged: steady_requests
WITH steady AS (
    SELECT * FROM steady_requests WHERE in_steady_window AND status = 'ok'
),
samples AS (
    SELECT candidate, 'ttft_ms' AS metric, ttft_ms AS value FROM steady WHERE ttft_ms IS NOT NULL
    UNION ALL
    SELECT candidate, 'tpot_ms', tpot_ms FROM steady WHERE tpot_ms IS NOT NULL
    UNION ALL
    SELECT candidate, 'e2e_ms', e2e_ms FROM steady WHERE e2e_ms IS NOT NULL
    UNION ALL
    SELECT candidate, 'itl_ms', unnest(itl_ms) FROM steady
),
sorted AS (
    SELECT candidate, metric, list_sort(list(value)) AS ordered_values, count(*) AS n
    FROM samples
    GROUP BY candidate, metric
),
percentiles AS (
    SELECT * FROM (VALUES ('p50', 0.50), ('p90', 0.90), ('p95', 0.95), ('p99', 0.99)) AS p(percentile, q)
),
ranks AS (
    SELECT
        sorted.candidate,
        sorted.metric,
        percentiles.percentile,
        percentiles.q,
        sorted.n,
        sorted.ordered_values,
        greatest(1, CAST(ceil(percentiles.q * sorted.n) AS BIGINT)) AS point_rank,
        CAST(floor(sorted.n * percentiles.q
            - $z * sqrt(sorted.n * percentiles.q * (1 - percentiles.q))) AS BIGINT) AS low_rank,
        CAST(ceil(sorted.n * percentiles.q
            + $z * sqrt(sorted.n * percentiles.q * (1 - percentiles.q))) AS BIGINT) + 1 AS high_rank
    FROM sorted
    CROSS JOIN percentiles
)
SELECT
    candidate,
    metric,
    percentile,
    q,
    n,
    ordered_values[point_rank] AS value,
    CASE WHEN low_rank >= 1 THEN ordered_values[low_rank] END AS ci_low,
    CASE WHEN high_rank <= n THEN ordered_values[high_rank] END AS ci_high
FROM ranks
ORDER BY candidate, metric, q
