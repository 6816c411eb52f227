-- ingest_block_trace_fields: text-free traces of prompt blocks, one object per line: Mooncake's
-- trace (mooncake_jsonl)
--   {"timestamp": 27482, "input_length": 6955, "output_length": 52, "hash_ids": [46, 47, ...]}
-- and its superset, the shareable trace `loadproof anonymize` writes (loadproof_trace_jsonl,
-- pipeline/workload/anonymize.py)
--   {"timestamp": 1234.567, "input_length": 467, "output_length": 88, "hash_ids": [...],
--    "session_id": "s-…", "tenant": "t-…", "route": "r-…", "latency_ms": 2310.5,
--    "ttft_ms": 180.25, "structured_output": false}
-- timestamp: milliseconds since the trace's start; hash_ids: one id per prompt block (Mooncake:
-- 512 tokens; loadproof: salted chained hashes of the prompt's full token blocks), equal ids
-- meaning an equal prefix (the prefix-cache key); session_id, tenant, route: salted hashes of the
-- log's values. Everything after hash_ids is optional (a Mooncake trace has none of it: its
-- format has no place for sessions, tenants, routes or logged latencies, hence loadproof's own).
-- views: data_lines (sql/ingest_data_lines.sql); macros: sql/ingest_macros.sql
WITH extracted AS (
    SELECT
        *,
        json_object_values(line, [
            '$.timestamp', '$.input_length', '$.output_length', '$.hash_ids', '$.session_id',
            '$.tenant', '$.route', '$.latency_ms', '$.ttft_ms', '$.structured_output'
        ]) AS f
    FROM data_lines
),
blocks AS (
    SELECT
        *,
        block_ids(f[4]) AS hash_ids,
        json_is_number(f[1]) AS timestamp_ok,
        json_is_number(f[9]) AS ttft_ok
    FROM extracted
),
problems AS (
    SELECT
        *,
        json_line_problem(line, f IS NOT NULL, coalesce(
            CASE WHEN NOT coalesce(timestamp_ok, FALSE) THEN 'field timestamp: missing or not a number' END,
            block_ids_problem(f[4], hash_ids),
            CASE WHEN json_type(f[9]) IS NOT NULL AND NOT ttft_ok THEN 'field ttft_ms: not a number' END
        )) AS problem
    FROM blocks
)
SELECT
    file_id,
    source_line,
    line AS raw,
    problem,
    f[1] ->> '$' AS arrival_raw,
    'number' AS arrival_kind,
    json_count_text(f[2]) AS prompt_raw,
    json_count_text(f[3]) AS output_raw,
    f[6] ->> '$' AS tenant,
    f[7] ->> '$' AS route,
    f[8] ->> '$' AS latency_raw,
    -- the first token's time, written as the arrival is (ms since the trace's start)
    CASE WHEN timestamp_ok AND ttft_ok
        THEN CAST(CAST(f[1] ->> '$' AS DOUBLE) + CAST(f[9] ->> '$' AS DOUBLE) AS VARCHAR)
    END AS first_token_raw,
    CASE WHEN json_type(f[10]) = 'BOOLEAN' THEN CAST(f[10] ->> '$' AS BOOLEAN) END AS structured_output,
    hash_ids AS prefix_hashes,
    nullif(f[5] ->> '$', '') AS session_id
FROM problems
