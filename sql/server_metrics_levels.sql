-- server_metrics_levels: per candidate and load level (the production replay's and each sweep
-- level's), the server's queue and KV-cache use over that level's replay: the scrapes sent
-- between its first send and its last end, each scrape's requests running and waiting summed over
-- label sets and its KV-cache use (the highest, a share 0-1), then their mean and maximum over the
-- level; and the pre-emptions over the level (the counter's increase between its first and last
-- scrape) and the server's prefix-cache hit rate over it (the hit counter's increase over the
-- query counter's, in tokens; where the server exports only a hit-rate gauge, that gauge's mean).
-- The production replay's samples carry no load_level (it is the level raw_timings holds: its
-- load_level, or NULL without a sweep); a sweep level's carry its own.
-- view: server_metrics; view: raw_timings (production requests, the first run of a repeated
-- replay); view: sweep_timings; view: server_metric_series
-- Float sums and means are taken over sorted lists (list_sum(list_sort(list(x)))): the same rows
-- in any order give the same bits (the same inputs, the same bytes; sql/throughput.sql says why).
WITH spans AS (
    SELECT
        run_id,
        candidate,
        CAST(NULL AS DOUBLE) AS scraped_at_level,
        any_value(load_level) AS load_level,
        coalesce(any_value(load_level_label), 'production') AS load_level_label,
        TRUE AS production,
        min(t_sent_ns) AS first_sent_ns,
        max(t_end_ns) AS last_end_ns
    FROM raw_timings
    WHERE labelled_item_id IS NULL AND t_sent_ns IS NOT NULL
    GROUP BY run_id, candidate
    UNION ALL
    SELECT
        run_id,
        candidate,
        load_level AS scraped_at_level,
        load_level,
        any_value(load_level_label) AS load_level_label,
        FALSE AS production,
        min(t_sent_ns) AS first_sent_ns,
        max(t_end_ns) AS last_end_ns
    FROM sweep_timings
    WHERE t_sent_ns IS NOT NULL
    GROUP BY run_id, candidate, load_level
),
per_scrape AS (
    SELECT
        spans.candidate,
        spans.load_level,
        spans.load_level_label,
        spans.production,
        server_metrics.scrape,
        list_sum(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metric_series.series = 'running'
        ))) AS running,
        list_sum(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metric_series.series = 'waiting'
        ))) AS waiting,
        max(server_metrics.value) FILTER (WHERE server_metric_series.series = 'kv_cache_use') AS kv_cache_use,
        list_sum(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metric_series.series = 'preemptions'
        ))) AS preemptions_total,
        list_sum(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metric_series.series = 'prefix_cache_hits'
        ))) AS hits_total,
        list_sum(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metric_series.series = 'prefix_cache_queries'
        ))) AS queries_total,
        list_avg(list_sort(list(server_metrics.value) FILTER (
            WHERE server_metric_series.series = 'prefix_cache_hit_rate'
        ))) AS hit_rate_gauge
    FROM server_metrics
    JOIN spans
        ON server_metrics.run_id = spans.run_id
       AND server_metrics.load_level IS NOT DISTINCT FROM spans.scraped_at_level
       AND server_metrics.t_ns BETWEEN spans.first_sent_ns AND spans.last_end_ns
    JOIN server_metric_series ON server_metrics.family = server_metric_series.family
    WHERE coalesce(server_metrics.endpoint, 'server') = 'server'
      AND server_metrics.arm IS NULL  -- the arms' samples (claim's conditions, ladder) are theirs
      AND server_metric_series.series IN (
          'running', 'waiting', 'kv_cache_use', 'preemptions',
          'prefix_cache_hits', 'prefix_cache_queries', 'prefix_cache_hit_rate'
      )
      AND server_metrics.sample NOT LIKE '%\_created' ESCAPE '\'
    GROUP BY spans.candidate, spans.load_level, spans.load_level_label, spans.production, server_metrics.scrape
)
SELECT
    candidate,
    load_level,
    load_level_label,
    production,
    count(*) AS scrapes,
    list_avg(list_sort(list(running))) AS running_mean,
    max(running) AS running_max,
    list_avg(list_sort(list(waiting))) AS waiting_mean,
    max(waiting) AS waiting_max,
    list_avg(list_sort(list(kv_cache_use))) AS kv_cache_use_mean,
    max(kv_cache_use) AS kv_cache_use_max,
    max(preemptions_total) - min(preemptions_total) AS preemptions,
    coalesce(
        (max(hits_total) - min(hits_total)) / nullif(max(queries_total) - min(queries_total), 0),
        list_avg(list_sort(list(hit_rate_gauge)))
    ) AS prefix_cache_hit_rate
FROM per_scrape
GROUP BY candidate, load_level, load_level_label, production
ORDER BY candidate, load_level NULLS FIRST
