-- server_metrics_timeline: per candidate and scrape of its server (not its GPU exporter), at
-- seconds since the candidate's first send, for the pack's plot beside the client's TTFT:
-- requests running and waiting (summed over label sets, e.g. one per model), KV-cache use (the
-- highest, a share 0-1), pre-emptions since the first scrape (a counter's increase), and the
-- prefix-cache hit rate since the previous scrape (the hit counter's increase over the query
-- counter's, in tokens; where the server exports only a hit-rate gauge, that gauge; NULL where
-- it queried nothing in between). A counter's `_created` sample is not a value.
-- staged: server_metrics_by_candidate
-- Float sums and means are taken over sorted lists (list_sum(list_sort(list(x)))): the same rows
-- in any order give the same bits (the same inputs, the same bytes; sql/throughput.sql says why).
WITH per_scrape AS (
    SELECT
        candidate,
        scrape,
        min(second) AS second,
        list_sum(list_sort(list(value) FILTER (WHERE series = 'running'))) AS running,
        list_sum(list_sort(list(value) FILTER (WHERE series = 'waiting'))) AS waiting,
        max(value) FILTER (WHERE series = 'kv_cache_use') AS kv_cache_use,
        list_sum(list_sort(list(value) FILTER (WHERE series = 'preemptions'))) AS preemptions_total,
        list_sum(list_sort(list(value) FILTER (WHERE series = 'prefix_cache_hits'))) AS hits_total,
        list_sum(list_sort(list(value) FILTER (WHERE series = 'prefix_cache_queries'))) AS queries_total,
        list_avg(list_sort(list(value) FILTER (WHERE series = 'prefix_cache_hit_rate'))) AS hit_rate_gauge
    FROM server_metrics_by_candidate
    WHERE
        endpoint = 'server'
        AND series IN (
            'running', 'waiting', 'kv_cache_use', 'preemptions',
            'prefix_cache_hits', 'prefix_cache_queries', 'prefix_cache_hit_rate'
        )
        AND sample NOT LIKE '%\_created' ESCAPE '\'
    GROUP BY candidate, scrape
)
SELECT
    candidate,
    scrape,
    second,
    running,
    waiting,
    kv_cache_use,
    preemptions_total - first_value(preemptions_total) OVER by_scrape AS preemptions,
    coalesce(
        (hits_total - lag(hits_total) OVER by_scrape)
        / nullif(queries_total - lag(queries_total) OVER by_scrape, 0),
        hit_rate_gauge
    ) AS prefix_cache_hit_rate
FROM per_scrape
WINDOW by_scrape AS (PARTITION BY candidate ORDER BY scrape)
ORDER BY candidate, scrape
