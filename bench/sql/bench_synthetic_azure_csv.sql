-- bench_synthetic_azure_csv: an Azure-trace-shaped log for the ingest benchmark.
-- macro: synthetic_draws (bench/sql/bench_synthetic_requests.sql); params: $rows, $seed (0..1)
WITH shaped AS (
    SELECT
        i,
        -- exponential gaps at ~2,800/s, twice as fast during a burst in the middle tenth
        -ln(1 - u_gap) / (CASE WHEN i BETWEEN $rows * 0.45 AND $rows * 0.55 THEN 5600.0 ELSE 2800.0 END) AS gap_s,
        greatest(1, CAST(exp(ln(900) + 0.9 * sqrt(-2 * ln(u_prompt)) * cos(6.283185 * u_output)) AS BIGINT)) AS context_tokens,
        greatest(1, CAST(exp(ln(120) + 0.7 * sqrt(-2 * ln(u_output)) * cos(6.283185 * u_prompt)) AS BIGINT)) AS generated_tokens
    FROM synthetic_draws($rows, $seed)
),
timed AS (
    SELECT *, sum(gap_s) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS offset_s FROM shaped
)
SELECT
    strftime(TIMESTAMP '2023-11-16 18:15:46' + to_microseconds(CAST(offset_s * 1e6 AS BIGINT)), '%Y-%m-%d %H:%M:%S.%f') || '0' AS "TIMESTAMP",
    CASE WHEN i % 1000003 = 17 THEN 'n/a' ELSE CAST(context_tokens AS VARCHAR) END AS "ContextTokens",
    generated_tokens AS "GeneratedTokens"
FROM timed
ORDER BY i
