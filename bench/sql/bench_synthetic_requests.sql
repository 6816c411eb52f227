-- bench_synthetic_requests: the synthetic request stream every bench_synthetic_<format> query
-- draws from, as two DuckDB table macros the benchmarks define before a format's query
-- (request_count, seed_value: the query's $rows and $seed; named so, as a macro parameter replaces
-- every identifier of its name in the body):
-- synthetic_draws: one row per request, i and three uniform draws (gap, prompt, output) from the
-- seeded generator;
-- synthetic_requests: Poisson-like arrivals at ~2,800 requests/s from 2026-11-02 14:00 (`started`,
-- `gap_ms`), log-normal prompt (median 2,000) and output (median 200) lengths.
-- (noqa CP05: sqlfluff parses a macro's untyped parameter names as data types.)
CREATE OR REPLACE TEMP MACRO synthetic_draws(request_count, seed_value) AS TABLE  -- noqa: CP05
WITH seeded AS (
    SELECT setseed(seed_value) AS ignored
)
SELECT i, random() AS u_gap, random() AS u_prompt, random() AS u_output
FROM range(request_count) AS t(i), seeded;

CREATE OR REPLACE TEMP MACRO synthetic_requests(request_count, seed_value) AS TABLE  -- noqa: CP05
WITH shaped AS (
    SELECT
        i,
        -ln(1 - u_gap) / 2.8 AS gap_ms,
        greatest(1, CAST(exp(ln(2000) + 0.9 * sqrt(-2 * ln(u_prompt)) * cos(6.283185 * u_output)) AS BIGINT)) AS prompt,
        greatest(1, CAST(exp(ln(200) + 0.7 * sqrt(-2 * ln(u_output)) * cos(6.283185 * u_prompt)) AS BIGINT)) AS output
    FROM synthetic_draws(request_count, seed_value)
)
SELECT
    *,
    TIMESTAMP '2026-11-02 14:00:00'
    + to_microseconds(CAST(1000 * sum(gap_ms) OVER (ORDER BY i ROWS UNBOUNDED PRECEDING) AS BIGINT)) AS started
FROM shaped
