-- server_ttft_buckets: per candidate, the server's own TTFT histogram (and its E2E one, where it
-- exports one: `series` says which) over the production replay:
-- each bucket's cumulative count (upper bound `le` in seconds, +Inf last) at the last scrape less
-- that at the first, so requests the server served before the replay (probes, earlier runs) do
-- not count. Summed over label sets (e.g. one per model). The percentile estimate (linear
-- within a bucket) is pipeline/pack/server_view.py's.
-- staged: server_metrics_by_candidate
WITH buckets AS (
    SELECT
        candidate,
        series,
        scrape,
        CAST(json_extract_string(labels_json, '$.le') AS DOUBLE) AS le,
        sum(value) AS cumulative
    FROM server_metrics_by_candidate
    WHERE series IN ('ttft_histogram', 'e2e_histogram') AND sample LIKE '%\_bucket' ESCAPE '\'
    GROUP BY candidate, series, scrape, le
),
ends AS (
    SELECT candidate, series, min(scrape) AS first_scrape, max(scrape) AS last_scrape
    FROM buckets
    GROUP BY candidate, series
)
SELECT
    buckets.candidate,
    buckets.series,
    buckets.le,
    sum(buckets.cumulative) FILTER (WHERE buckets.scrape = ends.last_scrape)
    - coalesce(
        sum(buckets.cumulative) FILTER (
            WHERE buckets.scrape = ends.first_scrape AND ends.first_scrape < ends.last_scrape
        ),
        0
    ) AS cumulative
FROM buckets
JOIN ends USING (candidate, series)
GROUP BY buckets.candidate, buckets.series, buckets.le
ORDER BY buckets.candidate, buckets.series, buckets.le
