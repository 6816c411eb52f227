-- server_metrics_by_candidate: each /metrics sample scraped beside the production replay (its
-- scope columns NULL: not a sweep level's), from the server or its GPU exporter, with the
-- candidate it was scraped from and its time in seconds since that candidate's first send (the
-- replay's clock: both are time.perf_counter_ns readings), and the canonical series its family
-- maps to (running, waiting, kv_cache_use, ttft_histogram; the view server_metric_series maps
-- vLLM's, SGLang's, TGI's and llama.cpp's names; an unmapped family gets NULL).
-- A sample belongs to the candidate whose replay shares its run_id; where one run replayed
-- several candidates, to the one whose replay span (first send to last end) holds it.
-- view: server_metrics; view: raw_timings (production requests, the first run of a repeated
-- replay); view: server_metric_series
WITH spans AS (
    SELECT
        run_id,
        candidate,
        min(t_sent_ns) AS first_sent_ns,
        max(t_end_ns) AS last_end_ns,
        count(*) OVER (PARTITION BY run_id) AS candidates_in_run
    FROM raw_timings
    WHERE labelled_item_id IS NULL AND t_sent_ns IS NOT NULL
    GROUP BY run_id, candidate
)
SELECT
    spans.candidate,
    (server_metrics.t_ns - spans.first_sent_ns) / 1e9 AS second,
    coalesce(server_metrics.endpoint, 'server') AS endpoint,
    server_metrics.scrape,
    server_metrics.family,
    server_metrics.sample,
    server_metrics.labels_json,
    server_metrics.value,
    server_metric_series.series
FROM server_metrics
JOIN spans
    ON server_metrics.run_id = spans.run_id
   AND (spans.candidates_in_run = 1 OR server_metrics.t_ns BETWEEN spans.first_sent_ns AND spans.last_end_ns)
LEFT JOIN server_metric_series ON server_metrics.family = server_metric_series.family
WHERE server_metrics.load_level IS NULL AND server_metrics.arm IS NULL
