-- ingest_loadproof_trace_jsonl_fields: the shareable trace `loadproof anonymize` writes
-- (pipeline/workload/anonymize.py), one object per line, a superset of Mooncake's:
--   {"timestamp": 1234.567, "input_length": 467, "output_length": 88, "hash_ids": [...],
--    "session_id": "s-…", "tenant": "t-…", "route": "r-…", "latency_ms": 2310.5,
--    "ttft_ms": 180.25, "structured_output": false}
-- timestamp: milliseconds since the trace's first arrival; hash_ids: salted chained hashes of the
-- prompt's full token blocks (equal ids, equal prefix); session_id, tenant, route: salted hashes
-- of the log's values. Everything after hash_ids is optional. Mooncake's format has no place for
-- sessions, tenants, routes or logged latencies, hence a format of its own.
-- view: log_lines(file_id, source_line, line); macro: json_line_problem
WITH data_lines AS (
    SELECT file_id, source_line, line
    FROM log_lines
    WHERE regexp_matches(line, '[^ \t\r]')  -- not blank (trim(line, chars) cost 3 µs a line)
),
extracted AS (
    SELECT
        *,
        json_valid(line) AS is_json,
        CASE WHEN json_valid(line) AND regexp_matches(line, '^ *\{')
            THEN json_extract(line, [
                '$.timestamp', '$.input_length', '$.output_length', '$.hash_ids', '$.session_id',
                '$.tenant', '$.route', '$.latency_ms', '$.ttft_ms', '$.structured_output'
            ])
        END AS f
    FROM data_lines
),
blocks AS (
    SELECT
        *,
        CASE WHEN json_type(f[4]) = 'ARRAY' THEN try_cast(f[4] AS UBIGINT[]) END AS hash_ids,
        json_type(f[1]) IN ('BIGINT', 'UBIGINT', 'DOUBLE') AS timestamp_ok,
        json_type(f[9]) IN ('BIGINT', 'UBIGINT', 'DOUBLE') AS ttft_ok
    FROM extracted
)
SELECT
    file_id,
    source_line,
    CAST(NULL AS VARCHAR) AS record,
    line AS raw,
    json_line_problem(
        is_json,
        f IS NOT NULL,
        CASE
            WHEN NOT coalesce(timestamp_ok, FALSE) THEN 'field timestamp: missing or not a number'
            WHEN json_type(f[4]) IS NOT NULL AND (hash_ids IS NULL OR list_count(hash_ids) <> len(hash_ids))
                THEN 'field hash_ids: not a list of non-negative integers'
            WHEN json_type(f[9]) IS NOT NULL AND NOT ttft_ok THEN 'field ttft_ms: not a number'
        END
    ) AS problem,
    CAST(NULL AS VARCHAR) AS request_id,
    f[1] ->> '$' AS arrival_raw,
    'number' AS arrival_kind,
    CASE WHEN json_type(f[2]) IN ('BIGINT', 'UBIGINT') THEN f[2] ->> '$' ELSE CAST(f[2] AS VARCHAR) END AS prompt_raw,
    CASE WHEN json_type(f[3]) IN ('BIGINT', 'UBIGINT') THEN f[3] ->> '$' ELSE CAST(f[3] AS VARCHAR) END AS output_raw,
    f[6] ->> '$' AS tenant,
    f[7] ->> '$' AS route,
    f[8] ->> '$' AS latency_raw,
    CAST(NULL AS VARCHAR) AS completed_raw,
    -- the first token's time, written as the arrival is (ms since the trace's start)
    CASE WHEN timestamp_ok AND ttft_ok
        THEN CAST(CAST(f[1] ->> '$' AS DOUBLE) + CAST(f[9] ->> '$' AS DOUBLE) AS VARCHAR)
    END AS first_token_raw,
    CAST(NULL AS VARCHAR) AS messages_json,
    CASE WHEN json_type(f[10]) = 'BOOLEAN' THEN CAST(f[10] ->> '$' AS BOOLEAN) END AS structured_output,
    hash_ids AS prefix_hashes,
    nullif(f[5] ->> '$', '') AS session_id
FROM blocks
