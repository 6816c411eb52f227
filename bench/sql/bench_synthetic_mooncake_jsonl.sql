-- bench_synthetic_mooncake_jsonl: a Mooncake-trace-shaped JSONL log for the ingest benchmark:
-- 512-token blocks, the first few drawn from a small pool of shared prefixes.
-- params: $rows, $seed (0..1)
WITH seeded AS (
    SELECT setseed($seed) AS ignored
),
draws AS (
    SELECT i, random() AS u_gap, random() AS u_prompt, random() AS u_output, random() AS u_prefix
    FROM range($rows) AS t(i), seeded
),
shaped AS (
    SELECT
        i,
        -ln(1 - u_gap) / 2.8 AS gap_ms,
        greatest(1, CAST(exp(ln(2000) + 0.9 * sqrt(-2 * ln(u_prompt)) * cos(6.283185 * u_output)) AS BIGINT)) AS input_length,
        greatest(1, CAST(exp(ln(200) + 0.7 * sqrt(-2 * ln(u_output)) * cos(6.283185 * u_prompt)) AS BIGINT)) AS output_length,
        CAST(u_prefix * 50 AS BIGINT) AS shared_prefix
    FROM draws
),
timed AS (
    SELECT *, sum(gap_ms) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS offset_ms FROM shaped
)
SELECT
    CASE WHEN i % 1000003 = 17 THEN '{"timestamp": ' ELSE
    '{"timestamp": ' || CAST(round(offset_ms) AS BIGINT) || ', "input_length": ' || input_length
        || ', "output_length": ' || output_length || ', "hash_ids": '
        || CAST(list_transform(range(CAST(ceil(input_length / 512) AS BIGINT)),
                lambda b: CASE WHEN b < 2 THEN shared_prefix * 2 + b ELSE 1000 + i * 64 + b END) AS VARCHAR)
        || '}' END AS line
FROM timed
ORDER BY i
