-- warm_prefixes: the log's requests before the sampled window whose prefix blocks the window
-- reuses: what production's prefix cache held when the window began, and a replay of the window
-- alone, against a cold cache, lacks. Every request sent at most $lookback_s before the window's
-- first request that carries at least one block some window request also carries; the latest
-- $max_requests of them (an LRU cache keeps the most recent), in log order, each with how many of
-- the window's distinct blocks it carries.
-- view: production_logs (canonical request log); view: production_sample; params: $lookback_s,
-- $max_requests
WITH window_start AS (
    SELECT min(arrival_at) AS started_at FROM production_sample
),
window_blocks AS (
    SELECT DISTINCT unnest(prefix_hashes) AS block
    FROM production_sample
    WHERE prefix_hashes IS NOT NULL
),
earlier AS (
    SELECT production_logs.*
    FROM production_logs, window_start
    WHERE production_logs.arrival_at < window_start.started_at
      AND epoch_us(production_logs.arrival_at) >= epoch_us(window_start.started_at) - CAST($lookback_s * 1e6 AS BIGINT)
      AND production_logs.prefix_hashes IS NOT NULL
),
earlier_blocks AS (
    SELECT request_id, unnest(prefix_hashes) AS block FROM earlier
),
reusing AS (
    SELECT earlier_blocks.request_id, count(DISTINCT earlier_blocks.block) AS window_blocks
    FROM earlier_blocks
    JOIN window_blocks ON earlier_blocks.block = window_blocks.block
    GROUP BY earlier_blocks.request_id
),
latest AS (
    SELECT
        earlier.request_id,
        earlier.arrival_at,
        earlier.source_file,
        earlier.source_line,
        earlier.prompt_tokens,
        earlier.output_tokens,
        earlier.messages_json,
        earlier.prefix_hashes,
        reusing.window_blocks
    FROM earlier
    JOIN reusing ON earlier.request_id = reusing.request_id
    ORDER BY earlier.arrival_at DESC, earlier.source_file DESC, earlier.source_line DESC
    LIMIT $max_requests
)
SELECT *
FROM latest
ORDER BY arrival_at, source_file, source_line
