-- prefix_reuse: how much of the prompts' prefixes an earlier request already sent (what an
-- unbounded prefix cache would hit). Blocks: Mooncake hash_ids, or cumulative message prefixes.
-- block_reuse_share: blocks seen in an earlier request / all blocks;
-- share_requests_prefix_hit: requests whose first block an earlier request sent.
-- view: requests (canonical rows)
WITH ordered AS (
    SELECT prefix_hashes, row_number() OVER (ORDER BY epoch_us(arrival_at), source_file, source_line) AS arrival_rank
    FROM requests
    WHERE prefix_hashes IS NOT NULL AND len(prefix_hashes) > 0
),
blocks AS (
    SELECT arrival_rank, unnest(prefix_hashes) AS block, generate_subscripts(prefix_hashes, 1) AS position
    FROM ordered
),
first_seen AS (
    SELECT block, min(arrival_rank) AS first_rank FROM blocks GROUP BY block
),
judged AS (
    SELECT blocks.arrival_rank, blocks.position, first_seen.first_rank < blocks.arrival_rank AS reused
    FROM blocks JOIN first_seen USING (block)
)
SELECT
    (SELECT count(*) FROM ordered) AS requests_with_blocks,
    count(*) AS blocks,
    avg(CAST(reused AS DOUBLE)) AS block_reuse_share,
    avg(CASE WHEN position = 1 THEN CAST(reused AS DOUBLE) END) AS share_requests_prefix_hit
FROM judged
