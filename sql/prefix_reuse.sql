-- prefix_reuse: how much of the prompts' prefixes an earlier request already sent (what an
-- unbounded prefix cache would hit). Blocks: Mooncake hash_ids, or cumulative message prefixes;
-- both are chained (a block's id stands for the whole prefix up to it).
-- block_reuse_share: blocks an earlier request also sent / all blocks = 1 − distinct / all
--   (each distinct block's first occurrence is the only one not reused);
-- share_requests_prefix_hit: requests whose first block an earlier request began with.
-- view: requests (canonical rows)
WITH with_blocks AS (
    SELECT prefix_hashes
    FROM requests
    WHERE prefix_hashes IS NOT NULL AND len(prefix_hashes) > 0
),
blocks AS (
    SELECT unnest(prefix_hashes) AS block FROM with_blocks
),
block_counts AS (
    SELECT count(*) AS blocks, count(DISTINCT block) AS distinct_blocks FROM blocks
),
first_blocks AS (
    SELECT count(*) AS requests_with_blocks, count(DISTINCT prefix_hashes[1]) AS distinct_first_blocks FROM with_blocks
)
SELECT
    requests_with_blocks,
    blocks,
    1 - distinct_blocks / nullif(blocks, 0) AS block_reuse_share,
    1 - distinct_first_blocks / nullif(requests_with_blocks, 0) AS share_requests_prefix_hit
FROM block_counts, first_blocks
