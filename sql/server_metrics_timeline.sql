-- server_metrics_timeline: per candidate and scrape, the server's requests running and waiting
-- (summed over label sets, e.g. one per model) and its KV-cache use (the highest, a share 0-1),
-- at seconds since the candidate's first send; for the pack's plot beside the client's TTFT.
-- staged: server_metrics_by_candidate
SELECT
    candidate,
    scrape,
    min(second) AS second,
    sum(value) FILTER (WHERE series = 'running') AS running,
    sum(value) FILTER (WHERE series = 'waiting') AS waiting,
    max(value) FILTER (WHERE series = 'kv_cache_use') AS kv_cache_use
FROM server_metrics_by_candidate
WHERE series IN ('running', 'waiting', 'kv_cache_use')
GROUP BY candidate, scrape
ORDER BY candidate, scrape
